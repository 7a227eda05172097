// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "routing/routing.hpp"
#include "workload/schedule.hpp"

namespace daqnet::analysis {

/// Bytes every directed link carries over the first `max_steps` steps (all when < 0) when
/// each flow moves `message_bytes`, split over its paths by their weights. Flows between
/// ranks on one host carry nothing. The per-class link-load views of direct networks and
/// tapered trees (host->hub, LL, LR, D; host->leaf, leaf->spine...) are built from it.
std::vector<double> link_bytes(const routing::Routing& routing, std::span<const int32_t> placement,
                               const workload::Schedule& schedule, double message_bytes, int64_t max_steps = -1);

}  // namespace daqnet::analysis
