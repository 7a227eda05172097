// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "simulate/completion_check.hpp"
#include "simulate/fair_share.hpp"

namespace daqnet::simulate {

/// A sub-flow of a step: one path of a flow, its latency, the bytes it carries and its
/// resources at [first, last) of the step's resource list.
struct StepSub {
  double latency, bytes;
  int32_t flow;
  uint32_t first, last;
};

/// Ends a step's sub-flows without an event loop where the rates they get at once hold to
/// the end. Sub-flows that share no resource, even through others, are independent: the
/// step splits into connected components. In a component whose sub-flows all start
/// together (one latency), one max-min solve gives every rate, and when each group of
/// completions is faster than every sub-flow still on its saturated resources (the test
/// of FlowNetwork::drain()) no rate changes until the last ends, so each end is its start
/// plus bytes / rate. That holds for most components of a shift step: equal messages, the
/// fastest end first. The other components (several latencies, or a flow that would speed
/// up) are left to the flow network. The components of several sub-flows are solved
/// together in one call (a lone sub-flow needs none: its rate is its path's bottleneck),
/// so a step costs at most one solve and a few passes over its sub-flows, instead of a
/// start, a finish and a heap update per sub-flow.
class StepSolver {
public:
  StepSolver() = default;
  explicit StepSolver(const std::vector<double>& capacity) { reset(capacity); }
  /// Solves on resources of these capacities from now on, counting calls from 0; the
  /// buffers keep their memory (a solver is reused from call to call of simulate_steps).
  void reset(std::span<const double> capacity);

  /// ends[i] = when sub-flow i ends (the step starting at t0), or NaN when it is left to
  /// the flow network. Returns how many are left. Depends on the sub-flows' order and
  /// resources only up to a relabelling of resources (StepMemo relies on it).
  size_t solve(double t0, std::span<const StepSub> subs, std::span<const int32_t> res, std::vector<double>& ends);

  int64_t solves() const { return solves_; }              ///< solver calls made
  int64_t flows_solved() const { return flows_solved_; }  ///< Σ sub-flows in those calls

private:
  // The local number of resource r, numbered now if new.
  int32_t label(int32_t r) {
    Seen& seen = seen_[static_cast<size_t>(r)];
    if (seen.stamp != stamp_) {
      seen.stamp = stamp_;
      seen.label = static_cast<int32_t>(parent_.size());
      parent_.push_back(seen.label);
      local_capacity_.push_back(capacity_[static_cast<size_t>(r)]);
      last_sub_.push_back(-1);
    }
    return seen.label;
  }
  // The root of x's component (halving the path on the way).
  int32_t find(int32_t x) {
    while (parent_[static_cast<size_t>(x)] != x) {
      auto& p = parent_[static_cast<size_t>(x)];
      p = parent_[static_cast<size_t>(p)];
      x = p;
    }
    return x;
  }

  std::vector<double> capacity_;
  // Resources of the step numbered by first appearance (valid when stamp == stamp_).
  struct Seen {
    uint32_t stamp = 0;
    int32_t label = 0;
  };
  std::vector<Seen> seen_;
  uint32_t stamp_ = 0;
  // Per local resource: union-find parent, capacity, the last sub-flow that listed it
  // (which tells a resource listed twice), and the load of the solved rates.
  std::vector<int32_t> parent_, last_sub_;
  std::vector<double> local_capacity_, load_;
  std::vector<int32_t> sub_res_;      // per sub-flow entry: its local resource
  std::vector<int32_t> comp_;         // per sub-flow: its component, −1 without resources
  std::vector<uint8_t> twice_;        // per sub-flow: lists a resource more than once
  std::vector<double> rates_, keys_;  // per sub-flow: its rate and end
  // Per component (numbered by first sub-flow): its first sub-flow, then a cursor; its
  // size, then where its sub-flows start in by_comp_; whether it is left to the network.
  std::vector<int32_t> comp_of_root_;
  std::vector<int64_t> comp_first_, comp_start_;
  std::vector<uint8_t> left_;
  // The problem handed to the solver (the sub-flows of components of several that start
  // at once), and the sub-flows by component.
  std::vector<int32_t> flows_, problem_res_, by_comp_;
  std::vector<int64_t> offsets_;
  std::vector<double> problem_rates_;
  CompletionCheck check_;  // a component's ends grouped, and whether their rates hold
  FairShareSolver solver_;
  int64_t solves_ = 0, flows_solved_ = 0;
};

}  // namespace daqnet::simulate
