// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "simulate/network_model.hpp"
#include "workload/schedule.hpp"

namespace daqnet::simulate {

/// The max-min fair rates of the network flows of one step, all started together (the
/// static view of ORCS and of effective bisection bandwidth). A flow spread over several
/// paths is one sub-flow per path; its rate is min over paths of rate/weight (the rate at
/// which its bytes all arrive). `free_gbps` is each flow's rate with the same flows on a
/// contention-free fabric (only the hosts' own links and NIC limits, which tasks of one node
/// share in any fabric), to normalise by: what the fabric itself costs.
struct FlowRates {
  std::vector<double> gbps;
  std::vector<double> free_gbps;
  int64_t local_flows = 0;  ///< flows between ranks on one host (not counted)
};

FlowRates step_flow_rates(const NetworkModel& model, std::span<const int32_t> placement,
                          const workload::Schedule& schedule, int64_t step);

}  // namespace daqnet::simulate
