// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/conflicts.hpp"

namespace daqnet::analysis {

/// Local search over rank orders: swap the hosts of two ranks when that does not raise the
/// schedule's total conflicts (Σ over steps and links of max(0, load − 1)).
///
/// Every flow of the schedule is kept with its step, and the load of every (step, link)
/// pair in a 16-bit table, so a swap re-routes only the flows of the two ranks (4·steps
/// flows for a barrel) instead of the whole schedule: about N/4 times cheaper than a full
/// analysis per move. Moves are drawn towards conflicts: one rank of a flow that crosses a
/// link with load ≥ 2, the other at random. Sideways moves are accepted, so the search
/// walks plateaus; it never accepts a worse order, so the result is never worse than the start.
struct RankSearchResult {
  std::vector<int32_t> placement;  ///< rank → host, the best order found
  int64_t conflicts_start = 0;
  int64_t conflicts = 0;
  int64_t moves = 0;     ///< swaps evaluated
  int64_t accepted = 0;  ///< swaps kept (improving or sideways)
  bool interrupted = false;
};

/// Search from `placement` for at most `max_moves` swaps, stopping early at zero conflicts
/// or when `progress(moves, max_moves)` returns false. Throws daqnet::Error when the
/// (step, link) table would exceed `max_table_bytes`.
RankSearchResult improve_rank_order(const routing::Routing& routing, std::span<const int32_t> placement,
                                    const workload::Schedule& schedule, uint64_t seed, int64_t max_moves,
                                    const Progress& progress = {}, double progress_period_seconds = 0.25,
                                    int64_t max_table_bytes = int64_t{2} << 30);

}  // namespace daqnet::analysis
