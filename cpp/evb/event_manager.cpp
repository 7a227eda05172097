#include "evb/event_manager.hpp"

#include <algorithm>

namespace daqnet::evb {

EventManager::EventManager(Node& node) : Unit(node) {
  window_start_ = node.config().warmup_seconds;
  const auto builders = static_cast<std::size_t>(node.layout().builder_units());
  assigned_.assign(builders, 0);
  built_.assign(builders, 0);
  dead_.assign(builders, 0);
  fin_.assign(builders, 0);
  failures_.reserve(builders);
}

// Recovery: rank died. No more events go to its builders; the events they held and had not
// reported built are abandoned (never counted as built), and the run goes on with the other
// builders. Its readout units' fragments are missing from later events (the builders report
// those incomplete). Recovery time: from the rank's last word (the failure's onset; a hung
// rank is only declared dead heartbeat_seconds later) to the next event built after that.
void EventManager::peer_lost(int rank) {
  const auto& l = node_.layout();
  bool ru = false, bu = false;
  for (int i = 0; i < l.readout_units(); ++i) ru = ru || l.ru_rank[i] == rank;
  for (int j = 0; j < l.builder_units(); ++j) {
    if (l.bu_rank[j] != rank || dead_[j]) continue;
    bu = true;
    dead_[j] = 1;
    std::erase_if(credits_, [j](const auto& credit) { return credit.first == j; });
    const std::uint64_t held = assigned_[j] - built_[j];
    abandoned_events_ += held;
    outstanding_ -= std::min(outstanding_, held);
    if (!fin_[j]) ++dead_without_fin_;
  }
  if (ru || bu)
    failures_.push_back({rank, ru && bu ? "ru+bu" : ru ? "ru" : "bu", node_.now(), node_.silence_of(rank), -1});
  if (std::all_of(dead_.begin(), dead_.end(), [](char d) { return d != 0; }))
    throw TransportError("every builder unit died: the run ends");
}

void EventManager::start() {
  const auto& c = node_.config();
  if (c.mode == Mode::time_frames && c.barrier) {
    released_frame_ = 0;
    for (int i = 0; i < node_.layout().readout_units(); ++i)
      node_.send_command(node_.layout().ru_rank[i], {CommandType::go, UnitKind::ru, UnitKind::em, 0, 0, 0, 0, 0, 0},
                         counters);
  }
}

void EventManager::assign(std::uint64_t event, int bu, std::uint32_t slot) {
  const auto& l = node_.layout();
  Command cmd{CommandType::assign, UnitKind::bu, UnitKind::em, 0, slot, static_cast<std::uint32_t>(bu), event, 0, 0};
  node_.send_command(l.bu_rank[bu], cmd, counters);
  ++assigned_[bu];
  if (node_.config().protocol == Protocol::push) {
    cmd.to = UnitKind::ru;
    for (int i = 0; i < l.readout_units(); ++i) node_.send_command(l.ru_rank[i], cmd, counters);
  }
  ++outstanding_;
}

void EventManager::on_command(const Command& cmd, int) {
  const auto& c = node_.config();
  switch (cmd.type) {
  case CommandType::credit:
    credits_.emplace_back(cmd.from_index, cmd.slot);
    break;
  case CommandType::done: {
    double now = node_.now();
    ++done_total_;
    if (cmd.from_index < built_.size()) ++built_[cmd.from_index];
    incomplete_events_ += (cmd.flags & kDoneIncomplete) != 0;
    for (auto& f : failures_)
      if (f.recovery < 0) f.recovery = now - f.detected + f.silent;
    if (outstanding_) --outstanding_;
    last_done_ = now;
    // In the window by the builder's clock: with large fragments this process may read a
    // DONE long after the event was built (seen: none of 7 events of a 2.3 s window of
    // 64 MiB fragments counted), and those built before the stop still come in afterwards.
    // Under rate_hz, an event due after the stop was made early by its RUs (ReadoutUnit::pump):
    // the drain's, whichever clock built it.
    const bool made_after_stop = stopped_ && c.rate_hz > 0 && static_cast<double>(cmd.event) / c.rate_hz > window_end_;
    if (cmd.built_at >= window_start_ && (!stopped_ || cmd.built_at <= window_end_) && !made_after_stop) {
      ++window_events_;
      window_bytes_ += cmd.bytes;
      latency_.add(static_cast<double>(cmd.latency_ns) * 1e-9);
    }
    if (c.events > 0 && !stopped_ && window_events_ >= static_cast<std::uint64_t>(c.events)) stop();
    if (!stopped_ && c.mode == Mode::event_manager) credits_.emplace_back(cmd.from_index, cmd.slot);
    if (!stopped_ && c.mode == Mode::time_frames && c.barrier) {
      // Frame n is complete: frame n+1 may start (ALICE's global barrier).
      released_frame_ = static_cast<std::int64_t>(cmd.event) + 1;
      for (int i = 0; i < node_.layout().readout_units(); ++i)
        node_.send_command(node_.layout().ru_rank[i],
                           {CommandType::go, UnitKind::ru, UnitKind::em, 0, 0, 0, cmd.event + 1, 0, 0}, counters);
    }
    break;
  }
  case CommandType::fin:
    if (cmd.from_index < fin_.size()) fin_[cmd.from_index] = 1;
    ++fins_;
    break;
  default:
    node_.fail("event manager got an unexpected command");
  }
}

void EventManager::pump() {
  const auto& c = node_.config();
  double now = node_.now();
  if (!stopped_ && c.seconds > 0 && now >= window_start_ + c.seconds) stop();
  // Under rate_hz the next event cannot be built before its data exists: with D built, an
  // event <= D is still under way, made by D / rate_hz (below 1/30 Hz every gap was a stall).
  const double due = c.rate_hz > 0 ? static_cast<double>(done_total_) / c.rate_hz : 0;
  if (!stopped_ && now - std::max({last_done_, window_start_, due}) > c.stall_seconds)
    throw TransportError("no event was built for stall_seconds = " + std::to_string(c.stall_seconds).substr(0, 6) +
                         " s: the event builder is stuck");
  while (!stopped_ && !credits_.empty()) {
    auto [bu, slot] = credits_.front();
    credits_.pop_front();
    assign(next_event_++, bu, slot);
  }
}

void EventManager::stop() {
  stopped_ = true;
  window_end_ = node_.now();
  node_.note_stop();
  const auto& l = node_.layout();
  const auto& c = node_.config();
  // FIN follows every ASSIGN/GO on the same tag, so a unit that sees it knows it has all.
  Command fin{CommandType::fin, UnitKind::bu, UnitKind::em, 0, 0, 0, static_cast<std::uint64_t>(released_frame_), 0, 0};
  for (int j = 0; j < l.builder_units(); ++j) node_.send_command(l.bu_rank[j], fin, counters);
  // PULL RUs hear of the stop under rate_hz: they then make at once what they still hold.
  bool rus_listen = (c.mode == Mode::event_manager && (c.protocol == Protocol::push || c.rate_hz > 0)) ||
                    (c.mode == Mode::time_frames && c.barrier);
  if (rus_listen) {
    fin.to = UnitKind::ru;
    for (int i = 0; i < l.readout_units(); ++i) node_.send_command(l.ru_rank[i], fin, counters);
  }
}

bool EventManager::finished() const { return stopped_ && fins_ + dead_without_fin_ == node_.layout().builder_units(); }

void EventManager::report(JsonObject& out) const {
  out.add("window_start_seconds", window_start_)
      .add("window_end_seconds", window_end_ >= 0 ? window_end_ : node_.now())
      .add("window_events", window_events_)
      .add("window_bytes", window_bytes_)
      .add("events_assigned", next_event_)
      .add("events_done", done_total_)
      .add("stopped", stopped_)
      .add("abandoned_events", abandoned_events_)
      .add("incomplete_events", incomplete_events_);
  std::string failures = "[";
  for (const Failure& f : failures_) {
    JsonObject o;
    o.add("rank", f.rank).add("role", f.role).add("detected_at_seconds", f.detected).add("silent_seconds", f.silent);
    if (f.recovery >= 0)
      o.add("recovery_seconds", f.recovery);
    else
      o.raw("recovery_seconds", "null");
    failures += (failures.size() > 1 ? "," : "") + o.str();
  }
  out.raw("failures", failures + "]").raw("latency_histogram", latency_.json());
}

}  // namespace daqnet::evb
