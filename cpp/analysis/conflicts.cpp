// daqnet — plan, simulate and benchmark event-building networks.
#include "analysis/conflicts.hpp"

#include <algorithm>
#include <chrono>

#include "analysis/detail/flow_links.hpp"
#include "common/error.hpp"

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

// Per-link state of the hot loop (16 bytes): the load in the current step, valid when
// stamp == the step's epoch so that nothing is reset between steps, and the number of
// steps that used the link.
struct LinkState {
  uint32_t stamp = 0;
  int32_t load = 0;
  int64_t used_steps = 0;  // steps with load >= 1
};

// Totals that change only on a conflict (load >= 2), kept apart so that the hot array
// stays small (16 bytes a link).
struct LinkConflicts {
  int64_t excess = 0;          // Σ max(0, load - 1)
  int64_t conflict_steps = 0;  // steps with load >= 2
  int32_t max_load = 0;
};

}  // namespace

namespace {

template <class FlowLinks>
ConflictResult analyze(const routing::Routing& routing, std::span<const int32_t> placement,
                       const workload::Schedule& schedule, FlowLinks& flow_links, const Progress& progress,
                       double progress_period_seconds) {
  const auto& f = routing.fabric();
  const size_t L = static_cast<size_t>(f.num_links());
  std::vector<int32_t> klass(L);
  const auto classes = static_cast<int32_t>(f.link_class_names().size());
  for (size_t l = 0; l < L; ++l) klass[l] = f.link(static_cast<LinkId>(l)).link_class;

  ConflictResult r;
  r.steps_total = schedule.num_steps();
  r.steps.reserve(static_cast<size_t>(r.steps_total));
  // at_least[c][k]: (link, step) pairs of class c with load >= k, for k >= 3 (rare);
  // k = 1 and 2 come from the per-link counters at the end.
  std::vector<std::vector<int64_t>> at_least(static_cast<size_t>(classes));

  std::vector<LinkState> state(L);
  std::vector<LinkConflicts> cold(L);
  std::vector<Flow> flows;
  using clock = std::chrono::steady_clock;
  auto next_report = clock::now() + std::chrono::duration<double>(progress_period_seconds);

  for (int64_t s = 0; s < r.steps_total; ++s) {
    schedule.step(s, flows);
    const auto epoch = static_cast<uint32_t>(s + 1);
    int64_t traversals = 0, distinct = 0;
    int32_t step_max = 0, conflicting = 0;
    // A link already used in this step: a conflict (rare on good schedules, so out of line).
    auto conflict = [&](LinkId l, LinkState& st) {
      const int32_t k = ++st.load;
      LinkConflicts& c = cold[static_cast<size_t>(l)];
      ++c.excess;
      if (k == 2) {
        ++c.conflict_steps;
        ++conflicting;
      }
      if (k > c.max_load) c.max_load = k;
      if (k > step_max) step_max = k;
      if (k >= 3) {
        auto& a = at_least[static_cast<size_t>(klass[static_cast<size_t>(l)])];
        if (a.size() <= static_cast<size_t>(k)) a.resize(static_cast<size_t>(k) + 1, 0);
        ++a[static_cast<size_t>(k)];
      }
    };
    // Raw pointers, so that the compiler keeps them in registers across the stores below.
    LinkState* const hot = state.data();
    const int32_t* const place = placement.data();
    auto visit = [&](LinkId l) {
      LinkState& st = hot[l];
      if (st.stamp != epoch) [[likely]] {  // first flow on this link in this step
        st.stamp = epoch;
        st.load = 1;
        ++st.used_steps;
        ++distinct;
      } else {
        conflict(l, st);
      }
    };
    for (const Flow& fl : flows) {
      const int32_t a = place[fl.src];
      const int32_t b = place[fl.dst];
      if (a == b) continue;  // ranks on one host: no link
      traversals += flow_links(a, b, routing::flow_key(s, fl.src, fl.dst), visit);
    }
    StepSummary st;
    st.step = s;
    st.flows = static_cast<int64_t>(flows.size());
    st.links_used = static_cast<int32_t>(distinct);
    st.conflicting_links = conflicting;
    st.conflicts = traversals - distinct;  // Σ (load - 1) over used links
    st.max_link_load = distinct > 0 ? std::max(step_max, 1) : 0;
    r.total_link_traversals += traversals;
    r.total_flows += st.flows;
    r.total_conflicts += st.conflicts;
    r.max_link_load = std::max(r.max_link_load, st.max_link_load);
    r.steps.push_back(st);

    if (progress && clock::now() >= next_report) {
      next_report = clock::now() + std::chrono::duration<double>(progress_period_seconds);
      if (!progress(s + 1, r.steps_total)) {
        r.interrupted = s + 1 < r.steps_total;
        break;
      }
    }
  }

  const auto done = static_cast<int64_t>(r.steps.size());
  r.link_flows.resize(L);
  r.link_conflicts.resize(L);
  r.link_conflict_steps.resize(L);
  r.link_max_load.resize(L);
  std::vector<int64_t> links_in(static_cast<size_t>(classes), 0), ge1(links_in), ge2(links_in);
  for (size_t l = 0; l < L; ++l) {
    const auto& st = state[l];
    const auto& cf = cold[l];
    r.link_flows[l] = st.used_steps + cf.excess;
    r.link_conflicts[l] = cf.excess;
    r.link_conflict_steps[l] = cf.conflict_steps;
    r.link_max_load[l] = st.used_steps > 0 ? std::max(cf.max_load, 1) : 0;
    const auto c = static_cast<size_t>(klass[l]);
    ++links_in[c];
    ge1[c] += st.used_steps;
    ge2[c] += cf.conflict_steps;
  }
  // Histogram of loads per class from the "load >= k" counts: h[k] = ge[k] - ge[k+1].
  r.load_histogram.resize(static_cast<size_t>(classes));
  for (size_t c = 0; c < static_cast<size_t>(classes); ++c) {
    std::vector<int64_t> ge{links_in[c] * done, ge1[c], ge2[c]};
    for (size_t k = 3; k < at_least[c].size(); ++k) ge.push_back(at_least[c][k]);
    while (ge.size() > 2 && ge.back() == 0) ge.pop_back();
    auto& h = r.load_histogram[c];
    h.resize(ge.size());
    for (size_t k = 0; k < ge.size(); ++k) h[k] = ge[k] - (k + 1 < ge.size() ? ge[k + 1] : 0);
  }
  if (progress && !r.interrupted) progress(done, r.steps_total);
  return r;
}

}  // namespace

ConflictResult analyze_conflicts(const routing::Routing& routing, std::span<const int32_t> placement,
                                 const workload::Schedule& schedule, const Progress& progress,
                                 double progress_period_seconds) {
  check_placement(routing, placement, schedule);
  return detail::with_flow_links(routing, [&](auto& links) {
    return analyze(routing, placement, schedule, links, progress, progress_period_seconds);
  });
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
