// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "common/error.hpp"
#include "numpy_util.hpp"
#include "routing/routing.hpp"

namespace daqnet::bindings {

using namespace daqnet::routing;

void bind_routing(nb::module_& m) {
  nb::class_<Routing>(m, "Routing")
      .def_prop_ro("engine", &Routing::engine)
      .def_prop_ro("fabric", &Routing::fabric_ptr)
      .def_prop_ro("max_hops", &Routing::max_hops)
      .def("port", [](const Routing& r, NodeId sw, NodeId dst) {
        const auto& f = r.fabric();
        if (sw < f.num_hosts() || sw >= f.num_nodes()) throw Error("routing: node " + std::to_string(sw) + " is not a switch");
        if (dst < 0 || dst >= f.num_hosts()) throw Error("routing: node " + std::to_string(dst) + " is not a host");
        return r.port(sw, dst);
      }, nb::arg("switch"), nb::arg("dst_host"))
      .def("path", [](const Routing& r, NodeId src, NodeId dst) {
        std::vector<LinkId> p;
        r.path(src, dst, p);
        return to_numpy(std::move(p));
      }, nb::arg("src_host"), nb::arg("dst_host"), "Directed links from one host to another")
      .def("table", [](const Routing& r) {
        const auto& f = r.fabric();
        const size_t S = static_cast<size_t>(f.num_switches()), H = static_cast<size_t>(f.num_hosts());
        std::vector<uint16_t> t(S * H);
        for (size_t s = 0; s < S; ++s)
          for (size_t d = 0; d < H; ++d)
            t[s * H + d] = static_cast<uint16_t>(r.port(static_cast<NodeId>(s + H), static_cast<NodeId>(d)));
        return to_numpy_2d(std::move(t), S, H);
      }, "Output port per (switch - num_hosts, destination host); 0 = no entry");

  m.def("dmodk", &dmodk, nb::arg("fabric"));
  m.def("random_uplinks", &random_uplinks, nb::arg("fabric"), nb::arg("seed"));
  m.def("read_table_file", &read_table_file, nb::arg("fabric"), nb::arg("path"));
  m.def("write_table_file", &write_table_file, nb::arg("routing"), nb::arg("path"));
  m.def("from_ports",
        [](std::shared_ptr<const Fabric> f, nb::ndarray<const uint16_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> ports,
           std::string engine) {
          const size_t S = static_cast<size_t>(f->num_switches()), H = static_cast<size_t>(f->num_hosts());
          if (ports.shape(0) != S || ports.shape(1) != H)
            throw Error("routing: table must have shape (switches, hosts) = (" + std::to_string(S) + ", " +
                        std::to_string(H) + ")");
          auto r = std::make_shared<Routing>(f, std::move(engine));
          for (size_t s = 0; s < S; ++s)
            for (size_t d = 0; d < H; ++d)
              if (const auto p = ports(s, d); p != 0)
                r->set_port(static_cast<NodeId>(s + H), static_cast<NodeId>(d), p);
          r->finalize();
          return r;
        },
        nb::arg("fabric"), nb::arg("ports"), nb::arg("engine") = "array",
        "Routing from an array of output ports (switches × hosts, 0 = no entry), checked like a table file");
}

}  // namespace daqnet::bindings
