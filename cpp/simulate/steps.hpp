// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "simulate/flow_network.hpp"
#include "simulate/network_model.hpp"
#include "workload/schedule.hpp"

namespace daqnet::simulate {

/// Step-synchronous simulation: the flows of step s start together once step s−1 is over,
/// each moves `message_bytes` after its route's latency, at max-min fair rates that change
/// whenever a flow starts or ends (a flow that finishes early frees bandwidth for the
/// others). A step lasts until its last flow ends. Flows between ranks on one host take no
/// time. The same flows on the contention-free fabric give ideal_seconds.
struct StepTime {
  int64_t step = 0;
  int64_t flows = 0;
  double seconds = 0;
  double ideal_seconds = 0;
  double min_gbps = 0;  ///< slowest flow's average rate (bytes·8/(time − latency)), network flows only
};

struct StepResult {
  std::vector<StepTime> steps;
  int64_t steps_total = 0;
  double total_seconds = 0, ideal_seconds = 0;
  double bytes = 0;  ///< bytes moved over the network (not host-local flows)
  bool interrupted = false;
  FlowNetwork::Stats stats;
  int64_t reused_steps = 0;  ///< steps (real and ideal runs) answered by an identical earlier one (StepMemo)
  /// Per directed link: the messages that crossed it in the steps done, when every flow
  /// took one path; empty when a routing split flows (analysis::link_bytes then weighs them).
  std::vector<int64_t> link_uses;
};

/// (steps done, steps in total) now and then; return false to stop early.
using StepProgress = std::function<bool(int64_t, int64_t)>;

/// `ideal` = false skips the contention-free run (ideal times are then NaN). Steps are
/// shared out over `threads` threads; every figure is the same for any number of them.
/// `reuse` answers a step identical to an earlier one (up to relabelled resources) with
/// that step's figures, which are bit for bit what simulating it again gives.
StepResult simulate_steps(const NetworkModel& model, std::span<const int32_t> placement,
                          const workload::Schedule& schedule, double message_bytes, bool ideal,
                          const StepProgress& progress = {}, double progress_period_seconds = 0.25, int32_t threads = 1,
                          bool reuse = true);

}  // namespace daqnet::simulate
