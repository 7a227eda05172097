// Baselines measured in the same run as the event builder, among the same ranks, so the
// report can give the event builder's throughput as a ratio. Their buffers are the event
// builder's kind (evb/buffer.hpp, huge pages), so the ratio compares protocols, not memory.
#pragma once

#include <mpi.h>

#include <string>

#include "evb/config.hpp"
#include "evb/layout.hpp"
#include "evb/transport.hpp"

namespace daqnet::evb {

struct BaselineResult {
  std::string name;
  double gbps = 0;     // aggregate, 10^9 bit/s
  double seconds = 0;  // timed part
  double bytes = 0;    // moved in the timed part
  std::size_t message_bytes = 0;
  int pairs = 0;             // p2p only
  bool interrupted = false;  // a signal ended it early: the figures are of what was timed
  // alltoall, isend: "warm" or "cold" (see all_to_all_buffer_sets), the send + receive
  // buffer sets cycled through, and the last-level cache they were sized against.
  std::string cache;
  int buffer_sets = 1;
  std::size_t cache_bytes = 0;
  std::string json() const;
};

// The last-level cache of this machine's CPUs in bytes, as the kernel lists it (sysfs), else
// as the C library does (sysconf), else 64 MiB.
std::size_t last_level_cache_bytes();

// Send + receive buffer sets of `set_bytes` each an all-to-all baseline cycles through. Warm:
// one, reused at every repetition, as OSU and IMB time by default; it stays in the cache when
// small. Cold (IMB's -off_cache): enough that between two uses of a set the `node_ranks`
// ranks sharing this node's cache touch 4 × its size, so every repetition reads and writes
// memory the cache no longer holds, as the event builder does with each event's fresh
// fragments (one set when the node's ranks' sets together are that large).
int all_to_all_buffer_sets(bool cold, std::size_t set_bytes, int node_ranks, std::size_t cache_bytes);

// MPI_Alltoall of message_bytes per pair of ranks (self included, as the event builder's
// local fragments are), repeated for about `seconds`.
BaselineResult alltoall_baseline(MPI_Comm comm, std::size_t message_bytes, double seconds, bool cold);

// The same exchange as alltoall_baseline written as plain point-to-point: every rank posts
// MPI_Irecv from and MPI_Isend to every rank (self included, starting with its right-hand
// neighbour), then MPI_Waitall; repeated for about `seconds`.
BaselineResult isend_alltoall_baseline(MPI_Comm comm, std::size_t message_bytes, double seconds, bool cold);

// Nodes of `node_size` consecutive ranks in placement order, paired (0→1, 2→3, ...), process
// k to process k, stream message_bytes messages one way, `window` in flight, over the run's
// own transport.
BaselineResult p2p_baseline(MPI_Comm comm, Transport& transport, const Layout& layout, int node_size,
                            std::size_t message_bytes, int window, double seconds);

}  // namespace daqnet::evb
