// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "simulate/fair_share.hpp"
#include "simulate/tolerances.hpp"

namespace daqnet::simulate {

/// Whether flows running at known rates can simply end, group after group, with no rate
/// changing on the way: FlowNetwork::drain() and StepSolver ask it of flows sorted by
/// completion time, so that both group completions and judge them alike.
class CompletionCheck {
public:
  /// Room for resources 0 .. n−1.
  void resize(size_t n) {
    later_rate_.resize(n);
    seen_.resize(n, 0);
  }

  /// Groups n completions sorted by time (key(i)) as FlowNetwork::advance() does: from the
  /// earliest left, every one within kSameTime of it ends at its time (not before `now`).
  template <class Key>
  void group(size_t n, double now, Key&& key) {
    n_ = n;
    groups_.clear();
    for (size_t i = 0; i < n;) {
      now = std::max(now, key(i));
      groups_.emplace_back(i, now);
      const double until = now * (1 + kSameTime);
      while (i < n && key(i) <= until) ++i;
    }
  }
  size_t groups() const { return groups_.size(); }
  size_t begin(size_t g) const { return groups_[g].first; }
  size_t end(size_t g) const { return g + 1 < groups_.size() ? groups_[g + 1].first : n_; }
  double time(size_t g) const { return groups_[g].second; }

  /// From the last group back: a group's end re-solves the flows on its saturated resources
  /// that are not slower than it (FlowNetwork::settle()'s fixed loads); there must be none.
  /// rate(i) and resources(i) (a range of resource numbers) describe the grouped flows,
  /// saturated(r) the resources now. With no re-solve no rate changes, so loads only fall:
  /// the resources saturated now are a superset of those saturated later, and the check may
  /// refuse flows that would have held, never the reverse.
  template <class Rate, class Resources, class Saturated>
  bool rates_hold(Rate&& rate, Resources&& resources, Saturated&& saturated) {
    if (++stamp_ == 0) {
      std::fill(seen_.begin(), seen_.end(), 0);
      stamp_ = 1;
    }
    for (size_t g = groups_.size(); g-- > 0;) {
      const size_t b = begin(g), e = end(g);
      double slowest = kUnlimited;
      for (size_t i = b; i < e; ++i) slowest = std::min(slowest, rate(i));
      const double fixed_below = std::isfinite(slowest) ? slowest * (1 - kSlower) : 0;
      for (size_t i = b; i < e; ++i)
        for (int32_t r : resources(i)) {
          const auto ru = static_cast<size_t>(r);
          if (seen_[ru] == stamp_ && saturated(ru) && later_rate_[ru] >= fixed_below) return false;
        }
      for (size_t i = b; i < e; ++i) {
        const double ri = rate(i);
        for (int32_t r : resources(i)) {
          const auto ru = static_cast<size_t>(r);
          later_rate_[ru] = seen_[ru] == stamp_ ? std::max(later_rate_[ru], ri) : ri;
          seen_[ru] = stamp_;
        }
      }
    }
    return true;
  }

private:
  std::vector<std::pair<size_t, double>> groups_;  // first index, time
  size_t n_ = 0;
  // Per resource: the fastest flow of the groups after the one checked (valid when seen_ == stamp_).
  std::vector<double> later_rate_;
  std::vector<uint32_t> seen_;
  uint32_t stamp_ = 0;
};

}  // namespace daqnet::simulate
