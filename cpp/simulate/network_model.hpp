// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <vector>

#include "routing/routing.hpp"

namespace daqnet::simulate {

/// Host NIC limits beyond the host's link: what a host can inject into and take from the
/// fabric (e.g. a PCIe-bound NIC), in Gb/s; 0 = no limit other than the link.
struct NicLimits {
  double injection_gbps = 0;
  double ejection_gbps = 0;
};

/// The resources a flow between two hosts uses, for the flow-level simulators: every
/// directed link (resource id = link id, capacity in bytes/s), then optional injection
/// and ejection resources per host. A route's latency is the sum of its links' latencies.
///
/// `ideal` routes model the same hosts on a contention-free fabric (one non-blocking
/// crossbar): only the source's NIC link and the destination's last link, with the real
/// route's latency, so that ideal and real differ by contention only.
class NetworkModel {
public:
  NetworkModel(const routing::Routing& routing, NicLimits nic);

  const routing::Routing& routing() const { return routing_; }
  const std::vector<double>& capacity() const { return capacity_; }
  int32_t num_links() const { return num_links_; }

  /// Resources from host a to host b (a != b) into `out` (cleared first).
  void resources(int32_t a, int32_t b, bool ideal, std::vector<int32_t>& out) const;
  double latency(int32_t a, int32_t b) const;
  /// The slowest link of the route, in bytes/s: how fast a message too small to matter
  /// for sharing is serialized.
  double bottleneck(int32_t a, int32_t b) const;

private:
  const routing::Routing& routing_;
  int32_t num_links_ = 0, num_hosts_ = 0;
  bool inject_ = false, eject_ = false;
  std::vector<double> capacity_;
  std::vector<double> link_latency_;
};

}  // namespace daqnet::simulate
