// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "routing/routing.hpp"
#include "workload/schedule.hpp"

namespace daqnet::analysis {

using fabric::LinkId;
using workload::Flow;

/// Static conflict analysis. In every step each flow follows its path (a flow spread over
/// several paths counts whole on every link of each: loads count the flows that touch a
/// link, not their bytes; link_bytes() splits them); the load of a directed link is the
/// number of flows on it, and
///     conflicts(step) = Σ_links max(0, load − 1),
/// i.e. the number of flows that would have to share a link with an earlier one.
struct StepSummary {
  int64_t step = 0;         ///< 0-based step index
  int64_t flows = 0;        ///< flows in the step (including host-local ones) ...
  int64_t local_flows = 0;  ///< ... of which between ranks of one host (on no link)
  int64_t conflicts = 0;
  int32_t max_link_load = 0;
  /// The most flows on a link to or from a host: what the step's hosts send or receive at
  /// once, which no routing can spread (one rank per host, all pairs at once: N − 1).
  int32_t max_host_link_load = 0;
  int32_t links_used = 0;         ///< links with load ≥ 1
  int32_t conflicting_links = 0;  ///< links with load ≥ 2
};

struct ConflictResult {
  std::vector<StepSummary> steps;
  // Per directed link, over the steps analysed.
  std::vector<int64_t> link_flows;           ///< Σ load
  std::vector<int64_t> link_conflicts;       ///< Σ max(0, load − 1)
  std::vector<int64_t> link_conflict_steps;  ///< steps with load ≥ 2
  std::vector<int32_t> link_max_load;
  /// load_histogram[c][k] = (link, step) pairs with load k on links of class c (an index
  /// into Fabric::link_class_names(): host->leaf, leaf->host, leaf->spine, ... on fat trees)
  std::vector<std::vector<int64_t>> load_histogram;
  int64_t total_flows = 0;
  int64_t local_flows = 0;  ///< of total_flows, those between ranks of one host (on no link)
  int64_t total_conflicts = 0;
  int64_t total_link_traversals = 0;  ///< Σ over flows of route length in links
  int64_t spread_flows = 0;           ///< flows split over several paths (counted whole on each)
  int32_t max_link_load = 0;
  int64_t steps_total = 0;   ///< steps in the schedule
  bool interrupted = false;  ///< stopped early by the progress callback
};

/// Called now and then with (steps done, steps in total); return false to stop early
/// (the result then holds the steps done so far, with interrupted = true).
using daqnet::Progress;

/// `placement[r]` is the host (node id) that runs rank r. Steps are shared out over
/// `threads` threads; the result is the same, bit for bit, for any number of threads.
ConflictResult analyze_conflicts(const routing::Routing& routing, std::span<const int32_t> placement,
                                 const workload::Schedule& schedule, const Progress& progress = {},
                                 double progress_period_seconds = 0.25, int32_t threads = 1);

/// Load (flows) of every directed link in one step (0-based).
std::vector<int32_t> step_loads(const routing::Routing& routing, std::span<const int32_t> placement,
                                const workload::Schedule& schedule, int64_t step);

/// The links of one step that carry more than one flow, and those flows: the `max_links`
/// most loaded links, each with its first `max_flows_per_link` flows (load gives the count),
/// so that details of a huge all-to-all step stay small.
struct LinkConflict {
  LinkId link = -1;
  int32_t load = 0;
  std::vector<Flow> flows;
};
std::vector<LinkConflict> step_conflicts(const routing::Routing& routing, std::span<const int32_t> placement,
                                         const workload::Schedule& schedule, int64_t step, size_t max_links,
                                         size_t max_flows_per_link);

/// Check a placement against the fabric and schedule; throws daqnet::Error.
void check_placement(const routing::Routing& routing, std::span<const int32_t> placement,
                     const workload::Schedule& schedule);

}  // namespace daqnet::analysis
