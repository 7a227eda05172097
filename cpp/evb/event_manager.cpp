#include "evb/event_manager.hpp"

namespace daqnet::evb {

EventManager::EventManager(Node& node) : Unit(node) { window_start_ = node.config().warmup_seconds; }

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
    if (outstanding_) --outstanding_;
    last_done_ = now;
    if (!stopped_ && now >= window_start_) {
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
  if (!stopped_ && now - std::max(last_done_, window_start_) > c.stall_seconds)
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
  bool rus_listen =
      (c.mode == Mode::event_manager && c.protocol == Protocol::push) || (c.mode == Mode::time_frames && c.barrier);
  if (rus_listen) {
    fin.to = UnitKind::ru;
    for (int i = 0; i < l.readout_units(); ++i) node_.send_command(l.ru_rank[i], fin, counters);
  }
}

bool EventManager::finished() const { return stopped_ && fins_ == node_.layout().builder_units(); }

void EventManager::report(JsonObject& out) const {
  out.add("window_start_seconds", window_start_)
      .add("window_end_seconds", window_end_ >= 0 ? window_end_ : node_.now())
      .add("window_events", window_events_)
      .add("window_bytes", window_bytes_)
      .add("events_assigned", next_event_)
      .add("events_done", done_total_)
      .add("stopped", stopped_)
      .raw("latency_histogram", latency_.json());
}

}  // namespace daqnet::evb
