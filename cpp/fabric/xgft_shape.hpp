// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <vector>

namespace daqnet::fabric {

/// Shape of an extended generalized fat tree XGFT(h; m_1..m_h; w_1..w_h), the model of
/// Öhring et al. that SimGrid's FatTreeZone also uses, with the same labelling.
///
/// down[l-1] = m_l: children of a level-l switch; up[l-1] = w_l: parents of a level-(l-1)
/// node (w_1 = 1: a host has one leaf). A node's position in its level is a mixed-radix
/// number whose low digits 0..l-1 choose among parents (radix w) and whose high digits
/// l..h-1 choose the subtree (radix m). Hosts fill leaves in order, the last leaf may be
/// partial, and only switches whose subtree holds at least one host are built.
struct XgftShape {
  int32_t levels = 0;
  std::vector<int32_t> down;  ///< m_1..m_h
  std::vector<int32_t> up;    ///< w_1..w_h (w_1 = 1)
  int32_t hosts = 0;

  /// M_l = m_1·…·m_l: hosts under one level-l switch when full (M_0 = 1).
  int64_t hosts_below(int32_t l) const {
    int64_t p = 1;
    for (int32_t i = 0; i < l; ++i) p *= down[static_cast<size_t>(i)];
    return p;
  }
  /// W_l = w_1·…·w_l: level-l switches that see the same subtree (W_0 = 1).
  int64_t parallel(int32_t l) const {
    int64_t p = 1;
    for (int32_t i = 0; i < l; ++i) p *= up[static_cast<size_t>(i)];
    return p;
  }
  /// Up-ports of a level-l node (0 at the top).
  int32_t up_ports(int32_t l) const { return l < levels ? up[static_cast<size_t>(l)] : 0; }
  /// Down-ports of a level-l switch (m_l); its up-ports follow them.
  int32_t down_ports(int32_t l) const { return down[static_cast<size_t>(l - 1)]; }
  /// Number of level-l switches built for `hosts` hosts.
  int64_t switches_at(int32_t l) const {
    const int64_t m = hosts_below(l);
    return parallel(l) * ((hosts + m - 1) / m);
  }
};

}  // namespace daqnet::fabric
