// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabric/fabric.hpp"

namespace daqnet::fabric {

/// A fat tree of 2 or 3 levels of `radix`-port switches (scenario section [fabric]).
///
/// Leaves take `hosts_per_leaf` hosts (default radix/2) and are filled in cabling order,
/// the last one possibly partially. `taper[i] = {a, b}` is the down:up ratio at level i+1:
/// a taper removes up-links, it does not add hosts (2:1 on 36 ports: 18 hosts, 9 up-links).
/// Middle switches of a 3-level tree have radix/2 down-ports; top switches have all their
/// `top_radix` ports down (default radix; a 648-port director switch can serve as spine).
struct FatTreeSpec {
  int32_t radix = 36;
  int32_t hosts = 0;
  int32_t levels = 2;
  std::vector<std::pair<int32_t, int32_t>> taper;  ///< per level below the top; missing = 1:1
  int32_t hosts_per_leaf = -1;                     ///< -1: radix/2
  int32_t top_radix = -1;                          ///< -1: radix
  double link_gbps = 100.0;
  double latency_seconds = 100e-9;
  std::string host_prefix = "node";
};

/// Largest switch radix accepted (real switches have at most a few hundred ports; director
/// switches 648 or 754) and largest fabric built, in switch ports, to fail early and clearly
/// rather than exhaust memory.
inline constexpr int32_t kMaxRadix = 4096;
inline constexpr int64_t kMaxSwitchPorts = int64_t{1} << 26;

/// Build the fat tree; throws daqnet::Error naming the offending parameter.
/// Hosts are named host_prefix + zero-padded cabling index; switches leafN, spineN, coreN.
Fabric build_fat_tree(const FatTreeSpec& spec);

/// The XGFT shape the spec describes (validated), without building the fabric.
XgftShape fat_tree_shape(const FatTreeSpec& spec);

}  // namespace daqnet::fabric
