// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common/error.hpp"
#include "numpy_util.hpp"
#include "progress.hpp"
#include "routing/lft_dump.hpp"
#include "routing/routing.hpp"

namespace daqnet::bindings {

using namespace daqnet::routing;

namespace {

void check_hosts(const Routing& r, NodeId src, NodeId dst) {
  const int32_t H = r.fabric().num_hosts();
  if (src < 0 || src >= H || dst < 0 || dst >= H || src == dst)
    throw Error("routing: paths join two different hosts (ids 0.." + std::to_string(H - 1) + ")");
}

}  // namespace

void bind_routing(nb::module_& m) {
  nb::class_<Routing>(m, "Routing")
      .def_prop_ro("engine", &Routing::engine)
      .def_prop_ro("fabric", &Routing::fabric_ptr)
      .def_prop_ro("max_hops", &Routing::max_hops)
      .def_prop_ro("single_path", &Routing::single_path)
      .def(
          "path",
          [](const Routing& r, NodeId src, NodeId dst) {
            std::vector<LinkId> p;
            r.path(src, dst, p);
            return to_numpy(std::move(p));
          },
          nb::arg("src_host"), nb::arg("dst_host"), "Directed links from one host to another (the first path)")
      .def(
          "paths",
          [](const Routing& r, NodeId src, NodeId dst, uint64_t flow) {
            check_hosts(r, src, dst);
            PathSet set;
            r.paths(src, dst, flow, set);
            nb::list out;
            for (size_t k = 0; k < set.size(); ++k) {
              auto p = set.path(k);
              out.append(nb::make_tuple(set.weight(k), to_numpy(std::vector<LinkId>(p.begin(), p.end()))));
            }
            return out;
          },
          nb::arg("src_host"), nb::arg("dst_host"), nb::arg("flow") = 0, "[(weight, links), ...] of a flow");

  nb::class_<TableRouting, Routing>(m, "TableRouting")
      .def(
          "port",
          [](const TableRouting& r, NodeId sw, NodeId dst) {
            const auto& f = r.fabric();
            if (sw < f.num_hosts() || sw >= f.num_nodes())
              throw Error("routing: node " + std::to_string(sw) + " is not a switch");
            if (dst < 0 || dst >= f.num_hosts()) throw Error("routing: node " + std::to_string(dst) + " is not a host");
            return r.port(sw, dst);
          },
          nb::arg("switch"), nb::arg("dst_host"))
      .def(
          "table",
          [](const TableRouting& r) {
            const auto& f = r.fabric();
            const size_t S = static_cast<size_t>(f.num_switches()), H = static_cast<size_t>(f.num_hosts());
            std::vector<uint16_t> t(S * H);
            for (size_t s = 0; s < S; ++s)
              for (size_t d = 0; d < H; ++d)
                t[s * H + d] = static_cast<uint16_t>(r.port(static_cast<NodeId>(s + H), static_cast<NodeId>(d)));
            return to_numpy_2d(std::move(t), S, H);
          },
          "Output port per (switch - num_hosts, destination host); 0 = no entry");

  nb::class_<PathRouting, Routing>(m, "PathRouting")
      .def(
          "__init__",
          [](PathRouting* self, std::shared_ptr<const Fabric> f, std::string engine) {
            new (self) PathRouting(std::move(f), std::move(engine));
          },
          nb::arg("fabric"), nb::arg("engine") = "paths")
      .def(
          "add",
          [](PathRouting& r, NodeId src, NodeId dst, IntArray links, double weight) {
            r.add(src, dst, std::span<const LinkId>(links.data(), links.shape(0)), weight);
          },
          nb::arg("src_host"), nb::arg("dst_host"), nb::arg("links"), nb::arg("weight") = 1.0)
      .def("finalize", &PathRouting::finalize, nb::arg("all_pairs") = false);

  // Route builders take a progress callback (done, total) and honour Ctrl-C.
  m.def(
      "dmodk",
      [](const std::shared_ptr<const Fabric>& f, nb::object progress) {
        return interruptible(std::move(progress), [&](const Progress& cb) { return dmodk(f, cb); });
      },
      nb::arg("fabric"), nb::arg("progress").none() = nb::none());
  m.def(
      "minhop",
      [](const std::shared_ptr<const Fabric>& f, nb::object progress) {
        return interruptible(std::move(progress), [&](const Progress& cb) { return minhop(f, cb); });
      },
      nb::arg("fabric"), nb::arg("progress").none() = nb::none());
  m.def("flow_key", &flow_key, nb::arg("step"), nb::arg("src_rank"), nb::arg("dst_rank"),
        "The key of a flow of a step (0-based) that per-flow engines draw their paths from");
  m.def(
      "group_routing",
      [](const std::shared_ptr<const Fabric>& fabric, const std::string& how, bool spread, uint64_t seed) {
        if (how != "direct" && how != "indirect") throw Error("routing: group routing is direct or indirect");
        return group_routing(fabric, how == "direct" ? GroupRoute::direct : GroupRoute::indirect, spread, seed);
      },
      nb::arg("fabric"), nb::arg("how"), nb::arg("spread") = false, nb::arg("seed") = 0,
      "Direct (minimal) or indirect (Valiant) routing on a two-level direct network");
  m.def(
      "random_uplinks",
      [](const std::shared_ptr<const Fabric>& f, uint64_t seed, nb::object progress) {
        return interruptible(std::move(progress), [&](const Progress& cb) { return random_uplinks(f, seed, cb); });
      },
      nb::arg("fabric"), nb::arg("seed"), nb::arg("progress").none() = nb::none());
  m.def(
      "read_table_file",
      [](const std::shared_ptr<const Fabric>& f, const std::string& path, nb::object progress) {
        return interruptible(std::move(progress), [&](const Progress& cb) { return read_table_file(f, path, cb); });
      },
      nb::arg("fabric"), nb::arg("path"), nb::arg("progress").none() = nb::none());
  m.def(
      "write_table_file",
      [](const TableRouting& r, const std::string& path, nb::object progress) {
        interruptible(std::move(progress), [&](const Progress& cb) { write_table_file(r, path, cb); });
      },
      nb::arg("routing"), nb::arg("path"), nb::arg("progress").none() = nb::none());
  m.def(
      "read_lft_dump",
      [](const std::shared_ptr<const Fabric>& f, const std::string& path, const std::string& subnet_path,
         nb::object progress) {
        return interruptible(std::move(progress),
                             [&](const Progress& cb) { return read_lft_dump(f, path, subnet_path, cb); });
      },
      nb::arg("fabric"), nb::arg("path"), nb::arg("subnet_path") = "", nb::arg("progress").none() = nb::none(),
      "Forwarding tables from an opensm-lfts.dump or ibroute/dump_lfts output");
  m.def("write_lft_dump", &write_lft_dump, nb::arg("routing"), nb::arg("path"));
  m.def(
      "from_ports",
      [](std::shared_ptr<const Fabric> f, nb::ndarray<const uint16_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> ports,
         std::string engine) {
        const size_t S = static_cast<size_t>(f->num_switches()), H = static_cast<size_t>(f->num_hosts());
        if (ports.shape(0) != S || ports.shape(1) != H)
          throw Error("routing: table must have shape (switches, hosts) = (" + std::to_string(S) + ", " +
                      std::to_string(H) + ")");
        auto r = std::make_shared<TableRouting>(f, std::move(engine));
        for (size_t s = 0; s < S; ++s)
          for (size_t d = 0; d < H; ++d)
            if (const auto p = ports(s, d); p != 0) r->set_port(static_cast<NodeId>(s + H), static_cast<NodeId>(d), p);
        r->finalize();
        return r;
      },
      nb::arg("fabric"), nb::arg("ports"), nb::arg("engine") = "array",
      "Routing from an array of output ports (switches × hosts, 0 = no entry), checked like a table file");
}

}  // namespace daqnet::bindings
