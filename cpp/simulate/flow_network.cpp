// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"

namespace daqnet::simulate {

namespace {

// Rates closer than this (relative) count as unchanged: re-solving the same problem in a
// different order may differ in the last bits, which must not widen the set for nothing.
constexpr double kSameRate = 1e-12;
// A resource is saturated when its load is within this of its capacity.
constexpr double kFull = 1e-9;
// Completions within this (relative) of each other happen together.
constexpr double kSameTime = 1e-12;

// An infinite rate differs from every finite one (|a - b| is infinite, and so is the bound).
bool same_rate(double a, double b) {
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  return std::abs(a - b) <= kSameRate * std::max(std::abs(a), std::abs(b));
}

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity) : capacity_(std::move(capacity)) {
  for (size_t r = 0; r < capacity_.size(); ++r)
    if (!(capacity_[r] >= 0)) throw Error("flow network: capacity of resource " + std::to_string(r) + " must be >= 0");
  res_flows_.resize(capacity_.size());
  level_.assign(capacity_.size(), kUnlimited);
  in_set_.assign(capacity_.size(), 0);
  res_seen_.assign(capacity_.size(), 0);
  local_index_.assign(capacity_.size(), -1);
}

void FlowNetwork::touch(int32_t r) {
  if (!in_set_[static_cast<size_t>(r)]) {
    in_set_[static_cast<size_t>(r)] = 1;
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
    if (r < 0 || static_cast<size_t>(r) >= capacity_.size())
      throw Error("flow network: resource " + std::to_string(r) + " out of range");
  FlowId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    flow_mark_.push_back(0);
    set_pos_.push_back(-1);
  }
  Flow& f = flows_[static_cast<size_t>(id)];
  f.res.resize(resources.size());
  std::copy(resources.begin(), resources.end(), f.res.v.begin());
  f.pos.resize(f.res.size());
  for (size_t k = 0; k < f.res.size(); ++k) {
    auto& list = res_flows_[static_cast<size_t>(f.res[k])];
    f.pos[k] = static_cast<int32_t>(list.size());
    list.push_back(id);
    touch(f.res[k]);
  }
  f.remaining = bytes;
  f.since = now_;
  f.rate = 0;
  f.cap = cap;
  f.tag = tag;
  f.active = true;
  ++active_;
  if (f.res.empty()) set_rate(id, cap);  // nothing to share: its own cap, or at once
  return id;
}

void FlowNetwork::set_rate(FlowId id, double rate) {
  Flow& f = flows_[static_cast<size_t>(id)];
  if (f.rate > 0 && now_ > f.since) f.remaining = std::max(0.0, f.remaining - f.rate * (now_ - f.since));
  f.since = now_;
  f.rate = rate;
  if (rate > 0)
    completions_.set(id, now_ + f.remaining / rate);
  else
    completions_.erase(id);
}

void FlowNetwork::settle() {
  if (full_ && !dirty_.empty())
    for (size_t r = 0; r < capacity_.size(); ++r) touch(static_cast<int32_t>(r));
  if (dirty_.empty()) return;
  ++stats_.solves;
  for (;;) {
    // The local problem: every flow on a resource of the set; resources outside the set
    // enter only as caps (their saturation level), as they keep their rates.
    ++mark_;
    set_flows_.clear();
    for (int32_t r : dirty_)
      for (FlowId g : res_flows_[static_cast<size_t>(r)])
        if (flow_mark_[static_cast<size_t>(g)] != mark_) {
          flow_mark_[static_cast<size_t>(g)] = mark_;
          set_pos_[static_cast<size_t>(g)] = static_cast<int32_t>(set_flows_.size());
          set_flows_.push_back(g);
        }
    local_capacity_.clear();
    for (size_t i = 0; i < dirty_.size(); ++i) {
      local_index_[static_cast<size_t>(dirty_[i])] = static_cast<int32_t>(i);
      local_capacity_.push_back(capacity_[static_cast<size_t>(dirty_[i])]);
    }
    offsets_.assign(1, 0);
    local_res_.clear();
    local_cap_.clear();
    for (FlowId g : set_flows_) {
      const Flow& f = flows_[static_cast<size_t>(g)];
      double cap = f.cap;
      for (int32_t r : f.res) {
        if (in_set_[static_cast<size_t>(r)])
          local_res_.push_back(local_index_[static_cast<size_t>(r)]);
        else
          cap = std::min(cap, level_[static_cast<size_t>(r)]);
      }
      offsets_.push_back(static_cast<int64_t>(local_res_.size()));
      local_cap_.push_back(cap);
    }
    stats_.flows_solved += static_cast<int64_t>(set_flows_.size());
    solver_.solve(local_capacity_, offsets_, local_res_, local_cap_, new_rates_);

    // Widen where the new rates break the max-min conditions at a resource outside the set:
    // it is over capacity, or it was a bottleneck (saturated) and now has room while a
    // flow still sits at its level (that flow could grow). Otherwise the resource only gets
    // its level updated after the commit.
    widen_.clear();
    ++res_stamp_;
    for (size_t i = 0; i < set_flows_.size(); ++i) {
      const Flow& f = flows_[static_cast<size_t>(set_flows_[i])];
      if (same_rate(f.rate, new_rates_[i])) continue;
      for (int32_t r : f.res) {
        const auto ru = static_cast<size_t>(r);
        if (in_set_[ru] || res_seen_[ru] == res_stamp_ || !std::isfinite(capacity_[ru])) continue;
        res_seen_[ru] = res_stamp_;
        double load = 0, top = 0;
        for (FlowId g : res_flows_[ru]) {
          const double x = flow_mark_[static_cast<size_t>(g)] == mark_
                               ? new_rates_[static_cast<size_t>(set_pos_[static_cast<size_t>(g)])]
                               : flows_[static_cast<size_t>(g)].rate;
          load += x;
          top = std::max(top, x);
        }
        const bool over = load > capacity_[ru] * (1 + kFull);
        const bool freed =
            std::isfinite(level_[ru]) && load < capacity_[ru] * (1 - kFull) && top >= level_[ru] * (1 - kFull);
        if (over || freed) {
          in_set_[ru] = 1;
          widen_.push_back(r);
        } else {
          outside_.push_back(r);
        }
      }
    }
    if (widen_.empty()) break;
    ++stats_.widenings;
    dirty_.insert(dirty_.end(), widen_.begin(), widen_.end());
  }

  for (size_t i = 0; i < set_flows_.size(); ++i)
    if (!same_rate(flows_[static_cast<size_t>(set_flows_[i])].rate, new_rates_[i]))
      set_rate(set_flows_[i], new_rates_[i]);
  for (int32_t r : outside_) dirty_.push_back(r);  // levels to refresh (duplicates are harmless)
  outside_.clear();
  for (int32_t r : dirty_) {
    const auto ru = static_cast<size_t>(r);
    double load = 0, top = 0;
    for (FlowId g : res_flows_[ru]) {
      load += flows_[static_cast<size_t>(g)].rate;
      top = std::max(top, flows_[static_cast<size_t>(g)].rate);
    }
    const bool full = !res_flows_[ru].empty() && std::isfinite(capacity_[ru]) && load >= capacity_[ru] * (1 - kFull);
    level_[ru] = full ? top : kUnlimited;
    in_set_[ru] = 0;
  }
  dirty_.clear();
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
    done.push_back(flows_[static_cast<size_t>(f)].tag);
    finish(f);
  }
}

void FlowNetwork::restart() {
  if (active_ != 0) throw Error("flow network: restart() with flows still active");
  settle();  // refresh the levels of the resources the last flows left
  now_ = 0;
  free_.clear();
  for (size_t id = flows_.size(); id-- > 0;) free_.push_back(static_cast<FlowId>(id));  // pops 0 first
}

void FlowNetwork::finish(FlowId id) {
  Flow& f = flows_[static_cast<size_t>(id)];
  for (size_t k = 0; k < f.res.size(); ++k) {
    auto& list = res_flows_[static_cast<size_t>(f.res[k])];
    const auto at = static_cast<size_t>(f.pos[k]);
    const FlowId moved = list.back();
    list[at] = moved;
    list.pop_back();
    if (moved != id || at != list.size()) {
      Flow& m = flows_[static_cast<size_t>(moved)];
      for (size_t j = 0; j < m.res.size(); ++j)
        if (m.res[j] == f.res[k] && static_cast<size_t>(m.pos[j]) == list.size()) {
          m.pos[j] = static_cast<int32_t>(at);
          break;
        }
    }
    touch(f.res[k]);
  }
  f.active = false;
  f.rate = 0;
  completions_.erase(id);
  --active_;
  free_.push_back(id);
}

double FlowNetwork::rate(FlowId id) {
  settle();
  return flows_.at(static_cast<size_t>(id)).rate;
}

double FlowNetwork::remaining(FlowId id) const {
  const Flow& f = flows_.at(static_cast<size_t>(id));
  if (!(f.rate > 0) || now_ <= f.since) return f.remaining;
  return std::max(0.0, f.remaining - f.rate * (now_ - f.since));
}

std::vector<double> FlowNetwork::loads() {
  settle();
  std::vector<double> out(capacity_.size(), 0.0);
  for (size_t r = 0; r < capacity_.size(); ++r)
    for (FlowId g : res_flows_[r]) out[r] += flows_[static_cast<size_t>(g)].rate;
  return out;
}

}  // namespace daqnet::simulate
