// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "routing/routing.hpp"
#include "simulate/fair_share.hpp"

namespace daqnet::simulate {

/// Host NIC limits beyond the host's link: what a host can inject into and take from the
/// fabric (e.g. a PCIe-bound NIC), in Gb/s; 0 = no limit other than the link.
struct NicLimits {
  double injection_gbps = 0;
  double ejection_gbps = 0;
};

/// The routes of one flow for the flow-level simulators: one per path of the routing, each
/// with its resources, the share (weight) of the flow's bytes it carries, its latency and
/// its slowest resource.
class Routes {
public:
  void clear() {
    res_.clear();
    ends_.clear();
    weight_.clear();
    latency_.clear();
    bottleneck_.clear();
  }
  size_t size() const { return ends_.size(); }
  std::span<const int32_t> resources(size_t k) const {
    const uint32_t first = k == 0 ? 0 : ends_[k - 1];
    return {res_.data() + first, res_.data() + ends_[k]};
  }
  double weight(size_t k) const { return weight_[k]; }
  double latency(size_t k) const { return latency_[k]; }
  double bottleneck(size_t k) const { return bottleneck_[k]; }
  /// The longest latency of the flow's paths.
  double max_latency() const;

private:
  friend class NetworkModel;
  std::vector<int32_t> res_;
  std::vector<uint32_t> ends_;
  std::vector<double> weight_, latency_, bottleneck_;
};

/// The resources a flow between two hosts uses, for the flow-level simulators: every
/// directed link of its path (resource id = link id, capacity in bytes/s), then optional
/// injection and ejection resources per host. A path's latency is the sum of its links'.
///
/// `ideal` routes model the same hosts on a contention-free fabric (one non-blocking
/// crossbar): only a path's first link (the source's NIC) and last link (the
/// destination's), with the real path's latency, so that ideal and real differ by
/// contention only.
class NetworkModel {
public:
  NetworkModel(const routing::Routing& routing, NicLimits nic);

  const routing::Routing& routing() const { return routing_; }
  const std::vector<double>& capacity() const { return capacity_; }
  int32_t num_links() const { return num_links_; }

  /// The routes of a flow from host a to host b (a != b); `flow` keys engines that route
  /// per flow (routing::flow_key).
  void routes(int32_t a, int32_t b, uint64_t flow, bool ideal, Routes& out) const;
  /// Tables only (false otherwise, nothing appended): the one path a → b's resources
  /// appended to `out`, as routes() gives them, and its latency. The step simulation's hot
  /// path: no Routes to fill and copy from.
  bool append_path(int32_t a, int32_t b, bool ideal, std::vector<int32_t>& out, double& latency) const;

  /// For single-path use (tests, tools): the first path's resources, its latency and the
  /// longest latency over the pair's paths, its slowest resource.
  void resources(int32_t a, int32_t b, bool ideal, std::vector<int32_t>& out) const;
  double latency(int32_t a, int32_t b) const;
  double bottleneck(int32_t a, int32_t b) const;
  /// How long a message too small to matter for sharing takes: the route's latency plus
  /// its bytes at the slowest resource of the first path.
  double message_seconds(int32_t a, int32_t b, double bytes) const;

private:
  void add_nic(int32_t a, int32_t b, double& slowest, Routes& out) const;
  // A table route's links appended to `out` (all, or the first and last on the ideal
  // fabric), each passed to `visit` in path order: routes() and append_path() share it so
  // that their latencies agree to the last bit.
  template <class Visit>
  void table_path(int32_t a, int32_t b, bool ideal, std::vector<int32_t>& out, Visit&& visit) const {
    const routing::LinkId first = table_->uplink(a);
    visit(first);
    out.push_back(first);
    routing::LinkId last = first;
    table_->for_each_tail(a, b, [&](routing::LinkId l) {
      visit(l);
      if (!ideal) out.push_back(l);
      last = l;
    });
    if (ideal) out.push_back(last);
  }

  const routing::Routing& routing_;
  const routing::TableRouting* table_;  // the routing, when it is tables: their cache is the fast path
  int32_t num_links_ = 0, num_hosts_ = 0;
  bool inject_ = false, eject_ = false;
  std::vector<double> capacity_;
  std::vector<double> link_latency_;
  // Reused by resources(), latency(), bottleneck() and message_seconds(), which the
  // protocol's commands call millions of times: those are for one thread (routes() is not).
  mutable Routes routes_scratch_;
};

}  // namespace daqnet::simulate
