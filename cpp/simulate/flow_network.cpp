// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"
#include "simulate/tolerances.hpp"

namespace daqnet::simulate {

namespace {

// An infinite rate differs from every finite one (|a - b| is infinite, and so is the bound).
bool same_rate(double a, double b) {
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  return std::abs(a - b) <= kSameRate * std::max(std::abs(a), std::abs(b));
}

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity) {
  rs_.resize(capacity.size());
  for (size_t r = 0; r < capacity.size(); ++r) {
    if (!(capacity[r] >= 0)) throw Error("flow network: capacity of resource " + std::to_string(r) + " must be >= 0");
    rs_[r].capacity = capacity[r];
  }
  res_flows_.resize(rs_.size());
  res_seen_.assign(rs_.size(), 0);
  delta_.assign(rs_.size(), 0);
  check_.resize(rs_.size());
}

void FlowNetwork::touch(int32_t r) {
  if (!rs_[static_cast<size_t>(r)].in_set) {
    rs_[static_cast<size_t>(r)].in_set = 1;
    dirty_.push_back(r);
  }
}

FlowNetwork::FlowId FlowNetwork::start(std::span<const int32_t> resources, double bytes, double cap, uint64_t tag) {
  if (!(bytes > 0) || !std::isfinite(bytes))
    throw Error("flow network: a flow must carry a finite number of bytes > 0");
  if (!(cap >= 0)) throw Error("flow network: a flow's cap must be >= 0");
  if (resources.size() > kMaxResources)
    throw Error("flow network: a flow uses at most " + std::to_string(kMaxResources) + " resources");
  for (int32_t r : resources)
    if (r < 0 || static_cast<size_t>(r) >= rs_.size())
      throw Error("flow network: resource " + std::to_string(r) + " out of range");
  FlowId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<FlowId>(cold_.size());
    flows_.emplace_back();
    pos_.emplace_back();
    cold_.emplace_back();
  }
  const auto i = static_cast<size_t>(id);
  Flow& f = flows_[i];
  SmallList& res = f.res;
  res.resize(resources.size());
  std::copy(resources.begin(), resources.end(), res.v.begin());
  pos_[i].resize(res.size());
  for (size_t k = 0; k < res.size(); ++k) {
    const auto r = static_cast<size_t>(res[k]);
    pos_[i][k] = static_cast<int32_t>(res_flows_[r].size());
    res_flows_[r].push_back(id);
    touch(res[k]);
  }
  Cold& c = cold_[i];
  c.remaining = bytes;
  c.since = now_;
  c.tag = tag;
  f.rate = 0;
  f.cap = cap;
  ++active_;
  if (!res.empty()) started_.push_back(id);
  if (res.empty()) set_rate(id, cap);  // nothing to share: its own cap, or at once
  return id;
}

void FlowNetwork::set_rate(FlowId id, double rate) {
  const auto i = static_cast<size_t>(id);
  Cold& c = cold_[i];
  Flow& f = flows_[i];
  const double old = f.rate;
  if (old > 0 && now_ > c.since) c.remaining = std::max(0.0, c.remaining - old * (now_ - c.since));
  c.since = now_;
  // Committed rates are finite on every finite resource (settle widens to any it would overfill).
  for (int32_t r : f.res)
    if (std::isfinite(rs_[static_cast<size_t>(r)].capacity)) rs_[static_cast<size_t>(r)].load += rate - old;
  f.rate = rate;
  if (rate > 0)
    completions_.set(id, now_ + c.remaining / rate);
  else
    completions_.erase(id);
}

void FlowNetwork::settle() {
  if (full_ && !dirty_.empty())
    for (size_t r = 0; r < rs_.size(); ++r) touch(static_cast<int32_t>(r));
  // Flows slower than every flow that finished or started keep their rates: progressive
  // filling freezes the same flows as before up to that rate, as the finished flows (at
  // their old rates) and the started ones (at their new) were still growing there. A new
  // flow's rate is not known yet, but is at least the smallest of its cap and, for each of
  // its resources, capacity / number of flows (no resource fills below that). Slower flows
  // stay out of the local problem, their rates taken off their resources' capacities; a
  // resource where they were at the level has no faster flow, so it stays as it was.
  // Exact, and in the protocol simulation it takes a tenth of the flows out.
  double fixed_below = full_ ? 0 : finished_min_rate_;
  // Reset before the early return: a finish that left only unsaturated resources dirties none.
  finished_min_rate_ = kUnlimited;
  if (dirty_.empty()) return;
  ++stats_.solves;
  for (FlowId g : started_) {
    const Flow& f = flows_[static_cast<size_t>(g)];
    fixed_below = std::min(fixed_below, f.cap);
    for (int32_t r : f.res)
      fixed_below = std::min(fixed_below, rs_[static_cast<size_t>(r)].capacity /
                                              static_cast<double>(res_flows_[static_cast<size_t>(r)].size()));
  }
  // The margin: committed rates may sit up to kFull off the exact ones (a resource that
  // much over or under capacity is left as it is), and a flow tied with a finished one
  // must not be taken for slower.
  fixed_below = std::isfinite(fixed_below) ? fixed_below * (1 - kSlower) : 0;
  // The local problem: every flow on a resource of the set; resources outside the set
  // enter only as caps (their saturation level), as they keep their rates. Built once and
  // extended at each widening (resources only join the set): the new resources with their
  // flows, and the lists and caps of the flows on them.
  ++mark_;
  set_flows_.clear();
  local_capacity_.clear();
  res_offsets_.assign(1, 0);
  res_local_flows_.clear();
  size_t built = 0, listed = 0;     // resources of dirty_ and flows of set_flows_ in the problem
  size_t ahead = 0, ahead_end = 0;  // the resources of dirty_ the last widening added
  auto add = [&](FlowId g) {
    Flow& f = flows_[static_cast<size_t>(g)];
    f.mark = mark_;
    f.set_pos = static_cast<int32_t>(set_flows_.size());
    set_flows_.push_back(g);
  };
  // A flow's local resources, kMaxResources apart (room for those that join later), and its cap.
  auto list = [&](FlowId g) {
    const Flow& f = flows_[static_cast<size_t>(g)];
    const auto at = static_cast<size_t>(f.set_pos);
    int64_t end = local_begin_[at];
    double cap = f.cap;
    for (int32_t r : f.res) {
      if (rs_[static_cast<size_t>(r)].in_set)
        local_res_[static_cast<size_t>(end++)] = rs_[static_cast<size_t>(r)].local;
      else
        cap = std::min(cap, rs_[static_cast<size_t>(r)].level);
    }
    local_end_[at] = end;
    local_cap_[at] = cap;
  };
  for (FlowId g : started_) add(g);  // their rate of 0 is not a rate yet
  for (;;) {
    // The flows of each new resource, as the solver's transpose (built here from the lists
    // at hand, rather than by the solver from the flows' lists).
    relist_.clear();
    for (size_t i = built; i < dirty_.size(); ++i) {
      const auto r = static_cast<size_t>(dirty_[i]);
      rs_[r].local = static_cast<int32_t>(i);
      double capacity = rs_[r].capacity;
      const bool look = i >= ahead && i < ahead_end;
      const double at_level = look && saturated(r) ? rs_[r].level * (1 - kFull) : 0;
      for (FlowId g : res_flows_[r]) {
        const Flow& f = flows_[static_cast<size_t>(g)];
        if (f.mark != mark_) {
          if (f.rate < fixed_below) {
            capacity -= f.rate;
            continue;
          }
          add(g);
          // Look one step ahead from a widened resource: its flows at the level that join
          // the set may change rate, and if they do, so will their other saturated
          // resources where they sit below the level (a flow that gives room there, or takes
          // it, moves the flows at the level), which the next check would widen. Taking
          // those in now saves a re-solve of the whole set for most widenings (about a fifth
          // of the solver's work in the protocol simulation). Flows below the level are held
          // elsewhere. Resources added needlessly only enlarge the problem: the solution
          // stays exact.
          if (look && f.rate >= at_level)
            for (int32_t q : f.res) {
              const auto qu = static_cast<size_t>(q);
              if (rs_[qu].in_set || !saturated(qu) || f.rate >= rs_[qu].level * (1 - kFull)) continue;
              rs_[qu].in_set = 1;
              dirty_.push_back(q);
            }
        } else if (static_cast<size_t>(f.set_pos) < listed) {
          relist_.push_back(g);  // in the problem already, now with one more resource
        }
        res_local_flows_.push_back(flows_[static_cast<size_t>(g)].set_pos);
      }
      local_capacity_.push_back(std::max(0.0, capacity));
      res_offsets_.push_back(static_cast<int64_t>(res_local_flows_.size()));
    }
    built = dirty_.size();
    const size_t F = set_flows_.size();
    local_begin_.resize(F);
    local_end_.resize(F);
    local_cap_.resize(F);
    local_res_.resize(F * kMaxResources);
    for (size_t i = listed; i < F; ++i) {
      local_begin_[i] = static_cast<int64_t>(i * kMaxResources);
      list(set_flows_[i]);
    }
    for (FlowId g : relist_) list(g);
    listed = F;
    stats_.flows_solved += static_cast<int64_t>(set_flows_.size());
    solver_.solve(local_capacity_, local_begin_, local_end_, local_res_, res_offsets_, res_local_flows_, local_cap_,
                  new_rates_);

    // Widen where the new rates break the max-min conditions at a resource outside the set:
    // it is over capacity, or it was a bottleneck (saturated) and now has room while a
    // flow still sits at its level (that flow could grow). Otherwise the resource only gets
    // its level updated after the commit. A resource's new load is its kept load plus the
    // changes of its flows in the set.
    ++res_stamp_;
    checked_.clear();
    for (size_t i = 0; i < set_flows_.size(); ++i) {
      const auto g = static_cast<size_t>(set_flows_[i]);
      const Flow& f = flows_[g];
      const double old = f.rate, now = new_rates_[i];
      if (same_rate(old, now)) continue;
      for (int32_t r : f.res) {
        const auto ru = static_cast<size_t>(r);
        if (rs_[ru].in_set || !std::isfinite(rs_[ru].capacity)) continue;
        if (res_seen_[ru] != res_stamp_) {
          res_seen_[ru] = res_stamp_;
          delta_[ru] = 0;
          checked_.push_back(r);
        }
        delta_[ru] += now - old;
      }
    }
    widen_.clear();
    for (int32_t r : checked_) {
      const auto ru = static_cast<size_t>(r);
      const double load = rs_[ru].load + delta_[ru];
      bool widen = load > rs_[ru].capacity * (1 + kFull);
      if (!widen && saturated(ru) && load < rs_[ru].capacity * (1 - kFull)) {
        double top = 0;
        for (FlowId g : res_flows_[ru]) {
          const Flow& f = flows_[static_cast<size_t>(g)];
          top = std::max(top, f.mark == mark_ ? new_rates_[static_cast<size_t>(f.set_pos)] : f.rate);
        }
        widen = top >= rs_[ru].level * (1 - kFull);
      }
      if (widen) {
        rs_[ru].in_set = 1;
        widen_.push_back(r);
      } else {
        outside_.push_back(r);
      }
    }
    if (widen_.empty()) break;
    ++stats_.widenings;
    ahead = dirty_.size();  // the widened resources: look one step ahead from them (above)
    dirty_.insert(dirty_.end(), widen_.begin(), widen_.end());
    ahead_end = dirty_.size();
  }

  for (size_t i = 0; i < set_flows_.size(); ++i)
    if (!same_rate(flows_[static_cast<size_t>(set_flows_[i])].rate, new_rates_[i])) {
      set_rate(set_flows_[i], new_rates_[i]);
      ++stats_.rate_changes;
    }
  for (int32_t r : outside_) dirty_.push_back(r);  // levels to refresh (duplicates are harmless)
  outside_.clear();
  for (int32_t r : dirty_) {
    const auto ru = static_cast<size_t>(r);
    const bool full =
        !res_flows_[ru].empty() && std::isfinite(rs_[ru].capacity) && rs_[ru].load >= rs_[ru].capacity * (1 - kFull);
    double top = 0;
    if (full)
      for (FlowId g : res_flows_[ru]) top = std::max(top, flows_[static_cast<size_t>(g)].rate);
    rs_[ru].level = full ? top : kUnlimited;
    rs_[ru].in_set = 0;
  }
  dirty_.clear();
  started_.clear();
}

double FlowNetwork::next_completion() {
  settle();
  return completions_.empty() ? kUnlimited : completions_.top_key();
}

void FlowNetwork::advance(double t, std::vector<uint64_t>& done) {
  done.clear();
  const double next = next_completion();
  if (t > next * (1 + kSameTime) + 1e-300) throw Error("flow network: cannot advance past the next completion");
  now_ = std::max(now_, t);
  const double until = now_ * (1 + kSameTime);
  while (!completions_.empty() && completions_.top_key() <= until) {
    const FlowId f = completions_.top();
    done.push_back(cold_[static_cast<size_t>(f)].tag);
    finish(f);
  }
}

bool FlowNetwork::drain(std::vector<std::pair<double, uint64_t>>& done) {
  done.clear();
  settle();
  if (full_ || completions_.size() != active_) return false;  // a flow at rate 0 never ends
  const auto& heap = completions_.entries();
  order_.assign(heap.begin(), heap.end());
  std::sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) { return IndexedHeap::before(a, b); });
  check_.group(order_.size(), now_, [&](size_t i) { return order_[i].key; });
  auto flow = [&](size_t i) -> const Flow& { return flows_[static_cast<size_t>(order_[i].id)]; };
  if (!check_.rates_hold([&](size_t i) { return flow(i).rate; },
                         [&](size_t i) { return std::span<const int32_t>(flow(i).res.begin(), flow(i).res.end()); },
                         [&](size_t r) { return saturated(r); }))
    return false;
  // What the finishes and the settles between them would leave: empty resources, not saturated.
  done.reserve(order_.size());
  for (size_t g = 0; g < check_.groups(); ++g)
    for (size_t i = check_.begin(g), e = check_.end(g); i < e; ++i) {
      const auto id = static_cast<size_t>(order_[i].id);
      done.emplace_back(check_.time(g), cold_[id].tag);
      for (int32_t r : flows_[id].res) {
        Resource& res = rs_[static_cast<size_t>(r)];
        res_flows_[static_cast<size_t>(r)].clear();
        res.load = 0;
        res.level = kUnlimited;
      }
      flows_[id].rate = 0;
      free_.push_back(order_[i].id);
    }
  completions_.clear();
  active_ = 0;
  if (check_.groups() > 0) now_ = check_.time(check_.groups() - 1);
  return true;
}

void FlowNetwork::restart() {
  if (active_ != 0) throw Error("flow network: restart() with flows still active");
  settle();  // refresh the levels of the resources the last flows left
  now_ = 0;
  free_.clear();
  for (size_t id = cold_.size(); id-- > 0;) free_.push_back(static_cast<FlowId>(id));  // pops 0 first
}

void FlowNetwork::finish(FlowId id) {
  const auto i = static_cast<size_t>(id);
  const SmallList& res = flows_[i].res;
  const double rate = flows_[i].rate;
  for (size_t k = 0; k < res.size(); ++k) {
    const auto r = static_cast<size_t>(res[k]);
    auto& list = res_flows_[r];
    const auto at = static_cast<size_t>(pos_[i][k]);
    const FlowId moved = list.back();
    list[at] = moved;
    list.pop_back();
    if (moved != id || at != list.size()) {
      // The entry moved from the back takes the freed place. When it is this flow's own
      // (a resource listed twice), it is a later one: the earlier ones are gone, and their
      // stale positions could match.
      const auto m = static_cast<size_t>(moved);
      for (size_t j = moved == id ? k + 1 : 0; j < flows_[m].res.size(); ++j)
        if (static_cast<size_t>(flows_[m].res[j]) == r && static_cast<size_t>(pos_[m][j]) == list.size()) {
          pos_[m][j] = static_cast<int32_t>(at);
          break;
        }
    }
    if (std::isfinite(rs_[r].capacity)) rs_[r].load = list.empty() ? 0 : rs_[r].load - rate;
    // Room on a resource that had room already changes no other flow's rate through it.
    if (saturated(r)) touch(res[k]);
  }
  if (!res.empty()) finished_min_rate_ = std::min(finished_min_rate_, rate);
  flows_[i].rate = 0;
  completions_.erase(id);
  --active_;
  free_.push_back(id);
}

double FlowNetwork::rate(FlowId id) {
  settle();
  return flows_.at(static_cast<size_t>(id)).rate;
}

double FlowNetwork::remaining(FlowId id) const {
  const Cold& c = cold_.at(static_cast<size_t>(id));
  const double rate = flows_[static_cast<size_t>(id)].rate;
  if (!(rate > 0) || now_ <= c.since) return c.remaining;
  return std::max(0.0, c.remaining - rate * (now_ - c.since));
}

std::vector<double> FlowNetwork::loads() {
  settle();
  std::vector<double> out(rs_.size(), 0.0);
  for (size_t r = 0; r < rs_.size(); ++r)
    for (FlowId g : res_flows_[r]) out[r] += flows_[static_cast<size_t>(g)].rate;
  return out;
}

}  // namespace daqnet::simulate
