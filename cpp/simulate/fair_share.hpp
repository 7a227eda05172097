// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace daqnet::simulate {

inline constexpr double kUnlimited = std::numeric_limits<double>::infinity();

/// Max-min fair rates of a set of flows over shared resources (links, NIC injection and
/// ejection limits, ...), by progressive filling: all flows grow at the same pace; when a
/// resource fills up (or a flow reaches its own cap) its flows freeze at that rate and the
/// others go on. The result is the unique allocation in which every flow has a saturated
/// resource on which no other flow gets more.
///
/// Flow f uses resources[offsets[f] .. offsets[f+1]) (a resource listed twice counts twice).
/// capacity[r] ≥ 0 may be infinite; flow_cap is empty (no caps) or one cap per flow
/// (infinite = none). A flow without resources and without cap gets an infinite rate.
/// Cost: O(E log E) for E flow-resource pairs. Throws daqnet::Error on malformed input.
std::vector<double> max_min_rates(std::span<const double> capacity, std::span<const int64_t> offsets,
                                  std::span<const int32_t> resources, std::span<const double> flow_cap = {});

/// Reusable working memory of the solver, so that a simulator calling it millions of times
/// does not allocate. solve() writes rates[f] for f < number of flows.
class FairShareSolver {
public:
  void solve(std::span<const double> capacity, std::span<const int64_t> offsets, std::span<const int32_t> resources,
             std::span<const double> flow_cap, std::vector<double>& rates);
  /// The same, with flow f's resources at resources[begins[f] .. ends[f]) (so that a caller
  /// can lay them out with room to grow) and given the flows of every resource too (the
  /// transpose: resource r's flows are res_flows[res_offsets[r] .. res_offsets[r+1])), which
  /// a caller that builds the problem from per-resource lists has for free.
  void solve(std::span<const double> capacity, std::span<const int64_t> begins, std::span<const int64_t> ends,
             std::span<const int32_t> resources, std::span<const int64_t> res_offsets,
             std::span<const int32_t> res_flows, std::span<const double> flow_cap, std::vector<double>& rates);

private:
  struct Entry {
    double level;
    int32_t resource;
    uint32_t version;
  };
  std::vector<int64_t> res_offsets_;
  std::vector<int32_t> res_flows_;
  std::vector<double> remaining_;
  std::vector<int32_t> count_;
  std::vector<uint32_t> version_;
  std::vector<uint8_t> frozen_;
  std::vector<Entry> heap_;
  std::vector<double> cap_;      // per flow: its cap, lowered by the resources it alone uses
  std::vector<int32_t> shared_;  // resources two flows or more use
  std::vector<double> fill_at_;  // per shared resource, scan mode: the level at which it fills (remaining / count)
  struct Capped {
    double cap;
    int32_t flow;
  };
  std::vector<Capped> capped_;  // flows with a cap, by cap with a heap, in flow order with a scan
  std::vector<int32_t> touched_;
  std::vector<uint8_t> touched_mark_;
};

}  // namespace daqnet::simulate
