// daqnet — plan, simulate and benchmark event-building networks.
#include "fabric/fabric.hpp"

#include <algorithm>
#include <unordered_set>

#include "common/error.hpp"

namespace daqnet::fabric {

NodeId Fabric::add_host(const std::string& name) {
  if (num_hosts_ != num_nodes()) throw Error("fabric: hosts must be added before switches");
  if (name.empty()) throw Error("fabric: empty host name");
  if (!by_name_.emplace(name, num_nodes()).second) throw Error("fabric: duplicate node name '" + name + "'");
  Node n;
  n.name = name;
  n.is_host = true;
  n.level = 0;
  n.position = num_hosts_;
  n.ports.resize(2);
  nodes_.push_back(std::move(n));
  return num_hosts_++;
}

NodeId Fabric::add_switch(const std::string& name, int32_t level, int32_t position, int32_t num_ports) {
  if (level < 1) throw Error("fabric: switch '" + name + "' needs a level >= 1");
  if (num_ports < 1) throw Error("fabric: switch '" + name + "' needs at least one port");
  if (!by_name_.emplace(name, num_nodes()).second) throw Error("fabric: duplicate node name '" + name + "'");
  Node n;
  n.name = name;
  n.level = level;
  n.position = position;
  n.ports.resize(static_cast<size_t>(num_ports) + 1);
  nodes_.push_back(std::move(n));
  num_levels_ = std::max(num_levels_, level);
  return num_nodes() - 1;
}

void Fabric::connect(NodeId a, int32_t pa, NodeId b, int32_t pb, double gbps, double latency_seconds) {
  auto& na = nodes_.at(static_cast<size_t>(a));
  auto& nb = nodes_.at(static_cast<size_t>(b));
  if (pa < 1 || pa >= static_cast<int32_t>(na.ports.size()))
    throw Error("fabric: " + na.name + " has no port " + std::to_string(pa));
  if (pb < 1 || pb >= static_cast<int32_t>(nb.ports.size()))
    throw Error("fabric: " + nb.name + " has no port " + std::to_string(pb));
  if (na.ports[static_cast<size_t>(pa)].peer >= 0 || nb.ports[static_cast<size_t>(pb)].peer >= 0)
    throw Error("fabric: port already cabled between " + na.name + " and " + nb.name);
  if (!(gbps > 0)) throw Error("fabric: link rate must be > 0 Gb/s");
  const auto up = static_cast<LinkId>(links_.size());
  const int32_t tier = na.level;
  links_.push_back(Link{a, b, pa, pb, gbps, latency_seconds, tier, true});
  links_.push_back(Link{b, a, pb, pa, gbps, latency_seconds, tier, false});
  na.ports[static_cast<size_t>(pa)] = Port{b, pb, up, up + 1};
  nb.ports[static_cast<size_t>(pb)] = Port{a, pa, up + 1, up};
}

std::optional<NodeId> Fabric::find(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

void Fabric::rename_hosts(const std::vector<std::string>& names) {
  if (static_cast<int32_t>(names.size()) != num_hosts_)
    throw Error("fabric: " + std::to_string(names.size()) + " host names given for " +
                std::to_string(num_hosts_) + " hosts");
  std::unordered_set<std::string> seen;
  for (const auto& n : names) {
    if (n.empty()) throw Error("fabric: empty host name");
    if (!seen.insert(n).second) throw Error("fabric: duplicate host name '" + n + "'");
  }
  for (NodeId h = 0; h < num_hosts_; ++h) by_name_.erase(nodes_[static_cast<size_t>(h)].name);
  for (NodeId h = 0; h < num_hosts_; ++h) {
    const auto& n = names[static_cast<size_t>(h)];
    if (!by_name_.emplace(n, h).second) throw Error("fabric: host name '" + n + "' is a switch's name");
    nodes_[static_cast<size_t>(h)].name = n;
  }
}

}  // namespace daqnet::fabric
