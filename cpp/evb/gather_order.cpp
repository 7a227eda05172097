#include "evb/gather_order.hpp"

#include "common/random.hpp"

namespace daqnet::evb {

std::vector<int> gather_order(Schedule schedule, int builder, std::uint64_t gather_index, std::uint64_t event,
                              int readout_units, std::uint64_t seed) {
  std::vector<int> order(readout_units);
  if (schedule == Schedule::random) {
    auto perm =
        random_permutation(readout_units, splitmix64(seed ^ splitmix64(event * 0x9E3779B97F4A7C15ULL + builder)));
    for (int i = 0; i < readout_units; ++i) order[i] = perm[i];
    return order;
  }
  auto start = static_cast<int>((static_cast<std::uint64_t>(builder) + gather_index) % readout_units);
  for (int i = 0; i < readout_units; ++i) order[i] = (start + i) % readout_units;
  return order;
}

}  // namespace daqnet::evb
