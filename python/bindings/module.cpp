// daqnet — plan, simulate and benchmark event-building networks.
// daqnet._core: the compiled core. This file is the table of contents: one submodule
// per area, each filled by bind_<area>() in bind_<area>.cpp.
#include "common/error.hpp"
#include "numpy_util.hpp"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "daqnet compiled core (private; use the daqnet package)";
  // Bad input, a ValueError in Python: daqnet.DaqnetError, made here so that the core's own
  // (a one-line message for the user) can be a kind of it. Made in Python, it was not, and
  // `except daqnet.DaqnetError` missed daqnet.fat_tree(radix=7)'s error.
  nb::object bad_input = nb::steal(PyErr_NewExceptionWithDoc(
      "daqnet.errors.DaqnetError",
      "Bad input: an impossible fabric, an unknown key, a malformed file.\n\nThe message names the "
      "parameter, file or line at fault.",
      PyExc_ValueError, nullptr));
  m.attr("DaqnetError") = bad_input;
  nb::exception<daqnet::Error>(m, "Error", bad_input.ptr());
  auto fabric = m.def_submodule("fabric", "Fabrics: hosts, switches, ports, links; fat-tree builder");
  auto routing = m.def_submodule("routing", "Forwarding tables and route walking");
  auto workload = m.def_submodule("workload", "Schedules: steps of flows between ranks");
  auto analysis = m.def_submodule("analysis", "Static conflict analysis");
  auto simulate = m.def_submodule("simulate", "Max-min fair rates and flow-level simulation over time");
  auto evb = m.def_submodule("evb", "The real event builder's run description");
  daqnet::bindings::bind_fabric(fabric);
  daqnet::bindings::bind_routing(routing);
  daqnet::bindings::bind_workload(workload);
  daqnet::bindings::bind_analysis(analysis);
  daqnet::bindings::bind_simulate(simulate);
  daqnet::bindings::bind_evb(evb);
}
