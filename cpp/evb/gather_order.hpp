// The order in which a builder gathers the fragments of one event from the readout units.
#pragma once

#include <cstdint>
#include <vector>

#include "evb/config.hpp"

namespace daqnet::evb {

// barrel:      builder j's k-th gather starts at RU (j + k) mod R and goes round, so that
//              builders in step read from distinct RUs (a shifting permutation)
// random:      a seeded permutation per (event, builder)
// all-at-once: the barrel order, but every fragment is asked for at once
std::vector<int> gather_order(Schedule schedule, int builder, std::uint64_t gather_index, std::uint64_t event,
                              int readout_units, std::uint64_t seed);
// The same into `order`, reusing its memory.
void gather_order(std::vector<int>& order, Schedule schedule, int builder, std::uint64_t gather_index,
                  std::uint64_t event, int readout_units, std::uint64_t seed);

}  // namespace daqnet::evb
