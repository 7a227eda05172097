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
  int pairs = 0;  // p2p only
  std::string json() const;
};

// MPI_Alltoall of message_bytes per pair of ranks (self included, as the event builder's
// local fragments are), repeated for about `seconds`.
BaselineResult alltoall_baseline(MPI_Comm comm, std::size_t message_bytes, double seconds);

// The same exchange as alltoall_baseline written as plain point-to-point: every rank posts
// MPI_Irecv from and MPI_Isend to every rank (self included, starting with its right-hand
// neighbour), then MPI_Waitall; repeated for about `seconds`.
BaselineResult isend_alltoall_baseline(MPI_Comm comm, std::size_t message_bytes, double seconds);

// Ranks paired in placement order (0→1, 2→3, ...) stream message_bytes messages one way,
// `window` in flight, over the run's own transport.
BaselineResult p2p_baseline(MPI_Comm comm, Transport& transport, const Layout& layout, std::size_t message_bytes,
                            int window, double seconds);

}  // namespace daqnet::evb
