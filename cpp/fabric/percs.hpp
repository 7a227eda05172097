// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>

#include "fabric/fabric.hpp"

namespace daqnet::fabric {

/// An IBM PERCS-like two-level direct network (scenario [fabric] kind = "percs").
///
/// Every node (a QCM of four POWER7 chips) has its own hub chip: the host is the node, the
/// switch its hub. Hubs of a drawer are cabled all-to-all by LL links; every hub is cabled
/// to every hub of the other drawers of its supernode by LR links (so a supernode is one
/// hop across); supernodes are cabled all-to-all by `d_links_per_pair` D links per pair.
///
/// D links are dealt round-robin over the hubs of a supernode: supernode i lists its D
/// links by peer supernode j (ascending, skipping i), then copy m, as c = q·L + m (q the
/// peer's index among the others, L = d_links_per_pair); link c sits on hub c mod (hubs
/// per supernode), at that hub's D port c div (hubs per supernode). Each end applies the
/// rule on its own side, so the hubs of both supernodes share the D links evenly.
///
/// Defaults from the public PERCS description: LL 24 GB/s, LR 5 GB/s, D 10 GB/s per
/// direction, 8 nodes per drawer, 4 drawers per supernode. The host → hub connection is
/// 192 GB/s (1536 Gb/s). Link classes: host->hub, hub->host, LL, LR, D.
struct PercsSpec {
  int32_t supernodes = 2;
  int32_t drawers_per_supernode = 4;
  int32_t nodes_per_drawer = 8;
  int32_t d_links_per_pair = 1;
  double ll_gbps = 192;
  double lr_gbps = 40;
  double d_gbps = 80;
  double host_gbps = 1536;
  double latency_seconds = 100e-9;
};

/// Build the network; throws daqnet::Error naming the offending parameter. Hosts are named
/// sn<supernode>-d<drawer>-n<node> (zero-padded), hubs hub<supernode>-<drawer>-<node>;
/// host i's hub is switch num_hosts + i, and switch groups are supernodes.
Fabric build_percs(const PercsSpec& spec);

}  // namespace daqnet::fabric
