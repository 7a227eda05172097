// daqnet — plan, simulate and benchmark event-building networks.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>

#include "common/error.hpp"
#include "evb/buffer_budget.hpp"
#include "evb/config.hpp"
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

  m.def(
      "buffer_budget",
      [](const std::string& text, int readout_units, int builder_units) {
        evb::Config config;
        try {
          config = evb::Config::parse(text, "run.cfg");
        } catch (const evb::ConfigError& e) {
          throw Error(e.what());
        }
        const evb::BufferBudget b = evb::buffer_budget(config, readout_units, builder_units);
        nb::dict out;
        out["builder_bytes"] = b.builder_bytes;
        out["readout_bytes"] = b.readout_bytes;
        out["premade"] = b.premade;
        return out;
      },
      nb::arg("text"), nb::arg("readout_units"), nb::arg("builder_units"),
      "The buffers daqnet-evb makes for the run description `text`, in bytes: a builder unit's "
      "(builder_bytes), a readout unit's (readout_bytes) and the fragments a readout unit makes up "
      "front (premade); daqnet-evb refuses a host whose units need over half its memory");

  m.def(
      "read_config",
      [](const std::string& text, const std::string& source) {
        std::map<std::string, evb::ConfigValue> values;
        try {
          values = evb::read_config_values(text, source);
        } catch (const evb::ConfigError& e) {
          throw Error(e.what());
        }
        nb::dict out;
        for (const auto& k : evb::config_keys()) {
          const evb::ConfigValue& v = values.at(k.name);
          using Kind = evb::ConfigKey::Kind;
          switch (k.kind) {
          case Kind::integer:
            out[k.name.c_str()] = v.integer;
            break;
          case Kind::number:
            out[k.name.c_str()] = v.number;
            break;
          case Kind::boolean:
            out[k.name.c_str()] = v.boolean;
            break;
          case Kind::seed:
            out[k.name.c_str()] = v.seed;
            break;
          case Kind::number_list:
            out[k.name.c_str()] = v.numbers;
            break;
          case Kind::text_list:
            out[k.name.c_str()] = v.texts;
            break;
          case Kind::text:
          case Kind::choice:
            out[k.name.c_str()] = v.text;
            break;
          }
        }
        return out;
      },
      nb::arg("text"), nb::arg("source"),
      "Every key's value as daqnet-evb reads the run description `text` (defaults filled in), "
      "after all its checks; `source` names it in errors");
}

}  // namespace daqnet::bindings
