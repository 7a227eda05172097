// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <string>

#include "common/error.hpp"
#include "routing/routing.hpp"

namespace daqnet::routing::detail {

/// Fill up/down tables of a generalized fat tree. Down routes are unique (the child whose
/// subtree holds the destination); `choose_up(switch, level, position, dst, up_ports)`
/// returns the up index in [0, up_ports) for destinations outside the switch's subtree.
template <class ChooseUp>
std::shared_ptr<TableRouting> fat_tree_routes(const std::shared_ptr<const Fabric>& fabric, const std::string& engine,
                                              ChooseUp choose_up) {
  if (!fabric->xgft())
    throw Error("routing.engine = \"" + engine +
                "\" needs a fat tree built by daqnet (fabric.kind = \"fat-tree\"); for this fabric use engine "
                "\"minhop\", or \"lft-dump\" with the subnet manager's tables");
  const auto& s = *fabric->xgft();
  auto r = std::make_shared<TableRouting>(fabric, engine);
  const int32_t H = fabric->num_hosts();
  for (NodeId sw = H; sw < fabric->num_nodes(); ++sw) {
    const auto& n = fabric->node(sw);
    const int32_t l = n.level;
    const int64_t M = s.hosts_below(l);
    const int64_t M_below = s.hosts_below(l - 1);
    const int64_t W = s.parallel(l);
    const int32_t m = s.down_ports(l);
    const int32_t w = s.up_ports(l);
    const int64_t subtree = n.position / W;
    for (NodeId d = 0; d < H; ++d) {
      if (d / M == subtree) {
        r->set_port(sw, d, static_cast<int32_t>((d / M_below) % m) + 1);
      } else {
        r->set_port(sw, d, m + choose_up(sw, l, n.position, d, w) + 1);
      }
    }
  }
  r->finalize();
  return r;
}

}  // namespace daqnet::routing::detail
