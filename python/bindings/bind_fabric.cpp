// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "fabric/fat_tree.hpp"
#include "numpy_util.hpp"

namespace daqnet::bindings {

using namespace daqnet::fabric;

void bind_fabric(nb::module_& m) {
  nb::class_<Fabric>(m, "Fabric")
      .def(nb::init<>(), "An empty fabric: add hosts, then switches, then cables")
      .def("add_host", &Fabric::add_host, nb::arg("name"))
      .def("add_switch", &Fabric::add_switch, nb::arg("name"), nb::arg("num_ports"), nb::arg("level") = kNoLevel,
           nb::arg("position") = 0)
      .def("link_class", &Fabric::link_class, nb::arg("name"), "Index of a link class name, added on first use")
      .def("connect",
           nb::overload_cast<NodeId, int32_t, NodeId, int32_t, double, double, int32_t, int32_t>(&Fabric::connect),
           nb::arg("a"), nb::arg("port_a"), nb::arg("b"), nb::arg("port_b"), nb::arg("gbps"),
           nb::arg("latency_seconds"), nb::arg("class_ab"), nb::arg("class_ba"))
      .def("connect", nb::overload_cast<NodeId, int32_t, NodeId, int32_t, double, double>(&Fabric::connect),
           nb::arg("a"), nb::arg("port_a"), nb::arg("b"), nb::arg("port_b"), nb::arg("gbps"),
           nb::arg("latency_seconds"))
      .def("infer_levels", &Fabric::infer_levels)
      .def("set_description", &Fabric::set_description)
      .def("link_class_names", &Fabric::link_class_names)
      .def("level_name", &Fabric::level_name)
      .def_prop_ro("num_hosts", &Fabric::num_hosts)
      .def_prop_ro("num_switches", &Fabric::num_switches)
      .def_prop_ro("num_nodes", &Fabric::num_nodes)
      .def_prop_ro("num_links", &Fabric::num_links)
      .def_prop_ro("num_levels", &Fabric::num_levels)
      .def("describe", &Fabric::describe)
      .def("find", &Fabric::find, "Node id of a host or switch name, or None")
      .def("node_names",
           [](const Fabric& f) {
             std::vector<std::string> v;
             v.reserve(f.nodes().size());
             for (const auto& n : f.nodes()) v.push_back(n.name);
             return v;
           })
      .def(
          "node_table",
          [](const Fabric& f) {
            std::vector<int32_t> level, position, ports, used;
            for (const auto& n : f.nodes()) {
              level.push_back(n.level);
              position.push_back(n.position);
              ports.push_back(static_cast<int32_t>(n.ports.size()) - 1);
              int32_t u = 0;
              for (const auto& p : n.ports) u += p.peer >= 0;
              used.push_back(u);
            }
            nb::dict d;
            d["level"] = to_numpy(std::move(level));
            d["position"] = to_numpy(std::move(position));
            d["ports"] = to_numpy(std::move(ports));
            d["ports_used"] = to_numpy(std::move(used));
            return d;
          },
          "Per node: level (0 = host, -1 = unknown), position in its level, ports, cabled ports")
      .def(
          "link_table",
          [](const Fabric& f) {
            std::vector<int32_t> src, dst, sp, dp, klass;
            std::vector<double> gbps, lat;
            for (const auto& l : f.links()) {
              src.push_back(l.src);
              dst.push_back(l.dst);
              sp.push_back(l.src_port);
              dp.push_back(l.dst_port);
              klass.push_back(l.link_class);
              gbps.push_back(l.gbps);
              lat.push_back(l.latency_seconds);
            }
            nb::dict d;
            d["src"] = to_numpy(std::move(src));
            d["src_port"] = to_numpy(std::move(sp));
            d["dst"] = to_numpy(std::move(dst));
            d["dst_port"] = to_numpy(std::move(dp));
            d["class"] = to_numpy(std::move(klass));
            d["gbps"] = to_numpy(std::move(gbps));
            d["latency_seconds"] = to_numpy(std::move(lat));
            return d;
          },
          "Per directed link: endpoints, ports, class (index into link_class_names()), Gb/s, latency")
      .def(
          "ports",
          [](const Fabric& f, NodeId n) {
            std::vector<std::tuple<int32_t, int32_t, int32_t, int32_t>> out;
            const auto& ports = f.node(n).ports;
            for (size_t p = 1; p < ports.size(); ++p)
              out.emplace_back(static_cast<int32_t>(p), ports[p].peer, ports[p].peer_port, ports[p].out_link);
            return out;
          },
          "(port, peer node or -1, peer port, outgoing link or -1) for every port of a node")
      .def("rename_hosts", &Fabric::rename_hosts)
      .def_prop_ro("xgft", [](const Fabric& f) -> nb::object {
        if (!f.xgft()) return nb::none();
        nb::dict d;
        d["levels"] = f.xgft()->levels;
        d["down"] = f.xgft()->down;
        d["up"] = f.xgft()->up;
        d["hosts"] = f.xgft()->hosts;
        return d;
      });

  m.def(
      "build_fat_tree",
      [](int32_t radix, int32_t hosts, int32_t levels, std::vector<std::pair<int32_t, int32_t>> taper,
         int32_t hosts_per_leaf, int32_t top_radix, double link_gbps, double latency_seconds, std::string host_prefix) {
        FatTreeSpec s{radix,     hosts,     levels,          std::move(taper),      hosts_per_leaf,
                      top_radix, link_gbps, latency_seconds, std::move(host_prefix)};
        return std::make_shared<Fabric>(build_fat_tree(s));
      },
      nb::arg("radix"), nb::arg("hosts"), nb::arg("levels") = 2,
      nb::arg("taper") = std::vector<std::pair<int32_t, int32_t>>{}, nb::arg("hosts_per_leaf") = -1,
      nb::arg("top_radix") = -1, nb::arg("link_gbps") = 100.0, nb::arg("latency_seconds") = 100e-9,
      nb::arg("host_prefix") = "node");
}

}  // namespace daqnet::bindings
