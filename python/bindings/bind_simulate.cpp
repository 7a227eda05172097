// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <span>
#include <string>

#include "common/error.hpp"
#include "evb/config.hpp"
#include "numpy_util.hpp"
#include "progress.hpp"
#include "simulate/fair_share.hpp"
#include "simulate/flow_network.hpp"
#include "simulate/flow_rates.hpp"
#include "simulate/network_model.hpp"
#include "simulate/protocol.hpp"
#include "simulate/steps.hpp"

namespace daqnet::bindings {

using namespace daqnet::simulate;

namespace {

using DoubleArray = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Int64Array = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class A>
auto span_of(const A& a) {
  return std::span(a.data(), a.shape(0));
}

template <class T>
auto copy(const std::vector<T>& v) {
  return to_numpy(std::vector<T>(v));
}

template <class Row, class T>
auto column(const std::vector<Row>& rows, T Row::*field) {
  std::vector<T> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back(r.*field);
  return to_numpy(std::move(out));
}

}  // namespace

namespace {
// A flow's two ends: hosts of this fabric, and not one host twice.
void check_pair(int32_t a, int32_t b, int32_t hosts) {
  for (const int32_t h : {a, b})
    if (h < 0 || h >= hosts)
      throw Error("simulate: host " + std::to_string(h) + " is out of range (the fabric has hosts 0 to " +
                  std::to_string(hosts - 1) + ")");
  if (a == b) throw Error("simulate: a flow from host " + std::to_string(a) + " to itself");
}
}  // namespace

void bind_simulate(nb::module_& m) {
  m.def(
      "max_min_rates",
      [](DoubleArray capacity, Int64Array offsets, IntArray resources, nb::object caps) {
        std::vector<double> cap;
        if (!caps.is_none()) {
          auto c = nb::cast<DoubleArray>(caps);
          cap.assign(c.data(), c.data() + c.shape(0));
        }
        return to_numpy(max_min_rates(span_of(capacity), span_of(offsets), span_of(resources), cap));
      },
      nb::arg("capacity"), nb::arg("offsets"), nb::arg("resources"), nb::arg("caps").none() = nb::none(),
      "Max-min fair rates by progressive filling (flows in CSR form)");

  nb::class_<FlowNetwork>(m, "FlowNetwork")
      .def(
          "__init__",
          [](FlowNetwork* self, DoubleArray capacity) {
            new (self) FlowNetwork(std::vector<double>(capacity.data(), capacity.data() + capacity.shape(0)));
          },
          nb::arg("capacity"))
      .def_prop_ro("now", &FlowNetwork::now)
      .def_prop_ro("active", &FlowNetwork::active)
      .def(
          "start",
          [](FlowNetwork& n, IntArray res, double bytes, double cap, uint64_t tag) {
            return n.start(span_of(res), bytes, cap, tag);
          },
          nb::arg("resources"), nb::arg("bytes"), nb::arg("cap") = kUnlimited, nb::arg("tag") = 0)
      .def("next_completion", &FlowNetwork::next_completion)
      .def(
          "advance",
          [](FlowNetwork& n, double t) {
            std::vector<uint64_t> done;
            n.advance(t, done);
            return done;
          },
          nb::arg("time"), "Move the clock; returns the tags of the flows complete by then")
      .def("rate", &FlowNetwork::rate, nb::arg("flow"))
      .def("remaining", &FlowNetwork::remaining, nb::arg("flow"))
      .def("loads", [](FlowNetwork& n) { return to_numpy(n.loads()); })
      .def("set_full_recompute", &FlowNetwork::set_full_recompute, nb::arg("on"))
      .def_prop_ro("stats", [](const FlowNetwork& n) { return n.stats(); });

  nb::class_<NetworkModel>(m, "NetworkModel")
      .def(
          "__init__",
          [](NetworkModel* self, const routing::Routing& r, double inj, double ej) {
            new (self) NetworkModel(r, NicLimits{inj, ej});
          },
          nb::keep_alive<1, 2>(), nb::arg("routing"), nb::arg("injection_gbps") = 0.0, nb::arg("ejection_gbps") = 0.0)
      .def("capacity", [](const NetworkModel& m) { return to_numpy(std::vector<double>(m.capacity())); })
      .def(
          "resources",
          [](const NetworkModel& m, int32_t a, int32_t b, bool ideal) {
            const int32_t H = m.routing().fabric().num_hosts();
            check_pair(a, b, H);
            std::vector<int32_t> out;
            m.resources(a, b, ideal, out);
            return to_numpy(std::move(out));
          },
          nb::arg("src_host"), nb::arg("dst_host"), nb::arg("ideal") = false)
      .def(
          "latency",
          [](const NetworkModel& m, int32_t a, int32_t b) {
            const int32_t H = m.routing().fabric().num_hosts();
            check_pair(a, b, H);
            return m.latency(a, b);
          },
          nb::arg("src_host"), nb::arg("dst_host"));

  nb::class_<FlowNetwork::Stats>(m, "SolverStats", "Work of the incremental rate solver")
      .def_ro("solves", &FlowNetwork::Stats::solves)
      .def_ro("widenings", &FlowNetwork::Stats::widenings)
      .def_ro("flows_solved", &FlowNetwork::Stats::flows_solved)
      .def_ro("rate_changes", &FlowNetwork::Stats::rate_changes);

  nb::class_<StepResult>(m, "StepResult", "Step times of simulate_steps (steps 0-based here)")
      .def_prop_ro(
          "step", [](const StepResult& r) { return column(r.steps, &StepTime::step); }, nb::rv_policy::move)
      .def_prop_ro(
          "flows", [](const StepResult& r) { return column(r.steps, &StepTime::flows); }, nb::rv_policy::move)
      .def_prop_ro(
          "seconds", [](const StepResult& r) { return column(r.steps, &StepTime::seconds); }, nb::rv_policy::move)
      .def_prop_ro(
          "ideal_seconds", [](const StepResult& r) { return column(r.steps, &StepTime::ideal_seconds); },
          nb::rv_policy::move)
      .def_prop_ro(
          "min_gbps", [](const StepResult& r) { return column(r.steps, &StepTime::min_gbps); }, nb::rv_policy::move)
      .def_ro("steps_total", &StepResult::steps_total)
      .def_ro("total_seconds", &StepResult::total_seconds)
      .def_ro("ideal_total_seconds", &StepResult::ideal_seconds)
      .def_ro("bytes", &StepResult::bytes, "bytes moved over the network")
      .def_ro("interrupted", &StepResult::interrupted)
      .def_ro("solver", &StepResult::stats)
      .def_ro("reused_steps", &StepResult::reused_steps)
      .def_prop_ro(
          "link_uses", [](const StepResult& r) { return copy(r.link_uses); }, nb::rv_policy::move,
          "messages per directed link over the steps done; empty when a routing split flows");

  nb::class_<ProtocolResult>(m, "ProtocolResult", "The protocol simulation: per built event, and totals")
      .def_prop_ro(
          "event", [](const ProtocolResult& r) { return copy(r.event); }, nb::rv_policy::move)
      .def_prop_ro(
          "builder", [](const ProtocolResult& r) { return copy(r.builder); }, nb::rv_policy::move)
      .def_prop_ro(
          "built_at", [](const ProtocolResult& r) { return copy(r.built_at); }, nb::rv_policy::move)
      .def_prop_ro(
          "latency", [](const ProtocolResult& r) { return copy(r.latency); }, nb::rv_policy::move)
      .def_prop_ro(
          "bytes", [](const ProtocolResult& r) { return copy(r.bytes); }, nb::rv_policy::move)
      .def_prop_ro(
          "payload_at", [](const ProtocolResult& r) { return copy(r.payload_at); }, nb::rv_policy::move)
      .def_ro("end_seconds", &ProtocolResult::end_seconds)
      .def_ro("window_start_seconds", &ProtocolResult::window_start_seconds)
      .def_ro("window_end_seconds", &ProtocolResult::window_end_seconds)
      .def_ro("first_in_window", &ProtocolResult::first_in_window)
      .def_ro("window_events", &ProtocolResult::window_events)
      .def_ro("window_payload_bytes", &ProtocolResult::window_payload_bytes)
      .def_ro("window_network_payload_bytes", &ProtocolResult::window_network_payload_bytes)
      .def_ro("partial_fragments", &ProtocolResult::partial_fragments)
      .def_ro("partial_bytes", &ProtocolResult::partial_bytes)
      .def_prop_ro(
          "ru_bytes_out", [](const ProtocolResult& r) { return copy(r.ru_bytes_out); }, nb::rv_policy::move)
      .def_prop_ro(
          "bu_bytes_in", [](const ProtocolResult& r) { return copy(r.bu_bytes_in); }, nb::rv_policy::move)
      .def_prop_ro(
          "ru_window_bytes_out", [](const ProtocolResult& r) { return copy(r.ru_window_bytes_out); },
          nb::rv_policy::move)
      .def_prop_ro(
          "bu_window_bytes_in", [](const ProtocolResult& r) { return copy(r.bu_window_bytes_in); }, nb::rv_policy::move)
      .def_prop_ro(
          "ru_fragments_out", [](const ProtocolResult& r) { return copy(r.ru_fragments_out); }, nb::rv_policy::move)
      .def_prop_ro(
          "bu_fragments_in", [](const ProtocolResult& r) { return copy(r.bu_fragments_in); }, nb::rv_policy::move)
      .def_prop_ro(
          "link_bytes", [](const ProtocolResult& r) { return copy(r.link_bytes); }, nb::rv_policy::move)
      .def_ro("control_messages", &ProtocolResult::control_messages)
      .def_ro("network_flows", &ProtocolResult::network_flows)
      .def_ro("local_flows", &ProtocolResult::local_flows)
      .def_ro("max_busy_slots", &ProtocolResult::max_busy_slots)
      .def_ro("max_gather_in_flight", &ProtocolResult::max_gather_in_flight)
      .def_ro("max_process_in_flight", &ProtocolResult::max_process_in_flight)
      .def_ro("interrupted", &ProtocolResult::interrupted)
      .def_ro("solver", &ProtocolResult::stats);

  m.def(
      "simulate_steps",
      [](const NetworkModel& model, IntArray placement, const workload::Schedule& schedule, double message_bytes,
         bool ideal, nb::object progress, double period, int32_t threads, bool reuse) {
        PyProgress py{progress};
        StepResult r;
        {
          nb::gil_scoped_release nogil;
          r = simulate_steps(
              model, span_of(placement), schedule, message_bytes, ideal, [&](int64_t d, int64_t t) { return py(d, t); },
              period, threads, reuse);
        }
        py.finish();
        r.interrupted = r.interrupted || py.keyboard_interrupt;  // Ctrl-C in the last step too
        return r;
      },
      nb::arg("model"), nb::arg("placement"), nb::arg("schedule"), nb::arg("message_bytes"), nb::arg("ideal") = true,
      nb::arg("progress").none() = nb::none(), nb::arg("period_seconds") = 0.25, nb::arg("threads") = 1,
      nb::arg("reuse") = true,
      "Step-synchronous flow-level simulation, steps shared out over `threads` threads; `reuse` answers a step "
      "identical to an earlier one (up to relabelled links) with its figures");

  m.def(
      "step_flow_rates",
      [](const NetworkModel& model, IntArray placement, const workload::Schedule& schedule, int64_t step) {
        FlowRates r;
        {
          nb::gil_scoped_release nogil;
          r = step_flow_rates(model, span_of(placement), schedule, step);
        }
        return nb::make_tuple(to_numpy(std::move(r.gbps)), to_numpy(std::move(r.free_gbps)), r.local_flows);
      },
      nb::arg("model"), nb::arg("placement"), nb::arg("schedule"), nb::arg("step"),
      "(rates in Gb/s, rates on a contention-free fabric in Gb/s, local flows) of one step's network flows, all "
      "started together");

  m.def(
      "simulate_protocol",
      [](const NetworkModel& model, IntArray node_host, const std::string& run_config, const std::string& source,
         int64_t events, double seconds, int64_t warmup_events, double warmup_seconds, double local_gbps,
         nb::object progress, double period, bool full_recompute, bool per_ru_assignments) {
        evb::Config config;
        try {
          config = evb::Config::parse(run_config, source);
        } catch (const evb::ConfigError& e) {
          throw Error(e.what());
        }
        ProtocolOptions o{warmup_events,  warmup_seconds,    events, seconds, local_gbps,
                          full_recompute, per_ru_assignments};
        PyProgress py{progress};
        ProtocolResult r;
        {
          nb::gil_scoped_release nogil;
          r = simulate_protocol(
              model, span_of(node_host), config, o, [&](int64_t d, int64_t t) { return py(d, t); }, period);
        }
        py.finish();
        r.interrupted = r.interrupted || py.keyboard_interrupt;
        return r;
      },
      nb::arg("model"), nb::arg("node_host"), nb::arg("run_config"), nb::arg("source"), nb::arg("events"),
      nb::arg("seconds") = 0.0, nb::arg("warmup_events") = 0, nb::arg("warmup_seconds") = -1.0,
      nb::arg("local_gbps") = 0.0, nb::arg("progress").none() = nb::none(), nb::arg("period_seconds") = 0.25,
      nb::arg("full_recompute") = false, nb::arg("per_ru_assignments") = false,
      "Flow-level simulation of the event builder's protocol");
}

}  // namespace daqnet::bindings
