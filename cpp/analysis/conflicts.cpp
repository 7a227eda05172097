// daqnet — plan, simulate and benchmark event-building networks.
#include "analysis/conflicts.hpp"

#include <algorithm>

#include "analysis/detail/flow_links.hpp"
#include "common/error.hpp"
#include "common/step_pool.hpp"

namespace daqnet::analysis {

void check_placement(const routing::Routing& routing, std::span<const int32_t> placement,
                     const workload::Schedule& schedule) {
  if (const auto* t = dynamic_cast<const routing::TableRouting*>(&routing); t && !t->finalized())
    throw Error("analysis: routing tables are not finalized");
  const int32_t H = routing.fabric().num_hosts();
  if (static_cast<int64_t>(placement.size()) < schedule.ranks())
    throw Error("analysis: the workload has " + std::to_string(schedule.ranks()) + " ranks but the placement only " +
                std::to_string(placement.size()));
  for (size_t r = 0; r < placement.size(); ++r)
    if (placement[r] < 0 || placement[r] >= H)
      throw Error("analysis: rank " + std::to_string(r) + " is placed on node " + std::to_string(placement[r]) +
                  ", which is not a host");
}

namespace {

// Route every flow of one step, counting flows per link (not the hot loop of analyze_conflicts).
void count_loads(const routing::Routing& routing, std::span<const int32_t> placement, const std::vector<Flow>& flows,
                 int64_t step, std::vector<int32_t>& load) {
  detail::with_flow_links(routing, [&](auto& links) {
    for (const Flow& f : flows) {
      const int32_t a = placement[static_cast<size_t>(f.src)];
      const int32_t b = placement[static_cast<size_t>(f.dst)];
      if (a == b) continue;  // ranks on one host: no link
      links(a, b, routing::flow_key(step, f.src, f.dst), [&](LinkId l) { ++load[static_cast<size_t>(l)]; });
    }
  });
}

// Per-link state of the hot loop (8 bytes, so that the array of a 27,648-host tree stays
// near the processor's L2): stamp == the step's epoch once a flow used the link in the
// current step, so that nothing is reset between steps, and the steps that used the link.
struct LinkState {
  uint32_t stamp = 0;
  uint32_t used_steps = 0;  // steps with load >= 1 (steps are counted in 32 bits anyway)
};

// What changes only on a conflict (load >= 2), kept apart: the load in the current step
// (valid when stamp == the epoch, else 1) and the totals.
struct LinkConflicts {
  int64_t excess = 0;          // Σ max(0, load - 1)
  int64_t conflict_steps = 0;  // steps with load >= 2
  int32_t max_load = 0;
  uint32_t stamp = 0;
  int32_t load = 0;
};

}  // namespace

namespace {

// What one thread gathers over the steps it analyses; merged (sums and maxima, so the
// result does not depend on how steps were shared out) at the end.
struct Partial {
  std::vector<LinkState> state;
  std::vector<LinkConflicts> cold;
  // at_least[c][k]: (link, step) pairs of class c with load >= k, for k >= 3 (rare);
  // k = 1 and 2 come from the per-link counters at the end.
  std::vector<std::vector<int64_t>> at_least;
  int64_t spread_flows = 0;
};

// Analyse steps [first, last) into `steps` (indexed by step) and `acc`. Links are gathered
// into a buffer first and counted after, so that the walks through the route cache and the
// scattered updates of the link counters overlap in the processor rather than wait on
// each other.
template <class FlowLinks>
void analyze_range(int64_t first, int64_t last, const std::vector<int32_t>& klass,
                   const std::vector<uint8_t>& host_link, std::span<const int32_t> placement,
                   const workload::Schedule& schedule, FlowLinks& flow_links, Partial& acc,
                   std::vector<StepSummary>& steps, std::vector<Flow>& flows, std::vector<LinkId>& buffer) {
  constexpr size_t kFlush = 4096;
  for (int64_t s = first; s < last; ++s) {
    schedule.step(s, flows);
    const auto epoch = static_cast<uint32_t>(s + 1);
    int64_t traversals = 0, distinct = 0;
    int32_t step_max = 0, host_max = 0, conflicting = 0;
    // A link already used in this step: a conflict (rare on good schedules, so out of line).
    auto conflict = [&](LinkId l) {
      LinkConflicts& c = acc.cold[static_cast<size_t>(l)];
      if (c.stamp != epoch) {
        c.stamp = epoch;
        c.load = 1;
      }
      const int32_t k = ++c.load;
      ++c.excess;
      if (k == 2) {
        ++c.conflict_steps;
        ++conflicting;
      }
      if (k > c.max_load) c.max_load = k;
      if (k > step_max) step_max = k;
      if (k > host_max && host_link[static_cast<size_t>(l)]) host_max = k;
      if (k >= 3) {
        auto& a = acc.at_least[static_cast<size_t>(klass[static_cast<size_t>(l)])];
        if (a.size() <= static_cast<size_t>(k)) a.resize(static_cast<size_t>(k) + 1, 0);
        ++a[static_cast<size_t>(k)];
      }
    };
    // Raw pointers, so that the compiler keeps them in registers across the stores below.
    LinkState* const hot = acc.state.data();
    const int32_t* const place = placement.data();
    size_t used = 0;  // links in buffer
    auto flush = [&] {
      for (size_t i = 0; i < used; ++i) {
        const LinkId l = buffer[i];
        LinkState& st = hot[l];
        if (st.stamp != epoch) [[likely]] {  // first flow on this link in this step
          st.stamp = epoch;
          ++st.used_steps;
          ++distinct;
        } else {
          conflict(l);
        }
      }
      traversals += static_cast<int64_t>(used);
      used = 0;
    };
    // Flows are walked in batches (see TableRouting::gather_paths), then counted.
    constexpr size_t kBatch = 256;
    int32_t src[kBatch], dst[kBatch];
    uint64_t key[kBatch];
    size_t pending = 0;
    auto walk = [&] {
      used = flow_links.gather(src, dst, key, pending, buffer, used);
      pending = 0;
      if (used >= kFlush) flush();
    };
    int64_t local = 0;
    for (const Flow& fl : flows) {
      const int32_t a = place[fl.src];
      const int32_t b = place[fl.dst];
      if (a == b) {  // ranks on one host: no link
        ++local;
        continue;
      }
      src[pending] = a;
      dst[pending] = b;
      if constexpr (FlowLinks::kPerFlow) key[pending] = routing::flow_key(s, fl.src, fl.dst);
      if (++pending == kBatch) walk();
    }
    walk();
    flush();
    StepSummary& st = steps[static_cast<size_t>(s)];
    st.step = s;
    st.flows = static_cast<int64_t>(flows.size());
    st.local_flows = local;
    st.links_used = static_cast<int32_t>(distinct);
    st.conflicting_links = conflicting;
    st.conflicts = traversals - distinct;  // Σ (load - 1) over used links
    st.max_link_load = distinct > 0 ? std::max(step_max, 1) : 0;
    st.max_host_link_load = distinct > 0 ? std::max(host_max, 1) : 0;  // every route starts at a host
  }
}

ConflictResult analyze(const routing::Routing& routing, std::span<const int32_t> placement,
                       const workload::Schedule& schedule, const Progress& progress, double progress_period_seconds,
                       int32_t threads) {
  const auto& f = routing.fabric();
  const size_t L = static_cast<size_t>(f.num_links());
  std::vector<int32_t> klass(L);
  const auto classes = static_cast<size_t>(f.link_class_names().size());
  std::vector<uint8_t> host_link(L);
  for (size_t l = 0; l < L; ++l) {
    const auto& link = f.link(static_cast<LinkId>(l));
    klass[l] = link.link_class;
    host_link[l] = link.src < f.num_hosts() || link.dst < f.num_hosts();
  }

  ConflictResult r;
  r.steps_total = schedule.num_steps();
  const int64_t total = r.steps_total;
  if (total >= int64_t{1} << 32) throw Error("analysis: more than 2^32 steps");
  r.steps.resize(static_cast<size_t>(total));
  StepPool pool(total, threads, 64, progress, progress_period_seconds);
  std::vector<Partial> parts(pool.threads());
  const int64_t steps_done = pool.run([&](size_t t, StepPool& steps) {
    Partial& acc = parts[t];
    acc.state.assign(L, LinkState{});
    acc.cold.assign(L, LinkConflicts{});
    acc.at_least.assign(classes, {});
    std::vector<Flow> flows;
    std::vector<LinkId> buffer;
    detail::with_flow_links(routing, [&](auto& links) {
      int64_t first = 0, last = 0;
      while (steps.next(first, last)) {
        analyze_range(first, last, klass, host_link, placement, schedule, links, acc, r.steps, flows, buffer);
        steps.done(t, last - first);
      }
      acc.spread_flows = links.spread();
    });
  });
  r.interrupted = steps_done < total;
  r.steps.resize(static_cast<size_t>(steps_done));
  for (const auto& st : r.steps) {
    r.total_flows += st.flows;
    r.local_flows += st.local_flows;
    r.total_conflicts += st.conflicts;
    r.total_link_traversals += st.conflicts + st.links_used;
    r.max_link_load = std::max(r.max_link_load, st.max_link_load);
  }

  r.link_flows.assign(L, 0);
  r.link_conflicts.assign(L, 0);
  r.link_conflict_steps.assign(L, 0);
  r.link_max_load.assign(L, 0);
  std::vector<int64_t> links_in(classes, 0), ge1(classes, 0), ge2(classes, 0);
  std::vector<std::vector<int64_t>> at_least(classes);
  for (const Partial& p : parts) {
    r.spread_flows += p.spread_flows;
    for (size_t l = 0; l < L; ++l) {
      const auto& st = p.state[l];
      const auto& cf = p.cold[l];
      r.link_flows[l] += st.used_steps + cf.excess;
      r.link_conflicts[l] += cf.excess;
      r.link_conflict_steps[l] += cf.conflict_steps;
      r.link_max_load[l] = std::max(r.link_max_load[l], st.used_steps > 0 ? std::max(cf.max_load, 1) : 0);
      const auto c = static_cast<size_t>(klass[l]);
      ge1[c] += st.used_steps;
      ge2[c] += cf.conflict_steps;
    }
    for (size_t c = 0; c < classes; ++c) {
      const auto& a = p.at_least[c];
      if (at_least[c].size() < a.size()) at_least[c].resize(a.size(), 0);
      for (size_t k = 0; k < a.size(); ++k) at_least[c][k] += a[k];
    }
  }
  for (size_t l = 0; l < L; ++l) ++links_in[static_cast<size_t>(klass[l])];
  // Histogram of loads per class from the "load >= k" counts: h[k] = ge[k] - ge[k+1].
  r.load_histogram.resize(classes);
  for (size_t c = 0; c < classes; ++c) {
    std::vector<int64_t> ge{links_in[c] * steps_done, ge1[c], ge2[c]};
    for (size_t k = 3; k < at_least[c].size(); ++k) ge.push_back(at_least[c][k]);
    while (ge.size() > 2 && ge.back() == 0) ge.pop_back();
    auto& h = r.load_histogram[c];
    h.resize(ge.size());
    for (size_t k = 0; k < ge.size(); ++k) h[k] = ge[k] - (k + 1 < ge.size() ? ge[k + 1] : 0);
  }
  if (progress && !r.interrupted) progress(steps_done, total);
  return r;
}

}  // namespace

ConflictResult analyze_conflicts(const routing::Routing& routing, std::span<const int32_t> placement,
                                 const workload::Schedule& schedule, const Progress& progress,
                                 double progress_period_seconds, int32_t threads) {
  check_placement(routing, placement, schedule);
  return analyze(routing, placement, schedule, progress, progress_period_seconds, threads);
}

namespace {

void check_step(const workload::Schedule& schedule, int64_t step) {
  if (step < 0 || step >= schedule.num_steps())
    throw Error("analysis: step " + std::to_string(step + 1) + " is out of range (1.." +
                std::to_string(schedule.num_steps()) + ")");
}

}  // namespace

std::vector<int32_t> step_loads(const routing::Routing& routing, std::span<const int32_t> placement,
                                const workload::Schedule& schedule, int64_t step) {
  check_placement(routing, placement, schedule);
  check_step(schedule, step);
  std::vector<int32_t> load(static_cast<size_t>(routing.fabric().num_links()), 0);
  std::vector<Flow> flows;
  schedule.step(step, flows);
  count_loads(routing, placement, flows, step, load);
  return load;
}

std::vector<LinkConflict> step_conflicts(const routing::Routing& routing, std::span<const int32_t> placement,
                                         const workload::Schedule& schedule, int64_t step, size_t max_links,
                                         size_t max_flows_per_link) {
  check_placement(routing, placement, schedule);
  check_step(schedule, step);
  const size_t L = static_cast<size_t>(routing.fabric().num_links());
  std::vector<int32_t> load(L, 0);
  std::vector<Flow> flows;
  schedule.step(step, flows);
  count_loads(routing, placement, flows, step, load);

  // The most loaded links first (ties: lower link id), at most max_links of them.
  std::vector<LinkId> hot;
  for (size_t l = 0; l < L; ++l)
    if (load[l] > 1) hot.push_back(static_cast<LinkId>(l));
  std::stable_sort(hot.begin(), hot.end(),
                   [&](LinkId a, LinkId b) { return load[static_cast<size_t>(a)] > load[static_cast<size_t>(b)]; });
  if (hot.size() > max_links) hot.resize(max_links);
  std::vector<int32_t> slot(L, -1);
  std::vector<LinkConflict> out;
  for (LinkId l : hot) {
    slot[static_cast<size_t>(l)] = static_cast<int32_t>(out.size());
    out.push_back({l, load[static_cast<size_t>(l)], {}});
  }
  detail::with_flow_links(routing, [&](auto& links) {
    for (const Flow& fl : flows) {
      const int32_t a = placement[static_cast<size_t>(fl.src)], b = placement[static_cast<size_t>(fl.dst)];
      if (a == b) continue;
      links(a, b, routing::flow_key(step, fl.src, fl.dst), [&](LinkId l) {
        if (const int32_t k = slot[static_cast<size_t>(l)]; k >= 0) {
          auto& c = out[static_cast<size_t>(k)];
          if (c.flows.size() < max_flows_per_link) c.flows.push_back(fl);
        }
      });
    }
  });
  return out;
}

}  // namespace daqnet::analysis
