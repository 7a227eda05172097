// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "workload/schedule.hpp"

namespace daqnet::workload {

/// Application communication patterns (one step = one iteration), for design studies of
/// direct networks and tapered trees. Tasks are ranks; placement maps them to hosts, and
/// several tasks may share a host (their traffic then never enters the network).

/// The task grid of `tasks` tasks in `dims` dimensions: factors as equal as the count
/// allows (smallest largest/smallest ratio; 65,536 → 256 × 256 or 16 × 16 × 16 × 16), in
/// decreasing order. Ranks are numbered row-major over it (the last dimension fastest).
std::vector<int32_t> task_grid(int64_t tasks, int32_t dims);

/// A (2·d+1)-point stencil on a periodic grid (2-D five-point, 4-D nine-point): every task
/// sends to its two neighbours along each dimension (a dimension of size 2 gives the same
/// neighbour twice: two messages; of size 1, none). One step.
std::unique_ptr<Schedule> stencil(const std::vector<int32_t>& dims);

/// Every task sends to `targets` distinct other tasks drawn at random (seeded per task). One step.
std::unique_ptr<Schedule> multicast(int32_t ranks, int32_t targets, uint64_t seed);

/// `rounds` random bisections, one per step: the tasks are shuffled (seeded, anew each
/// round), the i-th of the first half is paired with the i-th of the second, and each pair
/// exchanges in both directions (as Netgauge's ebb pattern). Needs an even task count.
std::unique_ptr<Schedule> bisection(int32_t ranks, int32_t rounds, uint64_t seed);

}  // namespace daqnet::workload
