// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/fair_share.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"

namespace daqnet::simulate {

namespace {

void check(std::span<const double> capacity, std::span<const int64_t> offsets, std::span<const int32_t> resources,
           std::span<const double> flow_cap) {
  if (offsets.empty() || offsets.front() != 0) throw Error("fair share: offsets must start with 0");
  if (offsets.back() != static_cast<int64_t>(resources.size()))
    throw Error("fair share: the last offset must equal the number of resource entries");
  for (size_t f = 1; f < offsets.size(); ++f)
    if (offsets[f] < offsets[f - 1])
      throw Error("fair share: offsets must not decrease (flow " + std::to_string(f - 1) + ")");
  for (size_t r = 0; r < capacity.size(); ++r)
    if (!(capacity[r] >= 0)) throw Error("fair share: capacity of resource " + std::to_string(r) + " must be >= 0");
  for (int32_t r : resources)
    if (r < 0 || static_cast<size_t>(r) >= capacity.size())
      throw Error("fair share: resource " + std::to_string(r) + " out of range (" + std::to_string(capacity.size()) +
                  " resources)");
  if (!flow_cap.empty() && flow_cap.size() + 1 != offsets.size())
    throw Error("fair share: flow caps must be empty or one per flow");
  for (size_t f = 0; f < flow_cap.size(); ++f)
    if (!(flow_cap[f] >= 0)) throw Error("fair share: cap of flow " + std::to_string(f) + " must be >= 0");
}

}  // namespace

std::vector<double> max_min_rates(std::span<const double> capacity, std::span<const int64_t> offsets,
                                  std::span<const int32_t> resources, std::span<const double> flow_cap) {
  check(capacity, offsets, resources, flow_cap);
  std::vector<double> rates;
  FairShareSolver().solve(capacity, offsets, resources, flow_cap, rates);
  return rates;
}

void FairShareSolver::solve(std::span<const double> capacity, std::span<const int64_t> offsets,
                            std::span<const int32_t> resources, std::span<const double> flow_cap,
                            std::vector<double>& rates) {
  const size_t R = capacity.size();
  const size_t F = offsets.size() - 1;

  // Transpose: the flows of every resource.
  res_offsets_.assign(R + 1, 0);
  for (int32_t r : resources) ++res_offsets_[static_cast<size_t>(r) + 1];
  for (size_t r = 0; r < R; ++r) res_offsets_[r + 1] += res_offsets_[r];
  res_flows_.resize(resources.size());
  count_.assign(R, 0);
  for (size_t f = 0; f < F; ++f)
    for (int64_t k = offsets[f]; k < offsets[f + 1]; ++k) {
      const auto r = static_cast<size_t>(resources[static_cast<size_t>(k)]);
      res_flows_[static_cast<size_t>(res_offsets_[r]) + static_cast<size_t>(count_[r]++)] = static_cast<int32_t>(f);
    }
  solve(capacity, offsets.first(F), offsets.subspan(1), resources, res_offsets_, res_flows_, flow_cap, rates);
}

void FairShareSolver::solve(std::span<const double> capacity, std::span<const int64_t> begins,
                            std::span<const int64_t> ends, std::span<const int32_t> resources,
                            std::span<const int64_t> res_offsets, std::span<const int32_t> res_flows,
                            std::span<const double> flow_cap, std::vector<double>& rates) {
  const size_t R = capacity.size();
  const size_t F = begins.size();
  rates.assign(F, kUnlimited);
  count_.resize(R);
  for (size_t r = 0; r < R; ++r) count_[r] = static_cast<int32_t>(res_offsets[r + 1] - res_offsets[r]);
  remaining_.assign(capacity.begin(), capacity.end());
  version_.assign(R, 0);
  frozen_.assign(F, 0);

  // A resource only one flow uses fills when that flow reaches its capacity: it is a cap
  // on the flow. Most links of a step carry one flow, so the filling below handles only
  // the shared resources, and caps apart (sorted once, or scanned at each fill).
  cap_.assign(F, kUnlimited);
  if (!flow_cap.empty()) std::copy(flow_cap.begin(), flow_cap.end(), cap_.begin());
  shared_.clear();
  for (size_t r = 0; r < R; ++r) {
    if (count_[r] == 1) {
      const auto f = static_cast<size_t>(res_flows[static_cast<size_t>(res_offsets[r])]);
      cap_[f] = std::min(cap_[f], remaining_[r]);
      count_[r] = 0;  // never fills by itself now
    } else if (count_[r] > 1) {
      shared_.push_back(static_cast<int32_t>(r));
    }
  }

  // A resource fills when its unfrozen flows reach remaining / count: a min-heap of those
  // levels, with stale entries skipped by version.
  auto later = [](const Entry& a, const Entry& b) { return a.level > b.level; };
  // Few shared resources (the simulators' local problems): finding the next one to fill by
  // a scan beats keeping a heap. Many (a whole fabric): a heap.
  const bool scan = shared_.size() <= 64;
  heap_.clear();
  if (scan) {
    // remaining / count per resource, recomputed only when a freeze changes it: the scan
    // below visits every shared resource at each fill and a division each time cost most.
    fill_at_.resize(R);
    for (int32_t r : shared_)
      fill_at_[static_cast<size_t>(r)] = remaining_[static_cast<size_t>(r)] / count_[static_cast<size_t>(r)];
  } else {
    for (int32_t r : shared_)
      heap_.push_back({remaining_[static_cast<size_t>(r)] / count_[static_cast<size_t>(r)], r, 0});
    std::make_heap(heap_.begin(), heap_.end(), later);
  }

  // The capped flows with the cap beside the flow (through an index, each comparison cost a
  // cache miss). With a heap, sorted by cap; with a scan, in flow order (see below). Equal
  // caps need no order among themselves (they freeze at the same rate, and subtracting
  // equal rates in any order gives the same remainders), so the comparison is the cap
  // alone. With a heap (many shared resources) their order can still break ties between
  // resources filling at the same level differently, a last-bit difference; std::sort is
  // deterministic, so the same problem gives the same rates on every run and thread.
  capped_.clear();
  for (size_t f = 0; f < F; ++f)
    if (cap_[f] < kUnlimited) capped_.push_back({cap_[f], static_cast<int32_t>(f)});
  if (!scan) std::sort(capped_.begin(), capped_.end(), [](const Capped& a, const Capped& b) { return a.cap < b.cap; });
  size_t next_cap = 0;
  double min_cap = -kUnlimited;  // scan: none known yet, the first fill scans
  double level = 0;              // levels only grow; rounding must not make a later flow slower

  // Freezing a flow at a rate no higher than any resource's level can only raise the levels
  // of its other resources, so a whole batch of freezes is made first and every touched
  // resource re-enters the heap once.
  touched_.clear();
  touched_mark_.assign(R, 0);
  auto freeze = [&](size_t f, double rate) {
    frozen_[f] = 1;
    rates[f] = rate;
    for (int64_t k = begins[f]; k < ends[f]; ++k) {
      const auto q = static_cast<size_t>(resources[static_cast<size_t>(k)]);
      remaining_[q] -= rate;  // rates are finite: an unlimited resource stays unlimited
      --count_[q];
      if (!touched_mark_[q]) {
        touched_mark_[q] = 1;
        touched_.push_back(static_cast<int32_t>(q));
      }
    }
  };
  auto requeue = [&]() {
    for (int32_t q : touched_) {
      const auto qu = static_cast<size_t>(q);
      touched_mark_[qu] = 0;
      ++version_[qu];
      if (scan) {
        if (count_[qu] > 0) fill_at_[qu] = remaining_[qu] / count_[qu];
      } else if (count_[qu] > 0) {
        heap_.push_back({std::max(level, remaining_[qu] / count_[qu]), q, version_[qu]});
        std::push_heap(heap_.begin(), heap_.end(), later);
      }
    }
    touched_.clear();
  };

  // The resource that fills first: (level, resource), resource −1 when none is left.
  auto next_full = [&]() -> Entry {
    if (scan) {
      // Resources whose flows are all frozen leave the list (in order: ties go to the first).
      Entry best{kUnlimited, -1, 0};
      size_t live = 0;
      for (int32_t r : shared_) {
        const auto ru = static_cast<size_t>(r);
        if (count_[ru] <= 0) continue;
        shared_[live++] = r;
        const double l = std::max(level, fill_at_[ru]);
        if (best.resource < 0 || l < best.level) best = {l, r, 0};
      }
      shared_.resize(live);
      return best;
    }
    while (!heap_.empty()) {
      const Entry& top = heap_.front();
      if (top.version == version_[static_cast<size_t>(top.resource)] && count_[static_cast<size_t>(top.resource)] > 0)
        return top;
      std::pop_heap(heap_.begin(), heap_.end(), later);
      heap_.pop_back();
    }
    return {kUnlimited, -1, 0};
  };

  for (;;) {
    const Entry top = next_full();
    const bool none = top.resource < 0;
    const double top_level = top.level;
    // Flows whose own cap comes first.
    bool capped_any = false;
    // The lowest cap of the flows kept at the last scan bounds every cap still there (flows
    // frozen since only leave): no cap below the next fill, no scan.
    if (scan && (none || min_cap < top_level)) {
      // Few resources fill, so the caps are scanned at each fill rather than sorted once:
      // every flow capped below the next fill freezes at its cap (or the level, whichever
      // is higher: levels only grow), which is what the sorted order would give it.
      double raised = level;
      size_t live = 0;
      min_cap = kUnlimited;
      for (const Capped& c : capped_) {
        const auto f = static_cast<size_t>(c.flow);
        if (frozen_[f]) continue;
        if (none || c.cap < top_level) {
          const double rate = std::max(level, c.cap);
          freeze(f, rate);
          raised = std::max(raised, rate);
          capped_any = true;
        } else {
          capped_[live++] = c;
          min_cap = std::min(min_cap, c.cap);
        }
      }
      capped_.resize(live);
      level = raised;
    }
    while (!scan && next_cap < capped_.size()) {
      const auto f = static_cast<size_t>(capped_[next_cap].flow);
      if (frozen_[f]) {
        ++next_cap;
        continue;
      }
      if (!(capped_[next_cap].cap < top_level) && !none) break;
      level = std::max(level, capped_[next_cap].cap);
      freeze(f, level);
      ++next_cap;
      capped_any = true;
    }
    if (capped_any) {
      requeue();
      continue;
    }
    if (none) break;
    if (!scan) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      heap_.pop_back();
    }
    if (!std::isfinite(top.level)) break;  // only unlimited resources left: the rest stays unlimited
    level = std::max(level, top.level);
    const auto r = static_cast<size_t>(top.resource);
    for (int64_t k = res_offsets[r]; k < res_offsets[r + 1]; ++k) {
      const auto f = static_cast<size_t>(res_flows[static_cast<size_t>(k)]);
      if (!frozen_[f]) freeze(f, level);
    }
    requeue();
  }
}

}  // namespace daqnet::simulate
