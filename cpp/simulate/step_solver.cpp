// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/step_solver.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "simulate/tolerances.hpp"

namespace daqnet::simulate {

void StepSolver::reset(std::span<const double> capacity) {
  capacity_.assign(capacity.begin(), capacity.end());
  // Marks kept from earlier steps are older than the next solve's stamp: still unseen.
  seen_.resize(capacity_.size());
  solves_ = flows_solved_ = 0;
}

size_t StepSolver::solve(double t0, std::span<const StepSub> subs, std::span<const int32_t> res,
                         std::vector<double>& ends) {
  const size_t S = subs.size();
  ends.assign(S, std::numeric_limits<double>::quiet_NaN());
  if (++stamp_ == 0) {
    std::fill(seen_.begin(), seen_.end(), Seen{});
    stamp_ = 1;
  }
  // Components: the union of every sub-flow's resources (the lower label is the root, so
  // components do not depend on the resources' global numbers).
  parent_.clear();
  local_capacity_.clear();
  last_sub_.clear();
  sub_res_.resize(res.size());
  twice_.assign(S, 0);
  for (size_t i = 0; i < S; ++i) {
    const StepSub& s = subs[i];
    int32_t root = -1;
    for (uint32_t k = s.first; k < s.last; ++k) {
      const int32_t l = label(res[k]);
      sub_res_[k] = l;
      auto& last = last_sub_[static_cast<size_t>(l)];
      if (last == static_cast<int32_t>(i)) twice_[i] = 1;
      last = static_cast<int32_t>(i);
      const int32_t y = find(l);
      if (root < 0 || y == root) {
        root = y;
      } else if (y < root) {
        parent_[static_cast<size_t>(root)] = y;
        root = y;
      } else {
        parent_[static_cast<size_t>(y)] = root;
      }
    }
  }
  // Components numbered by first sub-flow; those whose sub-flows start at different times
  // are left (rates change as flows join).
  const size_t R = parent_.size();
  comp_of_root_.assign(R, -1);
  comp_first_.clear();
  comp_start_.assign(1, 0);
  left_.clear();
  comp_.resize(S);
  rates_.resize(S);
  for (size_t i = 0; i < S; ++i) {
    const StepSub& s = subs[i];
    if (s.first == s.last) {  // nothing to share: an unlimited rate, it ends as it starts
      comp_[i] = -1;
      ends[i] = t0 + s.latency;
      continue;
    }
    auto& c = comp_of_root_[static_cast<size_t>(find(sub_res_[s.first]))];
    if (c < 0) {
      c = static_cast<int32_t>(comp_first_.size());
      comp_first_.push_back(static_cast<int64_t>(i));
      comp_start_.push_back(0);
      left_.push_back(0);
    } else if (s.latency != subs[static_cast<size_t>(comp_first_[static_cast<size_t>(c)])].latency) {
      left_[static_cast<size_t>(c)] = 1;
    }
    comp_[i] = c;
    ++comp_start_[static_cast<size_t>(c) + 1];
  }
  const size_t C = comp_first_.size();

  // One max-min problem of the components of several sub-flows that start at once
  // (disjoint, so solving them together gives each its own rates). A sub-flow alone in its
  // component gets its slowest resource's capacity (shared by the times it lists it), as
  // the solver would give it.
  flows_.clear();
  problem_res_.clear();
  offsets_.assign(1, 0);
  for (size_t i = 0; i < S; ++i) {
    const int32_t c = comp_[i];
    if (c < 0 || left_[static_cast<size_t>(c)]) continue;
    const StepSub& s = subs[i];
    if (comp_start_[static_cast<size_t>(c) + 1] == 1) {
      double rate = kUnlimited;
      for (uint32_t k = s.first; k < s.last; ++k) {
        double times = 1;
        if (twice_[i]) {
          times = 0;
          for (uint32_t q = s.first; q < s.last; ++q) times += sub_res_[q] == sub_res_[k] ? 1 : 0;
        }
        rate = std::min(rate, local_capacity_[static_cast<size_t>(sub_res_[k])] / times);
      }
      rates_[i] = rate;
      continue;
    }
    flows_.push_back(static_cast<int32_t>(i));
    for (uint32_t k = s.first; k < s.last; ++k) problem_res_.push_back(sub_res_[k]);
    offsets_.push_back(static_cast<int64_t>(problem_res_.size()));
  }
  if (!flows_.empty()) {
    solver_.solve(local_capacity_, offsets_, problem_res_, {}, problem_rates_);
    ++solves_;
    flows_solved_ += static_cast<int64_t>(flows_.size());
    load_.assign(R, 0);  // the loads that tell the saturated resources
    for (size_t j = 0; j < flows_.size(); ++j) {
      const auto i = static_cast<size_t>(flows_[j]);
      rates_[i] = problem_rates_[j];
      for (uint32_t k = subs[i].first; k < subs[i].last; ++k) {
        const auto l = static_cast<size_t>(sub_res_[k]);
        if (std::isfinite(local_capacity_[l])) load_[l] += rates_[i];
      }
    }
  }
  auto saturated = [&](size_t l) {
    return std::isfinite(local_capacity_[l]) && load_[l] >= local_capacity_[l] * (1 - kFull);
  };

  // Each sub-flow's end at its rate (as the flow network computes it: the start, then the
  // bytes at the rate), and the sub-flows by component (a counting sort).
  keys_.resize(S);
  for (size_t c = 0; c < C; ++c) comp_start_[c + 1] += comp_start_[c];
  by_comp_.resize(static_cast<size_t>(comp_start_[C]));
  for (size_t c = 0; c < C; ++c) comp_first_[c] = comp_start_[c];  // now a cursor per component
  for (size_t i = 0; i < S; ++i) {
    const int32_t c = comp_[i];
    if (c < 0 || left_[static_cast<size_t>(c)]) continue;
    if (!(rates_[i] > 0)) left_[static_cast<size_t>(c)] = 1;  // never ends
    keys_[i] = (t0 + subs[i].latency) + subs[i].bytes / rates_[i];
    by_comp_[static_cast<size_t>(comp_first_[static_cast<size_t>(c)]++)] = static_cast<int32_t>(i);
  }

  check_.resize(R);
  for (size_t c = 0; c < C; ++c) {
    const auto begin = static_cast<size_t>(comp_start_[c]), end = static_cast<size_t>(comp_start_[c + 1]);
    if (begin == end || left_[c]) continue;
    if (end - begin == 1) {
      ends[static_cast<size_t>(by_comp_[begin])] = keys_[static_cast<size_t>(by_comp_[begin])];
      continue;
    }
    const auto first = by_comp_.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto last = by_comp_.begin() + static_cast<std::ptrdiff_t>(end);
    std::sort(first, last, [&](int32_t a, int32_t b) {
      const double ka = keys_[static_cast<size_t>(a)], kb = keys_[static_cast<size_t>(b)];
      return ka < kb || (ka == kb && a < b);
    });
    // As FlowNetwork::drain(): ends grouped as the network would, each group leaving only
    // slower sub-flows on its saturated resources.
    auto sub = [&](size_t i) { return static_cast<size_t>(by_comp_[begin + i]); };
    check_.group(end - begin, t0, [&](size_t i) { return keys_[sub(i)]; });
    const bool holds = check_.rates_hold([&](size_t i) { return rates_[sub(i)]; },
                                         [&](size_t i) {
                                           const StepSub& s = subs[sub(i)];
                                           return std::span<const int32_t>(sub_res_.data() + s.first, s.last - s.first);
                                         },
                                         saturated);
    if (!holds) {
      left_[c] = 1;
      continue;
    }
    for (size_t g = 0; g < check_.groups(); ++g) {
      const size_t e = check_.end(g);
      for (size_t i = check_.begin(g); i < e; ++i) ends[sub(i)] = check_.time(g);
    }
  }
  size_t left = 0;
  for (double e : ends) left += std::isnan(e) ? 1 : 0;
  return left;
}

}  // namespace daqnet::simulate
