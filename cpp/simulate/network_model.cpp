// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/network_model.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace daqnet::simulate {

using routing::LinkId;

double Routes::max_latency() const {
  double t = 0;
  for (double l : latency_) t = std::max(t, l);
  return t;
}

NetworkModel::NetworkModel(const routing::Routing& routing, NicLimits nic)
    : routing_(routing), table_(dynamic_cast<const routing::TableRouting*>(&routing)) {
  if (table_ != nullptr && !table_->finalized()) throw Error("simulate: routing tables are not finalized");
  for (auto [v, key] :
       {std::pair{nic.injection_gbps, "simulate.injection_gbps"}, {nic.ejection_gbps, "simulate.ejection_gbps"}})
    if (!(v >= 0) || !std::isfinite(v)) throw Error(std::string(key) + " must be a finite number >= 0");
  const auto& f = routing.fabric();
  num_links_ = f.num_links();
  num_hosts_ = f.num_hosts();
  for (const auto& l : f.links()) {
    capacity_.push_back(l.gbps * 1e9 / 8);
    link_latency_.push_back(l.latency_seconds);
  }
  inject_ = nic.injection_gbps > 0;
  eject_ = nic.ejection_gbps > 0;
  if (inject_) capacity_.insert(capacity_.end(), static_cast<size_t>(num_hosts_), nic.injection_gbps * 1e9 / 8);
  if (eject_) capacity_.insert(capacity_.end(), static_cast<size_t>(num_hosts_), nic.ejection_gbps * 1e9 / 8);
}

void NetworkModel::add_nic(int32_t a, int32_t b, double& slowest, Routes& out) const {
  int32_t next = num_links_;
  if (inject_) {
    out.res_.push_back(next + a);
    slowest = std::min(slowest, capacity_[static_cast<size_t>(next) + static_cast<size_t>(a)]);
    next += num_hosts_;
  }
  if (eject_) {
    out.res_.push_back(next + b);
    slowest = std::min(slowest, capacity_[static_cast<size_t>(next) + static_cast<size_t>(b)]);
  }
}

void NetworkModel::routes(int32_t a, int32_t b, uint64_t flow, bool ideal, Routes& out) const {
  out.clear();
  if (table_ != nullptr) {  // the common case, straight from the route cache: no copy of a path
    double latency = 0, slowest = kUnlimited;
    table_path(a, b, ideal, out.res_, [&](LinkId l) {
      latency += link_latency_[static_cast<size_t>(l)];
      slowest = std::min(slowest, capacity_[static_cast<size_t>(l)]);
    });
    add_nic(a, b, slowest, out);
    out.ends_.push_back(static_cast<uint32_t>(out.res_.size()));
    out.weight_.push_back(1.0);
    out.latency_.push_back(latency);
    out.bottleneck_.push_back(slowest);
    return;
  }
  // One scratch per thread: the step simulation asks for routes from several threads.
  thread_local routing::PathSet scratch;
  routing_.paths(a, b, flow, scratch);
  for (size_t k = 0; k < scratch.size(); ++k) {
    const auto path = scratch.path(k);
    double latency = 0, slowest = kUnlimited;
    for (LinkId l : path) {
      latency += link_latency_[static_cast<size_t>(l)];
      slowest = std::min(slowest, capacity_[static_cast<size_t>(l)]);
    }
    if (ideal) {
      out.res_.push_back(path.front());
      if (path.size() > 1) out.res_.push_back(path.back());
    } else {
      out.res_.insert(out.res_.end(), path.begin(), path.end());
    }
    add_nic(a, b, slowest, out);
    out.ends_.push_back(static_cast<uint32_t>(out.res_.size()));
    out.weight_.push_back(scratch.weight(k));
    out.latency_.push_back(latency);
    out.bottleneck_.push_back(slowest);
  }
}

bool NetworkModel::append_path(int32_t a, int32_t b, bool ideal, std::vector<int32_t>& out, double& latency) const {
  if (table_ == nullptr) return false;
  double sum = 0;  // in routes()' order: the same latency to the last bit
  table_path(a, b, ideal, out, [&](LinkId l) { sum += link_latency_[static_cast<size_t>(l)]; });
  if (inject_) out.push_back(num_links_ + a);
  if (eject_) out.push_back(num_links_ + (inject_ ? num_hosts_ : 0) + b);
  latency = sum;
  return true;
}

void NetworkModel::resources(int32_t a, int32_t b, bool ideal, std::vector<int32_t>& out) const {
  routes(a, b, 0, ideal, routes_scratch_);
  const auto first = routes_scratch_.resources(0);
  out.assign(first.begin(), first.end());
}

double NetworkModel::latency(int32_t a, int32_t b) const {
  routes(a, b, 0, false, routes_scratch_);
  return routes_scratch_.max_latency();
}

double NetworkModel::bottleneck(int32_t a, int32_t b) const {
  routes(a, b, 0, false, routes_scratch_);
  return routes_scratch_.bottleneck(0);
}

double NetworkModel::message_seconds(int32_t a, int32_t b, double bytes) const {
  routes(a, b, 0, false, routes_scratch_);
  return routes_scratch_.max_latency() + bytes / routes_scratch_.bottleneck(0);
}

}  // namespace daqnet::simulate
