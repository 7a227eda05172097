#include "evb/readout_unit.hpp"

#include <algorithm>
#include <cstring>

#include "common/count.hpp"
#include "evb/flow_control.hpp"
#include "evb/memory.hpp"

namespace daqnet::evb {

ReadoutUnit::ReadoutUnit(Node& node, int index)
    : Unit(node),
      index_(index),
      pattern_(node.sizes().max_bytes(index), node.config().seed * 0x9E3779B97F4A7C15ULL + index + 1),
      data_(node.sizes().max_bytes(index)),
      meta_(static_cast<std::size_t>(node.config().meta_bytes)) {
  const auto& c = node.config();
  // Sends under way are bounded by the events in flight (credits of every builder, twice for
  // a duplicate): track that many from the start, so no vector grows after the warm-up.
  std::size_t most =
      2 * static_cast<std::size_t>(std::max(1, c.credits)) * static_cast<std::size_t>(node.layout().builder_units()) +
      16;
  sends_.reserve(most);
  send_free_.reserve(most);
  data_.reserve(most);
  meta_.reserve(most);
  // Made now, before the ranks' clocks start: the fragments a steady state keeps under way.
  // Made on first use, each would be zeroed (huge-page faults: 64 MiB fragments took seconds
  // to reach full speed) and filled with the pattern inside the measurement window.
  for (std::size_t k = 0, n = premade_fragments(c, node.layout().builder_units()); k < n; ++k)
    pattern_.copy_to(data_.at(data_.take().index));
  for (std::size_t k = data_.size(); k-- > 0;) data_.give(k);  // index 0 is taken first
  bu_dead_.assign(static_cast<std::size_t>(node.layout().builder_units()), 0);
  bu_fin_ = bu_dead_;
  // PULL: builders' FINs, and under rate_hz the EM's (see pump).
  if (c.mode == Mode::event_manager)
    fins_needed_ = c.protocol == Protocol::push ? 1 : node.layout().builder_units() + (c.rate_hz > 0 ? 1 : 0);
  else
    fins_needed_ = node.layout().builder_units() + (c.barrier ? 1 : 0);
}

void ReadoutUnit::on_command(const Command& cmd, int) {
  switch (cmd.type) {
  case CommandType::assign:
  case CommandType::request:
  case CommandType::grant:
    if (cmd.bu < bu_dead_.size() && bu_dead_[cmd.bu]) break;  // sent before its death was known
    pending_.insert({cmd.event, cmd.bu, cmd.slot});
    break;
  case CommandType::go:
    released_ = std::max<std::int64_t>(released_, static_cast<std::int64_t>(cmd.event));
    break;
  case CommandType::fin:
    if (cmd.from == UnitKind::bu && cmd.from_index < bu_fin_.size()) bu_fin_[cmd.from_index] = 1;
    ++fins_;
    node_.note_stop();
    if (cmd.from == UnitKind::em) {
      em_fin_ = true;
      if (node_.config().mode == Mode::time_frames) released_ = static_cast<std::int64_t>(cmd.event);
    }
    break;
  default:
    node_.fail("readout unit got an unexpected command");
  }
}

void ReadoutUnit::pump() {
  const auto& c = node_.config();
  double now = node_.now();
  bool barrier = c.mode == Mode::time_frames && c.barrier;
  for (; !held_.empty() && held_.front().due <= now; held_.pop_front())
    transmit(held_.front().send_id, held_.front().peer, held_.front().slot, held_.front().copies);
  // After the EM's FIN (barrier mode) frames beyond the last released one are dropped.
  if (barrier && em_fin_)
    while (!pending_.empty() && static_cast<std::int64_t>(std::prev(pending_.end())->event) > released_)
      pending_.erase(std::prev(pending_.end()));
  while (!pending_.empty()) {
    const Item item = *pending_.begin();
    if (barrier && static_cast<std::int64_t>(item.event) > released_) return;
    // Not generated yet, unless the EM has stopped: nothing after it is measured, and the
    // events assigned ahead would hold the end of the run (at 1 Hz a 2.5 s run of 4
    // builders of 2 credits took 10 s; 64 builders would take over 2 minutes).
    if (c.rate_hz > 0 && !em_fin_ && static_cast<double>(item.event) / c.rate_hz > now) return;
    // The unit's oldest event may pass a full cap: grants can arrive out of event order.
    if (!node_.take_token(readout_exempt(sending_, item.event))) return;
    pending_.erase(pending_.begin());
    start_send(item);
  }
}

void ReadoutUnit::start_send(const Item& item) {
  const auto& c = node_.config();
  const auto& l = node_.layout();
  std::size_t bytes = node_.sizes().bytes(item.event, index_);
  Send s;
  s.event = item.event;
  sending_.insert(item.event);
  auto taken = data_.take();
  s.data = taken.index;
  unsigned char* frag = data_.at(s.data);
  if (taken.fresh) pattern_.copy_to(frag);
  FragmentHeader h{kFragmentMagic, static_cast<std::uint32_t>(index_), item.event, bytes,
                   pattern_.checksum(static_cast<std::uint32_t>(index_), item.event, bytes)};
  std::memcpy(frag, &h, sizeof h);
  ++sent_;
  if (index_ == 0 && c.fault_corrupt_every > 0 && sent_ % c.fault_corrupt_every == 0) {
    s.corrupted = sizeof h + 8 * ((sent_ * 7919) % ((bytes - sizeof h) / 8));
    frag[s.corrupted] ^= 0x5A;  // restored when the send completes
    ++corrupted_;
  }
  if (index_ == 0 && c.fault_allocate_every > 0 && sent_ % c.fault_allocate_every == 0) {
    // Test hook: a call of the global allocation function itself, which no compiler elides.
    ::operator delete(::operator new(64));
    ++allocated_;
  }
  int copies = index_ == 0 && c.fault_duplicate_every > 0 && sent_ % c.fault_duplicate_every == 0 ? 2 : 1;
  duplicated_ += copies - 1;

  std::size_t send_id;
  if (!send_free_.empty()) {
    send_id = send_free_.back();
    send_free_.pop_back();
  } else {
    send_id = sends_.size();
    sends_.emplace_back();
  }
  int peer = l.bu_rank[item.bu];
  if (c.meta_bytes > 0) {
    // Meta-data: the header again and the sizes of the events packed in the fragment.
    s.meta = meta_.take().index;
    unsigned char* m = meta_.at(s.meta);
    std::memset(m, 0, c.meta_bytes);
    std::memcpy(m, &h, sizeof h);
    std::size_t room = (static_cast<std::size_t>(c.meta_bytes) - sizeof h) / 4;
    std::size_t packed = std::min<std::size_t>(room, c.events_per_fragment);
    for (std::size_t e = 0; e < packed; ++e) {
      auto part = static_cast<std::uint32_t>(bytes / c.events_per_fragment + (e < bytes % c.events_per_fragment));
      std::memcpy(m + sizeof h + 4 * e, &part, 4);
    }
  }
  s.parts = copies * (c.meta_bytes > 0 ? 2 : 1);
  sends_[send_id] = s;
  if (index_ == 0 && c.fault_drop_every > 0 && sent_ % c.fault_drop_every == 0) {
    // Test hook: the fragment is never sent, as if the network lost it; its buffers and
    // token come back at once. The builder must give it up as lost, once.
    ++dropped_;
    sends_[send_id].parts = 0;
    sending_.erase(sending_.find(item.event));
    node_.give_token();
    release(send_id);
    return;
  }
  if (index_ == 0 && c.fault_delay_every > 0 && sent_ % c.fault_delay_every == 0) {
    ++delayed_;  // test hook: sent fault_delay_ms late
    held_.push_back({node_.now() + static_cast<double>(c.fault_delay_ms) * 1e-3, send_id, peer, copies, item.slot});
    return;
  }
  transmit(send_id, peer, item.slot, copies);
}

void ReadoutUnit::transmit(std::size_t send_id, int peer, std::uint32_t slot, int copies) {
  const auto& c = node_.config();
  const Send s = sends_[send_id];  // a copy: sends may complete while we post
  unsigned char* frag = data_.at(s.data);
  std::size_t bytes = node_.sizes().bytes(s.event, index_);
  for (int k = 0; k < copies; ++k) {
    if (c.meta_bytes > 0)
      node_.send(peer, meta_tag(slot), meta_.at(s.meta), c.meta_bytes, cookie(UnitKind::ru, send_id), false);
    node_.send(peer, data_tag(slot), frag, bytes, cookie(UnitKind::ru, send_id), true);
  }
}

void ReadoutUnit::on_completion(const Completion& c) {
  if (c.kind != Completion::Kind::send) return;
  // Counted as they complete, not as they are posted: a readout unit posts its sends ahead
  // (PUSH: every assignment within its cap), and counted at the post its Gb/s out read
  // above its link's rate, with bytes out a quarter above what builders received.
  if (!c.failed) {
    counters.bytes_out += c.bytes;
    ++counters.messages_out;
    if (c.tag >= data_tag(0) && c.tag < data_tag(kSlotTagSpan)) ++counters.fragments_out;
  }
  std::size_t id = cookie_value(c.cookie);
  Send& s = sends_[id];
  s.lent += c.lent;
  if (--s.parts > 0) return;
  // The transfer is over (a lent buffer may still be read by the builder beside us).
  sending_.erase(sending_.find(s.event));
  node_.give_token();
  release(id);
}

void ReadoutUnit::on_returned(std::uint64_t loan) {
  std::size_t id = cookie_value(loan);
  --sends_[id].lent;
  release(id);
}

void ReadoutUnit::release(std::size_t id) {
  Send& s = sends_[id];
  if (s.parts > 0 || s.lent > 0) return;
  if (s.corrupted) data_.at(s.data)[s.corrupted] ^= 0x5A;
  data_.give(s.data);
  if (node_.config().meta_bytes > 0) meta_.give(s.meta);
  send_free_.push_back(id);
}

// Recovery: the builder at rank died. Its fragments still to send are dropped (sends under
// way with it fail and come back as completions), and its end of run is not waited for.
void ReadoutUnit::peer_lost(int rank) {
  const auto& l = node_.layout();
  const bool fins_from_builders = node_.config().protocol == Protocol::pull;
  for (int j = 0; j < l.builder_units(); ++j) {
    if (l.bu_rank[j] != rank || bu_dead_[j]) continue;
    bu_dead_[j] = 1;
    std::erase_if(pending_, [j](const Item& item) { return item.bu == static_cast<std::uint32_t>(j); });
    if (fins_from_builders && !bu_fin_[j]) --fins_needed_;
  }
}

bool ReadoutUnit::finished() const { return fins_ == fins_needed_ && pending_.empty() && sending_.empty(); }

void ReadoutUnit::report(JsonObject& out) const {
  out.add("pending_fragments", static_cast<std::uint64_t>(pending_.size()))
      .add("buffers", static_cast<std::uint64_t>(data_.size()))
      .add("buffer_bytes", buffer_bytes())
      .add("buffer_numa_node", data_.first() ? memory::node_of(data_.first()) : -1);
  const auto& c = node_.config();
  if (c.fault_corrupt_every > 0) out.add("fault_corrupted_fragments", corrupted_);
  if (c.fault_drop_every > 0) out.add("fault_dropped_fragments", dropped_);
  if (c.fault_allocate_every > 0) out.add("fault_allocations", allocated_);
  if (c.fault_delay_every > 0) out.add("fault_delayed_fragments", delayed_);
  if (c.fault_duplicate_every > 0) out.add("fault_duplicated_fragments", duplicated_);
}

}  // namespace daqnet::evb

namespace daqnet::evb {
std::string ReadoutUnit::waiting() const {
  return "RU " + std::to_string(index_) + " has " + count(pending_.size(), "fragment") + " to send, " +
         count(sending_.size(), "send") + " unmatched, " +
         count(static_cast<std::uint64_t>(fins_needed_ - fins_), "end-of-run message") + " missing";
}
}  // namespace daqnet::evb
