// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "fabric/dragonfly.hpp"
#include "fabric/fat_tree.hpp"
#include "fabric/ibnet_file.hpp"
#include "fabric/percs.hpp"
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
      .def("set_switch_groups", &Fabric::set_switch_groups, nb::arg("groups"),
           "The group of every switch (two-level direct networks), switches in node order")
      .def(
          "switch_groups", [](const Fabric& f) { return to_numpy(std::vector<int32_t>(f.switch_groups())); },
          "Group of every switch (empty unless a two-level direct network)")
      .def_prop_ro("num_groups", &Fabric::num_groups)
      .def("set_description", &Fabric::set_description)
      .def("link_class_names", &Fabric::link_class_names)
      .def("level_name", &Fabric::level_name)
      .def_prop_ro("num_hosts", &Fabric::num_hosts)
      .def_prop_ro("num_switches", &Fabric::num_switches)
      .def_prop_ro("num_nodes", &Fabric::num_nodes)
      .def_prop_ro("num_links", &Fabric::num_links)
      .def_prop_ro("num_levels", &Fabric::num_levels)
      .def_prop_ro("default_rate_cables", &Fabric::default_rate_cables,
                   "Cables an importer gave fabric.link_gbps: their lines carry no rate")
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
            return Columns(f.nodes())
                .add("level", [](const Node& n) { return n.level; })
                .add("position", [](const Node& n) { return n.position; })
                .add("lid", [](const Node& n) { return n.lid; })
                .add("ports", [](const Node& n) { return static_cast<int32_t>(n.ports.size()) - 1; })
                .add("ports_used",
                     [](const Node& n) {
                       int32_t used = 0;
                       for (const auto& p : n.ports) used += p.peer >= 0;
                       return used;
                     })
                .dict();
          },
          "Per node: level (0 = host, -1 = unknown), position in its level, LID (0 = none), ports, cabled ports")
      .def(
          "link_table",
          [](const Fabric& f) {
            return Columns(f.links())
                .add("src", [](const Link& l) { return l.src; })
                .add("src_port", [](const Link& l) { return l.src_port; })
                .add("dst", [](const Link& l) { return l.dst; })
                .add("dst_port", [](const Link& l) { return l.dst_port; })
                .add("class", [](const Link& l) { return l.link_class; })
                .add("gbps", [](const Link& l) { return l.gbps; })
                .add("latency_seconds", [](const Link& l) { return l.latency_seconds; })
                .dict();
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
      .def(
          "address",
          [](const Fabric& f, NodeId n) {
            const auto& node = f.node(n);
            return std::tuple(node.guid, node.port_guid, node.lid);
          },
          "(node GUID, port GUID, LID) of an imported node; zeros when unknown")
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

  m.def(
      "build_percs",
      [](int32_t supernodes, int32_t drawers, int32_t nodes, int32_t d_links_per_pair, double ll_gbps, double lr_gbps,
         double d_gbps, double host_gbps, double latency_seconds) {
        PercsSpec s{supernodes, drawers, nodes, d_links_per_pair, ll_gbps, lr_gbps, d_gbps, host_gbps, latency_seconds};
        return std::make_shared<Fabric>(build_percs(s));
      },
      nb::arg("supernodes"), nb::arg("drawers_per_supernode") = 4, nb::arg("nodes_per_drawer") = 8,
      nb::arg("d_links_per_pair") = 1, nb::arg("ll_gbps") = 192.0, nb::arg("lr_gbps") = 40.0, nb::arg("d_gbps") = 80.0,
      nb::arg("host_gbps") = 1536.0, nb::arg("latency_seconds") = 100e-9,
      "A PERCS-like two-level direct network (see cpp/fabric/percs.hpp for the D-link rule)");
  m.def(
      "build_dragonfly",
      [](int32_t p, int32_t a, int32_t h, int64_t g, double local_gbps, double global_gbps, double host_gbps,
         double latency_seconds) {
        DragonflySpec s{p, a, h, g, local_gbps, global_gbps, host_gbps, latency_seconds};
        return std::make_shared<Fabric>(build_dragonfly(s));
      },
      nb::arg("p"), nb::arg("a"), nb::arg("h"), nb::arg("g"), nb::arg("local_gbps") = 100.0,
      nb::arg("global_gbps") = 100.0, nb::arg("host_gbps") = 100.0, nb::arg("latency_seconds") = 100e-9,
      "A dragonfly with the consecutive global-link arrangement (see cpp/fabric/dragonfly.hpp)");

  m.def(
      "read_ibnetdiscover",
      [](const std::string& path, double default_gbps, double latency_seconds) {
        return read_ibnetdiscover(path, IbnetOptions{default_gbps, latency_seconds});
      },
      nb::arg("path"), nb::arg("default_gbps") = 100.0, nb::arg("latency_seconds") = 100e-9,
      "A fabric from ibnetdiscover output or an ibsim net file");
  m.def("write_ibsim_net", &write_ibsim_net, nb::arg("fabric"), nb::arg("path"),
        "Write the fabric as an ibsim net file (ibnetdiscover's format)");
  m.def("ib_link_gbps", &ib_link_gbps, nb::arg("width_speed"), "Gb/s of '4xEDR' and the like, or None");
}

}  // namespace daqnet::bindings
