// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/protocol.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <deque>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>

#include "common/error.hpp"
#include "evb/flow_control.hpp"
#include "evb/fragments.hpp"
#include "evb/gather_order.hpp"
#include "simulate/agenda.hpp"
#include "simulate/broadcast.hpp"

namespace daqnet::simulate {

namespace {

// What happens at an instant. Commands are the event builder's small messages; they take
// their route's latency plus their serialization at the slowest link, but no share of the
// bandwidth (64 B against MiB fragments). Data fragments, with their meta-data (sent
// together, to the same builder, over the same route), are flows.
// `window` opens or closes the measurement window at a set simulated time; `received` is a
// receive posted for an eager fragment that had already arrived (TCP), completed at once;
// `assign_all` is a PUSH assignment reaching every RU of one class of equal delay (Broadcast).
enum class Kind : uint8_t {
  credit,
  assign_bu,
  assign_ru,
  assign_all,
  request,
  done,
  start_flow,
  wake_ru,
  window,
  received
};

struct Happening {
  double time;
  uint64_t seq;  // ties in time keep the order they were scheduled in: deterministic
  Kind kind;
  int32_t unit, slot;
  int64_t event;
};

struct Slot {
  bool busy = false;
  int64_t event = -1;
  double started = 0;
  std::vector<int> order;
  size_t next = 0;
  int32_t outstanding = 0, complete = 0;
  double bytes = 0;
  // Per RU, for the event in this slot: its send or this slot's receive, whichever came
  // first, waiting for the other (PUSH sends may come before the builder's assignment).
  // Eager sends (TCP) wait for nothing: their fragment moves, or has arrived, unasked.
  std::vector<uint8_t> waiting;
};
enum Waiting : uint8_t { none, send, receive, moving, arrived };

struct Item {  // a fragment an RU was asked for
  int64_t event;
  int32_t bu, slot;
  bool operator>(const Item& o) const {
    return event != o.event ? event > o.event : bu != o.bu ? bu > o.bu : slot > o.slot;
  }
};

struct Transfer {
  int64_t event = 0;
  int32_t ru = 0, bu = 0, slot = 0;
  double fragment = 0, total = 0;  // data bytes; data + meta-data bytes
  int32_t paths = 0;               // flows of the transfer not complete: one per path
};

// A transfer moves as one flow per path of its route; a flow's tag is the transfer's id
// and the path's index.
constexpr int kPathBits = 6;
constexpr uint64_t tag_of(size_t id, size_t path) { return (static_cast<uint64_t>(id) << kPathBits) | path; }
constexpr size_t id_of(uint64_t tag) { return static_cast<size_t>(tag >> kPathBits); }
constexpr size_t path_of(uint64_t tag) { return static_cast<size_t>(tag & ((1u << kPathBits) - 1)); }

class Simulation {
public:
  Simulation(const NetworkModel& model, std::span<const int32_t> host, const evb::Config& c, const ProtocolOptions& o)
      : model_(model),
        host_(host.begin(), host.end()),
        c_(c),
        o_(o),
        n_(static_cast<int32_t>(host.size())),
        sizes_(c, n_),
        net_(model.capacity()),
        broadcast_(em_delays()) {
    slots_.assign(static_cast<size_t>(n_), std::vector<Slot>(static_cast<size_t>(c.credits)));
    for (auto& slots : slots_)
      for (Slot& s : slots) s.waiting.assign(static_cast<size_t>(n_), Waiting::none);
    gathers_.assign(static_cast<size_t>(n_), 0);
    pending_.resize(static_cast<size_t>(n_));
    sending_.resize(static_cast<size_t>(n_));
    wake_at_.assign(static_cast<size_t>(n_), -1);
    caps_.assign(static_cast<size_t>(n_) * static_cast<size_t>(c.processes_per_node),
                 evb::TransferCap(c.max_in_flight));
    busy_.assign(static_cast<size_t>(n_), 0);
    r_.ru_bytes_out.assign(static_cast<size_t>(n_), 0);
    r_.bu_bytes_in.assign(static_cast<size_t>(n_), 0);
    r_.ru_window_bytes_out.assign(static_cast<size_t>(n_), 0);  // stays 0 if the window never opens
    r_.bu_window_bytes_in.assign(static_cast<size_t>(n_), 0);
    r_.ru_fragments_out.assign(static_cast<size_t>(n_), 0);
    r_.bu_fragments_in.assign(static_cast<size_t>(n_), 0);
    r_.link_bytes.assign(static_cast<size_t>(model.num_links()), 0);
    local_rate_ = o.local_gbps > 0 ? o.local_gbps * 1e9 / 8 : kUnlimited;
    net_.set_full_recompute(o.full_recompute);
    capped_ = c.max_in_flight > 0;
    // TCP sends at once and the receiver keeps what comes before its receive; MPI holds a
    // large send until the receive is posted (rendezvous). Only PUSH sends unasked.
    eager_ = c.transport == "tcp";
    if (o.events > 0 && o.warmup_seconds < 0) goal_ = o.warmup_events + o.events;
  }

  ProtocolResult run(const ProtocolProgress& progress, double period) {
    for (int32_t b = 0; b < n_; ++b)
      for (int32_t k = 0; k < c_.credits; ++k) command(host_[static_cast<size_t>(b)], host_[0], Kind::credit, b, k, -1);
    if (o_.warmup_seconds >= 0)
      schedule(o_.warmup_seconds, Kind::window, 0, 0, 0);
    else if (o_.warmup_events == 0)
      open_window();
    using clock = std::chrono::steady_clock;
    auto last = clock::now();
    std::vector<uint64_t> done;
    while (!closed_) {
      const double tq = queue_.empty() ? kUnlimited : queue_.top().time;
      const double tf = net_.next_completion();
      if (!std::isfinite(tq) && !std::isfinite(tf)) break;
      net_.advance(std::min(tq, tf), done);
      // Every flow ended at this instant leaves the moving ones before any is handled:
      // handling one may build an event, whose delivered() must not read the others' flows,
      // ended (their remaining bytes stale) and maybe handed out again to new ones.
      for (uint64_t t : done) arrived(t);
      for (uint64_t t : done) flow_done(t);
      // A window edge reached by an event built at this instant is taken once every flow
      // ending at the instant is accounted for.
      take_edge();
      // Everything due at this instant, before the rates are settled once for all of it.
      while (!closed_ && tq <= tf && !queue_.empty() && queue_.top().time <= tq) {
        const Happening h = queue_.top();
        queue_.pop();
        handle(h);
        // An event built here (over TCP, a receive posted for a fragment already in) takes
        // its edge now: left to the next pass, it was taken after the clock had moved on
        // (a window 8.5 % long on 4 nodes at 0.1 ms latency).
        take_edge();
      }
      // The clock at every step (a few ns): one step may move thousands of flows (many credits).
      if (progress && clock::now() - last >= std::chrono::duration<double>(period)) {
        last = clock::now();
        const auto ms = [](double t) { return static_cast<int64_t>(t * 1e3); };
        int64_t total = 0, done_now = 0;
        if (o_.events == 0) {
          total = ms(std::max(0.0, o_.warmup_seconds) + o_.seconds);
          done_now = ms(now());
        } else if (goal_ > 0) {
          total = goal_;
          done_now = goal_fragments_ / n_;
        } else {
          // A warm-up in seconds, then `events`: how many events the warm-up holds is known
          // once it ends; until then, at the pace so far. Fragments again, in events.
          done_now = received_ / n_;
          int64_t warmup = received_at_open_ / n_;
          if (!open_ && now() > 0) warmup = std::llround(static_cast<double>(done_now) * o_.warmup_seconds / now());
          total = std::max(done_now, warmup) + o_.events;
        }
        if (!progress(std::min(done_now, total), total)) {
          r_.interrupted = true;
          break;
        }
      }
    }
    if (!r_.interrupted && !closed_)
      throw Error("protocol simulation stalled after " + std::to_string(built_) +
                  " events (a bug: please report the scenario)");
    if (open_ && !closed_) close_window();  // interrupted: the window ends here
    r_.end_seconds = now();
    // What is under way at the end: fragments received for events not yet built.
    for (const auto& slots : slots_)
      for (const Slot& s : slots)
        if (s.busy) {
          r_.partial_fragments += s.complete;
          r_.partial_bytes += s.bytes;
        }
    // Parts of fragments still moving count as carried by their links.
    for (const Moving& m : moving_) {
      const Transfer& t = transfers_[id_of(m.tag)];
      if (t.ru != t.bu) add_link_bytes(t, path_of(m.tag), m.share * t.total - net_.remaining(m.flow));
    }
    for (const auto& cap : caps_) r_.max_process_in_flight = std::max(r_.max_process_in_flight, cap.max_used());
    r_.stats = net_.stats();
    return std::move(r_);
  }

private:
  double now() const { return net_.now(); }
  // How long a command from the event manager takes to each RU, as command() times it.
  std::vector<double> em_delays() const {
    std::vector<double> delay(host_.size(), 0.0);
    for (size_t r = 0; r < host_.size(); ++r)
      if (host_[r] != host_[0])
        delay[r] = model_.message_seconds(host_[0], host_[r], static_cast<double>(c_.command_bytes));
    return delay;
  }
  int32_t ru_process(int32_t r) const { return c_.processes_per_node == 1 ? r : 2 * r; }
  int32_t bu_process(int32_t b) const { return c_.processes_per_node == 1 ? b : 2 * b + 1; }

  void schedule(double t, Kind kind, int32_t unit, int32_t slot, int64_t event) {
    queue_.at({t, seq_++, kind, unit, slot, event});
  }
  void schedule_after(double delay, Kind kind, int32_t unit, int32_t slot, int64_t event) {
    queue_.after(delay, {now() + delay, seq_++, kind, unit, slot, event});
  }

  void command(int32_t from, int32_t to, Kind kind, int32_t unit, int32_t slot, int64_t event) {
    ++r_.control_messages;
    double delay = 0;
    if (from != to) delay = model_.message_seconds(from, to, static_cast<double>(c_.command_bytes));
    schedule_after(delay, kind, unit, slot, event);
  }

  bool take_token(int32_t process, bool exempt) { return caps_[static_cast<size_t>(process)].take(exempt); }
  void give_token(int32_t process) { caps_[static_cast<size_t>(process)].give(); }

  void handle(const Happening& h) {
    switch (h.kind) {
    case Kind::credit:
    case Kind::done:  // a built event returns its builder slot's credit
      credits_.emplace_back(h.unit, h.slot);
      em_pump();
      break;
    case Kind::assign_bu:
      bu_begin(h.unit, h.slot, h.event);
      bu_pump(h.unit);
      break;
    case Kind::assign_all:  // the RUs of one class, in the order of their own messages' seqs
      for (int32_t r : broadcast_.rus(static_cast<size_t>(h.unit))) {
        broadcast_.arrive(r, h.event);
        ru_pump(r);
      }
      break;
    case Kind::assign_ru:
      broadcast_.arrive(h.unit, h.event);
      ru_pump(h.unit);
      break;
    case Kind::request:
      pending_[static_cast<size_t>(h.unit)].push({h.event, static_cast<int32_t>(h.slot >> 16), h.slot & 0xFFFF});
      ru_pump(h.unit);
      break;
    case Kind::start_flow: {
      const auto tag = static_cast<uint64_t>(h.event);
      const Transfer& t = transfers_[id_of(tag)];
      route(t);
      const size_t k = path_of(tag);
      moves(tag, net_.start(routes_.resources(k), t.total * routes_.weight(k), kUnlimited, tag), routes_.weight(k));
      break;
    }
    case Kind::wake_ru:
      // A wake an earlier one replaced (see ru_pump) does nothing: the earlier one pumped.
      if (h.time != wake_at_[static_cast<size_t>(h.unit)]) break;
      wake_at_[static_cast<size_t>(h.unit)] = -1;
      ru_pump(h.unit);
      break;
    case Kind::received:
      bu_received(h.unit, h.slot, static_cast<int32_t>(h.event), -1);
      bu_pump(h.unit);
      break;
    case Kind::window:
      if (!open_) {
        r_.first_in_window = built_;
        open_window();
      } else {
        close_window();
      }
      break;
    }
  }

  // Fragment data delivered to builders so far (over the network, within hosts), fragments
  // still moving in proportion to the bytes they moved.
  std::pair<double, double> delivered() const {
    double net = delivered_done_[0];
    for (const Moving& m : moving_) {
      const Transfer& t = transfers_[id_of(m.tag)];
      if (t.ru != t.bu) net += t.fragment * (m.share - net_.remaining(m.flow) / t.total);
    }
    return {net, delivered_done_[1]};
  }

  void take_edge() {
    if (edge_ == Edge::open) open_window();
    if (edge_ == Edge::close) close_window();
    edge_ = Edge::none;
  }

  void open_window() {
    open_ = true;
    r_.window_start_seconds = now();
    r_.ru_window_bytes_out = r_.ru_bytes_out;  // the counters at the start; the difference at the end
    r_.bu_window_bytes_in = r_.bu_bytes_in;
    window_start_payload_ = delivered();
    received_at_open_ = received_;
    if (o_.events == 0) schedule(now() + o_.seconds, Kind::window, 0, 0, 0);
  }

  // As EventManager::stop: no more assignments; the simulation ends at this instant.
  void close_window() {
    closed_ = true;
    r_.window_end_seconds = now();
    for (size_t k = 0; k < r_.ru_bytes_out.size(); ++k) {
      r_.ru_window_bytes_out[k] = r_.ru_bytes_out[k] - r_.ru_window_bytes_out[k];
      r_.bu_window_bytes_in[k] = r_.bu_bytes_in[k] - r_.bu_window_bytes_in[k];
    }
    if (edge_ != Edge::close) r_.window_events = built_ - r_.first_in_window;  // by time, or Ctrl-C
    const auto [net, local] = delivered();
    r_.window_network_payload_bytes = net - window_start_payload_.first;
    r_.window_payload_bytes = r_.window_network_payload_bytes + local - window_start_payload_.second;
  }

  // The flows that move, kept compact: delivered() visits only them.
  // Where a flow sits in moving_, by tag: the first path's by transfer id (a transfer's id
  // is free again only once its last flow stops), further paths' in a map (multi-path routings).
  size_t& moving_at(uint64_t tag) {
    if (path_of(tag) != 0) return moving_more_[tag];
    const size_t id = id_of(tag);
    if (id >= moving_pos_.size()) moving_pos_.resize(id + 1);
    return moving_pos_[id];
  }
  void moves(uint64_t tag, FlowNetwork::FlowId f, double share) {
    moving_at(tag) = moving_.size();
    moving_.push_back({tag, f, share});
  }
  double stops(uint64_t tag) {
    const size_t at = moving_at(tag);
    if (path_of(tag) != 0) moving_more_.erase(tag);
    const double share = moving_[at].share;
    moving_[at] = moving_.back();
    moving_.pop_back();
    if (at < moving_.size()) moving_at(moving_[at].tag) = at;
    return share;
  }

  // The routes of a transfer (the same at every call: the flow key is its event and units).
  void route(const Transfer& t) {
    model_.routes(host_[static_cast<size_t>(t.ru)], host_[static_cast<size_t>(t.bu)],
                  routing::flow_key(t.event, t.ru, t.bu), false, routes_);
  }

  void add_link_bytes(const Transfer& t, size_t path, double bytes) {
    route(t);
    for (int32_t l : routes_.resources(path))
      if (l < model_.num_links()) r_.link_bytes[static_cast<size_t>(l)] += bytes;
  }

  // The EM gives the next event to the builder slot whose credit came first.
  void em_pump() {
    while (!credits_.empty() && !closed_) {
      const auto [b, k] = credits_.front();
      credits_.pop_front();
      const int64_t e = next_event_++;
      command(host_[0], host_[static_cast<size_t>(b)], Kind::assign_bu, b, k, e);
      if (c_.protocol == evb::Protocol::push) assign_rus(b, k, e);
    }
  }

  // Event e to every RU: as one command per RU (RU r's with sequence number first + r), but
  // one happening per class of RUs with equal delay, handled for its RUs in order. Between
  // two RUs of a class nothing else can come: the sequence numbers between theirs are the
  // other classes', due at other times, and what handling them schedules comes after all.
  // Unless two classes' times round to the same instant: their RUs' messages interleave, so
  // they go one per RU, as they were.
  void assign_rus(int32_t b, int32_t k, int64_t e) {
    broadcast_.assign(e, b, k);
    r_.control_messages += n_;
    const uint64_t first = seq_;
    seq_ += static_cast<uint64_t>(n_);
    for (size_t c = 0; c < broadcast_.classes(); ++c) {
      const auto& rus = broadcast_.rus(c);
      const double d = broadcast_.delay(c), at = now() + d;
      if (!o_.per_ru_assignments && !broadcast_.tied(c, now())) {
        queue_.after(d,
                     {at, first + static_cast<uint64_t>(rus.front()), Kind::assign_all, static_cast<int32_t>(c), 0, e});
        continue;
      }
      for (int32_t r : rus) queue_.after(d, {at, first + static_cast<uint64_t>(r), Kind::assign_ru, r, 0, e});
    }
  }

  void bu_begin(int32_t b, int32_t k, int64_t e) {
    Slot& s = slots_[static_cast<size_t>(b)][static_cast<size_t>(k)];
    s.busy = true;
    s.event = e;
    s.started = now();
    s.order = evb::gather_order(c_.schedule, b, gathers_[static_cast<size_t>(b)]++, static_cast<uint64_t>(e), n_,
                                c_.schedule_seed);
    s.next = 0;
    s.outstanding = s.complete = 0;
    s.bytes = 0;
    r_.max_busy_slots = std::max(r_.max_busy_slots, ++busy_[static_cast<size_t>(b)]);
  }

  // As BuilderUnit::pump: the oldest event first, up to in_flight transfers per gather.
  void bu_pump(int32_t b) {
    evb::pump_gathers(
        slots_[static_cast<size_t>(b)], evb::gather_window(c_, n_),
        [&](bool exempt) { return take_token(bu_process(b), exempt); },
        [&](size_t k, int32_t r) { post(b, static_cast<int32_t>(k), r); });
  }

  // The builder posts its receive (PULL: and asks the RU for the fragment).
  void post(int32_t b, int32_t k, int32_t r) {
    Slot& s = slots_[static_cast<size_t>(b)][static_cast<size_t>(k)];
    r_.max_gather_in_flight = std::max(r_.max_gather_in_flight, ++s.outstanding);
    uint8_t& waiting = s.waiting[static_cast<size_t>(r)];
    if (waiting == Waiting::send) {  // PUSH: the RU's send waited for this receive
      waiting = Waiting::none;
      begin_transfer(new_transfer(s.event, r, b, k));
    } else if (waiting == Waiting::moving) {  // eager: the receive meets the fragment on its way
      waiting = Waiting::none;
    } else if (waiting == Waiting::arrived) {  // eager: it is there; complete at this instant
      waiting = Waiting::none;
      schedule(now(), Kind::received, b, k, r);  // not here: bu_pump is iterating
    } else {
      waiting = Waiting::receive;
    }
    if (c_.protocol == evb::Protocol::pull)
      command(host_[static_cast<size_t>(b)], host_[static_cast<size_t>(r)], Kind::request, r, (b << 16) | k, s.event);
  }

  // As ReadoutUnit::pump: fragments in event order, once generated, within the process cap.
  void ru_pump(int32_t r) {
    auto& pending = pending_[static_cast<size_t>(r)];
    auto& sending = sending_[static_cast<size_t>(r)];
    const bool push = c_.protocol == evb::Protocol::push;  // given by the EM (Broadcast), or asked by BUs
    while (push ? broadcast_.any(r) : !pending.empty()) {
      const Item item = push ? Item{broadcast_.event(r), broadcast_.builder(r), broadcast_.slot(r)} : pending.top();
      if (c_.rate_hz > 0) {
        const double ready = static_cast<double>(item.event) / c_.rate_hz;
        if (ready > now()) {
          // PULL requests come from many builders, not in event order: an older event
          // than the one the RU waits for may arrive, and is due sooner.
          if (wake_at_[static_cast<size_t>(r)] < 0 || ready < wake_at_[static_cast<size_t>(r)]) {
            wake_at_[static_cast<size_t>(r)] = ready;
            schedule(ready, Kind::wake_ru, r, 0, 0);
          }
          return;
        }
      }
      // Without a process cap the oldest event under way matters to no one: not kept.
      if (!take_token(ru_process(r), capped_ && evb::readout_exempt(sending, item.event))) return;
      if (push)
        broadcast_.pop(r);
      else
        pending.pop();
      if (capped_) sending.insert(item.event);
      uint8_t& waiting =
          slots_[static_cast<size_t>(item.bu)][static_cast<size_t>(item.slot)].waiting[static_cast<size_t>(r)];
      if (waiting == Waiting::receive) {
        waiting = Waiting::none;
        begin_transfer(new_transfer(item.event, r, item.bu, item.slot));
      } else if (eager_ && r != item.bu) {  // TCP: it moves now and waits at the builder
        waiting = Waiting::moving;
        begin_transfer(new_transfer(item.event, r, item.bu, item.slot));
      } else {
        waiting = Waiting::send;  // PUSH: a large message moves once its receive is posted
      }
    }
  }

  double fragment_bytes(int64_t event, int32_t r) const {
    return static_cast<double>(sizes_.bytes(static_cast<uint64_t>(event), r));
  }

  size_t new_transfer(int64_t event, int32_t r, int32_t b, int32_t k) {
    Transfer t;
    t.event = event;
    t.ru = r;
    t.bu = b;
    t.slot = k;
    t.fragment = fragment_bytes(event, r);
    t.total = t.fragment + static_cast<double>(c_.meta_bytes);
    if (free_.empty()) {
      transfers_.push_back(t);
      return transfers_.size() - 1;
    }
    const size_t id = free_.back();
    free_.pop_back();
    transfers_[id] = t;
    return id;
  }

  void begin_transfer(size_t id) {
    Transfer& t = transfers_[id];
    if (t.ru == t.bu) {  // a node's own fragment: within its host
      ++r_.local_flows;
      t.paths = 1;
      moves(tag_of(id, 0), net_.start({}, t.total, local_rate_, tag_of(id, 0)), 1.0);
      return;
    }
    ++r_.network_flows;
    route(t);
    if (routes_.size() >= (size_t{1} << kPathBits))
      throw Error("simulate: a route of more than " + std::to_string((1 << kPathBits) - 1) + " paths");
    t.paths = static_cast<int32_t>(routes_.size());
    for (size_t k = 0; k < routes_.size(); ++k)
      schedule_after(routes_.latency(k), Kind::start_flow, 0, 0, static_cast<int64_t>(tag_of(id, k)));
  }

  // A flow's bytes are all there: counted as delivered and as carried by its links.
  void arrived(uint64_t tag) {
    const Transfer& t = transfers_[id_of(tag)];
    const double share = stops(tag);
    if (t.ru == t.bu) return;  // a node's own fragment counts as delivered when its event is built
    delivered_done_[0] += t.fragment * share;
    add_link_bytes(t, path_of(tag), t.total * share);
  }

  // One flow of a transfer ends (arrived() counted its bytes); the transfer ends with its last.
  void flow_done(uint64_t tag) {
    const size_t id = id_of(tag);
    Transfer& moving = transfers_[id];
    if (--moving.paths > 0) return;
    const Transfer t = moving;
    free_.push_back(id);
    // As daqnet-evb's readout unit counts them: once its send completes (counted when
    // posted, a PUSH run's RUs read a quarter above what the builders received).
    r_.ru_bytes_out[static_cast<size_t>(t.ru)] += t.total;
    ++r_.ru_fragments_out[static_cast<size_t>(t.ru)];
    if (capped_) {
      auto& sending = sending_[static_cast<size_t>(t.ru)];
      sending.erase(sending.find(t.event));
    }
    give_token(ru_process(t.ru));
    uint8_t& waiting =
        slots_[static_cast<size_t>(t.bu)][static_cast<size_t>(t.slot)].waiting[static_cast<size_t>(t.ru)];
    if (waiting == Waiting::moving) {  // eager, no receive posted yet: kept at the builder
      waiting = Waiting::arrived;
      ru_pump(t.ru);
      return;
    }
    bu_received(t.bu, t.slot, t.ru, t.fragment);
    bu_pump(t.bu);
    ru_pump(t.ru);
  }

  // A builder's receive of RU r's fragment for slot k completes (fragment: its bytes, from
  // the transfer; < 0: drawn again, for an eager one whose transfer is gone).
  void bu_received(int32_t b, int32_t k, int32_t r, double fragment) {
    Slot& s = slots_[static_cast<size_t>(b)][static_cast<size_t>(k)];
    if (fragment < 0) fragment = fragment_bytes(s.event, r);
    --s.outstanding;
    ++s.complete;
    if (s.event < goal_) ++goal_fragments_;
    ++received_;
    s.bytes += fragment;
    r_.bu_bytes_in[static_cast<size_t>(b)] += fragment + static_cast<double>(c_.meta_bytes);
    ++r_.bu_fragments_in[static_cast<size_t>(b)];
    give_token(bu_process(b));
    if (s.complete == n_) built(b, k);
  }

  void built(int32_t b, int32_t k) {
    Slot& s = slots_[static_cast<size_t>(b)][static_cast<size_t>(k)];
    // The builder's own fragment, in its host all along, counts now, as its event is built:
    // counted as it was copied (at the assignment), a short window caught more copies than
    // events and read above what the fabric carries (101.5 Gb/s per node where 100 can pass).
    delivered_done_[1] += fragment_bytes(s.event, b);
    s.busy = false;
    --busy_[static_cast<size_t>(b)];
    r_.event.push_back(s.event);
    r_.builder.push_back(b);
    r_.built_at.push_back(now());
    // As the benchmark times it: under rate_hz from when the fragments exist (the trigger).
    r_.latency.push_back(now() - (c_.rate_hz > 0 ? static_cast<double>(s.event) / c_.rate_hz : s.started));
    r_.bytes.push_back(s.bytes);
    if (open_ && !closed_ && edge_ == Edge::none) {
      // Over the network only: own fragments, counted at builds, come in steps (512 credits
      // built at one instant read as two halves 32 % apart in a periodic run).
      r_.payload_at.push_back(delivered().first - window_start_payload_.first);
    } else {
      r_.payload_at.push_back(-1);
    }
    ++built_;
    command(host_[static_cast<size_t>(b)], host_[0], Kind::done, b, k, s.event);
    if (!open_ && edge_ == Edge::none && o_.warmup_seconds < 0 && built_ == o_.warmup_events) {
      edge_ = Edge::open;
      r_.first_in_window = built_;
    } else if (open_ && !closed_ && edge_ == Edge::none && o_.events > 0 && built_ - r_.first_in_window == o_.events) {
      edge_ = Edge::close;
      r_.window_events = o_.events;
    }
  }

  const NetworkModel& model_;
  std::vector<int32_t> host_;
  const evb::Config& c_;
  ProtocolOptions o_;
  int32_t n_;
  evb::FragmentSizes sizes_;
  FlowNetwork net_;
  double local_rate_ = kUnlimited;

  Agenda<Happening> queue_;
  uint64_t seq_ = 0;
  std::deque<std::pair<int32_t, int32_t>> credits_;
  int64_t next_event_ = 0, built_ = 0;
  // Progress of a run counted in events, warm-up included: the run ends once goal_ events are
  // built, and those are mostly the first goal_ the event manager gives out, so the fragments
  // received for these, in events, measure how far it is. Built events alone would not: over
  // a barrel every builder gathers at once, and none is built before most of the run is done.
  int64_t goal_ = 0, goal_fragments_ = 0;
  int64_t received_ = 0, received_at_open_ = 0;  // fragments received: in all, and as the window opened
  bool open_ = false, closed_ = false;           // the measurement window
  enum class Edge : uint8_t { none, open, close } edge_ = Edge::none;  // reached at this instant
  std::pair<double, double> window_start_payload_{0, 0};               // delivered() when the window opened
  std::array<double, 2> delivered_done_{0, 0};                         // fragments complete: network, local
  struct Moving {
    uint64_t tag;
    FlowNetwork::FlowId flow;
    double share;  // of its transfer's bytes
  };
  std::vector<Moving> moving_;                        // flows that move ...
  std::vector<size_t> moving_pos_;                    // ... and where: first paths by transfer id ...
  std::unordered_map<uint64_t, size_t> moving_more_;  // ... the others by tag
  Routes routes_;
  std::vector<std::vector<Slot>> slots_;
  std::vector<uint64_t> gathers_;
  std::vector<int32_t> busy_;
  Broadcast broadcast_;  // PUSH: what the EM gave every RU
  std::vector<std::priority_queue<Item, std::vector<Item>, std::greater<>>> pending_;  // PULL: per RU, by event
  std::vector<std::multiset<int64_t>> sending_;  // per RU, events under way (kept under a process cap)
  bool capped_ = false;
  bool eager_ = false;                  // TCP: PUSH fragments move before their receive is posted
  std::vector<double> wake_at_;         // per RU, under rate_hz: its wake due first (-1: none)
  std::vector<evb::TransferCap> caps_;  // per process: the same rule as daqnet-evb's
  std::vector<Transfer> transfers_;
  std::vector<size_t> free_;
  ProtocolResult r_;
};

}  // namespace

ProtocolResult simulate_protocol(const NetworkModel& model, std::span<const int32_t> node_host,
                                 const evb::Config& config, const ProtocolOptions& options,
                                 const ProtocolProgress& progress, double progress_period_seconds) {
  if (config.mode != evb::Mode::event_manager)
    throw Error(
        "simulate: bench.mode = 'time-frames' is not simulated; the protocol simulation covers event-manager mode");
  if (node_host.size() < 2) throw Error("simulate: the protocol simulation needs at least 2 nodes");
  if (node_host.size() >= (1u << 15)) throw Error("simulate: at most 32767 nodes");
  if (config.credits >= (1 << 16)) throw Error("simulate: bench.credits must be below 65536");
  const int32_t H = model.routing().fabric().num_hosts();
  std::vector<int32_t> seen(static_cast<size_t>(H), 0);
  for (size_t k = 0; k < node_host.size(); ++k) {
    if (node_host[k] < 0 || node_host[k] >= H)
      throw Error("simulate: node " + std::to_string(k) + " is placed on " + std::to_string(node_host[k]) +
                  ", not a host");
    if (seen[static_cast<size_t>(node_host[k])]++)
      throw Error("simulate: two nodes on host " + std::to_string(node_host[k]));
  }
  if (options.events < 0 || (options.events == 0 && !(options.seconds > 0 && std::isfinite(options.seconds))))
    throw Error("simulate: the run needs a number of events >= 1 or a finite number of seconds > 0");
  if (options.warmup_events < 0 || !std::isfinite(options.warmup_seconds))
    throw Error("simulate: the warm-up must be >= 0 events or finite seconds");
  if (!(options.local_gbps >= 0) || !std::isfinite(options.local_gbps))
    throw Error("simulate.local_gbps must be a finite number >= 0");
  return Simulation(model, node_host, config, options).run(progress, progress_period_seconds);
}

}  // namespace daqnet::simulate
