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
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> res;
  std::vector<double> weight;
  std::vector<size_t> first_sub;  // per network flow: its first sub-flow
  Routes routes, ideal;
  for (const auto& f : flows) {
    const int32_t a = placement[static_cast<size_t>(f.src)], b = placement[static_cast<size_t>(f.dst)];
    if (a == b) {
      ++out.local_flows;
      continue;
    }
    const uint64_t key = routing::flow_key(step, f.src, f.dst);
    model.routes(a, b, key, false, routes);
    model.routes(a, b, key, true, ideal);
    first_sub.push_back(weight.size());
    for (size_t k = 0; k < routes.size(); ++k) {
      const auto r = routes.resources(k);
      res.insert(res.end(), r.begin(), r.end());
      offsets.push_back(static_cast<int64_t>(res.size()));
      weight.push_back(routes.weight(k));
    }
    double alone = kUnlimited;
    for (size_t k = 0; k < ideal.size(); ++k) alone = std::min(alone, ideal.bottleneck(k));
    out.nic_gbps.push_back(alone * 8 / 1e9);
  }
  first_sub.push_back(weight.size());
  const auto rates = max_min_rates(model.capacity(), offsets, res);
  for (size_t f = 0; f + 1 < first_sub.size(); ++f) {
    double rate = kUnlimited;
    for (size_t k = first_sub[f]; k < first_sub[f + 1]; ++k) rate = std::min(rate, rates[k] / weight[k]);
    out.gbps.push_back(rate * 8 / 1e9);
  }
  return out;
}

}  // namespace daqnet::simulate
