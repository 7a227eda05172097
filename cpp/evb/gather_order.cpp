#include "evb/gather_order.hpp"

#include "common/random.hpp"

namespace daqnet::evb {

void gather_order(std::vector<int>& order, Schedule schedule, int builder, std::uint64_t gather_index,
                  std::uint64_t event, int readout_units, std::uint64_t seed) {
  if (schedule == Schedule::random) {
    random_permutation(order, readout_units, splitmix64(seed ^ splitmix64(event * 0x9E3779B97F4A7C15ULL + builder)));
    return;
  }
  order.resize(readout_units);
  auto start = static_cast<int>((static_cast<std::uint64_t>(builder) + gather_index) % readout_units);
  for (int i = 0; i < readout_units; ++i) order[i] = (start + i) % readout_units;
}

std::vector<int> gather_order(Schedule schedule, int builder, std::uint64_t gather_index, std::uint64_t event,
                              int readout_units, std::uint64_t seed) {
  std::vector<int> order;
  gather_order(order, schedule, builder, gather_index, event, readout_units, seed);
  return order;
}

}  // namespace daqnet::evb
