// daqnet — plan, simulate and benchmark event-building networks.
//
// The buffers a unit makes, in bytes: daqnet-evb's refusal of a run that would not fit in a
// host's memory and `daqnet bench`'s check before it writes run.cfg (through
// daqnet._core.evb.buffer_budget) count them by this one rule.
#pragma once

#include <cstddef>

#include "evb/config.hpp"

namespace daqnet::evb {

struct BufferBudget {
  double builder_bytes = 0;  ///< a builder unit: `credits` slots of every RU's largest fragment and meta-data
  double readout_bytes = 0;  ///< a readout unit: its fragments made up front, each of its largest size
  std::size_t premade = 0;   ///< how many fragments a readout unit makes up front
};

BufferBudget buffer_budget(const Config& config, int readout_units, int builder_units);

}  // namespace daqnet::evb
