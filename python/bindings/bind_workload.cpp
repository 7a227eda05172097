// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "common/error.hpp"
#include "common/random.hpp"
#include "numpy_util.hpp"
#include "workload/patterns.hpp"
#include "workload/schedule.hpp"

namespace daqnet::bindings {

using namespace daqnet::workload;

void bind_workload(nb::module_& m) {
  nb::class_<Schedule>(m, "Schedule")
      .def_prop_ro("ranks", &Schedule::ranks)
      .def_prop_ro("num_steps", &Schedule::num_steps)
      .def("describe", &Schedule::describe)
      .def(
          "step",
          [](const Schedule& s, int64_t i) {
            if (i < 0 || i >= s.num_steps())
              throw nb::index_error(("step " + std::to_string(i) + " out of range").c_str());
            std::vector<Flow> flows;
            s.step(i, flows);
            std::vector<int32_t> flat;
            flat.reserve(flows.size() * 2);
            for (const auto& f : flows) {
              flat.push_back(f.src);
              flat.push_back(f.dst);
            }
            return to_numpy_2d(std::move(flat), flows.size(), 2);
          },
          nb::arg("step"), "Flows of one step as an (n, 2) array of (source rank, destination rank)");

  m.def("barrel", &barrel, nb::arg("ranks"));
  m.def("random_order", &random_order, nb::arg("ranks"), nb::arg("seed"));
  m.def("all_at_once", &all_at_once, nb::arg("ranks"));
  m.def("shifts", &shifts, nb::arg("ranks"), nb::arg("shifts"));
  m.def(
      "explicit_steps",
      [](int32_t ranks, const std::vector<nb::ndarray<const int32_t, nb::ndim<2>, nb::c_contig>>& steps,
         std::string what) {
        std::vector<std::vector<Flow>> out(steps.size());
        for (size_t s = 0; s < steps.size(); ++s) {
          if (steps[s].shape(0) > 0 && steps[s].shape(1) != 2)
            throw Error("workload: step " + std::to_string(s + 1) + " is not an (n, 2) array of ranks");
          const int32_t* p = steps[s].data();
          for (size_t i = 0; i < steps[s].shape(0); ++i) out[s].push_back({p[2 * i], p[2 * i + 1]});
        }
        return explicit_steps(ranks, std::move(out), std::move(what));
      },
      nb::arg("ranks"), nb::arg("steps"), nb::arg("what"), "A schedule from a list of (n, 2) int32 rank arrays");
  m.def("task_grid", &task_grid, nb::arg("tasks"), nb::arg("dims"),
        "The most nearly square grid of that many tasks, largest size first");
  m.def("stencil", &stencil, nb::arg("dims"), "A (2d+1)-point periodic stencil, one step");
  m.def("multicast", &multicast, nb::arg("ranks"), nb::arg("targets"), nb::arg("seed"));
  m.def("bisection", &bisection, nb::arg("ranks"), nb::arg("rounds"), nb::arg("seed"));
  m.def(
      "random_permutation", [](int32_t n, uint64_t seed) { return to_numpy(random_permutation(n, seed)); },
      nb::arg("n"), nb::arg("seed"), "Seeded permutation of 0..n-1, identical on every platform");
}

}  // namespace daqnet::bindings
