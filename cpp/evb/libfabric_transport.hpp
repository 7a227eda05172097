// Transport over libfabric (OFI): tagged messages on one reliable-datagram endpoint per rank.
//
// libfabric is the common interface of HPC fabrics (verbs for InfiniBand and RoCE, EFA, CXI
// for Slingshot, PSM3, tcp and shm), so one binary measures each fabric's own path: the
// provider is libfabric's first choice for the capabilities below, or the one named
// (bench.libfabric_provider, e.g. "verbs;ofi_rxm", "tcp;ofi_rxm", "shm"). MPI only bootstraps
// it (endpoint names are exchanged with MPI_Allgather), as for the TCP transport.
//
// transport.hpp's matching rules map onto libfabric's tag matching: the 64-bit tag carries
// the sender's rank above the 32-bit tag, so a receive from one peer matches both halves and
// an any-source receive ignores the rank half. No provider needs FI_DIRECTED_RECV or
// FI_SOURCE for that, and a completion's tag names its sender. Messages of one peer are
// matched in order because the endpoint is asked for FI_ORDER_SAS; unexpected messages are
// the provider's to keep (ofi_rxm holds small ones and fetches large ones once their
// receive is posted).
//
// Buffers are not registered: providers that need local registration (FI_MR_LOCAL, verbs)
// are reached through ofi_rxm, which registers or copies for them.
#pragma once

#include <mpi.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory_resource>
#include <string>
#include <vector>

#include "evb/transport.hpp"
#include "evb/wait_mode.hpp"

namespace daqnet::evb {

struct LibfabricOptions {
  std::string provider;  // "" = libfabric's choice (which honours FI_PROVIDER)
  std::string domain;    // "" = the provider's first domain (e.g. mlx5_0, eth0, lo)
};

class LibfabricTransport final : public Transport {
public:
  // Collective over comm: every rank opens its endpoint, then all exchange their names.
  LibfabricTransport(MPI_Comm comm, WaitMode wait, const LibfabricOptions& options);
  ~LibfabricTransport() override;
  LibfabricTransport(const LibfabricTransport&) = delete;
  LibfabricTransport& operator=(const LibfabricTransport&) = delete;

  const char* name() const override { return "libfabric"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int peer, Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie) override;
  void recv(int peer, Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie) override;
  void progress(std::vector<Completion>& out, double timeout_seconds) override;
  std::size_t pending() const override { return active_; }
  void cancel_receives() override;

  // What libfabric chose: provider, fabric and domain ("tcp;ofi_rxm, 127.0.0.1/32, lo").
  const std::string& endpoint_description() const { return description_; }

private:
  struct Op {
    // First, so the Op's address is the operation's context: providers that ask for
    // FI_CONTEXT/FI_CONTEXT2 own these bytes until the completion.
    fi_context2 context{};
    Completion::Kind kind = Completion::Kind::send;
    std::uint64_t cookie = 0;
    int peer = -1;
    Tag tag = 0;
    std::size_t bytes = 0;
    void* buf = nullptr;
    std::size_t index = 0;  // in ops_
    enum class State : std::uint8_t { free, waiting, posted, cancelled } state = State::free;
  };
  std::size_t slot();
  bool post(Op& op);  // false: the provider's queue is full (FI_EAGAIN), try again later
  void start(std::size_t i, std::pmr::deque<std::size_t>& waiting);
  void post_waiting();
  bool read_completions(std::vector<Completion>& out);  // true when something completed
  void release(Op& op);
  void close();  // every libfabric object opened so far
  [[noreturn]] void fail_entry(const struct fi_cq_err_entry& err);
  std::string error_text(int err) const;

  int rank_ = 0, size_ = 0;
  PollPause pause_;
  std::string description_;
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  std::vector<fi_addr_t> addresses_;  // by rank
  std::size_t max_message_bytes_ = 0;
  // Ops live in a deque (stable addresses: the provider holds them); free_ indexes unused
  // ones. Operations the provider refused with FI_EAGAIN wait, in order, and every later one
  // of their kind queues behind them, so sends keep their order and receives theirs. Sends
  // and receives wait apart: a refused receive must not hold back the send (a pull request)
  // whose answer would complete the receives already posted. The deques take
  // their blocks from the default memory resource, which daqnet-evb makes a pool that keeps
  // freed blocks: a FIFO deque frees and takes a block every few dozen operations, and after
  // the warm-up that must cost no allocation.
  std::pmr::deque<Op> ops_;
  std::vector<std::size_t> free_;
  std::pmr::deque<std::size_t> waiting_sends_, waiting_recvs_;
  std::uint64_t any_source_ignore_ = 0;  // the rank bits of the wire tag
  bool closed_ = false;                  // the endpoint was closed early (cancels the provider never confirmed)
  std::vector<Completion> early_;        // completions read while cancelling, returned next
  std::size_t active_ = 0;
};

}  // namespace daqnet::evb
