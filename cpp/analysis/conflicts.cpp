// daqnet — plan, simulate and benchmark event-building networks.
#include "analysis/conflicts.hpp"

#include <algorithm>
#include <chrono>

#include "common/error.hpp"

namespace daqnet::analysis {

void check_placement(const routing::Routing& routing, std::span<const int32_t> placement,
                     const workload::Schedule& schedule) {
  if (!routing.finalized()) throw Error("analysis: routing tables are not finalized");
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

// Route every flow of one step, counting flows per link; `touched` lists links with load > 0.
// Returns the number of link traversals.
int64_t count_loads(const routing::Routing& routing, std::span<const int32_t> placement,
                    const std::vector<Flow>& flows, std::vector<int32_t>& load, std::vector<LinkId>& touched) {
  int64_t hops = 0;
  auto bump = [&](LinkId l) {
    if (load[static_cast<size_t>(l)]++ == 0) touched.push_back(l);
  };
  for (const Flow& f : flows) {
    const int32_t a = placement[static_cast<size_t>(f.src)];
    const int32_t b = placement[static_cast<size_t>(f.dst)];
    if (a == b) continue;  // ranks on one host: no link
    bump(routing.uplink(a));
    const auto t = routing.tail(a, b);
    for (LinkId l : t) bump(l);
    hops += 1 + static_cast<int64_t>(t.size());
  }
  return hops;
}

}  // namespace

ConflictResult analyze_conflicts(const routing::Routing& routing, std::span<const int32_t> placement,
                                 const workload::Schedule& schedule, const Progress& progress,
                                 double progress_period_seconds) {
  check_placement(routing, placement, schedule);
  const auto& f = routing.fabric();
  const size_t L = static_cast<size_t>(f.num_links());
  std::vector<int32_t> klass(L);
  int32_t classes = 0;
  for (size_t l = 0; l < L; ++l) {
    const auto& link = f.link(static_cast<LinkId>(l));
    klass[l] = 2 * link.tier + (link.up ? 0 : 1);
    classes = std::max(classes, klass[l] + 1);
  }

  ConflictResult r;
  r.steps_total = schedule.num_steps();
  r.link_flows.assign(L, 0);
  r.link_conflicts.assign(L, 0);
  r.link_conflict_steps.assign(L, 0);
  r.link_max_load.assign(L, 0);
  r.load_histogram.assign(static_cast<size_t>(classes), std::vector<int64_t>(2, 0));
  r.steps.reserve(static_cast<size_t>(r.steps_total));

  std::vector<int32_t> load(L, 0);
  std::vector<LinkId> touched;
  touched.reserve(L);
  std::vector<Flow> flows;
  using clock = std::chrono::steady_clock;
  auto next_report = clock::now() + std::chrono::duration<double>(progress_period_seconds);

  for (int64_t s = 0; s < r.steps_total; ++s) {
    schedule.step(s, flows);
    touched.clear();
    r.total_link_traversals += count_loads(routing, placement, flows, load, touched);

    StepSummary st;
    st.step = s;
    st.flows = static_cast<int64_t>(flows.size());
    st.links_used = static_cast<int32_t>(touched.size());
    for (LinkId l : touched) {
      const auto i = static_cast<size_t>(l);
      const int32_t k = load[i];
      load[i] = 0;
      r.link_flows[i] += k;
      if (k > r.link_max_load[i]) r.link_max_load[i] = k;
      auto& h = r.load_histogram[static_cast<size_t>(klass[i])];
      if (static_cast<size_t>(k) >= h.size()) h.resize(static_cast<size_t>(k) + 1, 0);
      ++h[static_cast<size_t>(k)];
      if (k > 1) {
        st.conflicts += k - 1;
        ++st.conflicting_links;
        r.link_conflicts[i] += k - 1;
        ++r.link_conflict_steps[i];
      }
      st.max_link_load = std::max(st.max_link_load, k);
    }
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
  // Idle (link, step) pairs: every link of a class, every step done, minus the loaded ones.
  std::vector<int64_t> per_class(static_cast<size_t>(classes), 0);
  for (size_t l = 0; l < L; ++l) ++per_class[static_cast<size_t>(klass[l])];
  const auto done = static_cast<int64_t>(r.steps.size());
  for (size_t c = 0; c < per_class.size(); ++c) {
    int64_t loaded = 0;
    for (size_t k = 1; k < r.load_histogram[c].size(); ++k) loaded += r.load_histogram[c][k];
    r.load_histogram[c][0] = per_class[c] * done - loaded;
  }
  if (progress && !r.interrupted) progress(done, r.steps_total);
  return r;
}

std::vector<LinkConflict> step_conflicts(const routing::Routing& routing, std::span<const int32_t> placement,
                                         const workload::Schedule& schedule, int64_t step) {
  check_placement(routing, placement, schedule);
  if (step < 0 || step >= schedule.num_steps())
    throw Error("analysis: step " + std::to_string(step) + " is out of range (0.." +
                std::to_string(schedule.num_steps() - 1) + ")");
  const size_t L = static_cast<size_t>(routing.fabric().num_links());
  std::vector<int32_t> load(L, 0);
  std::vector<LinkId> touched;
  std::vector<Flow> flows;
  schedule.step(step, flows);
  count_loads(routing, placement, flows, load, touched);

  std::vector<int32_t> slot(L, -1);
  std::vector<LinkConflict> out;
  std::sort(touched.begin(), touched.end());
  for (LinkId l : touched)
    if (load[static_cast<size_t>(l)] > 1) {
      slot[static_cast<size_t>(l)] = static_cast<int32_t>(out.size());
      out.push_back({l, load[static_cast<size_t>(l)], {}});
    }
  std::vector<LinkId> path;
  for (const Flow& fl : flows) {
    routing.path(placement[static_cast<size_t>(fl.src)], placement[static_cast<size_t>(fl.dst)], path);
    for (LinkId l : path)
      if (slot[static_cast<size_t>(l)] >= 0) out[static_cast<size_t>(slot[static_cast<size_t>(l)])].flows.push_back(fl);
  }
  return out;
}

}  // namespace daqnet::analysis
