// daqnet — plan, simulate and benchmark event-building networks.
#include <algorithm>
#include <bit>
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

namespace {

// Destinations per block of finalize(): every switch's entries for one block fit in the
// processor's caches (about 2 MB), which the walks from all edge switches then reuse.
size_t destination_block(size_t switches) {
  return std::max<size_t>(64, (size_t{1} << 20) / std::max<size_t>(switches, 1));
}

}  // namespace

int64_t TableRouting::finalize_work() const {
  const auto& f = *fabric_;
  std::vector<char> seen(static_cast<size_t>(f.num_nodes()), 0);
  int64_t edges = 0;
  for (NodeId h = 0; h < f.num_hosts(); ++h) {
    const NodeId sw = f.host_switch(h);
    if (sw >= 0 && !seen[static_cast<size_t>(sw)]) {
      seen[static_cast<size_t>(sw)] = 1;
      ++edges;
    }
  }
  return 2 * edges * f.num_hosts();
}

void TableRouting::finalize(const Progress& progress) {
  ProgressMeter meter(progress, finalize_work(), "route building");
  finalize(meter);
}

// The slow walk with node names, for the message of a route that trace() rejected.
void TableRouting::route_error(NodeId sw, NodeId dst) const {
  const NodeId d = dst;
  const auto& f = *fabric_;
  const std::string who = "routing (" + engine_ + ")";
  std::vector<char> seen(static_cast<size_t>(f.num_nodes()), 0);
  std::vector<NodeId> trail;
  NodeId node = sw;
  while (true) {
    if (f.node(node).is_host)
      throw RouteError(who + ": traffic for " + f.node(d).name + " is delivered to host " + f.node(node).name +
                           " by switch " + f.node(trail.back()).name,
                       trail.back(), d);
    if (seen[static_cast<size_t>(node)]) {
      std::string msg = who + ": loop toward " + f.node(d).name + ": ";
      for (NodeId t : trail) {
        msg += f.node(t).name;
        msg += " -> ";
      }
      msg += f.node(node).name;
      // The switches of the loop itself (the trail may lead into it).
      std::vector<NodeId> loop(std::find(trail.begin(), trail.end(), node), trail.end());
      throw RouteError(msg, trail.back(), d, std::move(loop));
    }
    seen[static_cast<size_t>(node)] = 1;
    trail.push_back(node);
    const int32_t p = port(node, d);
    const auto& ports = f.node(node).ports;
    if (p == 0) {
      std::string msg = who + ": black hole: switch " + f.node(node).name + " has no route to " + f.node(d).name;
      if (trail.size() > 1) {
        msg += " (reached from ";
        msg += f.node(trail.front()).name;
        msg += ')';
      }
      throw RouteError(msg, node, d);
    }
    if (static_cast<size_t>(p) >= ports.size() || ports[static_cast<size_t>(p)].peer < 0)
      throw RouteError(who + ": switch " + f.node(node).name + " sends traffic for " + f.node(d).name + " to port " +
                           std::to_string(p) + ", which is not cabled",
                       node, d);
    node = f.link(ports[static_cast<size_t>(p)].out_link).dst;
  }
}

int32_t TableRouting::trace(NodeId sw, NodeId d, std::vector<uint16_t>& out) const {
  const auto H = static_cast<size_t>(fabric_->num_hosts());
  const auto shift = static_cast<size_t>(std::countr_zero(ports_));
  const auto limit = static_cast<size_t>(fabric_->num_switches());
  size_t row = static_cast<size_t>(sw) - H;
  out.clear();
  while (true) {
    const uint16_t p = table_[row * H + static_cast<size_t>(d)];
    if (p == 0 || p >= ports_) route_error(sw, d);
    const Hop& h = hops_[(row << shift) + p];
    if (h.link < 0) route_error(sw, d);
    out.push_back(p);
    if (h.next == sink_) {  // reached a host
      if (fabric_->link(h.link).dst != d) route_error(sw, d);
      return static_cast<int32_t>(out.size());
    }
    if (out.size() > limit) route_error(sw, d);  // more hops than switches: a loop
    row = static_cast<size_t>(h.next) >> shift;
  }
}

void TableRouting::finalize(ProgressMeter& meter) {
  const auto& f = *fabric_;
  const int32_t H = f.num_hosts();
  const auto S = static_cast<size_t>(f.num_switches());

  // Edge switches: those with hosts, in order of first appearance.
  std::vector<int32_t> edge_of_switch(static_cast<size_t>(f.num_nodes()), -1);
  edges_.clear();
  edge_index_.assign(static_cast<size_t>(H), -1);
  uplink_.assign(static_cast<size_t>(H), -1);
  for (NodeId h = 0; h < H; ++h) {
    const NodeId sw = f.host_switch(h);
    if (sw < 0) throw Error("fabric: host " + f.node(h).name + " is not cabled");
    if (f.node(sw).is_host) throw Error("fabric: host " + f.node(h).name + " is cabled to another host");
    if (edge_of_switch[static_cast<size_t>(sw)] < 0) {
      edge_of_switch[static_cast<size_t>(sw)] = static_cast<int32_t>(edges_.size());
      edges_.push_back(sw);
    }
    edge_index_[static_cast<size_t>(h)] = edge_of_switch[static_cast<size_t>(sw)];
    uplink_[static_cast<size_t>(h)] = f.host_uplink(h);
  }

  // Hop table: rows of a power-of-two length so that a row base turns back into a row by
  // a shift in trace().
  size_t most = 2;
  for (NodeId s = H; s < f.num_nodes(); ++s) most = std::max(most, f.node(s).ports.size());
  ports_ = std::bit_ceil(most);
  if ((S + 1) * ports_ > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw Error("routing: too many switch ports for the hop table");
  wide_ = ports_ > 256;
  sink_ = static_cast<int32_t>(S * ports_);
  hops_.assign((S + 1) * ports_, Hop{-1, sink_});
  for (NodeId s = H; s < f.num_nodes(); ++s) {
    const auto& ports = f.node(s).ports;
    for (size_t p = 1; p < ports.size(); ++p) {
      if (ports[p].peer < 0) continue;
      const NodeId peer = ports[p].peer;
      hops_[static_cast<size_t>(s - H) * ports_ + p] = {
          ports[p].out_link,
          f.node(peer).is_host ? sink_ : static_cast<int32_t>(static_cast<size_t>(peer - H) * ports_)};
    }
  }
  edge_base_.resize(edges_.size());
  for (size_t e = 0; e < edges_.size(); ++e)
    edge_base_[e] = static_cast<int32_t>(static_cast<size_t>(edges_[e] - H) * ports_);

  // Pass 1 checks every route and finds the longest; pass 2 stores them at that stride.
  // Both go through the destinations in blocks (see destination_block).
  const auto Hs = static_cast<size_t>(H);
  const size_t B = destination_block(S);
  std::vector<uint16_t> route;
  size_t longest = 0;
  for (size_t lo = 0; lo < Hs; lo += B) {
    const size_t hi = std::min(Hs, lo + B);
    for (NodeId e : edges_)
      for (size_t d = lo; d < hi; ++d)
        longest = std::max(longest, static_cast<size_t>(trace(e, static_cast<NodeId>(d), route)));
    meter.advance(static_cast<int64_t>(edges_.size() * (hi - lo)));
  }
  const size_t cells = edges_.size() * Hs * longest;
  routes8_.clear();
  routes16_.clear();
  if (wide_)
    routes16_.assign(cells, 0);
  else
    routes8_.assign(cells, 0);
  for (size_t lo = 0; lo < Hs; lo += B) {
    const size_t hi = std::min(Hs, lo + B);
    for (size_t e = 0; e < edges_.size(); ++e) {
      for (size_t d = lo; d < hi; ++d) {
        trace(edges_[e], static_cast<NodeId>(d), route);
        const auto at = static_cast<std::ptrdiff_t>((e * Hs + d) * longest);
        if (wide_)
          std::copy(route.begin(), route.end(), routes16_.begin() + at);
        else
          std::transform(route.begin(), route.end(), routes8_.begin() + at,
                         [](uint16_t p) { return static_cast<uint8_t>(p); });
      }
    }
    meter.advance(static_cast<int64_t>(edges_.size() * (hi - lo)));
  }
  stride_ = longest;
  max_hops_ = static_cast<int32_t>(longest) + 1;
  meter.finish();
}

size_t TableRouting::memory_bytes() const {
  return table_.size() * sizeof(uint16_t) + routes8_.size() + routes16_.size() * sizeof(uint16_t) +
         hops_.size() * sizeof(Hop) + (edge_index_.size() + uplink_.size() + edge_base_.size()) * sizeof(int32_t);
}

void TableRouting::paths(NodeId src, NodeId dst, uint64_t, PathSet& out) const {
  out.clear();
  out.begin();
  out.push(uplink(src));
  for_each_tail(src, dst, [&](LinkId l) { out.push(l); });
}

}  // namespace daqnet::routing
