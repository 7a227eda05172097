// What the units say to each other: commands, fragment headers, tags and cookies.
#pragma once

#include <cstdint>

#include "evb/transport.hpp"

namespace daqnet::evb {

// The three message classes travel on their own tags. Meta-data and data tags carry the
// builder's slot (one slot per credit), so the fragments of events built in parallel by one
// builder never match each other's receives. All tags stay below 32767, the smallest
// MPI_TAG_UB the MPI standard allows.
inline constexpr Tag kCommandTag = 0;
inline constexpr Tag kSlotTagSpan = 8192;
inline constexpr Tag meta_tag(std::uint32_t slot) { return kSlotTagSpan + slot; }
inline constexpr Tag data_tag(std::uint32_t slot) { return 2 * kSlotTagSpan + slot; }
inline constexpr std::uint32_t kMaxCredits = kSlotTagSpan;

enum class UnitKind : std::uint8_t { em = 0, ru = 1, bu = 2, node = 3 };

enum class CommandType : std::uint16_t {
  credit = 1,   // BU → EM: this slot is free (sent once per slot at start)
  done = 2,     // BU → EM: event built in slot (bytes, latency); the slot is free again
  assign = 3,   // EM → BU (and → RU for PUSH): event goes to builder bu, slot
  request = 4,  // BU → RU (PULL): send me your fragment of event in slot
  grant = 5,    // BU → RU (time-frame mode): send me time frame `event` in slot
  go = 6,       // EM → RU (time-frame mode with barrier): frame `event` may start
  fin = 7,      // no more commands from this unit to you
};

// A command message. It is padded to the scenario's command size on the wire.
struct Command {
  CommandType type;
  UnitKind to;  // unit of the receiving process that handles it
  UnitKind from;
  std::uint32_t from_index = 0;  // index of the sending RU/BU (0 for the EM)
  std::uint32_t slot = 0;
  std::uint32_t bu = 0;
  std::uint64_t event = 0;
  std::uint64_t bytes = 0;
  std::int64_t latency_ns = 0;
  // Per (sender rank, receiver rank) count: the receiver handles commands in sending order
  // even when the transport reports completions in another order (MPI_Testsome does).
  std::uint32_t seq = 0;
  std::uint32_t flags = 0;  // kDoneIncomplete on a DONE
  // DONE: when the builder built the event, on the common clock (Node::now()). The EM counts
  // the events of its window by it: it may read the DONE much later, its process busy with
  // large fragments of its own.
  double built_at = 0;
};
static_assert(sizeof(Command) == 56);
// DONE of an event built without the fragments of a readout unit that died (bench.recover).
inline constexpr std::uint32_t kDoneIncomplete = 1;

// In-band header at the start of every data fragment.
inline constexpr std::uint32_t kFragmentMagic = 0xDA9E7F01u;
struct FragmentHeader {
  std::uint32_t magic;
  std::uint32_t ru;
  std::uint64_t event;
  std::uint64_t bytes;     // whole fragment, header included
  std::uint64_t checksum;  // over header fields and payload (see fragments.hpp)
};
static_assert(sizeof(FragmentHeader) == 32);

// Cookies say which unit an operation belongs to; the low bits are the unit's own.
inline constexpr std::uint64_t cookie(UnitKind unit, std::uint64_t value) {
  return (static_cast<std::uint64_t>(unit) << 60) | value;
}
inline constexpr UnitKind cookie_unit(std::uint64_t c) { return static_cast<UnitKind>(c >> 60); }
inline constexpr std::uint64_t cookie_value(std::uint64_t c) { return c & ((1ULL << 60) - 1); }

}  // namespace daqnet::evb
