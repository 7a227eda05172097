// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace daqnet::simulate {

/// The event manager's PUSH assignments, kept once per event rather than once per readout
/// unit and event.
///
/// Under PUSH the event manager tells every readout unit which builder slot takes each
/// event. Kept as one message per unit, the first round of assignments alone held credits ×
/// nodes² of them (a peak of 1.4 GB at 4,000 nodes, 5.5 GB at 8,000) and each RU a queue as
/// long. But an RU receives every assignment after the same delay (its command route's from
/// the event manager), and RUs fall into a few classes of equal delay: an assignment is one
/// message per class, and what an RU has received and not yet sent is a range of events
/// (assignments reach an RU in the order they were sent, event order).
/// What stays is 8 bytes per event given out and two counters per RU.
class Broadcast {
public:
  /// delay[r]: how long a command from the event manager takes to reach RU r.
  explicit Broadcast(const std::vector<double>& delay) : next_(delay.size(), 0), arrived_(delay.size(), 0) {
    std::vector<double> delays(delay);
    std::sort(delays.begin(), delays.end());
    delays.erase(std::unique(delays.begin(), delays.end()), delays.end());
    delay_ = delays;
    rus_.resize(delays.size());
    for (size_t r = 0; r < delay.size(); ++r) {
      const auto c = static_cast<size_t>(std::lower_bound(delays.begin(), delays.end(), delay[r]) - delays.begin());
      rus_[c].push_back(static_cast<int32_t>(r));  // in RU order
    }
  }

  size_t classes() const { return delay_.size(); }
  double delay(size_t c) const { return delay_[c]; }
  /// Whether class c's messages sent at `now` fall due at the same instant as another
  /// class's: delays apart by less than now's rounding. Their RUs' messages then interleave
  /// by RU, and go one per RU. Times grow with delays, so only neighbours can tie.
  bool tied(size_t c, double now) const {
    const double at = now + delay_[c];
    return (c > 0 && at == now + delay_[c - 1]) || (c + 1 < delay_.size() && at == now + delay_[c + 1]);
  }
  const std::vector<int32_t>& rus(size_t c) const { return rus_[c]; }

  /// Event e (the e-th assignment: the event manager numbers events as it gives them out)
  /// goes to slot k of builder b.
  void assign(int64_t e, int32_t b, int32_t k) {
    if (static_cast<size_t>(e) >= slot_.size()) slot_.resize(static_cast<size_t>(e) + 1);
    slot_[static_cast<size_t>(e)] = {b, k};
  }
  /// Event e's assignment reached RU r (after every earlier event's).
  void arrive(int32_t r, int64_t e) { arrived_[static_cast<size_t>(r)] = e + 1; }

  /// The oldest event RU r was given and has not sent yet: whether there is one, it, its
  /// builder and slot; and done with it.
  bool any(int32_t r) const { return next_[static_cast<size_t>(r)] < arrived_[static_cast<size_t>(r)]; }
  int64_t event(int32_t r) const { return next_[static_cast<size_t>(r)]; }
  int32_t builder(int32_t r) const { return slot_[static_cast<size_t>(event(r))].builder; }
  int32_t slot(int32_t r) const { return slot_[static_cast<size_t>(event(r))].slot; }
  void pop(int32_t r) { ++next_[static_cast<size_t>(r)]; }

private:
  struct Slot {
    int32_t builder, slot;
  };
  std::vector<double> delay_;              // per class, increasing
  std::vector<std::vector<int32_t>> rus_;  // per class, in RU order
  std::vector<Slot> slot_;                 // per event
  std::vector<int64_t> next_, arrived_;    // per RU: events [next, arrived) given, not sent
};

}  // namespace daqnet::simulate
