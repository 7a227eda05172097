// The event manager (EM): assigns events to builders that have credit, keeps the clock of
// the measurement (warm-up, stop condition) and counts built events as builders report them.
// In time-frame mode it only counts, decides the end, and paces frames when barrier is on.
#pragma once

#include <deque>
#include <memory_resource>
#include <utility>
#include <vector>

#include "evb/node.hpp"

namespace daqnet::evb {

class EventManager final : public Unit {
public:
  explicit EventManager(Node& node);
  UnitKind kind() const override { return UnitKind::em; }
  int index() const override { return 0; }
  void start() override;
  void on_command(const Command& cmd, int from_rank) override;
  void pump() override;
  bool finished() const override;
  void report(JsonObject& out) const override;
  void peer_lost(int rank) override;
  std::string waiting() const override {
    return "EM waits for the end of " + std::to_string(node_.layout().builder_units() - fins_) + " builders";
  }

private:
  void assign(std::uint64_t event, int bu, std::uint32_t slot);
  void stop();

  std::pmr::deque<std::pair<int, std::uint32_t>> credits_;  // (builder, slot) ready for an event
  std::uint64_t next_event_ = 0;
  std::uint64_t outstanding_ = 0, done_total_ = 0;
  std::int64_t released_frame_ = -1;  // time frames with barrier: last frame allowed to start
  bool stopped_ = false;
  int fins_ = 0;
  // The official measurement: events whose DONE reached the EM inside the window.
  double window_start_ = 0, window_end_ = -1, last_done_ = 0;
  std::uint64_t window_events_ = 0, window_bytes_ = 0;
  LatencyHistogram latency_;
  // Recovery (bench.recover): per builder, and the failures seen.
  std::vector<std::uint64_t> assigned_, built_;
  std::vector<char> dead_, fin_;
  int dead_without_fin_ = 0;
  std::uint64_t abandoned_events_ = 0, incomplete_events_ = 0;
  struct Failure {
    int rank;
    const char* role;
    double detected;  // declared dead
    double silent;    // it had been silent for this long: the failure began then
    double recovery;  // from its last word to the next event built after it, < 0 while none was
  };
  std::vector<Failure> failures_;
};

}  // namespace daqnet::evb
