// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/conflicts.hpp"

namespace daqnet::analysis {

using Steps = std::vector<std::vector<Flow>>;

/// "barrel-rand": keep in each step of `schedule` a conflict-free subset of its flows
/// (taken in a seeded random order, a flow stays when none of its links is used yet in the
/// step) and move the others into extra steps at the end, packed by the same rule with each
/// rank sending and receiving at most once per extra step. Every flow of the schedule
/// appears exactly once in the result, and no step has a link with two flows.
Steps barrel_rand(const routing::Routing& routing, std::span<const int32_t> placement,
                  const workload::Schedule& schedule, uint64_t seed);

/// "Conflict-free random steps": every ordered pair of distinct ranks once, in steps built
/// greedily from a seeded random order of the pairs: a pair joins the step being built when
/// its source is not yet sending, its destination not yet receiving and none of its links
/// is used. `progress(pairs placed, pairs)` may stop it (the result then has fewer pairs).
Steps conflict_free_random_steps(const routing::Routing& routing, std::span<const int32_t> placement, int32_t ranks,
                                 uint64_t seed, const Progress& progress = {});

}  // namespace daqnet::analysis
