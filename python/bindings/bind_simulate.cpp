// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <span>

#include "common/error.hpp"
#include "evb/config.hpp"
#include "numpy_util.hpp"
#include "progress.hpp"
#include "simulate/fair_share.hpp"
#include "simulate/flow_network.hpp"
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

nb::dict stats_dict(const FlowNetwork::Stats& s) {
  nb::dict d;
  d["solves"] = s.solves;
  d["widenings"] = s.widenings;
  d["flows_solved"] = s.flows_solved;
  return d;
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
      .def("__init__", [](FlowNetwork* self, DoubleArray capacity) {
        new (self) FlowNetwork(std::vector<double>(capacity.data(), capacity.data() + capacity.shape(0)));
      }, nb::arg("capacity"))
      .def_prop_ro("now", &FlowNetwork::now)
      .def_prop_ro("active", &FlowNetwork::active)
      .def("start", [](FlowNetwork& n, IntArray res, double bytes, double cap, uint64_t tag) {
        return n.start(span_of(res), bytes, cap, tag);
      }, nb::arg("resources"), nb::arg("bytes"), nb::arg("cap") = kUnlimited, nb::arg("tag") = 0)
      .def("next_completion", &FlowNetwork::next_completion)
      .def("advance", [](FlowNetwork& n, double t) {
        std::vector<uint64_t> done;
        n.advance(t, done);
        return done;
      }, nb::arg("time"), "Move the clock; returns the tags of the flows complete by then")
      .def("rate", &FlowNetwork::rate, nb::arg("flow"))
      .def("remaining", &FlowNetwork::remaining, nb::arg("flow"))
      .def("loads", [](FlowNetwork& n) { return to_numpy(n.loads()); })
      .def("set_full_recompute", &FlowNetwork::set_full_recompute, nb::arg("on"))
      .def_prop_ro("stats", [](const FlowNetwork& n) { return stats_dict(n.stats()); });

  nb::class_<NetworkModel>(m, "NetworkModel")
      .def("__init__", [](NetworkModel* self, const routing::Routing& r, double inj, double ej) {
        new (self) NetworkModel(r, NicLimits{inj, ej});
      }, nb::keep_alive<1, 2>(), nb::arg("routing"), nb::arg("injection_gbps") = 0.0, nb::arg("ejection_gbps") = 0.0)
      .def("capacity", [](const NetworkModel& m) { return to_numpy(std::vector<double>(m.capacity())); })
      .def("resources", [](const NetworkModel& m, int32_t a, int32_t b, bool ideal) {
        const int32_t H = m.routing().fabric().num_hosts();
        if (a < 0 || a >= H || b < 0 || b >= H || a == b) throw Error("simulate: need two different hosts");
        std::vector<int32_t> out;
        m.resources(a, b, ideal, out);
        return to_numpy(std::move(out));
      }, nb::arg("src_host"), nb::arg("dst_host"), nb::arg("ideal") = false)
      .def("latency", [](const NetworkModel& m, int32_t a, int32_t b) {
        const int32_t H = m.routing().fabric().num_hosts();
        if (a < 0 || a >= H || b < 0 || b >= H || a == b) throw Error("simulate: need two different hosts");
        return m.latency(a, b);
      }, nb::arg("src_host"), nb::arg("dst_host"));

  m.def(
      "simulate_steps",
      [](const NetworkModel& model, IntArray placement, const workload::Schedule& schedule, double message_bytes,
         bool ideal, nb::object progress, double period) {
        PyProgress py{progress};
        StepResult r;
        {
          nb::gil_scoped_release nogil;
          r = simulate_steps(model, span_of(placement), schedule, message_bytes, ideal,
                             [&](int64_t d, int64_t t) { return py(d, t); }, period);
        }
        py.rethrow();
        std::vector<int64_t> step, flows;
        std::vector<double> seconds, ideal_s, min_gbps;
        for (const auto& s : r.steps) {
          step.push_back(s.step);
          flows.push_back(s.flows);
          seconds.push_back(s.seconds);
          ideal_s.push_back(s.ideal_seconds);
          min_gbps.push_back(s.min_gbps);
        }
        nb::dict d;
        d["step"] = to_numpy(std::move(step));
        d["flows"] = to_numpy(std::move(flows));
        d["seconds"] = to_numpy(std::move(seconds));
        d["ideal_seconds"] = to_numpy(std::move(ideal_s));
        d["min_gbps"] = to_numpy(std::move(min_gbps));
        d["steps_total"] = r.steps_total;
        d["total_seconds"] = r.total_seconds;
        d["ideal_total_seconds"] = r.ideal_seconds;
        d["bytes"] = r.bytes;
        d["interrupted"] = r.interrupted;
        d["keyboard_interrupt"] = py.keyboard_interrupt;
        d["solver"] = stats_dict(r.stats);
        return d;
      },
      nb::arg("model"), nb::arg("placement"), nb::arg("schedule"), nb::arg("message_bytes"),
      nb::arg("ideal") = true, nb::arg("progress").none() = nb::none(), nb::arg("period_seconds") = 0.25,
      "Step-synchronous flow-level simulation; a dict of per-step arrays and totals");

  m.def(
      "simulate_protocol",
      [](const NetworkModel& model, IntArray node_host, const std::string& run_config, const std::string& source,
         int64_t events, double seconds, int64_t warmup_events, double warmup_seconds, double local_gbps,
         nb::object progress, double period, bool full_recompute) {
        evb::Config config;
        try {
          config = evb::Config::parse(run_config, source);
        } catch (const evb::ConfigError& e) {
          throw Error(e.what());
        }
        ProtocolOptions o{warmup_events, warmup_seconds, events, seconds, local_gbps, full_recompute};
        PyProgress py{progress};
        ProtocolResult r;
        {
          nb::gil_scoped_release nogil;
          r = simulate_protocol(model, span_of(node_host), config, o, [&](int64_t d, int64_t t) { return py(d, t); },
                                period);
        }
        py.rethrow();
        nb::dict d;
        d["event"] = to_numpy(std::move(r.event));
        d["builder"] = to_numpy(std::move(r.builder));
        d["built_at"] = to_numpy(std::move(r.built_at));
        d["latency"] = to_numpy(std::move(r.latency));
        d["bytes"] = to_numpy(std::move(r.bytes));
        d["end_seconds"] = r.end_seconds;
        d["partial_fragments"] = r.partial_fragments;
        d["partial_bytes"] = r.partial_bytes;
        d["window_start_seconds"] = r.window_start_seconds;
        d["window_end_seconds"] = r.window_end_seconds;
        d["first_in_window"] = r.first_in_window;
        d["window_events"] = r.window_events;
        d["window_payload_bytes"] = r.window_payload_bytes;
        d["window_network_payload_bytes"] = r.window_network_payload_bytes;
        d["payload_at"] = to_numpy(std::move(r.payload_at));
        d["ru_bytes_out"] = to_numpy(std::move(r.ru_bytes_out));
        d["bu_bytes_in"] = to_numpy(std::move(r.bu_bytes_in));
        d["ru_window_bytes_out"] = to_numpy(std::move(r.ru_window_bytes_out));
        d["bu_window_bytes_in"] = to_numpy(std::move(r.bu_window_bytes_in));
        d["ru_fragments_out"] = to_numpy(std::move(r.ru_fragments_out));
        d["bu_fragments_in"] = to_numpy(std::move(r.bu_fragments_in));
        d["link_bytes"] = to_numpy(std::move(r.link_bytes));
        d["control_messages"] = r.control_messages;
        d["network_flows"] = r.network_flows;
        d["local_flows"] = r.local_flows;
        d["max_busy_slots"] = r.max_busy_slots;
        d["max_gather_in_flight"] = r.max_gather_in_flight;
        d["max_process_in_flight"] = r.max_process_in_flight;
        d["interrupted"] = r.interrupted;
        d["keyboard_interrupt"] = py.keyboard_interrupt;
        d["solver"] = stats_dict(r.stats);
        return d;
      },
      nb::arg("model"), nb::arg("node_host"), nb::arg("run_config"), nb::arg("source"), nb::arg("events"),
      nb::arg("seconds") = 0.0, nb::arg("warmup_events") = 0, nb::arg("warmup_seconds") = -1.0,
      nb::arg("local_gbps") = 0.0, nb::arg("progress").none() = nb::none(),
      nb::arg("period_seconds") = 0.25, nb::arg("full_recompute") = false,
      "Flow-level simulation of the event builder's protocol; a dict of per-event arrays and totals");
}

}  // namespace daqnet::bindings
