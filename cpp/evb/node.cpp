#include "evb/node.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

#include "evb/builder_unit.hpp"
#include "evb/event_manager.hpp"
#include "evb/interrupt.hpp"
#include "evb/memory.hpp"
#include "evb/readout_unit.hpp"
#include "evb/wait_mode.hpp"

namespace daqnet::evb {
namespace {

const char* unit_name(UnitKind k) {
  switch (k) {
  case UnitKind::em:
    return "em";
  case UnitKind::ru:
    return "ru";
  case UnitKind::bu:
    return "bu";
  default:
    return "node";
  }
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

Node::Node(const Config& config, const Layout& layout, Transport& transport, const std::string& out_dir,
           std::string host)
    : config_(config),
      layout_(layout),
      transport_(transport),
      sizes_(config, layout.readout_units()),
      out_dir_(out_dir),
      host_(std::move(host)),
      t0_(std::chrono::steady_clock::now()),
      command_bytes_(static_cast<std::size_t>(config.command_bytes)),
      local_(transport.rank()),
      use_local_(config.local_path == "lend"),
      cap_(config.max_in_flight) {
  int r = transport.rank();
  seq_out_.assign(layout.ranks, 0);
  seq_in_.assign(layout.ranks, 0);
  early_.resize(layout.ranks);
  numa_nodes_ = memory::nodes_online();
  if (layout.my_em) units_.push_back(std::make_unique<EventManager>(*this));
  if (layout.my_ru >= 0) units_.push_back(std::make_unique<ReadoutUnit>(*this, layout.my_ru));
  if (layout.my_bu >= 0) units_.push_back(std::make_unique<BuilderUnit>(*this, layout.my_bu));
  csv_path_ = out_dir + "/rank-" + std::to_string(r) + ".csv";
  json_path_ = out_dir + "/rank-" + std::to_string(r) + ".json";
  std::ofstream(csv_path_, std::ios::trunc)
      << "rank,unit,index,period,final,time_seconds,bytes_in,bytes_out,messages_in,messages_out,fragments_in,fragments_"
         "out,events_built,built_bytes,cpu_seconds\n";
}

Node::~Node() = default;

double Node::now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

void Node::send_command(int rank, Command cmd, Counters& counters) {
  counters.bytes_out += command_bytes_;
  ++counters.messages_out;
  if (use_local_ && rank == transport_.rank()) {  // handed over in order by run()
    to_self_.push_back(cmd);
    return;
  }
  std::size_t i;
  if (!cmd_send_free_.empty()) {
    i = cmd_send_free_.back();
    cmd_send_free_.pop_back();
  } else {
    i = cmd_send_.size();
    cmd_send_.emplace_back(command_bytes_, 0);
  }
  cmd.seq = seq_out_[rank]++;
  std::memcpy(cmd_send_[i].data(), &cmd, sizeof cmd);
  transport_.send(rank, kCommandTag, cmd_send_[i].data(), command_bytes_, cookie(UnitKind::node, i));
}

void Node::send(int rank, Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie, bool lend) {
  if (use_local_ && rank == transport_.rank())
    local_.send(tag, buf, bytes, cookie, lend);
  else
    transport_.send(rank, tag, buf, bytes, cookie);
}

void Node::recv(int rank, Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie) {
  if (use_local_ && rank == transport_.rank())
    local_.recv(tag, buf, capacity, cookie);
  else
    transport_.recv(rank, tag, buf, capacity, cookie);
}

void Node::give_back(std::uint64_t loan) {
  for (auto& u : units_)
    if (u->kind() == cookie_unit(loan)) u->on_returned(loan);
}

void Node::post_command_receive(std::size_t i) {
  transport_.recv(kAnySource, kCommandTag, cmd_recv_[i].data(), command_bytes_,
                  cookie(UnitKind::node, (1ULL << 40) | i));
}

void Node::note_stop() {
  if (stop_seconds_ >= 0) return;
  allocs_at_stop_ = memory::allocations();
  memory::watch(false);
  stop_seconds_ = now();
  at_stop_.clear();
  for (auto& u : units_) at_stop_.push_back(u->counters);
}

void Node::fail(const std::string& what) {
  if (protocol_errors_++ == 0) first_error_ = what;
}

// Recovery: a peer rank died (the transport said so, bench.recover). A builder's death is
// survived (units forget it, the EM abandons its events), and so is a readout unit's with
// on_ru_failure = "incomplete" (later events are built without it). The EM's death, a readout
// unit's with "stop", and every readout unit's end the run, every rank's results kept.
void Node::peer_lost(int rank) {
  const auto& l = layout_;
  if (rank == l.em_rank)
    throw TransportError("the event manager's rank " + std::to_string(rank) + " died: the run ends");
  if (config_.mode == Mode::time_frames)
    throw TransportError("rank " + std::to_string(rank) + " died; time-frames mode does not recover yet");
  for (auto& u : units_) u->peer_lost(rank);
  int ru = -1;
  for (int i = 0; i < l.readout_units() && ru < 0; ++i)
    if (l.ru_rank[i] == rank) ru = i;
  if (ru < 0) return;
  if (config_.on_ru_failure == "stop")
    throw TransportError("rank " + std::to_string(rank) + " (readout unit " + std::to_string(ru) +
                         ") died: the run stops (bench.on_ru_failure = \"stop\")");
  dead_rus_.insert(rank);
  int alive = 0;
  for (int i = 0; i < l.readout_units(); ++i) alive += !dead_rus_.contains(l.ru_rank[i]);
  if (alive == 0) throw TransportError("every readout unit died: the run ends");
}

void Node::dispatch(const Completion& c) {
  if (c.kind == Completion::Kind::peer_lost) return peer_lost(c.peer);
  UnitKind k = cookie_unit(c.cookie);
  if (k == UnitKind::node) {
    std::uint64_t v = cookie_value(c.cookie);
    if (c.kind == Completion::Kind::send) {
      cmd_send_free_.push_back(v);
      return;
    }
    std::size_t i = v & ((1ULL << 40) - 1);
    Command cmd;
    if (c.bytes != command_bytes_) {
      fail("a command of " + std::to_string(c.bytes) + " bytes from rank " + std::to_string(c.peer));
    } else {
      std::memcpy(&cmd, cmd_recv_[i].data(), sizeof cmd);
      auto& early = early_[c.peer];
      if (early.empty() && cmd.seq == seq_in_[c.peer]) {  // in order, as nearly always
        ++seq_in_[c.peer];
        deliver(cmd, c.peer);
      } else {
        early.emplace(cmd.seq, cmd);
      }
      // Hand over commands in the order the peer sent them.
      for (auto it = early.begin(); it != early.end() && it->first == seq_in_[c.peer]; it = early.erase(it)) {
        ++seq_in_[c.peer];
        deliver(it->second, c.peer);
      }
    }
    post_command_receive(i);
    return;
  }
  for (auto& u : units_)
    if (u->kind() == k) u->on_completion(c);
}

std::size_t Node::abandoned() const {
  std::size_t n = 0;
  for (auto& u : units_) n += u->abandoned_receives();
  return n;
}

void Node::deliver(const Command& cmd, int from_rank) {
  for (auto& u : units_)
    if (u->kind() == cmd.to) {
      u->counters.bytes_in += command_bytes_;
      ++u->counters.messages_in;
      u->on_command(cmd, from_rank);
      return;
    }
  fail("a command for a unit this rank does not run, from rank " + std::to_string(from_rank));
}

bool Node::all_finished() const {
  return std::all_of(units_.begin(), units_.end(), [](auto& u) { return u->finished(); });
}

void Node::write_snapshot(const std::string& status, const std::string& error) {
  bool watching = warmed_up_ && stop_seconds_ < 0;
  memory::watch(false);  // the report's own allocations are not the event path's
  std::uint64_t allocs = memory::allocations();
  double t = now();
  double cpu = cpu_seconds();
  std::string units = "[";
  std::ofstream csv(csv_path_, std::ios::app);
  for (std::size_t k = 0; k < units_.size(); ++k) {
    const Unit& u = *units_[k];
    const Counters& c = u.counters;
    csv << transport_.rank() << ',' << unit_name(u.kind()) << ',' << u.index() << ',' << period_ << ','
        << (status != "running") << ',' << t << ',' << c.bytes_in << ',' << c.bytes_out << ',' << c.messages_in << ','
        << c.messages_out << ',' << c.fragments_in << ',' << c.fragments_out << ',' << c.events_built << ','
        << c.built_bytes << ',' << cpu << '\n';
    JsonObject o;
    o.add("unit", unit_name(u.kind())).add("index", u.index()).add("counters", c);
    double w0 = window_start_;
    double w1 = stop_seconds_ >= 0 ? stop_seconds_ : t;
    if (warmed_up_ && w1 > w0) {
      Counters end = stop_seconds_ >= 0 ? at_stop_[k] : c;
      o.add("window", end - at_warmup_[k]).add("window_seconds", w1 - w0);
    }
    u.report(o);
    if (k) units += ',';
    units += o.str();
  }
  units += "]";
  std::uint64_t missing = 0, given_up = 0;
  for (auto& u : units_) {
    missing += u->missing();
    given_up += u->lost();
  }
  // Fragments a unit gave up on are lost whatever the status. The others of events still
  // under way are in flight while the run goes on, when it is interrupted, or when a unit
  // failed on a lost fragment; only a run that ended (or failed otherwise) has lost them.
  bool in_flight = status == "running" || status == "interrupted" || given_up > 0;
  std::uint64_t lost = in_flight ? given_up : missing;
  JsonObject doc;
  doc.add("rank", transport_.rank())
      .add("host", host_)
      // A launcher names a killed process by its pid alone (hydra's "PID 20623 RUNNING AT
      // vm"): daqnet bench finds the rank by it.
      .add("pid", static_cast<std::int64_t>(getpid()))
      .add("status", status)
      .add("error", error)
      .add("time_seconds", t)
      .add("period", period_)
      .add("cpu_seconds", cpu)
      .add("protocol_errors", protocol_errors_)
      // Fragments of events still under way when a run is interrupted (or still running)
      // were in flight, not lost: only a run that ended (or failed) has lost them.
      .add("lost_fragments", lost)
      .add("in_flight_fragments", missing - lost)
      .raw("units", units)
      .raw("memory", memory_json(allocs));
  write_atomically(json_path_, doc.str());
  // The report's own allocations (strings, files) are not the event path's.
  if (watching) {
    report_allocs_ += memory::allocations() - allocs;
    memory::watch(true);
  }
}

std::string Node::memory_json(std::uint64_t allocs_now) const {
  std::uint64_t buffers = 0;
  for (auto& u : units_) buffers += u->buffer_bytes();
  JsonObject m;
  m.add("peak_rss_bytes", memory::peak_rss_bytes())
      .add("buffer_bytes", buffers)
      .add("huge_page_bytes", memory::huge_page_bytes())
      .add("allocations", allocs_now);
  if (allocs_warmed_up_) {
    std::uint64_t end = stop_seconds_ >= 0 ? allocs_at_stop_ : allocs_at_signal_ > 0 ? allocs_at_signal_ : allocs_now;
    m.add("allocations_after_warmup", end - allocs_at_warmup_ - report_allocs_);
  }
  m.add("numa_node", memory::cpu_node())
      .add("numa_nodes", numa_nodes_)
      .add("nic", nic_)
      .add("nic_numa_node", nic_node_);
  return m.str();
}

void Node::set_nic(std::string interface) {
  nic_ = std::move(interface);
  nic_node_ = memory::nic_node(nic_);
}

int Node::run() {
  // Commands are small and unsolicited: keep a pool of receives for them posted at all times.
  std::size_t pool = std::max<std::size_t>(16, 2 * static_cast<std::size_t>(layout_.ranks));
  cmd_recv_.assign(pool, std::vector<unsigned char>(command_bytes_));
  // Send buffers for as many commands in flight as credits can make, made now rather than
  // when the run first reaches that many (an allocation after the warm-up).
  std::size_t sends = std::max<std::size_t>(
      64, 4 * static_cast<std::size_t>(layout_.ranks) * static_cast<std::size_t>(std::max(1, config_.credits)));
  cmd_send_.reserve(2 * sends);
  cmd_send_free_.reserve(2 * sends);
  for (std::size_t i = 0; i < sends; ++i) {
    cmd_send_.emplace_back(command_bytes_, 0);
    cmd_send_free_.push_back(sends - 1 - i);
  }
  for (std::size_t i = 0; i < pool; ++i) post_command_receive(i);
  t0_ = epoch_.value_or(std::chrono::steady_clock::now());
  window_start_ = config_.warmup_seconds;
  for (auto& u : units_) u->start();

  std::vector<Completion> done;
  done.reserve(256);  // completions of one progress call; a new high later would allocate
  double next_report = config_.report_seconds;
  double last_activity = 0;
  std::string status = "finished", error;
  int exit_code = 0;
  try {
    while (true) {
      if (interrupted()) {
        allocs_at_signal_ = memory::allocations();
        status = "interrupted";
        error = "interrupted by a signal";
        exit_code = 130;
        break;
      }
      for (auto& u : units_) u->pump();
      done.clear();
      double t = now();
      bool local_work = local_.ready() || !to_self_.empty();
      double wait = local_work ? 0.0 : std::min(0.005, std::max(0.0, next_report - t));
      // Under bench.rate_hz event n's fragments exist from n / rate on: a readout unit's rank
      // wakes for the next (it slept up to 5 ms past it, read as latency). The others are
      // woken by what they receive.
      if (config_.rate_hz > 0 && layout_.my_ru >= 0)
        wait = std::min(wait, std::max(0.0, (std::floor(t * config_.rate_hz) + 1) / config_.rate_hz - t));
      transport_.progress(done, wait);
      local_.take(done);
      for (auto& c : done) dispatch(c);
      // Commands to this process's own units, in sending order (handling one may add more).
      bool to_self = !to_self_.empty();
      for (; !to_self_.empty(); to_self_.pop_front()) deliver(to_self_.front(), transport_.rank());
      t = now();
      if (!done.empty() || to_self) last_activity = t;
      if (!warmed_up_ && t >= config_.warmup_seconds) {
        warmed_up_ = true;
        at_warmup_.clear();
        for (auto& u : units_) at_warmup_.push_back(u->counters);
        allocs_at_warmup_ = memory::allocations();
        allocs_warmed_up_ = true;
        memory::watch(true);
      }
      if (t >= next_report) {
        ++period_;
        write_snapshot("running", "");
        next_report += config_.report_seconds;
      }
      if (all_finished() && transport_.pending() + local_.pending() == cmd_recv_.size() + abandoned()) break;
      if (stop_seconds_ >= 0 && t - last_activity > config_.drain_timeout_seconds) {
        status = "error";
        char limit[32];
        std::snprintf(limit, sizeof limit, "%g", config_.drain_timeout_seconds);
        error = std::string("the end of the run did not complete within drain_timeout_seconds = ") + limit + " s:";
        for (auto& u : units_)
          if (!u->finished()) error += " " + u->waiting() + ";";
        if (all_finished()) error += " sends not completed by their receivers;";
        error.pop_back();
        exit_code = 1;
        break;
      }
    }
  } catch (const std::exception& e) {
    status = "error";
    error = e.what();
    exit_code = 1;
  }
  transport_.say_goodbye();  // recovery: this rank's silence from now on is no failure
  if (!warmed_up_) {         // a run shorter than its warm-up: measure the whole run instead
    warmed_up_ = true;
    window_start_ = 0;
    at_warmup_.assign(units_.size(), Counters{});
  }
  if (exit_code == 0 && protocol_errors_) {
    status = "error";
    error = first_error_;
    exit_code = 1;
  }
  if (exit_code == 0) {
    transport_.cancel_receives();
    local_.cancel_receives();
  }
  write_snapshot(status, error);
  return exit_code;
}

}  // namespace daqnet::evb
