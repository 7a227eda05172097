// daqnet — plan, simulate and benchmark event-building networks.
#include <limits>

#include "common/error.hpp"
#include "routing/routing.hpp"

namespace daqnet::routing {

TableRouting::TableRouting(std::shared_ptr<const Fabric> fabric, std::string engine)
    : Routing(std::move(fabric), std::move(engine)) {
  for (const auto& n : fabric_->nodes())
    if (n.ports.size() > std::numeric_limits<uint16_t>::max())
      throw Error("routing: switch " + n.name + " has too many ports");
  const auto entries = static_cast<uint64_t>(fabric_->num_switches()) * static_cast<uint64_t>(fabric_->num_hosts());
  if (entries > (uint64_t{1} << 32))
    throw Error("routing: " + std::to_string(fabric_->num_switches()) + " switches x " +
                std::to_string(fabric_->num_hosts()) + " hosts is more forwarding entries than daqnet holds (2^32)");
  table_.assign(entries, 0);
}

void TableRouting::set_port(NodeId sw, NodeId dst_host, int32_t port) {
  const auto& f = *fabric_;
  if (sw < f.num_hosts() || sw >= f.num_nodes())
    throw Error("routing: node " + std::to_string(sw) + " is not a switch");
  if (dst_host < 0 || dst_host >= f.num_hosts())
    throw Error("routing: node " + std::to_string(dst_host) + " is not a host");
  const auto& n = f.node(sw);
  if (port < 1 || port >= static_cast<int32_t>(n.ports.size()))
    throw Error("routing: switch " + n.name + " has no port " + std::to_string(port) + " (ports 1.." +
                std::to_string(n.ports.size() - 1) + ")");
  if (n.ports[static_cast<size_t>(port)].peer < 0)
    throw Error("routing: port " + std::to_string(port) + " of switch " + n.name + " is not cabled");
  table_[static_cast<size_t>(sw - f.num_hosts()) * static_cast<size_t>(f.num_hosts()) + static_cast<size_t>(dst_host)] =
      static_cast<uint16_t>(port);
}

void TableRouting::finalize() {
  const auto& f = *fabric_;
  const int32_t H = f.num_hosts();
  const std::string who = "routing (" + engine_ + ")";

  // Edge switches: those with hosts, in order of first appearance.
  std::vector<int32_t> edge_of_switch(static_cast<size_t>(f.num_nodes()), -1);
  std::vector<NodeId> edges;
  edge_index_.assign(static_cast<size_t>(H), -1);
  uplink_.assign(static_cast<size_t>(H), -1);
  for (NodeId h = 0; h < H; ++h) {
    const NodeId sw = f.host_switch(h);
    if (sw < 0) throw Error("fabric: host " + f.node(h).name + " is not cabled");
    if (f.node(sw).is_host) throw Error("fabric: host " + f.node(h).name + " is cabled to another host");
    if (edge_of_switch[static_cast<size_t>(sw)] < 0) {
      edge_of_switch[static_cast<size_t>(sw)] = static_cast<int32_t>(edges.size());
      edges.push_back(sw);
    }
    edge_index_[static_cast<size_t>(h)] = edge_of_switch[static_cast<size_t>(sw)];
    uplink_[static_cast<size_t>(h)] = f.host_uplink(h);
  }

  std::vector<uint32_t> offsets;
  offsets.reserve(edges.size() * static_cast<size_t>(H) + 1);
  std::vector<LinkId> links;
  std::vector<int64_t> stamp(static_cast<size_t>(f.num_nodes()), -1);
  std::vector<NodeId> trail;
  int32_t max_hops = 0;
  int64_t walk = 0;
  for (NodeId e : edges) {
    for (NodeId d = 0; d < H; ++d, ++walk) {
      offsets.push_back(static_cast<uint32_t>(links.size()));
      const size_t start = links.size();
      NodeId node = e;
      trail.clear();
      while (true) {
        if (f.node(node).is_host) {
          if (node != d)
            throw RouteError(who + ": traffic for " + f.node(d).name + " is delivered to host " + f.node(node).name +
                                 " by switch " + f.node(trail.back()).name,
                             trail.back(), d);
          break;
        }
        if (stamp[static_cast<size_t>(node)] == walk) {
          std::string msg = who + ": loop toward " + f.node(d).name + ": ";
          for (NodeId t : trail) {
            msg += f.node(t).name;
            msg += " -> ";
          }
          msg += f.node(node).name;
          throw RouteError(msg, trail.back(), d);
        }
        stamp[static_cast<size_t>(node)] = walk;
        trail.push_back(node);
        const int32_t p = port(node, d);
        if (p == 0) {
          std::string msg = who + ": black hole: switch " + f.node(node).name + " has no route to " + f.node(d).name;
          if (trail.size() > 1) {
            msg += " (reached from ";
            msg += f.node(trail.front()).name;
            msg += ')';
          }
          throw RouteError(msg, node, d);
        }
        const LinkId l = f.node(node).ports[static_cast<size_t>(p)].out_link;
        links.push_back(l);
        node = f.link(l).dst;
      }
      if (links.size() > std::numeric_limits<uint32_t>::max()) throw Error(who + ": route cache too large");
      max_hops = std::max(max_hops, static_cast<int32_t>(links.size() - start) + 1);
    }
  }
  offsets.push_back(static_cast<uint32_t>(links.size()));
  offsets_ = std::move(offsets);
  links_ = std::move(links);
  max_hops_ = max_hops;
}

void TableRouting::paths(NodeId src, NodeId dst, uint64_t, PathSet& out) const {
  out.clear();
  out.begin();
  out.push(uplink(src));
  for (LinkId l : tail(src, dst)) out.push(l);
}

}  // namespace daqnet::routing
