// The transport interface of the event builder: tagged, non-blocking point-to-point messages.
//
// Units and protocols talk only to this interface, so a transport (MPI, TCP, later libfabric
// or verbs) can be added without touching them. The semantics are those of MPI's
// non-blocking point-to-point (and of libfabric's tagged messages):
//  - send(peer, tag, buf, bytes) starts a send; buf stays untouched by the caller until the
//    send's completion is returned by progress().
//  - recv(peer, tag, buf, capacity) posts a receive; peer may be kAnySource. An incoming
//    message matches the oldest posted receive with the same tag and a matching peer.
//    Messages from one peer with one tag arrive in the order they were sent (non-overtaking).
//    A message arriving before a matching receive is posted is kept until one is. Receives
//    on one tag are all from kAnySource or all from named peers (the MPI transport matches
//    kAnySource ones itself, after the named ones MPI holds: see mpi_transport.cpp).
//  - progress(out, timeout) moves data and appends completed operations to out. When nothing
//    completes it may wait up to timeout_seconds (0 = return at once) without busy-polling,
//    so oversubscribed ranks on a small machine leave the CPU to each other.
// Errors (a peer that disappeared, a message longer than the posted buffer) throw
// TransportError with a message naming the peer. A transport that can recover (TCP with
// TcpOptions::recover) reports a dead peer instead: one completion of kind peer_lost, then
// every operation still under way with that peer completes with `failed` set (a send that
// never arrived, a receive with no data), and later ones with it fail at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace daqnet::evb {

using Tag = std::uint32_t;
inline constexpr int kAnySource = -1;

struct Completion {
  enum class Kind : std::uint8_t { send, recv, peer_lost };
  Kind kind = Kind::send;
  std::uint64_t cookie = 0;  // the caller's identifier of the operation
  int peer = -1;             // destination of a send, actual source of a receive
  Tag tag = 0;
  std::size_t bytes = 0;  // bytes sent, or bytes actually received
  // Local path only (LocalChannel, never a transport): a lent message was not copied. Its
  // receive's bytes are at `data`, and `loan` (the send's cookie) gives the buffer back;
  // a lent send's buffer stays the receiver's until then.
  bool lent = false;
  const unsigned char* data = nullptr;
  std::uint64_t loan = 0;
  bool failed = false;  // the peer died: nothing was sent or received
};

class TransportError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class Transport {
public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual void send(int peer, Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie) = 0;
  virtual void recv(int peer, Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie) = 0;
  virtual void progress(std::vector<Completion>& out, double timeout_seconds) = 0;

  // Operations started and not yet returned by progress().
  virtual std::size_t pending() const = 0;
  // Drop posted receives that can no longer match (end of run). Sends must be complete.
  virtual void cancel_receives() = 0;
  // Peers declared dead so far (only a recovering transport declares any).
  virtual int lost_peers() const { return 0; }
  // How long a dead peer had been silent when it was declared dead (its failure's onset).
  virtual double silent_seconds(int /*peer*/) const { return 0; }
  // This rank's part of the run is over: peers stop expecting its heartbeats, and its
  // connections closing from now on is no failure.
  virtual void say_goodbye() {}
  // Every rank is ready (buffers made): from now on a silent peer is timed, heard of or not.
  virtual void start_timing() {}
};

}  // namespace daqnet::evb
