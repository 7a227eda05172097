// daqnet — plan, simulate and benchmark event-building networks.
#include "fabric/percs.hpp"

#include <cmath>
#include <string>

#include "common/count.hpp"
#include "common/error.hpp"
#include "fabric/direct_names.hpp"
#include "fabric/fat_tree.hpp"

namespace daqnet::fabric {

namespace {

void check_rate(double gbps, const char* key) {
  if (!(gbps > 0) || !std::isfinite(gbps)) throw Error(std::string("fabric.") + key + " must be a finite number > 0");
}

}  // namespace

Fabric build_percs(const PercsSpec& spec) {
  const int64_t S = spec.supernodes, D = spec.drawers_per_supernode, N = spec.nodes_per_drawer;
  const int64_t L = spec.d_links_per_pair;
  if (S < 1) throw Error("fabric.supernodes = " + std::to_string(S) + ": must be >= 1");
  if (D < 1) throw Error("fabric.drawers_per_supernode = " + std::to_string(D) + ": must be >= 1");
  if (N < 1) throw Error("fabric.nodes_per_drawer = " + std::to_string(N) + ": must be >= 1");
  if (L < 1) throw Error("fabric.d_links_per_pair = " + std::to_string(L) + ": must be >= 1");
  check_rate(spec.ll_gbps, "ll_gbps");
  check_rate(spec.lr_gbps, "lr_gbps");
  check_rate(spec.d_gbps, "d_gbps");
  check_rate(spec.host_gbps, "host_gbps");
  if (!(spec.latency_seconds >= 0) || !std::isfinite(spec.latency_seconds))
    throw Error("fabric.latency_seconds must be a finite number >= 0");
  const int64_t per_sn = D * N;  // hubs (= nodes) per supernode
  const int64_t hosts = S * per_sn;
  if (hosts < 2) throw Error("fabric: a PERCS network of one node has nothing to route");
  const int64_t d_ports = (S - 1) * L == 0 ? 0 : ((S - 1) * L + per_sn - 1) / per_sn;
  const int64_t ports = 1 + (N - 1) + N * (D - 1) + d_ports;
  if (hosts * (ports + 1) > kMaxSwitchPorts || ports > 65535)
    throw Error("fabric: a PERCS network of " + std::to_string(S) + " supernodes of " + std::to_string(per_sn) +
                " nodes with " + std::to_string(L) + " D link(s) per pair is too large to build here");

  Fabric f;
  const NumberedName sn(S), dr(D), node_no(N);
  for (int64_t i = 0; i < hosts; ++i) {
    const int64_t s = i / per_sn, d = (i / N) % D, n = i % N;
    f.add_host("sn" + sn(s) + "-d" + dr(d) + "-n" + node_no(n));
  }
  std::vector<int32_t> groups;
  for (int64_t i = 0; i < hosts; ++i) {
    const int64_t s = i / per_sn, d = (i / N) % D, n = i % N;
    f.add_switch("hub" + sn(s) + "-" + dr(d) + "-" + node_no(n), static_cast<int32_t>(ports), kNoLevel,
                 static_cast<int32_t>(i));
    groups.push_back(static_cast<int32_t>(s));
  }
  f.set_switch_groups(std::move(groups));
  const int32_t up = f.link_class("host->hub"), down = f.link_class("hub->host");
  const int32_t ll = f.link_class("LL"), lr = f.link_class("LR"), dl = f.link_class("D");
  const double lat = spec.latency_seconds;
  auto hub = [&](int64_t s, int64_t d, int64_t n) { return static_cast<NodeId>(hosts + (s * D + d) * N + n); };
  auto port = [](int64_t p) { return static_cast<int32_t>(p); };

  for (int64_t i = 0; i < hosts; ++i)
    f.connect(static_cast<NodeId>(i), 1, static_cast<NodeId>(hosts + i), 1, spec.host_gbps, lat, up, down);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t d = 0; d < D; ++d)
      for (int64_t n = 0; n < N; ++n) {
        // LL: ports 2..N to the other hubs of the drawer, in node order.
        for (int64_t m = n + 1; m < N; ++m)
          f.connect(hub(s, d, n), port(2 + m - 1), hub(s, d, m), port(2 + n), spec.ll_gbps, lat, ll, ll);
        // LR: ports N+1.. to every hub of the other drawers, drawer by drawer.
        for (int64_t e = d + 1; e < D; ++e)
          for (int64_t m = 0; m < N; ++m)
            f.connect(hub(s, d, n), port(N + 1 + (e - 1) * N + m), hub(s, e, m), port(N + 1 + d * N + n), spec.lr_gbps,
                      lat, lr, lr);
      }
  // D: the round-robin rule documented in percs.hpp.
  const int64_t d_base = N + N * (D - 1) + 1;
  auto d_end = [&](int64_t s, int64_t peer, int64_t copy) {
    const int64_t q = peer < s ? peer : peer - 1;
    const int64_t c = q * L + copy;
    const int64_t h = c % per_sn;
    return std::pair{static_cast<NodeId>(hosts + s * per_sn + h), port(d_base + c / per_sn)};
  };
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = i + 1; j < S; ++j)
      for (int64_t m = 0; m < L; ++m) {
        auto [a, pa] = d_end(i, j, m);
        auto [b, pb] = d_end(j, i, m);
        f.connect(a, pa, b, pb, spec.d_gbps, lat, dl, dl);
      }
  f.set_description("PERCS: " + count(static_cast<uint64_t>(S), "supernode") + " × " +
                    count(static_cast<uint64_t>(D), "drawer") + " × " + count(static_cast<uint64_t>(N), "node") +
                    " = " + count(static_cast<uint64_t>(hosts), "hub") + ", " +
                    count(static_cast<uint64_t>(L), "D link") + " per supernode pair");
  return f;
}

}  // namespace daqnet::fabric
