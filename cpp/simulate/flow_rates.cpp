// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/flow_rates.hpp"

#include <algorithm>

#include "analysis/conflicts.hpp"
#include "common/error.hpp"
#include "simulate/fair_share.hpp"

namespace daqnet::simulate {

FlowRates step_flow_rates(const NetworkModel& model, std::span<const int32_t> placement,
                          const workload::Schedule& schedule, int64_t step) {
  analysis::check_placement(model.routing(), placement, schedule);
  if (step < 0 || step >= schedule.num_steps())
    throw Error("simulate: step " + std::to_string(step + 1) + " is out of range");
  std::vector<workload::Flow> flows;
  schedule.step(step, flows);
  FlowRates out;
  // Sub-flows (one per path) on the real fabric, and on the contention-free one (only the
  // hosts' own links: tasks of one node share them there too).
  struct Problem {
    std::vector<int64_t> offsets{0};
    std::vector<int32_t> res;
    std::vector<double> weight;
    std::vector<size_t> first;  // per network flow: its first sub-flow
    void add(const Routes& routes) {
      first.push_back(weight.size());
      for (size_t k = 0; k < routes.size(); ++k) {
        const auto r = routes.resources(k);
        res.insert(res.end(), r.begin(), r.end());
        offsets.push_back(static_cast<int64_t>(res.size()));
        weight.push_back(routes.weight(k));
      }
    }
    // Each flow's rate: min over its paths of rate/weight (when all its bytes arrive), in Gb/s.
    std::vector<double> gbps(const NetworkModel& model) {
      first.push_back(weight.size());
      const auto rates = max_min_rates(model.capacity(), offsets, res);
      std::vector<double> out;
      for (size_t f = 0; f + 1 < first.size(); ++f) {
        double rate = kUnlimited;
        for (size_t k = first[f]; k < first[f + 1]; ++k) rate = std::min(rate, rates[k] / weight[k]);
        out.push_back(rate * 8 / 1e9);
      }
      return out;
    }
  } real, free;
  Routes routes;
  for (const auto& f : flows) {
    const int32_t a = placement[static_cast<size_t>(f.src)], b = placement[static_cast<size_t>(f.dst)];
    if (a == b) {
      ++out.local_flows;
      continue;
    }
    const uint64_t key = routing::flow_key(step, f.src, f.dst);
    model.routes(a, b, key, false, routes);
    real.add(routes);
    model.routes(a, b, key, true, routes);
    free.add(routes);
  }
  out.gbps = real.gbps(model);
  out.free_gbps = free.gbps(model);
  return out;
}

}  // namespace daqnet::simulate
