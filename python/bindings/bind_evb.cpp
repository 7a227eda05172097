// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "evb/config_keys.hpp"
#include "numpy_util.hpp"

namespace daqnet::bindings {

void bind_evb(nb::module_& m) {
  m.def(
      "config_keys",
      [] {
        nb::list out;
        for (const auto& k : evb::config_keys()) {
          static const char* const kinds[] = {"integer", "number", "boolean",     "text",
                                              "choice",  "seed",   "number_list", "text_list"};
          nb::dict d;
          d["name"] = k.name;
          d["kind"] = kinds[static_cast<int>(k.kind)];
          d["default"] = k.default_text;
          d["minimum"] = k.minimum;
          d["maximum"] = k.maximum;
          d["choices"] = k.choices;
          d["unit"] = k.unit;
          d["doc"] = k.doc;
          d["scenario"] = k.scenario;
          out.append(d);
        }
        return out;
      },
      "Every key of the event builder's run description (run.cfg): the one description of its "
      "configuration (name, kind, default as written in run.cfg, limits, choices, unit, doc, and "
      "where a scenario gives it)");
}

}  // namespace daqnet::bindings
