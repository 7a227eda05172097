// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/progress.hpp"
#include "common/random.hpp"
#include "fabric/fabric.hpp"

namespace daqnet::routing {

using fabric::Fabric;
using fabric::LinkId;
using fabric::NodeId;

/// Paths of one (source, destination) pair: each a list of directed links from the source
/// host's NIC link to the destination host's last link, with a weight (the share of the
/// pair's traffic it carries; the weights of a set sum to 1).
class PathSet {
public:
  void clear() {
    links_.clear();
    ends_.clear();
    weights_.clear();
  }
  void add(std::span<const LinkId> links, double weight = 1.0) {
    links_.insert(links_.end(), links.begin(), links.end());
    ends_.push_back(static_cast<uint32_t>(links_.size()));
    weights_.push_back(weight);
  }
  /// Start a path to be filled with push() (weight 1 unless set_weight()).
  void begin() {
    ends_.push_back(static_cast<uint32_t>(links_.size()));
    weights_.push_back(1.0);
  }
  void push(LinkId l) {
    links_.push_back(l);
    ++ends_.back();
  }
  void set_weight(double w) { weights_.back() = w; }

  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  std::span<const LinkId> path(size_t k) const {
    const uint32_t first = k == 0 ? 0 : ends_[k - 1];
    return {links_.data() + first, links_.data() + ends_[k]};
  }
  double weight(size_t k) const { return weights_[k]; }
  /// Every link of every path, in path order (a link shared by two paths appears twice).
  std::span<const LinkId> all_links() const { return links_; }

private:
  std::vector<LinkId> links_;
  std::vector<uint32_t> ends_;
  std::vector<double> weights_;
};

/// Routing: for every (source host, destination host) pair, one path or a few weighted
/// paths of directed links. Engines differ in how they make them — destination-based
/// forwarding tables (TableRouting: dmodk, random, imported tables) or explicit paths
/// (PathRouting) — and the analysis and the simulations consume paths without caring.
///
/// A path may depend on the flow (`flow`, a key the caller derives from the step or
/// transfer) for engines that draw routes per flow (e.g. Valiant); the others ignore it.
class Routing {
public:
  Routing(std::shared_ptr<const Fabric> fabric, std::string engine);
  virtual ~Routing() = default;
  Routing(const Routing&) = delete;
  Routing& operator=(const Routing&) = delete;

  const Fabric& fabric() const { return *fabric_; }
  std::shared_ptr<const Fabric> fabric_ptr() const { return fabric_; }
  const std::string& engine() const { return engine_; }

  /// The paths from host src to host dst (src != dst) into `out` (cleared first).
  virtual void paths(NodeId src, NodeId dst, uint64_t flow, PathSet& out) const = 0;
  /// Whether every pair has exactly one path, the same for every flow.
  virtual bool single_path() const = 0;
  /// Links on the longest host-to-host path.
  virtual int32_t max_hops() const = 0;

  /// The (first) path from src to dst as links, for tools and tests (empty when src == dst).
  void path(NodeId src, NodeId dst, std::vector<LinkId>& out) const;

protected:
  std::shared_ptr<const Fabric> fabric_;
  std::string engine_;
};

/// A forwarding table that does not deliver: a loop, a black hole or misdelivery found by
/// TableRouting::finalize(). Names the (switch, destination) entry at fault so that table
/// readers can point at the file line that holds it (port() == 0: the entry is missing).
class RouteError : public Error {
public:
  RouteError(const std::string& what, NodeId sw, NodeId dst, std::vector<NodeId> loop = {})
      : Error(what), sw_(sw), dst_(dst), loop_(std::move(loop)) {}
  NodeId switch_node() const { return sw_; }
  NodeId destination() const { return dst_; }
  /// For a loop: the switches on it, whose entries for destination() form it.
  const std::vector<NodeId>& loop() const { return loop_; }

private:
  NodeId sw_;
  NodeId dst_;
  std::vector<NodeId> loop_;
};

/// Destination-based forwarding tables: for every switch and destination host, the output
/// port (as an InfiniBand linear forwarding table). Port 0 means "no entry".
///
/// After the tables are filled, finalize() walks every route from every switch that has
/// hosts to every destination, rejects black holes, loops and misdelivery with a message
/// naming the switch and destination, and caches each route. Routes depend only on (first
/// switch, destination), so the cache is per edge switch, not per host pair, and it holds
/// output *ports* (one byte each below 256 ports) at a fixed stride of the longest route:
/// a link id is found from (switch, port) in a small hop table that stays in the
/// processor's caches. At 27,648 hosts this is 160 MB where a list of link ids with
/// offsets took 760 MB. The analysis walks it directly (the fast path of daqnet).
class TableRouting final : public Routing {
public:
  /// Empty tables over `fabric`; `engine` names where the tables come from, for messages.
  TableRouting(std::shared_ptr<const Fabric> fabric, std::string engine);

  void set_port(NodeId sw, NodeId dst_host, int32_t port);
  int32_t port(NodeId sw, NodeId dst_host) const {
    return table_[static_cast<size_t>(sw - fabric_->num_hosts()) * static_cast<size_t>(fabric_->num_hosts()) +
                  static_cast<size_t>(dst_host)];
  }
  /// The whole row of switch sw (one port per destination host), for generators that fill
  /// tables fast; unlike set_port() nothing is checked until finalize() walks the routes.
  std::span<uint16_t> row(NodeId sw) {
    const auto H = static_cast<size_t>(fabric_->num_hosts());
    return {table_.data() + static_cast<size_t>(sw - fabric_->num_hosts()) * H, H};
  }

  /// Check every route and build the route cache; throws daqnet::Error on a bad table and
  /// daqnet::Interrupted when `progress` asks to stop. Reports progress in routes walked
  /// (each route from an edge switch twice), after `meter` if given.
  void finalize(const Progress& progress = {});
  void finalize(ProgressMeter& meter);
  bool finalized() const { return stride_ > 0; }
  /// Work units finalize() reports: two walks of every route from an edge switch.
  int64_t finalize_work() const;

  void paths(NodeId src, NodeId dst, uint64_t flow, PathSet& out) const override;
  bool single_path() const override { return true; }
  int32_t max_hops() const override { return max_hops_; }

  /// Calls visit(link) for every directed link from host src's edge switch to host dst
  /// (the path without src's NIC link) and returns their number. Hot path: no allocation,
  /// no check beyond debug assertions.
  template <class Visit>
  int32_t for_each_tail(NodeId src, NodeId dst, Visit&& visit) const {
    int32_t base = 0;
    const size_t at = route_start(src, dst, base);
    int32_t n = 0;
    for (size_t i = 0; i < stride_; ++i) {
      const uint32_t p = wide_ ? routes16_[at + i] : routes8_[at + i];
      if (p == 0) break;  // routes shorter than the stride end with port 0
      const Hop& h = hops_[static_cast<size_t>(base) + p];
      visit(h.link);
      base = h.next;
      ++n;
    }
    return n;
  }
  /// Whole paths (NIC link, then the tail) of n flows src[k] → dst[k] written to out[]
  /// (room for n · max_hops() links); returns the number written. The flows are walked
  /// side by side, one hop of each in turn, so that their table look-ups overlap in the
  /// processor instead of waiting on each other (the analysis' inner loop).
  size_t gather_paths(const NodeId* src, const NodeId* dst, size_t n, LinkId* out) const {
    return wide_ ? gather_n(routes16_.data(), src, dst, n, out) : gather_n(routes8_.data(), src, dst, n, out);
  }
  /// The same links into a vector (tools and tests).
  void tail(NodeId src, NodeId dst, std::vector<LinkId>& out) const {
    out.clear();
    for_each_tail(src, dst, [&](LinkId l) { out.push_back(l); });
  }
  LinkId uplink(NodeId src) const { return uplink_[static_cast<size_t>(src)]; }
  /// Bytes held by the tables and the route cache (reported by the benchmarks).
  size_t memory_bytes() const;

private:
  // One hop: the link out of a switch port and where it leads, as the row base
  // (switch row · ports_) of the next switch. Hops that reach a host, port 0 and the
  // extra "sink" row after the switches lead to the sink row and carry link -1, so that a
  // walk past the end of a route needs no test.
  struct Hop {
    LinkId link = -1;
    int32_t next = 0;
  };
  size_t route_start(NodeId src, NodeId dst, int32_t& base) const {
    const auto e = static_cast<size_t>(edge_index_[static_cast<size_t>(src)]);
    base = edge_base_[e];
    return (e * static_cast<size_t>(fabric_->num_hosts()) + static_cast<size_t>(dst)) * stride_;
  }
  template <class Port>
  size_t gather_n(const Port* routes, const NodeId* src, const NodeId* dst, size_t n, LinkId* out) const {
    constexpr size_t kMax = 16;
    size_t m = 0;
    for (size_t first = 0; first < n; first += kMax) {
      const size_t g = std::min(kMax, n - first);
      const Port* route[kMax];
      int32_t base[kMax];
      for (size_t k = 0; k < g; ++k) {
        route[k] = routes + route_start(src[first + k], dst[first + k], base[k]);
        out[m++] = uplink_[static_cast<size_t>(src[first + k])];
      }
      for (size_t i = 0; i < stride_; ++i)
        for (size_t k = 0; k < g; ++k) {
          const Hop& h = hops_[static_cast<size_t>(base[k]) + route[k][i]];
          out[m] = h.link;
          m += h.link >= 0 ? 1 : 0;
          base[k] = h.next;
        }
    }
    return m;
  }
  // Walk (edge switch, destination) through the tables into `out` (ports), checking it;
  // returns the number of hops or throws RouteError.
  int32_t trace(NodeId sw, NodeId dst, std::vector<uint16_t>& out) const;
  [[noreturn]] void route_error(NodeId sw, NodeId dst) const;

  std::vector<uint16_t> table_;      // (switch - num_hosts) * num_hosts + dst → port
  std::vector<int32_t> edge_index_;  // host → index of its edge switch in the cache
  std::vector<NodeId> edges_;        // edge switches in cache order
  std::vector<int32_t> edge_base_;   // edge index → its row base in hops_
  std::vector<LinkId> uplink_;       // host → its NIC link
  std::vector<Hop> hops_;            // (switch - num_hosts) · ports_ + port → hop; then the sink row
  int32_t sink_ = 0;                 // row base of the sink row
  size_t ports_ = 0;                 // row length of hops_: the most ports of any switch, + 1
  size_t stride_ = 0;                // ports per cached route: the longest route from an edge switch
  bool wide_ = false;                // a switch has more than 255 ports: routes in uint16
  std::vector<uint8_t> routes8_;     // (edge · num_hosts + dst) · stride_ → ports, 0-padded
  std::vector<uint16_t> routes16_;   // the same when wide_
  int32_t max_hops_ = 0;
};

/// Explicit paths per ordered pair of hosts, each with a weight: routes that forwarding
/// tables cannot express (source-dependent, several paths per pair), on any graph.
/// add() checks that a path is a chain of cabled links from src to dst; a pair without
/// paths is an error when asked for (or at finalize(true)).
class PathRouting final : public Routing {
public:
  PathRouting(std::shared_ptr<const Fabric> fabric, std::string engine);

  /// Add a path (links from src's NIC to dst) carrying `weight` (> 0) of the pair's traffic.
  void add(NodeId src, NodeId dst, std::span<const LinkId> links, double weight = 1.0);
  /// Normalise each pair's weights to sum 1; with `all_pairs`, every ordered pair of
  /// distinct hosts must have a path.
  void finalize(bool all_pairs = false);

  void paths(NodeId src, NodeId dst, uint64_t flow, PathSet& out) const override;
  bool single_path() const override { return single_; }
  int32_t max_hops() const override { return max_hops_; }

private:
  size_t pair_index(NodeId src, NodeId dst) const {
    return static_cast<size_t>(src) * static_cast<size_t>(fabric_->num_hosts()) + static_cast<size_t>(dst);
  }
  std::vector<PathSet> sets_;  // per ordered pair (src · H + dst)
  bool single_ = true;
  int32_t max_hops_ = 0;
};

/// The key of a flow of a step-based workload, for engines whose paths depend on the flow:
/// the same (step, source rank, destination rank) gives the same key in the analysis and in
/// the simulation, so both see the same paths.
inline uint64_t flow_key(int64_t step, int32_t src_rank, int32_t dst_rank) {
  return splitmix64(
      static_cast<uint64_t>(step) * 0x9e3779b97f4a7c15ULL ^
      splitmix64((static_cast<uint64_t>(static_cast<uint32_t>(src_rank)) << 32) | static_cast<uint32_t>(dst_rank)));
}

/// D-mod-K on a generalized fat tree (as OpenSM's ftree and SimGrid's FatTreeZone): a
/// level-l switch sends traffic for host d, if d is not below it, to up-port index
/// floor(d / (w_1·…·w_l)) mod w_{l+1}; down routes are unique.
std::shared_ptr<TableRouting> dmodk(const std::shared_ptr<const Fabric>& fabric, const Progress& progress = {});

/// Like dmodk, but every (switch, destination) up-port is drawn at random (seeded,
/// independent of platform and of the order entries are computed in).
std::shared_ptr<TableRouting> random_uplinks(const std::shared_ptr<const Fabric>& fabric, uint64_t seed,
                                             const Progress& progress = {});

/// Shortest paths on any graph, in the spirit of OpenSM's minhop: every switch sends traffic
/// for a host through a port on a fewest-hop path, the least used such port so far (lowest
/// number on ties), destinations taken in host order. Not entry-for-entry OpenSM's tables
/// (its tie-breaking differs); for those, import its dump (read_lft_dump).
std::shared_ptr<TableRouting> minhop(const std::shared_ptr<const Fabric>& fabric, const Progress& progress = {});

/// Routing on a two-level direct network (PERCS, dragonfly: a fabric with switch groups,
/// each group's switches cabled all-to-all, groups cabled by global links).
///
/// *direct* (minimal): at most local–global–local between switches: to the switch of the
/// source's group that holds a global link to the destination's group, across it, then to
/// the destination's switch. *indirect* (Valiant): traffic between groups first goes
/// minimally to a random intermediate group (uniform over the others, drawn per flow from
/// the flow key and `seed`), then minimally on; traffic inside a group stays direct.
/// Where a pair of groups has several global links, `spread` splits a flow evenly over all
/// of them (weighted paths, as striping hardware does, at the cost of extra local hops);
/// otherwise direct routing takes one with the fewest local hops (a seeded hash of
/// (source, destination) breaks ties) and indirect routing one drawn from the flow.
enum class GroupRoute { direct, indirect };
std::shared_ptr<Routing> group_routing(const std::shared_ptr<const Fabric>& fabric, GroupRoute how, bool spread,
                                       uint64_t seed);

/// Read tables from the plain-text format documented in docs/routing-table.md:
/// one "<switch> <destination host> <output port>" per line, '#' starts a comment.
/// Errors name the file and line.
std::shared_ptr<TableRouting> read_table_file(const std::shared_ptr<const Fabric>& fabric, const std::string& path,
                                              const Progress& progress = {});

/// Write the tables in the same format (complete: every switch, every destination);
/// `progress` counts entries (27,648 hosts write 1.7 GB) and may stop it (Interrupted).
void write_table_file(const TableRouting& routing, const std::string& path, const Progress& progress = {});

}  // namespace daqnet::routing
