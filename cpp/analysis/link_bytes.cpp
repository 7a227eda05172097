// daqnet — plan, simulate and benchmark event-building networks.
#include "analysis/link_bytes.hpp"

#include <algorithm>

#include "analysis/conflicts.hpp"
#include "analysis/detail/flow_links.hpp"

namespace daqnet::analysis {

std::vector<double> link_bytes(const routing::Routing& routing, std::span<const int32_t> placement,
                               const workload::Schedule& schedule, double message_bytes, int64_t max_steps) {
  check_placement(routing, placement, schedule);
  std::vector<double> bytes(static_cast<size_t>(routing.fabric().num_links()), 0.0);
  const int64_t steps = max_steps < 0 ? schedule.num_steps() : std::min(max_steps, schedule.num_steps());
  std::vector<workload::Flow> flows;
  routing::PathSet set;
  // Tables: one path, walked in place from the route cache (the generic paths() copies it).
  const auto* table = dynamic_cast<const routing::TableRouting*>(&routing);
  for (int64_t s = 0; s < steps; ++s) {
    schedule.step(s, flows);
    for (const auto& f : flows) {
      const int32_t a = placement[static_cast<size_t>(f.src)], b = placement[static_cast<size_t>(f.dst)];
      if (a == b) continue;
      if (table != nullptr && table->finalized()) {
        const detail::TableLinks walk{*table};
        walk(a, b, 0, [&](LinkId l) { bytes[static_cast<size_t>(l)] += message_bytes; });
        continue;
      }
      routing.paths(a, b, routing::flow_key(s, f.src, f.dst), set);
      for (size_t k = 0; k < set.size(); ++k)
        for (LinkId l : set.path(k)) bytes[static_cast<size_t>(l)] += message_bytes * set.weight(k);
    }
  }
  return bytes;
}

}  // namespace daqnet::analysis
