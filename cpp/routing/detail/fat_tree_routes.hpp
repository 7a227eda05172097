// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <string>

#include "common/error.hpp"
#include "common/progress.hpp"
#include "routing/routing.hpp"

namespace daqnet::routing::detail {

/// Fill up/down tables of a generalized fat tree. Down routes are unique (the child whose
/// subtree holds the destination); `choose_up(switch, level, position, dst, up_ports)`
/// returns the up index in [0, up_ports) for destinations outside the switch's subtree.
/// Rows are written in blocks of destinations (every entry of a block has the same kind),
/// then finalize() checks the routes; progress counts a table entry as a quarter of a route
/// walk (about what each costs).
template <class ChooseUp>
std::shared_ptr<TableRouting> fat_tree_routes(const std::shared_ptr<const Fabric>& fabric, const std::string& engine,
                                              ChooseUp choose_up, const Progress& progress) {
  if (!fabric->xgft())
    throw Error("routing.engine = \"" + engine + "\" needs a fat tree built by daqnet (fabric.kind = \"fat-tree\"); " +
                (fabric->num_groups() > 0
                     // PERCS and dragonfly: the engines made for them (docs/direct-networks.md).
                     ? std::string("for this direct network use engine \"direct\" (minimal) or \"indirect\" "
                                   "(Valiant)")
                     : std::string("for this fabric use engine \"minhop\", or \"lft-dump\" with the subnet "
                                   "manager's tables")));
  const auto& s = *fabric->xgft();
  auto r = std::make_shared<TableRouting>(fabric, engine);
  const int32_t H = fabric->num_hosts();
  const int64_t row_work = std::max<int64_t>(1, H / 4);
  ProgressMeter meter(progress, fabric->num_switches() * row_work + r->finalize_work(),
                      "route building (" + engine + ")");
  for (NodeId sw = H; sw < fabric->num_nodes(); ++sw) {
    const auto& n = fabric->node(sw);
    const int32_t l = n.level;
    const int64_t M = s.hosts_below(l);
    const int64_t M_below = s.hosts_below(l - 1);
    const int64_t W = s.parallel(l);
    const int32_t m = s.down_ports(l);
    const int32_t w = s.up_ports(l);
    const int64_t subtree = n.position / W;
    auto row = r->row(sw);
    // Destinations below this switch: a block of M hosts, M_below per child.
    const int64_t lo = std::min<int64_t>(subtree * M, H), hi = std::min<int64_t>(lo + M, H);
    for (int64_t d = 0; d < lo; ++d)
      row[static_cast<size_t>(d)] = static_cast<uint16_t>(m + choose_up(sw, l, n.position, NodeId(d), w) + 1);
    for (int64_t d = lo; d < hi; ++d) row[static_cast<size_t>(d)] = static_cast<uint16_t>((d - lo) / M_below + 1);
    for (int64_t d = hi; d < H; ++d)
      row[static_cast<size_t>(d)] = static_cast<uint16_t>(m + choose_up(sw, l, n.position, NodeId(d), w) + 1);
    meter.advance(row_work);
  }
  r->finalize(meter);
  return r;
}

}  // namespace daqnet::routing::detail
