// A builder unit (BU): gathers one fragment of an event from every readout unit into one of
// its slots (one per credit), checks each fragment, and reports the built event to the EM.
#pragma once

#include <vector>

#include "evb/buffer.hpp"
#include "evb/node.hpp"

namespace daqnet::evb {

class BuilderUnit final : public Unit {
public:
  BuilderUnit(Node& node, int index);
  UnitKind kind() const override { return UnitKind::bu; }
  int index() const override { return index_; }
  void start() override;
  void on_command(const Command& cmd, int from_rank) override;
  void on_completion(const Completion& c) override;
  void pump() override;
  bool finished() const override { return finished_; }
  std::uint64_t lost() const override { return given_up_; }
  std::uint64_t missing() const override;
  std::uint64_t buffer_bytes() const override;
  void report(JsonObject& out) const override;
  std::string waiting() const override;
  std::size_t abandoned_receives() const override { return abandoned_; }
  void peer_lost(int rank) override;

private:
  struct Slot {
    bool busy = false;
    std::uint64_t event = 0;
    double started = 0;
    double last_arrival = 0;  // of any part, or the start: fragment_timeout_seconds counts from it
    bool timing = false;      // started holds the start of the latency measurement
    std::vector<int> order;   // RUs in gather order
    std::size_t next = 0;     // next position of order to post
    bool incomplete = false;  // a readout unit died: built without its fragment
    int outstanding = 0;      // fragments posted and not complete
    int complete = 0;         // fragments complete
    std::uint64_t bytes = 0;
    Buffer data;                       // R fragments of max size
    std::vector<unsigned char> meta;   // R meta blocks
    std::vector<std::uint8_t> parts;   // per RU: bit 1 = meta in, bit 2 = data in, bit 4 = gone
    std::vector<std::uint64_t> loans;  // fragments lent by the RU beside us, held until built
  };
  void begin(std::uint32_t slot, std::uint64_t event);
  void post(std::uint32_t slot, int ru);
  void fragment_done(std::uint32_t slot, int ru);
  void fragment_gone(std::uint32_t slot, int ru);
  bool check_fragment(Slot& s, int ru, const Completion& done);
  void give_back_loans(Slot& s);
  bool check_meta(Slot& s, int ru, std::size_t received);
  bool genuine(const FragmentHeader& h, const unsigned char* frag, std::size_t received) const;
  void event_built(std::uint32_t slot);
  void grant(std::uint32_t slot, std::uint64_t frame);
  void maybe_finish();
  void check_timeouts();
  std::size_t data_offset(int ru) const { return offsets_[ru]; }

  int index_;
  int rus_;
  std::vector<std::size_t> offsets_;
  std::vector<Slot> slots_;
  std::uint64_t gathers_ = 0;
  bool fin_em_ = false, finished_ = false;
  std::uint64_t last_frame_ = ~0ULL;  // time frames with barrier: frames after it never start
  std::uint64_t corrupt_ = 0, duplicate_ = 0;
  std::uint64_t lent_ = 0;  // fragments read in place from the RU beside us
  std::size_t abandoned_ = 0;
  std::uint64_t given_up_ = 0;  // fragments declared lost after fragment_timeout_seconds
  // Recovery: readout units that died, fragments they never sent and events built without.
  std::vector<char> ru_dead_;
  std::uint64_t absent_ = 0, incomplete_ = 0;
  LatencyHistogram latency_;
};

}  // namespace daqnet::evb
