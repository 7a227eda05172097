// daqnet — plan, simulate and benchmark event-building networks.
#include "fabric/fat_tree.hpp"

#include <cmath>

#include "common/count.hpp"
#include "common/error.hpp"

namespace daqnet::fabric {

namespace {

std::string ratio(std::pair<int32_t, int32_t> t) { return std::to_string(t.first) + ":" + std::to_string(t.second); }

std::string level_name(int32_t level, int32_t levels) {
  if (level == 1) return "leaf";
  if (level == levels && levels == 3) return "core";
  return "spine";
}

std::string plural(const std::string& kind, int64_t n) {
  if (n == 1) return kind;
  return kind == "leaf" ? "leaves" : kind + "s";
}

}  // namespace

XgftShape fat_tree_shape(const FatTreeSpec& spec) {
  const int32_t r = spec.radix;
  if (r < 4 || r % 2 != 0 || r > kMaxRadix)
    throw Error("fabric.radix = " + std::to_string(r) + ": must be an even number from 4 to " +
                std::to_string(kMaxRadix));
  if (spec.levels != 2 && spec.levels != 3)
    throw Error("fabric.levels = " + std::to_string(spec.levels) + ": must be 2 or 3");
  if (spec.hosts < 2) throw Error("fabric.hosts = " + std::to_string(spec.hosts) + ": must be >= 2");
  if (static_cast<int32_t>(spec.taper.size()) > spec.levels - 1)
    throw Error("fabric.taper: " + std::to_string(spec.taper.size()) + " ratios given, a " +
                std::to_string(spec.levels) + "-level tree takes at most " + std::to_string(spec.levels - 1));
  const int32_t top = spec.top_radix == -1 ? r : spec.top_radix;
  if (top < 2 || top > kMaxRadix)
    throw Error("fabric.spine_radix = " + std::to_string(top) + ": must be from 2 to " + std::to_string(kMaxRadix));
  if (!(spec.link_gbps > 0) || !std::isfinite(spec.link_gbps))
    throw Error("fabric.link_gbps must be a finite number > 0");
  if (!(spec.latency_seconds >= 0) || !std::isfinite(spec.latency_seconds))
    throw Error("fabric.latency_seconds must be a finite number >= 0");

  XgftShape s;
  s.levels = spec.levels;
  s.hosts = spec.hosts;
  s.up.push_back(1);  // a host has one leaf
  for (int32_t l = 1; l <= spec.levels; ++l) {
    if (l == spec.levels) {
      s.down.push_back(top);
      break;
    }
    int32_t m = r / 2;
    if (l == 1 && spec.hosts_per_leaf != -1) {
      m = spec.hosts_per_leaf;
      if (m < 1 || m >= r)
        throw Error("fabric.hosts_per_leaf = " + std::to_string(m) + ": must be between 1 and radix-1");
    }
    std::pair<int32_t, int32_t> t{1, 1};
    if (static_cast<size_t>(l - 1) < spec.taper.size()) t = spec.taper[static_cast<size_t>(l - 1)];
    const std::string where = l == 1 ? "fabric.taper" : "fabric.taper[" + std::to_string(l - 1) + "]";
    if (t.first < 1 || t.second < 1) throw Error(where + " = \"" + ratio(t) + "\": both sides must be >= 1");
    if (t.second > t.first)
      throw Error(where + " = \"" + ratio(t) + "\": a taper keeps at most as many up-links as down-links");
    if ((static_cast<int64_t>(m) * t.second) % t.first != 0)
      throw Error(where + " = \"" + ratio(t) + "\" does not divide the " + std::to_string(m) + " down-ports of a " +
                  level_name(l, spec.levels) + " switch into whole up-links");
    const auto w = static_cast<int32_t>(static_cast<int64_t>(m) * t.second / t.first);
    if (m + w > r)
      throw Error("fabric.hosts_per_leaf = " + std::to_string(m) + " with taper " + ratio(t) + " needs " +
                  std::to_string(m + w) + " ports on a " + std::to_string(r) + "-port leaf switch");
    s.down.push_back(m);
    s.up.push_back(w);
  }
  // With radix <= kMaxRadix and 3 levels these products stay far below 2^63.
  const int64_t capacity = s.hosts_below(s.levels);
  if (spec.hosts > capacity)
    throw Error("fabric.hosts = " + std::to_string(spec.hosts) + ": a " + std::to_string(spec.levels) +
                "-level fat tree of " + std::to_string(r) + "-port switches" +
                (top != r
                     ? " (" + std::to_string(top) + "-port " + plural(level_name(spec.levels, spec.levels), 2) + ")"
                     : "") +
                " with these settings holds at most " + std::to_string(capacity) + " hosts" +
                (spec.levels == 2 ? " (fabric.levels = 3 holds more)" : ""));
  int64_t ports = 0;
  for (int32_t l = 1; l <= s.levels; ++l) ports += s.switches_at(l) * (s.down_ports(l) + s.up_ports(l));
  if (ports > kMaxSwitchPorts)
    throw Error("fabric: " + std::to_string(ports) + " switch ports (radix " + std::to_string(r) + ", spine_radix " +
                std::to_string(top) + ") is more than daqnet builds (" + std::to_string(kMaxSwitchPorts) + ")");
  return s;
}

Fabric build_fat_tree(const FatTreeSpec& spec) {
  const XgftShape s = fat_tree_shape(spec);
  const int32_t L = s.levels;
  Fabric f;

  const auto digits = std::to_string(spec.hosts - 1).size();
  for (int32_t h = 0; h < spec.hosts; ++h) {
    std::string idx = std::to_string(h);
    f.add_host(spec.host_prefix + std::string(digits - idx.size(), '0') + idx);
  }
  // first[l] = node id of the level-l switch at position 0
  std::vector<NodeId> first(static_cast<size_t>(L) + 1, 0);
  for (int32_t l = 1; l <= L; ++l) {
    first[static_cast<size_t>(l)] = f.num_nodes();
    const int64_t n = s.switches_at(l);
    const int32_t ports = s.down_ports(l) + s.up_ports(l);
    for (int64_t p = 0; p < n; ++p)
      f.add_switch(level_name(l, L) + std::to_string(p), ports, l, static_cast<int32_t>(p));
  }

  // Wire every node of level l < L to its parents: up index j goes to the parent whose
  // digit l equals j (other digits equal); the child's digit l is its down-port there.
  for (int32_t l = 0; l < L; ++l) {
    const int64_t W = s.parallel(l);
    const int32_t m_next = s.down_ports(l + 1);
    const int32_t w_next = s.up_ports(l);
    const int32_t base_port = l == 0 ? 0 : s.down_ports(l);
    const int64_t count = l == 0 ? spec.hosts : s.switches_at(l);
    for (int64_t p = 0; p < count; ++p) {
      const NodeId child = l == 0 ? static_cast<NodeId>(p) : first[static_cast<size_t>(l)] + static_cast<NodeId>(p);
      const int64_t c = (p / W) % m_next;
      const int64_t hi = p / (W * m_next);
      for (int32_t j = 0; j < w_next; ++j) {
        const int64_t parent_pos = (p % W) + W * (j + static_cast<int64_t>(w_next) * hi);
        const NodeId parent = first[static_cast<size_t>(l) + 1] + static_cast<NodeId>(parent_pos);
        f.connect(child, base_port + j + 1, parent, static_cast<int32_t>(c) + 1, spec.link_gbps, spec.latency_seconds);
      }
    }
  }
  f.set_xgft(s);

  std::string d = std::to_string(L) + "-level fat tree, radix " + std::to_string(spec.radix) + ", " +
                  thousands(static_cast<uint64_t>(spec.hosts)) + " hosts";
  for (int32_t l = 1; l <= L; ++l)
    d += ", " + thousands(static_cast<uint64_t>(s.switches_at(l))) + " " + plural(level_name(l, L), s.switches_at(l));
  // A tapered tree says so (its switch counts alone read as a full tree's): down:up per level.
  bool tapered = false;
  std::string ratios;
  for (size_t i = 0; i < spec.taper.size(); ++i) {
    tapered = tapered || spec.taper[i].first != spec.taper[i].second;
    ratios += (i ? "/" : "") + ratio(spec.taper[i]);
  }
  if (tapered) d += ", taper " + ratios;
  // Director switches on top (spine_radix) read as an ordinary tree's spines otherwise.
  if (spec.top_radix != -1 && spec.top_radix != spec.radix)
    d += ", " + std::to_string(spec.top_radix) + "-port " + plural(level_name(L, L), 2);
  f.set_description(d);
  return f;
}

}  // namespace daqnet::fabric
