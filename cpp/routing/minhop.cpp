// daqnet — plan, simulate and benchmark event-building networks.
#include <limits>
#include <vector>

#include "routing/routing.hpp"

namespace daqnet::routing {

std::shared_ptr<TableRouting> minhop(const std::shared_ptr<const Fabric>& fabric, const Progress& progress) {
  const Fabric& f = *fabric;
  auto r = std::make_shared<TableRouting>(fabric, "minhop");
  const int32_t H = f.num_hosts();
  constexpr int32_t kFar = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> dist(static_cast<size_t>(f.num_nodes()));
  // Routes through each switch port so far: the balance OpenSM's minhop also keeps.
  std::vector<std::vector<int32_t>> used(static_cast<size_t>(f.num_nodes()));
  for (NodeId s = H; s < f.num_nodes(); ++s) used[static_cast<size_t>(s)].assign(f.node(s).ports.size(), 0);
  std::vector<NodeId> frontier, next;
  // A destination's breadth-first search and entries cost about a walk per switch.
  const int64_t per_destination = f.num_switches();
  ProgressMeter meter(progress, H * per_destination + r->finalize_work(), "route building (minhop)");
  for (NodeId d = 0; d < H; ++d) {
    meter.advance(per_destination);
    const NodeId leaf = f.host_switch(d);
    if (leaf < 0) throw Error("routing (minhop): host " + f.node(d).name + " is not cabled");
    std::fill(dist.begin(), dist.end(), kFar);
    dist[static_cast<size_t>(leaf)] = 0;
    frontier.assign(1, leaf);
    // Hops from every switch to the destination's leaf, over switch-to-switch cables.
    while (!frontier.empty()) {
      next.clear();
      for (NodeId n : frontier)
        for (const auto& p : f.node(n).ports)
          if (p.peer >= 0 && !f.node(p.peer).is_host && dist[static_cast<size_t>(p.peer)] == kFar) {
            dist[static_cast<size_t>(p.peer)] = dist[static_cast<size_t>(n)] + 1;
            next.push_back(p.peer);
          }
      frontier.swap(next);
    }
    r->set_port(leaf, d, f.node(d).ports[1].peer_port);
    for (NodeId s = H; s < f.num_nodes(); ++s) {
      // A switch with hosts that no cable path joins to this one: the fabric is in pieces
      // (it read "black hole: switch leaf0 has no route to node05").
      if (dist[static_cast<size_t>(s)] == kFar && s != leaf) {
        for (const auto& p : f.node(s).ports)
          if (p.peer >= 0 && f.node(p.peer).is_host)
            throw Error("routing (minhop): the fabric is not connected: no cable path joins " + f.node(s).name +
                        " (host " + f.node(p.peer).name + ") to " + f.node(leaf).name + " (host " + f.node(d).name +
                        ")");
      }
      if (s == leaf || dist[static_cast<size_t>(s)] == kFar) continue;
      const auto& ports = f.node(s).ports;
      auto& count = used[static_cast<size_t>(s)];
      int32_t best = 0;
      for (size_t p = 1; p < ports.size(); ++p) {
        const NodeId peer = ports[p].peer;
        if (peer < 0 || f.node(peer).is_host || dist[static_cast<size_t>(peer)] != dist[static_cast<size_t>(s)] - 1)
          continue;
        if (best == 0 || count[p] < count[static_cast<size_t>(best)]) best = static_cast<int32_t>(p);
      }
      ++count[static_cast<size_t>(best)];
      r->set_port(s, d, best);
    }
  }
  r->finalize(meter);
  return r;
}

}  // namespace daqnet::routing
