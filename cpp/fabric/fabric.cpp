// daqnet — plan, simulate and benchmark event-building networks.
#include "fabric/fabric.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "common/error.hpp"
#include "fabric/levels.hpp"

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

NodeId Fabric::add_switch(const std::string& name, int32_t num_ports, int32_t level, int32_t position) {
  if (level != kNoLevel && level < 1) throw Error("fabric: switch '" + name + "' needs a level >= 1 (or none)");
  if (name.empty()) throw Error("fabric: empty switch name");
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

int32_t Fabric::link_class(const std::string& name) {
  if (name.empty()) throw Error("fabric: empty link class name");
  auto [it, added] = class_index_.emplace(name, static_cast<int32_t>(class_names_.size()));
  if (added) class_names_.push_back(name);
  return it->second;
}

std::string Fabric::level_name(int32_t level) const {
  if (level == kNoLevel) return "switch";
  if (level == 0) return "host";
  if (level == 1) return "leaf";
  if (level == 2 && num_levels_ <= 3) return "spine";
  if (level == 3 && num_levels_ == 3) return "core";
  return "level" + std::to_string(level);
}

void Fabric::connect(NodeId a, int32_t pa, NodeId b, int32_t pb, double gbps, double latency_seconds) {
  if (a < 0 || a >= num_nodes() || b < 0 || b >= num_nodes())
    throw Error("fabric: cable to a node that does not exist");
  const std::string la = level_name(nodes_[static_cast<size_t>(a)].level);
  const std::string lb = level_name(nodes_[static_cast<size_t>(b)].level);
  const int32_t ab = link_class(la + "->" + lb);
  connect(a, pa, b, pb, gbps, latency_seconds, ab, link_class(lb + "->" + la));
}

void Fabric::connect(NodeId a, int32_t pa, NodeId b, int32_t pb, double gbps, double latency_seconds, int32_t class_ab,
                     int32_t class_ba) {
  if (a < 0 || a >= num_nodes() || b < 0 || b >= num_nodes())
    throw Error("fabric: cable to a node that does not exist");
  if (a == b) throw Error("fabric: a cable from " + nodes_[static_cast<size_t>(a)].name + " to itself");
  for (int32_t c : {class_ab, class_ba})
    if (c < 0 || c >= static_cast<int32_t>(class_names_.size()))
      throw Error("fabric: unknown link class " + std::to_string(c));
  auto& na = nodes_.at(static_cast<size_t>(a));
  auto& nb = nodes_.at(static_cast<size_t>(b));
  if (pa < 1 || pa >= static_cast<int32_t>(na.ports.size()))
    throw Error("fabric: " + na.name + " has no port " + std::to_string(pa));
  if (pb < 1 || pb >= static_cast<int32_t>(nb.ports.size()))
    throw Error("fabric: " + nb.name + " has no port " + std::to_string(pb));
  if (na.ports[static_cast<size_t>(pa)].peer >= 0 || nb.ports[static_cast<size_t>(pb)].peer >= 0)
    throw Error("fabric: port already cabled between " + na.name + " and " + nb.name);
  if (!(gbps > 0) || !std::isfinite(gbps)) throw Error("fabric: link rate must be a finite number > 0 Gb/s");
  if (!(latency_seconds >= 0) || !std::isfinite(latency_seconds))
    throw Error("fabric: link latency must be a finite number >= 0 seconds");
  if (na.is_host && nb.is_host) throw Error("fabric: a cable between hosts " + na.name + " and " + nb.name);
  if ((na.is_host && pa != 1) || (nb.is_host && pb != 1)) throw Error("fabric: a host has one NIC, its port 1");
  const auto fwd = static_cast<LinkId>(links_.size());
  links_.push_back(Link{a, b, pa, pb, gbps, latency_seconds, class_ab});
  links_.push_back(Link{b, a, pb, pa, gbps, latency_seconds, class_ba});
  na.ports[static_cast<size_t>(pa)] = Port{b, pb, fwd, fwd + 1};
  nb.ports[static_cast<size_t>(pb)] = Port{a, pa, fwd + 1, fwd};
}

void Fabric::infer_levels() {
  std::vector<std::vector<int32_t>> neighbours(nodes_.size());
  std::vector<uint8_t> host(nodes_.size(), 0);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    host[n] = static_cast<NodeId>(n) < num_hosts_;
    for (const Port& p : nodes_[n].ports)
      if (p.peer >= 0) neighbours[n].push_back(p.peer);
  }
  const std::vector<int32_t> level = cabling_levels(neighbours, host);
  for (NodeId n = num_hosts_; n < num_nodes(); ++n) {
    auto& node = nodes_[static_cast<size_t>(n)];
    if (node.level == kNoLevel && level[static_cast<size_t>(n)] > 0) node.level = level[static_cast<size_t>(n)];
    num_levels_ = std::max(num_levels_, node.level);
  }
}

void Fabric::set_address(NodeId n, uint64_t guid, uint64_t port_guid, int32_t lid) {
  auto& node = nodes_.at(static_cast<size_t>(n));
  node.guid = guid;
  node.port_guid = port_guid;
  node.lid = lid;
}

void Fabric::set_switch_groups(std::vector<int32_t> groups) {
  if (static_cast<int32_t>(groups.size()) != num_switches())
    throw Error("fabric: " + std::to_string(groups.size()) + " switch groups given for " +
                std::to_string(num_switches()) + " switches");
  int32_t top = -1;
  for (int32_t g : groups) {
    if (g < 0) throw Error("fabric: negative switch group " + std::to_string(g));
    top = std::max(top, g);
  }
  switch_groups_ = std::move(groups);
  num_groups_ = top + 1;
}

std::optional<NodeId> Fabric::find(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

void Fabric::rename_hosts(const std::vector<std::string>& names) {
  if (static_cast<int32_t>(names.size()) != num_hosts_)
    throw Error("fabric: " + std::to_string(names.size()) + " host names given for " + std::to_string(num_hosts_) +
                " hosts");
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
