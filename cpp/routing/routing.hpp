// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fabric/fabric.hpp"

namespace daqnet::routing {

using fabric::Fabric;
using fabric::LinkId;
using fabric::NodeId;

/// Destination-based forwarding tables: for every switch and destination host, the output
/// port (as an InfiniBand linear forwarding table). Port 0 means "no entry".
///
/// After the tables are filled, finalize() walks every route from every switch that has
/// hosts to every destination, rejects black holes, loops and misdelivery with a message
/// naming the switch and destination, and caches each route as a list of directed links.
/// Routes depend only on (first switch, destination), so the cache is per edge switch.
class Routing {
public:
  /// Empty tables over `fabric`; `engine` names where the tables come from, for messages.
  Routing(std::shared_ptr<const Fabric> fabric, std::string engine);

  const Fabric& fabric() const { return *fabric_; }
  std::shared_ptr<const Fabric> fabric_ptr() const { return fabric_; }
  const std::string& engine() const { return engine_; }

  void set_port(NodeId sw, NodeId dst_host, int32_t port);
  int32_t port(NodeId sw, NodeId dst_host) const {
    return table_[static_cast<size_t>(sw - fabric_->num_hosts()) * static_cast<size_t>(fabric_->num_hosts()) +
                  static_cast<size_t>(dst_host)];
  }

  /// Check every route and build the route cache; throws daqnet::Error on a bad table.
  void finalize();
  bool finalized() const { return !offsets_.empty(); }

  /// The directed links from host src to host dst (empty when src == dst).
  /// Hot path: no allocation, no check beyond debug assertions.
  std::span<const LinkId> tail(NodeId src, NodeId dst) const {
    const size_t k = static_cast<size_t>(edge_index_[static_cast<size_t>(src)]) *
                         static_cast<size_t>(fabric_->num_hosts()) + static_cast<size_t>(dst);
    return {links_.data() + offsets_[k], links_.data() + offsets_[k + 1]};
  }
  void path(NodeId src, NodeId dst, std::vector<LinkId>& out) const;
  LinkId uplink(NodeId src) const { return uplink_[static_cast<size_t>(src)]; }

  /// Raw views of the route cache for hot loops: the links from edge switch e toward host
  /// d are links()[offsets()[e·H + d] .. offsets()[e·H + d + 1]), e = edge_index()[src].
  const LinkId* cache_links() const { return links_.data(); }
  const uint32_t* cache_offsets() const { return offsets_.data(); }
  const int32_t* edge_index() const { return edge_index_.data(); }
  const LinkId* uplinks() const { return uplink_.data(); }

  /// Longest route in links (host to host).
  int32_t max_hops() const { return max_hops_; }

private:
  std::shared_ptr<const Fabric> fabric_;
  std::string engine_;
  std::vector<uint16_t> table_;   // (switch - num_hosts) * num_hosts + dst → port
  std::vector<int32_t> edge_index_;  // host → index of its edge switch in the cache
  std::vector<LinkId> uplink_;       // host → its NIC link
  std::vector<uint32_t> offsets_;    // (edge, dst) → first link in links_
  std::vector<LinkId> links_;        // routes from edge switches, down to the host
  int32_t max_hops_ = 0;
};

/// D-mod-K on a generalized fat tree (as OpenSM's ftree and SimGrid's FatTreeZone): a
/// level-l switch sends traffic for host d, if d is not below it, to up-port index
/// floor(d / (w_1·…·w_l)) mod w_{l+1}; down routes are unique.
std::shared_ptr<Routing> dmodk(std::shared_ptr<const Fabric> fabric);

/// Like dmodk, but every (switch, destination) up-port is drawn at random (seeded,
/// independent of platform and of the order entries are computed in).
std::shared_ptr<Routing> random_uplinks(std::shared_ptr<const Fabric> fabric, uint64_t seed);

/// Read tables from the plain-text format documented in docs/routing-table.md:
/// one "<switch> <destination host> <output port>" per line, '#' starts a comment.
/// Errors name the file and line.
std::shared_ptr<Routing> read_table_file(std::shared_ptr<const Fabric> fabric, const std::string& path);

/// Write the tables in the same format (complete: every switch, every destination).
void write_table_file(const Routing& routing, const std::string& path);

}  // namespace daqnet::routing
