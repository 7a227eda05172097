// One process of the event builder: its transport, its units (EM, RU, BU) and the event loop
// that hands every completion to the unit it belongs to.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "evb/config.hpp"
#include "evb/flow_control.hpp"
#include "evb/fragments.hpp"
#include "evb/layout.hpp"
#include "evb/local_channel.hpp"
#include "evb/messages.hpp"
#include "evb/stats.hpp"
#include "evb/transport.hpp"

namespace daqnet::evb {

class Node;

class Unit {
public:
  explicit Unit(Node& node) : node_(node) {}
  virtual ~Unit() = default;
  virtual UnitKind kind() const = 0;
  virtual int index() const = 0;
  virtual void start() {}
  virtual void on_command(const Command& cmd, int from_rank) = 0;
  virtual void on_completion(const Completion&) {}
  virtual void on_returned(std::uint64_t /*loan*/) {}  // a buffer lent on the local path is back
  virtual void pump() {}                               // start whatever may start now
  virtual bool finished() const = 0;                   // nothing more to do, to send or to receive
  virtual std::uint64_t missing() const { return 0; }  // fragments of events under way, still missing
  virtual std::uint64_t lost() const { return 0; }     // of those, given up as lost by the unit itself
  // Receives left posted for parts that will never come (cancelled at the end).
  virtual std::size_t abandoned_receives() const { return 0; }
  virtual std::uint64_t buffer_bytes() const { return 0; }  // fragment and event buffers held
  virtual void report(JsonObject&) const {}                 // unit-specific result fields
  virtual std::string waiting() const { return ""; }        // what an unfinished unit waits for
  // Recovery (bench.recover): rank died and was a builder's (the node handles other roles).
  virtual void peer_lost(int /*rank*/) {}
  Counters counters;

protected:
  Node& node_;
};

class Node {
public:
  Node(const Config& config, const Layout& layout, Transport& transport, const std::string& out_dir, std::string host);
  ~Node();

  // Runs until every unit has finished. Returns the process exit status.
  int run();
  // The common start of every rank's clock (see main.cpp); without it, when run() starts.
  void set_epoch(std::chrono::steady_clock::time_point t0) { epoch_ = t0; }

  const Config& config() const { return config_; }
  const Layout& layout() const { return layout_; }
  const FragmentSizes& sizes() const { return sizes_; }
  Transport& transport() { return transport_; }
  double now() const;  // seconds since the common start
  // Recovery: how long the dead rank had been silent when the transport declared it dead.
  double silence_of(int rank) const { return transport_.silent_seconds(rank); }
  bool measuring() const { return now() >= config_.warmup_seconds; }

  void send_command(int rank, Command cmd, Counters& counters);
  // Fragment traffic: through the local channel when `rank` is this process's (unless
  // bench.local_path = transport), else through the transport. `lend` lends the buffer on
  // the local path instead of copying it (see LocalChannel).
  void send(int rank, Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie, bool lend);
  void recv(int rank, Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie);
  void give_back(std::uint64_t loan);  // the receiver is done with a lent buffer
  // Transfers in flight per process (max_in_flight): take before starting one, give back
  // when it completes. `exempt` lets a unit's oldest transfer through a full cap, so the
  // oldest event always moves and shared caps cannot deadlock.
  bool take_token(bool exempt) { return cap_.take(exempt); }
  void give_token() { cap_.give(); }
  void note_stop();                     // the first sign of the end of the run reached this process
  void fail(const std::string& what);   // a protocol error: counted, reported, run fails
  void set_nic(std::string interface);  // the transport's interface, for its NUMA node

private:
  void dispatch(const Completion& c);
  void peer_lost(int rank);
  void post_command_receive(std::size_t i);
  void write_snapshot(const std::string& status, const std::string& error);
  std::string memory_json(std::uint64_t allocs_now) const;
  bool all_finished() const;
  std::size_t abandoned() const;

  const Config& config_;
  const Layout& layout_;
  Transport& transport_;
  FragmentSizes sizes_;
  std::string out_dir_, host_;
  std::chrono::steady_clock::time_point t0_;
  std::optional<std::chrono::steady_clock::time_point> epoch_;
  std::vector<std::unique_ptr<Unit>> units_;
  std::size_t command_bytes_;
  std::vector<std::vector<unsigned char>> cmd_recv_, cmd_send_;
  std::vector<std::size_t> cmd_send_free_;
  std::vector<std::uint32_t> seq_out_, seq_in_;               // per peer rank
  std::vector<std::pmr::map<std::uint32_t, Command>> early_;  // per peer: arrived ahead of order
  std::pmr::deque<Command> to_self_;                          // commands between units of this process
  LocalChannel local_;
  bool use_local_;
  void deliver(const Command& cmd, int from_rank);
  TransferCap cap_;
  double stop_seconds_ = -1, window_start_ = 0;
  std::vector<Counters> at_warmup_, at_stop_;
  bool warmed_up_ = false;
  // Allocations (memory::allocations) at the warm-up and at the stop, and those the periodic
  // reports made in between: the event path's own are the rest.
  std::uint64_t allocs_at_warmup_ = 0, allocs_at_stop_ = 0, report_allocs_ = 0;
  // Allocations are counted from the warm-up's end, if the run got there, to the stop or
  // the signal (whose own strings are not the event path's).
  bool allocs_warmed_up_ = false;
  std::uint64_t allocs_at_signal_ = 0;
  std::string nic_;     // the interface the transport uses, when known
  int nic_node_ = -1;   // its NUMA node (sysfs), read once
  int numa_nodes_ = 1;  // nodes online, read once
  std::uint64_t protocol_errors_ = 0;
  std::set<int> dead_rus_;  // recovery: ranks whose readout units died
  std::string first_error_;
  std::string csv_path_, json_path_;
  int period_ = 0;
};

}  // namespace daqnet::evb
