// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/network_model.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace daqnet::simulate {

NetworkModel::NetworkModel(const routing::Routing& routing, NicLimits nic) : routing_(routing) {
  if (!routing.finalized()) throw Error("simulate: routing tables are not finalized");
  for (auto [v, key] : {std::pair{nic.injection_gbps, "simulate.injection_gbps"}, {nic.ejection_gbps, "simulate.ejection_gbps"}})
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

void NetworkModel::resources(int32_t a, int32_t b, bool ideal, std::vector<int32_t>& out) const {
  out.clear();
  out.push_back(routing_.uplink(a));
  const auto tail = routing_.tail(a, b);
  if (ideal)
    out.push_back(tail.back());
  else
    out.insert(out.end(), tail.begin(), tail.end());
  int32_t next = num_links_;
  if (inject_) {
    out.push_back(next + a);
    next += num_hosts_;
  }
  if (eject_) out.push_back(next + b);
}

double NetworkModel::latency(int32_t a, int32_t b) const {
  double t = link_latency_[static_cast<size_t>(routing_.uplink(a))];
  for (auto l : routing_.tail(a, b)) t += link_latency_[static_cast<size_t>(l)];
  return t;
}

double NetworkModel::bottleneck(int32_t a, int32_t b) const {
  double c = capacity_[static_cast<size_t>(routing_.uplink(a))];
  for (auto l : routing_.tail(a, b)) c = std::min(c, capacity_[static_cast<size_t>(l)]);
  int32_t next = num_links_;
  if (inject_) {
    c = std::min(c, capacity_[static_cast<size_t>(next + a)]);
    next += num_hosts_;
  }
  if (eject_) c = std::min(c, capacity_[static_cast<size_t>(next + b)]);
  return c;
}

}  // namespace daqnet::simulate
