// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/function.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <span>

#include "analysis/conflicts.hpp"
#include "analysis/link_bytes.hpp"
#include "analysis/rank_search.hpp"
#include "analysis/schedule_repair.hpp"
#include "numpy_util.hpp"
#include "progress.hpp"

namespace daqnet::bindings {

using namespace daqnet::analysis;

namespace {

std::span<const int32_t> as_span(const IntArray& a) { return {a.data(), a.shape(0)}; }

nb::list steps_to_numpy(Steps steps) {
  nb::list out;
  for (auto& step : steps) {
    std::vector<int32_t> flat;
    flat.reserve(step.size() * 2);
    for (const auto& f : step) {
      flat.push_back(f.src);
      flat.push_back(f.dst);
    }
    const size_t n = step.size();
    out.append(to_numpy_2d(std::move(flat), n, 2));
  }
  return out;
}

}  // namespace

void bind_analysis(nb::module_& m) {
  nb::class_<ConflictResult>(m, "ConflictResult")
      .def_ro("total_flows", &ConflictResult::total_flows)
      .def_ro("local_flows", &ConflictResult::local_flows)
      .def_ro("total_conflicts", &ConflictResult::total_conflicts)
      .def_ro("total_link_traversals", &ConflictResult::total_link_traversals)
      .def_ro("spread_flows", &ConflictResult::spread_flows)
      .def_ro("max_link_load", &ConflictResult::max_link_load)
      .def_ro("steps_total", &ConflictResult::steps_total)
      .def_ro("interrupted", &ConflictResult::interrupted)
      .def("step_table",
           [](const ConflictResult& r) {
             return Columns(r.steps)
                 .add("step", [](const StepSummary& s) { return s.step; })
                 .add("flows", [](const StepSummary& s) { return s.flows; })
                 .add("conflicts", [](const StepSummary& s) { return s.conflicts; })
                 .add("max_link_load", [](const StepSummary& s) { return s.max_link_load; })
                 .add("max_host_link_load", [](const StepSummary& s) { return s.max_host_link_load; })
                 .add("links_used", [](const StepSummary& s) { return s.links_used; })
                 .add("conflicting_links", [](const StepSummary& s) { return s.conflicting_links; })
                 .dict();
           })
      .def("link_table",
           [](const ConflictResult& r) {
             nb::dict d;
             d["flows"] = to_numpy(std::vector<int64_t>(r.link_flows));
             d["conflicts"] = to_numpy(std::vector<int64_t>(r.link_conflicts));
             d["conflict_steps"] = to_numpy(std::vector<int64_t>(r.link_conflict_steps));
             d["max_load"] = to_numpy(std::vector<int32_t>(r.link_max_load));
             return d;
           })
      .def(
          "load_histogram",
          [](const ConflictResult& r) {
            nb::list out;
            for (const auto& h : r.load_histogram) out.append(to_numpy(std::vector<int64_t>(h)));
            return out;
          },
          "Per link class 2·tier + down: counts of (link, step) pairs by load");

  m.def(
      "analyze_conflicts",
      [](const routing::Routing& routing, IntArray placement, const workload::Schedule& schedule, nb::object progress,
         double period, int32_t threads) {
        PyProgress py{progress};
        Progress cb = [&](int64_t done, int64_t total) { return py(done, total); };
        ConflictResult r;
        {
          nb::gil_scoped_release nogil;
          r = analyze_conflicts(routing, as_span(placement), schedule, cb, period, threads);
        }
        py.finish();
        const bool keyboard_interrupt = py.keyboard_interrupt;
        return nb::make_tuple(std::move(r), keyboard_interrupt);
      },
      nb::arg("routing"), nb::arg("placement"), nb::arg("schedule"), nb::arg("progress").none() = nb::none(),
      nb::arg("period_seconds") = 0.25, nb::arg("threads") = 1,
      "Analyse every step on `threads` threads; returns (ConflictResult, interrupted_by_ctrl_c)");

  m.def(
      "step_loads",
      [](const routing::Routing& routing, IntArray placement, const workload::Schedule& schedule, int64_t step) {
        return to_numpy(step_loads(routing, as_span(placement), schedule, step));
      },
      nb::arg("routing"), nb::arg("placement"), nb::arg("schedule"), nb::arg("step"),
      "Flows on every directed link in one step (0-based)");

  m.def(
      "link_bytes",
      [](const routing::Routing& routing, IntArray placement, const workload::Schedule& schedule, double message_bytes,
         int64_t max_steps) {
        std::vector<double> out;
        {
          nb::gil_scoped_release nogil;
          out = link_bytes(routing, as_span(placement), schedule, message_bytes, max_steps);
        }
        return to_numpy(std::move(out));
      },
      nb::arg("routing"), nb::arg("placement"), nb::arg("schedule"), nb::arg("message_bytes"),
      nb::arg("max_steps") = -1, "Bytes on every directed link over the steps (flows split by path weight)");

  m.def(
      "step_conflicts",
      [](const routing::Routing& routing, IntArray placement, const workload::Schedule& schedule, int64_t step,
         size_t max_links, size_t max_flows) {
        nb::list out;
        for (auto& c : step_conflicts(routing, as_span(placement), schedule, step, max_links, max_flows)) {
          std::vector<int32_t> flat;
          for (const auto& f : c.flows) {
            flat.push_back(f.src);
            flat.push_back(f.dst);
          }
          const size_t n = c.flows.size();
          out.append(nb::make_tuple(c.link, c.load, to_numpy_2d(std::move(flat), n, 2)));
        }
        return out;
      },
      nb::arg("routing"), nb::arg("placement"), nb::arg("schedule"), nb::arg("step"), nb::arg("max_links") = SIZE_MAX,
      nb::arg("max_flows_per_link") = SIZE_MAX,
      "Links with load >= 2 in one step, most loaded first: list of (link, load, flows as (n, 2) ranks)");

  nb::class_<RankSearchResult>(m, "RankSearchResult")
      .def_prop_ro(
          "placement", [](const RankSearchResult& r) { return to_numpy(std::vector<int32_t>(r.placement)); },
          nb::rv_policy::automatic)
      .def_ro("conflicts_start", &RankSearchResult::conflicts_start)
      .def_ro("conflicts", &RankSearchResult::conflicts)
      .def_ro("moves", &RankSearchResult::moves)
      .def_ro("accepted", &RankSearchResult::accepted)
      .def_ro("interrupted", &RankSearchResult::interrupted);

  m.def(
      "improve_rank_order",
      [](const routing::Routing& routing, IntArray placement, const workload::Schedule& schedule, uint64_t seed,
         int64_t max_moves, nb::object progress) {
        PyProgress py{progress};
        Progress cb = [&](int64_t done, int64_t total) { return py(done, total); };
        RankSearchResult r;
        {
          nb::gil_scoped_release nogil;
          r = improve_rank_order(routing, as_span(placement), schedule, seed, max_moves, cb);
        }
        py.finish();
        const bool keyboard_interrupt = py.keyboard_interrupt;
        return nb::make_tuple(std::move(r), keyboard_interrupt);
      },
      nb::arg("routing"), nb::arg("placement"), nb::arg("schedule"), nb::arg("seed"), nb::arg("max_moves"),
      nb::arg("progress").none() = nb::none(),
      "Swap ranks while total conflicts do not rise; returns (RankSearchResult, interrupted_by_ctrl_c)");

  m.def(
      "barrel_rand",
      [](const routing::Routing& routing, IntArray placement, const workload::Schedule& schedule, uint64_t seed) {
        Steps steps;
        {
          nb::gil_scoped_release nogil;
          steps = barrel_rand(routing, as_span(placement), schedule, seed);
        }
        return steps_to_numpy(std::move(steps));
      },
      nb::arg("routing"), nb::arg("placement"), nb::arg("schedule"), nb::arg("seed"),
      "Conflicting flows of each step moved into extra conflict-free steps: list of (n, 2) rank arrays");

  m.def(
      "conflict_free_random_steps",
      [](const routing::Routing& routing, IntArray placement, int32_t ranks, uint64_t seed, nb::object progress) {
        PyProgress py{progress};
        Progress cb = [&](int64_t done, int64_t total) { return py(done, total); };
        Steps steps;
        {
          nb::gil_scoped_release nogil;
          steps = conflict_free_random_steps(routing, as_span(placement), ranks, seed, cb);
        }
        py.finish();
        const bool keyboard_interrupt = py.keyboard_interrupt;
        return nb::make_tuple(steps_to_numpy(std::move(steps)), keyboard_interrupt);
      },
      nb::arg("routing"), nb::arg("placement"), nb::arg("ranks"), nb::arg("seed"),
      nb::arg("progress").none() = nb::none(),
      "Every ordered pair once in random conflict-free steps: (list of (n, 2) rank arrays, interrupted)");
}

}  // namespace daqnet::bindings
