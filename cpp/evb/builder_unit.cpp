#include "evb/builder_unit.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/count.hpp"
#include "evb/flow_control.hpp"
#include "evb/gather_order.hpp"
#include "evb/memory.hpp"

namespace daqnet::evb {
namespace {
// Cookie of a fragment receive: slot, RU and which part.
std::uint64_t part_cookie(std::uint32_t slot, int ru, bool data) {
  return cookie(UnitKind::bu, (static_cast<std::uint64_t>(slot) << 33) | (static_cast<std::uint64_t>(ru) << 1) | data);
}
}  // namespace

BuilderUnit::BuilderUnit(Node& node, int index) : Unit(node), index_(index), rus_(node.layout().readout_units()) {
  const auto& c = node.config();
  std::size_t total = 0;
  for (int ru = 0; ru < rus_; ++ru) {
    offsets_.push_back(total);
    total += node.sizes().max_bytes(ru);
  }
  slots_.resize(c.credits);
  for (auto& s : slots_) {
    s.data = Buffer(total);
    s.meta.resize(static_cast<std::size_t>(c.meta_bytes) * rus_);
    s.parts.resize(rus_);
  }
  ru_dead_.assign(static_cast<std::size_t>(rus_), 0);
}

void BuilderUnit::start() {
  const auto& c = node_.config();
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (c.mode == Mode::event_manager) {
      node_.send_command(
          node_.layout().em_rank,
          {CommandType::credit, UnitKind::em, UnitKind::bu, static_cast<std::uint32_t>(index_), slot, 0, 0, 0, 0},
          counters);
    } else {  // time frames round-robin: this builder gets frames j, j + y, j + 2y, ...
      grant(slot, index_ + static_cast<std::uint64_t>(slot) * node_.layout().builder_units());
    }
  }
}

void BuilderUnit::grant(std::uint32_t slot, std::uint64_t frame) {
  const auto& l = node_.layout();
  for (int i = 0; i < rus_; ++i)
    node_.send_command(l.ru_rank[i],
                       {CommandType::grant, UnitKind::ru, UnitKind::bu, static_cast<std::uint32_t>(index_), slot,
                        static_cast<std::uint32_t>(index_), frame, 0, 0},
                       counters);
  begin(slot, frame);
}

void BuilderUnit::begin(std::uint32_t slot, std::uint64_t event) {
  const auto& c = node_.config();
  Slot& s = slots_[slot];
  s.busy = true;
  s.event = event;
  s.started = s.last_arrival = node_.now();
  // Event-manager mode times from the assignment; time frames from the first arrival, as
  // frames are granted ahead and may wait for their release (barrier) before anything moves.
  s.timing = c.mode == Mode::event_manager;
  gather_order(s.order, c.schedule, index_, gathers_++, event, rus_, c.schedule_seed);
  s.next = 0;
  s.incomplete = false;
  s.outstanding = s.complete = 0;
  s.bytes = 0;
  std::fill(s.parts.begin(), s.parts.end(), 0);
}

void BuilderUnit::on_command(const Command& cmd, int) {
  switch (cmd.type) {
  case CommandType::assign:
    if (cmd.slot >= slots_.size() || slots_[cmd.slot].busy) {
      node_.fail("builder " + std::to_string(index_) + " got an event for a busy or unknown slot");
      return;
    }
    begin(cmd.slot, cmd.event);
    break;
  case CommandType::fin:
    fin_em_ = true;
    node_.note_stop();
    if (node_.config().mode == Mode::time_frames && node_.config().barrier) {
      // Frames after the last released one never start: nothing of them is on the way.
      last_frame_ = cmd.event;
      for (auto& s : slots_) {
        if (!s.busy || s.event <= last_frame_) continue;
        s.busy = false;
        give_back_loans(s);
        for (std::size_t k = 0; k < s.next; ++k) {
          std::uint8_t got = s.parts[s.order[k]];
          abandoned_ += !(got & 2) + (node_.config().meta_bytes > 0 && !(got & 1));
        }
      }
    }
    maybe_finish();
    break;
  default:
    node_.fail("builder got an unexpected command");
  }
}

void BuilderUnit::pump() {
  check_timeouts();
  pump_gathers(
      slots_, gather_window(node_.config(), rus_), [&](bool exempt) { return node_.take_token(exempt); },
      [&](std::size_t k, int ru) { post(static_cast<std::uint32_t>(k), ru); });
}

void BuilderUnit::post(std::uint32_t slot, int ru) {
  const auto& c = node_.config();
  const auto& l = node_.layout();
  Slot& s = slots_[slot];
  if (c.meta_bytes > 0)
    node_.recv(l.ru_rank[ru], meta_tag(slot), s.meta.data() + static_cast<std::size_t>(c.meta_bytes) * ru, c.meta_bytes,
               part_cookie(slot, ru, false));
  else
    s.parts[ru] |= 1;
  node_.recv(l.ru_rank[ru], data_tag(slot), s.data.data() + data_offset(ru), node_.sizes().max_bytes(ru),
             part_cookie(slot, ru, true));
  ++s.outstanding;
  if (ru_dead_[ru]) return;  // the receives fail at once, unless the fragment came before its death
  if (c.protocol == Protocol::pull && c.mode == Mode::event_manager)
    node_.send_command(l.ru_rank[ru],
                       {CommandType::request, UnitKind::ru, UnitKind::bu, static_cast<std::uint32_t>(index_), slot,
                        static_cast<std::uint32_t>(index_), s.event, 0, 0},
                       counters);
}

void BuilderUnit::on_completion(const Completion& c) {
  if (c.kind != Completion::Kind::recv) return;  // command sends are the node's
  std::uint64_t v = cookie_value(c.cookie);
  auto slot = static_cast<std::uint32_t>(v >> 33);
  int ru = static_cast<int>((v >> 1) & 0xFFFFFFFFu);
  bool data = v & 1;
  Slot& s = slots_[slot];
  if (c.failed) return fragment_gone(slot, ru);  // its readout unit died (bench.recover)
  s.last_arrival = node_.now();
  if (!s.timing) {
    s.started = s.last_arrival;
    s.timing = true;
  }
  counters.bytes_in += c.bytes;
  ++counters.messages_in;
  // A duplicate (an older event's part again) is counted and the receive posted anew.
  if (data ? !check_fragment(s, ru, c) : !check_meta(s, ru, c.bytes)) return;
  s.parts[ru] |= data ? 2 : 1;
  if (s.parts[ru] == 3) fragment_done(slot, ru);
}

bool BuilderUnit::check_meta(Slot& s, int ru, std::size_t received) {
  const auto& c = node_.config();
  FragmentHeader h{};
  if (received >= sizeof h) std::memcpy(&h, s.meta.data() + static_cast<std::size_t>(c.meta_bytes) * ru, sizeof h);
  if (received >= sizeof h && h.magic == kFragmentMagic && h.ru == static_cast<std::uint32_t>(ru) &&
      h.event < s.event && h.bytes == node_.sizes().bytes(h.event, ru)) {
    // Meta-data of an older event again; the duplicate is counted once, by its data part.
    std::uint32_t slot = static_cast<std::uint32_t>(&s - slots_.data());
    node_.recv(node_.layout().ru_rank[ru], meta_tag(slot), s.meta.data() + static_cast<std::size_t>(c.meta_bytes) * ru,
               c.meta_bytes, part_cookie(slot, ru, false));
    return false;
  }
  if (received != static_cast<std::size_t>(c.meta_bytes) || h.magic != kFragmentMagic ||
      h.ru != static_cast<std::uint32_t>(ru) || h.event != s.event || h.bytes != node_.sizes().bytes(s.event, ru))
    ++corrupt_;
  return true;
}

bool BuilderUnit::check_fragment(Slot& s, int ru, const Completion& done) {
  const auto& c = node_.config();
  std::size_t received = done.bytes;
  // A fragment from the RU beside us is read where that RU holds it (zero-copy).
  const unsigned char* frag = done.data ? done.data : s.data.data() + data_offset(ru);
  FragmentHeader h{};
  if (received >= sizeof h) std::memcpy(&h, frag, sizeof h);
  auto slot = static_cast<std::uint32_t>(&s - slots_.data());
  if (received >= sizeof h && h.magic == kFragmentMagic && h.ru == static_cast<std::uint32_t>(ru) &&
      h.event < s.event && received == h.bytes && h.bytes == node_.sizes().bytes(h.event, ru)) {
    // A fragment of an older event again, told by its header and length whatever its
    // payload (a copy of a damaged one was taken for this event's, and counted corrupt a
    // second time): count it, receive the real one in its place.
    ++duplicate_;
    if (done.data) node_.give_back(done.loan);
    node_.recv(node_.layout().ru_rank[ru], data_tag(slot), s.data.data() + data_offset(ru), node_.sizes().max_bytes(ru),
               part_cookie(slot, ru, true));
    return false;
  }
  if (done.data) {
    s.loans.push_back(done.loan);
    ++lent_;
  }
  std::size_t expected = node_.sizes().bytes(s.event, ru);
  bool ok = received == expected && h.magic == kFragmentMagic && h.ru == static_cast<std::uint32_t>(ru) &&
            h.event == s.event && h.bytes == expected;
  if (ok && c.checksum) ok = genuine(h, frag, received);
  if (!ok) ++corrupt_;
  s.bytes += received;
  ++counters.fragments_in;
  return true;
}

bool BuilderUnit::genuine(const FragmentHeader& h, const unsigned char* frag, std::size_t received) const {
  if (received != h.bytes || h.bytes != node_.sizes().bytes(h.event, static_cast<int>(h.ru))) return false;
  return !node_.config().checksum ||
         h.checksum == header_mix(h.ru, h.event, h.bytes) + payload_sum(frag + sizeof h, received - sizeof h);
}

void BuilderUnit::fragment_done(std::uint32_t slot, int ru) {
  (void)ru;
  Slot& s = slots_[slot];
  --s.outstanding;
  ++s.complete;
  node_.give_token();
  if (s.complete == rus_) event_built(slot);
}

// Recovery: the fragment of readout unit `ru` will never come (its rank died). The event is
// built from the others and reported incomplete; the second failed part changes nothing.
void BuilderUnit::fragment_gone(std::uint32_t slot, int ru) {
  Slot& s = slots_[slot];
  if (!s.busy || (s.parts[ru] & 4) || s.parts[ru] == 3) return;
  s.parts[ru] |= 4;
  s.incomplete = true;
  ++absent_;
  fragment_done(slot, ru);
}

void BuilderUnit::peer_lost(int rank) {
  const auto& l = node_.layout();
  for (int ru = 0; ru < rus_; ++ru)
    if (l.ru_rank[ru] == rank) ru_dead_[ru] = 1;
}

void BuilderUnit::event_built(std::uint32_t slot) {
  const auto& c = node_.config();
  Slot& s = slots_[slot];
  const double now = node_.now();
  // Under bench.rate_hz from when the event's fragments exist (its trigger), not from its
  // assignment: credits assign events ahead of their data (at 100 Hz, 8 credits read 80 ms
  // of waiting), and builders that fall behind the rate are assigned events made long ago
  // (at 20 kHz against 16 kHz built, the backlog read as 0.5 ms). Not below 0: the ranks'
  // clocks start at one barrier, a little apart, and after the EM's stop the RUs make at
  // once what is due later (ReadoutUnit::pump).
  const double from = c.rate_hz > 0 ? static_cast<double>(s.event) / c.rate_hz : s.started;
  double latency = std::max(0.0, now - from);
  // Events built after the EM's FIN are the drain's (the unit's rates end there too), and
  // under rate_hz their data came early: their latency is no figure of the run.
  if (node_.measuring() && !(fin_em_ && c.rate_hz > 0)) latency_.add(latency);
  ++counters.events_built;
  counters.built_bytes += s.bytes;
  incomplete_ += s.incomplete;
  s.busy = false;
  give_back_loans(s);  // the event is handed on: the local fragment's buffer is free
  Command done{CommandType::done,
               UnitKind::em,
               UnitKind::bu,
               static_cast<std::uint32_t>(index_),
               slot,
               0,
               s.event,
               s.bytes,
               static_cast<std::int64_t>(latency * 1e9)};
  done.flags = s.incomplete ? kDoneIncomplete : 0;
  done.built_at = now;
  node_.send_command(node_.layout().em_rank, done, counters);
  if (c.mode == Mode::time_frames && !fin_em_) grant(slot, s.event + slots_.size() * node_.layout().builder_units());
  maybe_finish();
}

void BuilderUnit::give_back_loans(Slot& s) {
  for (std::uint64_t loan : s.loans) node_.give_back(loan);
  s.loans.clear();
}

void BuilderUnit::maybe_finish() {
  if (finished_ || !fin_em_) return;
  for (auto& s : slots_)
    if (s.busy) return;
  finished_ = true;
  const auto& c = node_.config();
  const auto& l = node_.layout();
  // FIN goes last on each command stream: to RUs that take our requests or grants, and to
  // the EM after our last DONE.
  if (c.protocol == Protocol::pull || c.mode == Mode::time_frames)
    for (int i = 0; i < rus_; ++i)
      node_.send_command(
          l.ru_rank[i],
          {CommandType::fin, UnitKind::ru, UnitKind::bu, static_cast<std::uint32_t>(index_), 0, 0, 0, 0, 0}, counters);
  node_.send_command(l.em_rank,
                     {CommandType::fin, UnitKind::em, UnitKind::bu, static_cast<std::uint32_t>(index_), 0, 0, 0, 0, 0},
                     counters);
}

std::uint64_t BuilderUnit::missing() const {
  std::uint64_t n = 0;
  for (auto& s : slots_)
    if (s.busy) n += rus_ - s.complete;
  return n;
}

// An event that received nothing for fragment_timeout_seconds will not complete: its missing
// fragments are lost. They are counted here, once, and the run fails naming them (time
// frames waiting for their release have received nothing yet and are not timed). Under
// bench.rate_hz an event's fragments exist from event / rate_hz on: the time counts from
// then (assigned ahead at 0.2 Hz, event 8 was called lost at 10 s, 30 s before it was made).
void BuilderUnit::check_timeouts() {
  const auto& c = node_.config();
  double now = node_.now();
  for (auto& s : slots_) {
    if (!s.busy || !s.timing) continue;
    const double made = c.rate_hz > 0 ? static_cast<double>(s.event) / c.rate_hz : 0;
    if (now - std::max(s.last_arrival, made) <= c.fragment_timeout_seconds) continue;
    std::string from;
    int shown = 0;
    for (int ru = 0; ru < rus_; ++ru) {
      if (s.parts[ru] == 3) continue;
      if (shown++ < 8) from += (from.empty() ? "RU " : ", RU ") + std::to_string(ru);
    }
    if (shown > 8) from += ", ...";
    given_up_ = static_cast<std::uint64_t>(rus_ - s.complete);
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", c.fragment_timeout_seconds);
    throw TransportError("builder unit " + std::to_string(index_) + ": event " + std::to_string(s.event) +
                         " received nothing for fragment_timeout_seconds = " + limit + " s; " +
                         std::to_string(given_up_) + " fragment(s) lost (from " + from + ")");
  }
}

std::uint64_t BuilderUnit::buffer_bytes() const {
  std::uint64_t n = 0;
  for (auto& s : slots_) n += s.data.size() + s.meta.size();
  return n;
}

void BuilderUnit::report(JsonObject& out) const {
  out.add("buffer_bytes", buffer_bytes())
      .add("buffer_numa_node", slots_.empty() ? -1 : memory::node_of(slots_.front().data.data()));
  out.add("corrupt_fragments", corrupt_)
      .add("duplicate_fragments", duplicate_)
      .add("lent_fragments", lent_)
      .add("missing_fragments", missing())  // of events under way; lost only if the run ended
      .add("lost_fragments", given_up_)     // given up after fragment_timeout_seconds
      .add("absent_fragments", absent_)     // never sent: their readout unit died (recover)
      .add("incomplete_events", incomplete_)
      .raw("latency_histogram", latency_.json());
}

}  // namespace daqnet::evb

namespace daqnet::evb {
std::string BuilderUnit::waiting() const {
  return "BU " + std::to_string(index_) + " misses " + count(missing(), "fragment") +
         (fin_em_ ? "" : " and the EM's end of run");
}
}  // namespace daqnet::evb
