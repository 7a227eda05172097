// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>

#include "fabric/fabric.hpp"

namespace daqnet::fabric {

/// A dragonfly (Kim, Dally, Scott & Abts, ISCA 2008; scenario [fabric] kind = "dragonfly"):
/// g groups of a routers, p hosts per router, h global ports per router. The routers of a
/// group are cabled all-to-all (local links); groups are cabled all-to-all by global links.
///
/// Global-link arrangement ("consecutive", also called absolute): group i numbers its a·h
/// global ports k = r·h + t (router r, its global port t). Port k goes to the
/// (k mod (g−1))-th other group in group order (group j = q if q < i, else q + 1), as the
/// (k div (g−1))-th parallel link of that pair; on group j it lands on port
/// k' = q' + (k div (g−1))·(g−1), q' being i's index among j's other groups. With
/// a·h = g − 1 (the balanced, largest dragonfly) every pair of groups has one global link;
/// smaller g gives floor(a·h / (g−1)) parallel links per pair and leaves the remaining
/// ports empty. Link classes: host->router, router->host, local, global.
struct DragonflySpec {
  int32_t p = 2;
  int32_t a = 4;
  int32_t h = 2;
  int64_t g = 9;  ///< up to a·h + 1, which an int32_t may not hold
  double local_gbps = 100;
  double global_gbps = 100;
  double host_gbps = 100;
  double latency_seconds = 100e-9;
};

/// Build the network; throws daqnet::Error naming the offending parameter. Hosts are named
/// g<group>-r<router>-h<host> (zero-padded), routers rt-g<group>-r<router>; switch groups are
/// the dragonfly's groups.
Fabric build_dragonfly(const DragonflySpec& spec);

}  // namespace daqnet::fabric
