// daqnet — plan, simulate and benchmark event-building networks.
#include "evb/buffer_budget.hpp"

#include <algorithm>

#include "evb/flow_control.hpp"
#include "evb/fragments.hpp"

namespace daqnet::evb {

BufferBudget buffer_budget(const Config& config, int readout_units, int builder_units) {
  // RU i has the list's size i mod its length: sizes of one cycle, counted for every RU
  // without a list per RU (a run.cfg may ask for billions of ranks; this says it cannot fit).
  const int cycle = static_cast<int>(std::max<std::size_t>(1, config.fragment_bytes_per_ru.size()));
  const int known = std::min(readout_units, cycle);
  const FragmentSizes sizes(config, known);
  double once = 0, part = 0;
  for (int ru = 0; ru < known; ++ru) {
    const double slot = static_cast<double>(sizes.max_bytes(ru)) + static_cast<double>(config.meta_bytes);
    once += slot;
    if (ru < readout_units % cycle) part += slot;
  }
  BufferBudget b;
  b.premade = premade_fragments(config, builder_units);
  const int cycles = readout_units / cycle;  // whole cycles of the list
  b.builder_bytes = config.credits * (static_cast<double>(cycles) * once + part);
  b.readout_bytes = static_cast<double>(b.premade) * static_cast<double>(sizes.max_bytes());
  return b;
}

}  // namespace daqnet::evb
