// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fabric/xgft_shape.hpp"

namespace daqnet::fabric {

using NodeId = int32_t;
using LinkId = int32_t;

/// One port of a node. Ports are numbered from 1 (as on InfiniBand, where port 0 is the
/// switch's management port); an unconnected port has peer == -1.
struct Port {
  NodeId peer = -1;
  int32_t peer_port = 0;
  LinkId out_link = -1;  ///< directed link leaving through this port
  LinkId in_link = -1;   ///< directed link arriving on this port
};

/// Level of a node whose level nobody set (a switch of a graph that is not a levelled tree).
inline constexpr int32_t kNoLevel = -1;

/// A host (endpoint with a NIC) or a switch.
struct Node {
  std::string name;
  bool is_host = false;
  /// Optional: 0 for hosts, 1 for leaf switches, 2 for spines, 3 for cores, as tree builders
  /// and importers set it (kNoLevel if unknown). Used for per-level views and link class
  /// names, never assumed by routing, analysis or simulation.
  int32_t level = kNoLevel;
  int32_t position = 0;     ///< index among the nodes of its level, in cabling order (tree builders)
  std::vector<Port> ports;  ///< ports[0] unused: ports are numbered from 1
  /// InfiniBand addresses of an imported node (0 when unknown): node GUID, the GUID of the
  /// host's NIC port or the switch's port 0, and that port's base LID.
  uint64_t guid = 0;
  uint64_t port_guid = 0;
  int32_t lid = 0;
};

/// A directed link. A cable is two links: 2c from the cable's first end, 2c+1 back.
struct Link {
  NodeId src = -1;
  NodeId dst = -1;
  int32_t src_port = 0;
  int32_t dst_port = 0;
  double gbps = 0;             ///< capacity in 10^9 bit/s
  double latency_seconds = 0;  ///< propagation + switching latency
  int32_t link_class = 0;      ///< index into Fabric::link_class_names(): host->leaf, LL, global ...
};

/// Any graph of hosts and switches with numbered ports, cabled by directed links.
///
/// Hosts are nodes 0..num_hosts()-1, switches follow, in the order they were added (for
/// builders: cabling order). A host has one NIC: its port 1, cabled to a switch. Every link
/// has a rate, a latency and a named *link class* (host->leaf, leaf->spine, PERCS LL/LR/D,
/// dragonfly local/global, ...); views per class replace views per level. Levels are
/// optional node information (see Node::level).
class Fabric {
public:
  NodeId add_host(const std::string& name);
  /// A switch with `num_ports` ports; `level` and `position` are optional tree information.
  NodeId add_switch(const std::string& name, int32_t num_ports, int32_t level = kNoLevel, int32_t position = 0);
  /// Connect port pa of a to port pb of b with one cable: links a→b of class `class_ab` and
  /// b→a of class `class_ba` (indices from link_class()).
  void connect(NodeId a, int32_t pa, NodeId b, int32_t pb, double gbps, double latency_seconds, int32_t class_ab,
               int32_t class_ba);
  /// The same, with classes named after the ends' levels ("leaf->spine", "spine->leaf"),
  /// or "host->switch", "switch->switch", ... where levels are unknown.
  void connect(NodeId a, int32_t pa, NodeId b, int32_t pb, double gbps, double latency_seconds);

  /// The index of a link class, added on first use.
  int32_t link_class(const std::string& name);
  const std::vector<std::string>& link_class_names() const { return class_names_; }

  int32_t num_hosts() const { return num_hosts_; }
  int32_t num_nodes() const { return static_cast<int32_t>(nodes_.size()); }
  int32_t num_switches() const { return num_nodes() - num_hosts_; }
  int32_t num_links() const { return static_cast<int32_t>(links_.size()); }
  /// Highest switch level set (0 when no switch has a level).
  int32_t num_levels() const { return num_levels_; }
  /// The name of a level in a tree of num_levels() levels: host, leaf, spine, core.
  std::string level_name(int32_t level) const;
  /// Set the level of every switch whose level is unknown from its distance to the nearest
  /// host (leaves 1, ...): importers call it so that per-level views exist.
  void infer_levels();

  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  const Link& link(LinkId id) const { return links_.at(static_cast<size_t>(id)); }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }

  /// The node with this name, if there is one.
  std::optional<NodeId> find(const std::string& name) const;

  /// The single link leaving host h (its NIC) and the switch it reaches.
  LinkId host_uplink(NodeId h) const { return nodes_[static_cast<size_t>(h)].ports[1].out_link; }
  NodeId host_switch(NodeId h) const { return nodes_[static_cast<size_t>(h)].ports[1].peer; }

  /// Record a node's InfiniBand addresses (importers).
  void set_address(NodeId n, uint64_t guid, uint64_t port_guid, int32_t lid);

  /// Rename hosts (same count, names unique and non-empty), e.g. to model a cluster whose
  /// hostnames do not follow the cabling order.
  void rename_hosts(const std::vector<std::string>& names);

  /// Set when the fabric is a generalized fat tree: the shape dmodk routing needs.
  const std::optional<XgftShape>& xgft() const { return xgft_; }
  void set_xgft(XgftShape shape) { xgft_ = std::move(shape); }

  /// Groups of a two-level direct network (PERCS supernodes, dragonfly groups): the group of
  /// every switch, indexed by switch id − num_hosts(); empty for other fabrics. Group
  /// routing (direct, indirect) needs it: links inside a group are local, between groups global.
  const std::vector<int32_t>& switch_groups() const { return switch_groups_; }
  int32_t switch_group(NodeId sw) const { return switch_groups_[static_cast<size_t>(sw - num_hosts_)]; }
  int32_t num_groups() const { return num_groups_; }
  /// Set the group of every switch (one entry per switch, groups numbered 0..G−1).
  void set_switch_groups(std::vector<int32_t> groups);

  /// A one-line description for logs.
  std::string describe() const { return description_; }
  void set_description(std::string d) { description_ = std::move(d); }

  /// InfiniBand nodes an importer left out (SHARP aggregation nodes): their base LID and port
  /// GUID, so that forwarding-table entries toward them are known for what they are.
  void add_left_out(uint64_t port_guid, int32_t lid) {
    if (port_guid != 0) left_out_guids_.insert(port_guid);
    if (lid != 0) left_out_lids_.insert(lid);
  }
  bool left_out(uint64_t port_guid, int32_t lid) const {
    return (port_guid != 0 && left_out_guids_.contains(port_guid)) || (lid != 0 && left_out_lids_.contains(lid));
  }

  /// Cables an importer gave the default rate (fabric.link_gbps): their lines carry none (an
  /// ibsim net file); a capture's every line does, and the default is then read by none.
  int64_t default_rate_cables() const { return default_rate_cables_; }
  void set_default_rate_cables(int64_t n) { default_rate_cables_ = n; }

private:
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::string> class_names_;
  std::unordered_map<std::string, int32_t> class_index_;
  std::unordered_map<std::string, NodeId> by_name_;
  int32_t num_hosts_ = 0;
  int32_t num_levels_ = 0;
  std::optional<XgftShape> xgft_;
  std::vector<int32_t> switch_groups_;
  int32_t num_groups_ = 0;
  std::string description_;
  std::unordered_set<uint64_t> left_out_guids_;  // per LFT entry toward a LID the topology lacks
  std::unordered_set<int32_t> left_out_lids_;
  int64_t default_rate_cables_ = 0;
};

}  // namespace daqnet::fabric
