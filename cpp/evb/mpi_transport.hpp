// Transport over MPI non-blocking point-to-point (MPI_Isend / MPI_Irecv / MPI_Testsome).
#pragma once

#include <mpi.h>

#include <utility>
#include <vector>

#include "evb/transport.hpp"
#include "evb/wait_mode.hpp"

namespace daqnet::evb {

class MpiTransport final : public Transport {
public:
  // comm is duplicated, so the transport's traffic never matches anyone else's.
  MpiTransport(MPI_Comm comm, WaitMode wait);
  ~MpiTransport() override;

  const char* name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int peer, Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie) override;
  void recv(int peer, Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie) override;
  void progress(std::vector<Completion>& out, double timeout_seconds) override;
  std::size_t pending() const override { return active_; }
  void cancel_receives() override;

private:
  struct Op {
    Completion::Kind kind;
    std::uint64_t cookie;
    int peer;
    Tag tag;
    std::size_t bytes;
    bool matched = false;  // an MPI_Imrecv of a message already matched: not to be cancelled
  };
  std::size_t slot();  // a free index into requests_/ops_
  // A receive from kAnySource, not yet given to MPI (see recv()).
  struct AnyReceive {
    void* buf;
    int count;
    std::size_t slot;
  };
  void match_any_source();
  void check(int err, const char* what) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 0;
  PollPause pause_;
  // Requests live in one array so MPI_Testsome scans them in one call; freed slots hold
  // MPI_REQUEST_NULL, which MPI_Testsome ignores.
  std::vector<MPI_Request> requests_;
  std::vector<Op> ops_;
  std::vector<std::size_t> free_;
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
  std::size_t active_ = 0;
  // kAnySource receives waiting for a message, oldest first, by tag: MPI_Improbe finds one,
  // MPI_Imrecv receives it into the oldest. Vectors, not deques: once they have held as many
  // as a run keeps posted they allocate no more (a deque allocated a block now and then).
  std::vector<std::pair<Tag, std::vector<AnyReceive>>> any_;
  bool probe_any_ = false;  // a peer on another node: kAnySource receives matched by probes
};

}  // namespace daqnet::evb
