// A readout unit (RU): holds one fragment of every event (generated in memory, at a set rate
// or as fast as possible) and sends it, as meta-data plus data, to the builder that asks
// (PULL), that the EM names (PUSH), or that granted the time frame (time-frame mode).
#pragma once

#include <deque>
#include <memory>
#include <memory_resource>
#include <set>
#include <vector>

#include "evb/buffer.hpp"
#include "evb/node.hpp"

namespace daqnet::evb {

class ReadoutUnit final : public Unit {
public:
  ReadoutUnit(Node& node, int index);
  UnitKind kind() const override { return UnitKind::ru; }
  int index() const override { return index_; }
  void on_command(const Command& cmd, int from_rank) override;
  void on_completion(const Completion& c) override;
  void on_returned(std::uint64_t loan) override;
  void pump() override;
  bool finished() const override;
  std::uint64_t buffer_bytes() const override { return data_.bytes() + meta_.bytes(); }
  void report(JsonObject& out) const override;
  std::string waiting() const override;
  void peer_lost(int rank) override;

private:
  struct Item {
    std::uint64_t event;
    std::uint32_t bu, slot;
    bool operator<(const Item& o) const { return event != o.event ? event < o.event : bu < o.bu; }
  };
  struct Send {
    std::size_t data = 0, meta = 0;  // buffer indices
    int parts = 0;                   // completions still to come
    int lent = 0;                    // parts lent on the local path, not yet given back
    std::size_t corrupted = 0;       // test hook: byte offset to restore, 0 = none
    std::uint64_t event = 0;
  };
  struct Held {  // test hook fault_delay_every: a fragment held back until `due`
    double due;
    std::size_t send_id;
    int peer, copies;
    std::uint32_t slot;
  };
  void start_send(const Item& item);
  void transmit(std::size_t send_id, int peer, std::uint32_t slot, int copies);
  void release(std::size_t send_id);  // buffers back to the pools once sent and given back

  int index_;
  Pattern pattern_;
  // std::pmr containers: daqnet-evb's default resource is a pool that keeps freed nodes
  // (main.cpp), so once warm they allocate nothing per event.
  std::pmr::set<Item> pending_;                // oldest event first
  std::pmr::multiset<std::uint64_t> sending_;  // events in flight
  BufferPool data_, meta_;
  std::vector<Send> sends_;
  std::vector<std::size_t> send_free_;
  int fins_ = 0, fins_needed_ = 0;
  std::int64_t released_ = -1;  // time frames with barrier: frames up to this may start
  bool em_fin_ = false;
  std::vector<char> bu_dead_, bu_fin_;  // recovery: per builder
  std::uint64_t sent_ = 0;
  std::pmr::deque<Held> held_;
  std::uint64_t corrupted_ = 0, dropped_ = 0, delayed_ = 0, allocated_ = 0, duplicated_ = 0;  // by the test hooks
};

}  // namespace daqnet::evb
