// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>

#include "evb/config.hpp"

namespace daqnet::evb {

/// The rules that decide when a transfer may start, shared by daqnet-evb's units and the
/// protocol simulation (cpp/simulate/protocol.cpp), so that the prediction cannot drift
/// from the benchmark. docs/bench.md states them for users.

/// Transfers in flight per process (`max_in_flight`, 0 = no cap): taken before a transfer
/// starts, given back when it completes. A unit's oldest transfer may pass a full cap
/// (`exempt`), so the oldest event always moves and caps shared by two units cannot deadlock.
class TransferCap {
public:
  explicit TransferCap(int cap = 0) : cap_(cap) {}
  bool take(bool exempt) {
    if (cap_ > 0 && used_ >= cap_ && !exempt) return false;
    ++used_;
    if (used_ > max_used_) max_used_ = used_;
    return true;
  }
  void give() { --used_; }
  int used() const { return used_; }
  int max_used() const { return max_used_; }  ///< for tests: the cap binds, with its exemptions

private:
  int cap_;
  int used_ = 0, max_used_ = 0;
};

/// Fragments a readout unit makes before the run starts: as many sends as it can have under
/// way, one per event in flight at every builder (credits × builders), or with a process cap
/// the cap and one exempt send. More are made on demand (the test hook's duplicates, a cap
/// passed by several oldest events). docs/bench.md "Memory" says the same.
/// (buffer_budget.hpp counts them for the memory checks.)
inline std::size_t premade_fragments(int credits, int max_in_flight, int builders) {
  const std::size_t in_flight = static_cast<std::size_t>(std::max(1, credits)) * static_cast<std::size_t>(builders);
  return max_in_flight > 0 ? std::min(in_flight, static_cast<std::size_t>(max_in_flight) + 1) : in_flight;
}
inline std::size_t premade_fragments(const Config& c, int builders) {
  return premade_fragments(c.credits, c.max_in_flight, builders);
}

/// Fragment transfers one gather may have posted at once: every fragment for all-at-once
/// gathers, else `in_flight`.
inline int gather_window(const Config& c, int readout_units) {
  return c.schedule == Schedule::all_at_once ? readout_units : c.in_flight;
}

/// Messages in flight per pair of ranks in the p2p baseline: credits × in_flight, as many
/// transfers as a builder may have under way (Config::parse refuses more than an int holds).
inline std::int64_t p2p_window(const Config& c) {
  return std::max<std::int64_t>(1, std::int64_t{c.credits} * c.in_flight);
}

/// A builder serves its gathers oldest event first, so the process cap never starves the
/// event everyone waits for; the oldest gather's first transfer is exempt from the cap.
/// `Slot` needs `busy`, `event`, `outstanding`, `next` and `order`; `take(exempt)` asks the
/// cap, `post(slot index, readout unit)` starts a transfer (and counts it in `outstanding`).
template <class Slots, class Take, class Post>
void pump_gathers(Slots& slots, int window, Take&& take, Post&& post) {
  size_t oldest = slots.size();
  for (size_t k = 0; k < slots.size(); ++k)
    if (slots[k].busy && (oldest == slots.size() || slots[k].event < slots[oldest].event)) oldest = k;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < slots.size(); ++k) {
      if ((pass == 0) != (k == oldest)) continue;
      auto& s = slots[k];
      while (s.busy && s.outstanding < window && s.next < s.order.size()) {
        if (!take(k == oldest && s.outstanding == 0)) return;
        post(k, s.order[s.next++]);
      }
    }
}

/// A readout unit's next fragment may pass a full cap when it belongs to the unit's oldest
/// event under way (grants and requests can arrive out of event order).
template <class SortedEvents, class Event>
bool readout_exempt(const SortedEvents& sending, Event event) {
  return sending.empty() || event < *sending.begin();
}

}  // namespace daqnet::evb
