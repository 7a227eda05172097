// daqnet — plan, simulate and benchmark event-building networks.
#include "fabric/dragonfly.hpp"

#include <cmath>
#include <string>

#include "common/count.hpp"
#include "common/error.hpp"
#include "fabric/direct_names.hpp"
#include "fabric/fat_tree.hpp"

namespace daqnet::fabric {

Fabric build_dragonfly(const DragonflySpec& spec) {
  const int64_t p = spec.p, a = spec.a, h = spec.h, g = spec.g;
  if (p < 1) throw Error("fabric.p = " + std::to_string(p) + ": hosts per router must be >= 1");
  if (a < 1) throw Error("fabric.a = " + std::to_string(a) + ": routers per group must be >= 1");
  if (h < 0) throw Error("fabric.h = " + std::to_string(h) + ": global ports per router must be >= 0");
  if (g < 1) throw Error("fabric.g = " + std::to_string(g) + ": groups must be >= 1");
  if (g > a * h + 1)
    throw Error("fabric.g = " + std::to_string(g) + ": at most a·h + 1 = " + std::to_string(a * h + 1) +
                " groups can be cabled all-to-all with " + count(static_cast<uint64_t>(a), "router") + " of " +
                count(static_cast<uint64_t>(h), "global port"));
  for (auto [rate, key] : {std::pair{spec.local_gbps, "local_gbps"}, std::pair{spec.global_gbps, "global_gbps"},
                           std::pair{spec.host_gbps, "host_gbps"}})
    if (!(rate > 0) || !std::isfinite(rate)) throw Error(std::string("fabric.") + key + " must be a finite number > 0");
  if (!(spec.latency_seconds >= 0) || !std::isfinite(spec.latency_seconds))
    throw Error("fabric.latency_seconds must be a finite number >= 0");
  const int64_t ports = p + (a - 1) + h;
  // Switch ports and hosts, g·a·(ports + 1) + g·a·p, with each factor bounded before it is
  // multiplied: g·a·ports alone can pass 2^63.
  if (ports > 65535 || g > kMaxSwitchPorts || g * a * (ports + 1 + p) > kMaxSwitchPorts)
    throw Error("fabric: a dragonfly with p=" + std::to_string(p) + " a=" + std::to_string(a) +
                " h=" + std::to_string(h) + " g=" + std::to_string(g) + " is too large to build here");
  const int64_t routers = g * a, hosts = routers * p;
  if (hosts < 2) throw Error("fabric: a dragonfly of one host has nothing to route");

  Fabric f;
  const NumberedName gn(g), rn(a), hn(p);
  for (int64_t i = 0; i < hosts; ++i) f.add_host("g" + gn(i / (a * p)) + "-r" + rn((i / p) % a) + "-h" + hn(i % p));
  std::vector<int32_t> groups;
  for (int64_t r = 0; r < routers; ++r) {
    f.add_switch("rt-g" + gn(r / a) + "-r" + rn(r % a), static_cast<int32_t>(ports), kNoLevel, static_cast<int32_t>(r));
    groups.push_back(static_cast<int32_t>(r / a));
  }
  f.set_switch_groups(std::move(groups));
  const int32_t up = f.link_class("host->router"), down = f.link_class("router->host");
  const int32_t local = f.link_class("local"), global = f.link_class("global");
  const double lat = spec.latency_seconds;
  auto router = [&](int64_t grp, int64_t r) { return static_cast<NodeId>(hosts + grp * a + r); };
  auto port = [](int64_t n) { return static_cast<int32_t>(n); };

  // Hosts on ports 1..p, the other routers of the group on p+1..p+a−1, global ports after.
  for (int64_t i = 0; i < hosts; ++i)
    f.connect(static_cast<NodeId>(i), 1, static_cast<NodeId>(hosts + i / p), port(1 + i % p), spec.host_gbps, lat, up,
              down);
  for (int64_t grp = 0; grp < g; ++grp)
    for (int64_t r = 0; r < a; ++r)
      for (int64_t s = r + 1; s < a; ++s)
        f.connect(router(grp, r), port(p + s), router(grp, s), port(p + 1 + r), spec.local_gbps, lat, local, local);
  // Global: the consecutive arrangement documented in dragonfly.hpp.
  const int64_t others = g - 1;  // groups each group is cabled to
  if (others > 0 && h > 0) {     // h = 0 allows only g = 1
    const int64_t parallel = (a * h) / others;
    for (int64_t i = 0; i < g; ++i)
      for (int64_t copy = 0; copy < parallel; ++copy)
        for (int64_t q = 0; q < others; ++q) {  // port k = q + copy·(g−1)
          const int64_t j = q < i ? q : q + 1;
          if (j < i) continue;  // cabled from the lower group
          const int64_t k = q + copy * others;
          const int64_t k2 = (i < j ? i : i - 1) + copy * others;
          f.connect(router(i, k / h), port(p + a + k % h), router(j, k2 / h), port(p + a + k2 % h), spec.global_gbps,
                    lat, global, global);
        }
  }
  f.set_description("dragonfly: p=" + std::to_string(p) + " a=" + std::to_string(a) + " h=" + std::to_string(h) +
                    " g=" + std::to_string(g) + ", " + std::to_string(hosts) + " hosts on " + std::to_string(routers) +
                    " routers");
  return f;
}

}  // namespace daqnet::fabric
