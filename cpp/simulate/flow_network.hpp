// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "simulate/completion_check.hpp"
#include "simulate/fair_share.hpp"
#include "simulate/indexed_heap.hpp"

namespace daqnet::simulate {

/// Flows of bytes over shared resources, over time, at max-min fair rates.
///
/// Flows start and finish as events. Rates are recomputed lazily (once per instant, however
/// many flows started or finished at it) and incrementally: the flows of the resources a
/// new flow uses and of the saturated resources a finished flow leaves are re-solved, with
/// resources outside the set entering only as caps (their saturation level). A flow leaving
/// a resource that had room changes no other flow's rate through it, so such resources
/// stay out of the set. The set
/// widens while the new rates break the max-min conditions outside it: a resource pushed
/// over capacity, or a bottleneck that gained room while a flow still sits at its level;
/// with each widening, the saturated neighbours its new flows are likely to move come in too.
/// Flows slower than every flow that started or finished since the last re-solve keep their
/// rates (max-min filling runs as before up to there) and stay out, as fixed loads.
/// Every flow then has a saturated resource on which no flow gets more, which
/// characterises the max-min allocation; tests compare every step with a full solve.
class FlowNetwork {
public:
  using FlowId = int32_t;
  /// Resources one flow may use (a 3-level fat-tree route is 6 links, plus 2 NIC limits).
  static constexpr size_t kMaxResources = 8;

  /// capacity[r] in bytes per second (infinite allowed).
  explicit FlowNetwork(std::vector<double> capacity);

  double now() const { return now_; }
  size_t active() const { return active_; }
  size_t num_resources() const { return rs_.size(); }

  /// Start a flow of `bytes` (> 0) over `resources` at now(), with an optional rate cap.
  /// `tag` comes back when the flow completes.
  FlowId start(std::span<const int32_t> resources, double bytes, double cap = kUnlimited, uint64_t tag = 0);

  /// Time of the next completion (infinite when no flow is active). Settles the rates.
  double next_completion();

  /// Move the clock to t (≤ next_completion()) and return, in `done`, the tags of the flows
  /// complete by then (within a relative 1e-12 of t, so that equal flows finish together).
  void advance(double t, std::vector<uint64_t>& done);

  /// Run every active flow to its end at once, when no rate would change on the way: each
  /// group of flows that ends together (as advance() groups them) is faster than every flow
  /// still on its saturated resources, so the flows left keep their rates (see settle()).
  /// Then `done` holds (time, tag) in the order advance() would give, the clock is at the
  /// last completion and the network is empty, as advancing through each completion and
  /// settling would leave it (stats aside: no settle is counted), with none of the
  /// per-flow removals. Otherwise (a flow that would speed up or never ends, or the full
  /// recompute is on) returns false and changes nothing. The step simulation drains what
  /// its step solver leaves once every sub-flow has started.
  bool drain(std::vector<std::pair<double, uint64_t>>& done);

  /// Current rate of an active flow (bytes/s), after settling.
  double rate(FlowId id);
  /// Bytes a flow still has to move at now().
  double remaining(FlowId id) const;

  /// Σ of rates of the active flows on each resource, after settling.
  std::vector<double> loads();

  /// Work done by the incremental solver, for benchmarks and tests.
  struct Stats {
    int64_t solves = 0;        ///< settle() calls that had something to do
    int64_t widenings = 0;     ///< times the resource set had to grow
    int64_t flows_solved = 0;  ///< Σ flows in the local problems
    int64_t rate_changes = 0;  ///< flows whose rate a solve changed: each moves a completion time
  };
  const Stats& stats() const { return stats_; }

  /// With no flow active: the clock back to 0 and flow ids handed out from 0 again, so that
  /// what runs next does not depend, to the last bit, on what ran before (the step
  /// simulation runs steps on several threads, each network seeing different steps).
  void restart();

  /// Testing aid: recompute every rate from scratch instead of incrementally.
  void set_full_recompute(bool on) { full_ = on; }

private:
  // Up to kMaxResources ints kept inside the flow: the solver visits flows' resources
  // millions of times, and a separate allocation per flow costs a cache miss each time.
  struct SmallList {
    std::array<int32_t, 8> v{};
    uint32_t n = 0;
    const int32_t* begin() const { return v.data(); }
    const int32_t* end() const { return v.data() + n; }
    size_t size() const { return n; }
    bool empty() const { return n == 0; }
    int32_t& operator[](size_t i) { return v[i]; }
    int32_t operator[](size_t i) const { return v[i]; }
    void resize(size_t k) { n = static_cast<uint32_t>(k); }
  };
  // Per flow, what the solver and the load checks read, in one cache line: they visit
  // hundreds of flows per change, and one array per field cost a cache miss per field.
  struct alignas(64) Flow {
    SmallList res;         // resources used
    uint32_t mark = 0;     // == mark_: the flow is in set_flows_ ...
    int32_t set_pos = -1;  // ... at this index
    double rate = 0, cap = kUnlimited;
  };
  static_assert(sizeof(Flow) == 64);
  // The rest, read when a rate changes or the flow ends.
  struct Cold {
    double remaining = 0;  // bytes at time `since`
    double since = 0;
    uint64_t tag = 0;
  };

  void touch(int32_t r);
  void settle();
  void set_rate(FlowId id, double rate);
  void finish(FlowId id);
  bool saturated(size_t r) const { return rs_[r].level < kUnlimited; }

  // Per resource, what every start, finish and settle reads, in one cache line's half.
  struct Resource {
    double capacity = 0;
    double level = kUnlimited;  // saturation level (max rate there), inf if not saturated
    // Σ of the committed rates, on finite resources, kept up to date on every rate change
    // (and reset to 0 when the resource empties, so rounding does not accumulate across steps).
    double load = 0;
    uint32_t in_set = 0;  // in the set being re-solved ...
    int32_t local = -1;   // ... as this resource of the local problem
  };
  std::vector<Resource> rs_;
  std::vector<std::vector<FlowId>> res_flows_;  // active flows of each resource
  std::vector<Flow> flows_;
  std::vector<SmallList> pos_;  // per flow: its index in res_flows_[flows_[id].res[k]]
  std::vector<Cold> cold_;
  std::vector<FlowId> free_;
  IndexedHeap completions_;  // active flows with a rate > 0, by completion time
  size_t active_ = 0;
  double now_ = 0;
  bool full_ = false;
  std::vector<FlowId> started_;            // flows started since the last settle ...
  double finished_min_rate_ = kUnlimited;  // ... and the slowest rate of those finished
  Stats stats_;

  // The set being re-solved and scratch space, reused between calls.
  std::vector<int32_t> dirty_;
  std::vector<FlowId> set_flows_;
  uint32_t mark_ = 0;
  std::vector<int64_t> local_begin_, local_end_, res_offsets_;
  std::vector<int32_t> res_local_flows_;
  std::vector<FlowId> relist_;
  std::vector<int32_t> local_res_;
  std::vector<double> local_cap_, local_capacity_, new_rates_;
  std::vector<int32_t> widen_, outside_, checked_;
  std::vector<uint32_t> res_seen_;
  std::vector<double> delta_;  // per outside resource checked: Σ of its flows' rate changes
  uint32_t res_stamp_ = 0;
  FairShareSolver solver_;
  // drain(): the completions in order, and the test that their rates hold.
  std::vector<IndexedHeap::Entry> order_;
  CompletionCheck check_;
};

}  // namespace daqnet::simulate
