// Transport over a full mesh of TCP connections, one per pair of ranks, driven by one epoll.
//
// MPI only bootstraps it (addresses, ports); every message afterwards travels over the
// sockets, so the same binary measures the kernel TCP stack against the MPI library.
#pragma once

#include <mpi.h>
#include <sys/epoll.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "evb/transport.hpp"
#include "evb/wait_mode.hpp"

namespace daqnet::evb {

struct TcpOptions {
  std::string address;          // IPv4 literal to listen on
  std::string interface_name;   // else the IPv4 address of this network interface
  int socket_buffer_bytes = 0;  // > 0: SO_SNDBUF and SO_RCVBUF of every connection
};

class TcpTransport final : public Transport {
public:
  // Collective over comm: every rank listens, exchanges its endpoint, connects the mesh.
  TcpTransport(MPI_Comm comm, WaitMode wait, const TcpOptions& options);
  ~TcpTransport() override;
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  const char* name() const override { return "tcp"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int peer, Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie) override;
  void recv(int peer, Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie) override;
  void progress(std::vector<Completion>& out, double timeout_seconds) override;
  std::size_t pending() const override { return active_; }
  void cancel_receives() override;

private:
  struct Header {  // precedes every message on the wire, in host byte order
    std::uint32_t magic;
    Tag tag;
    std::uint64_t bytes;
  };
  struct SendOp {
    Header header;
    const char* buf;
    std::size_t done;  // bytes written so far, header included
    std::uint64_t cookie;
  };
  struct RecvOp {
    int peer;
    char* buf;
    std::size_t capacity;
    std::uint64_t cookie;
  };
  struct Buffer {
    std::unique_ptr<char[]> data;
    std::size_t capacity = 0;
  };
  struct Unexpected {  // a message that arrived before its receive, in arrival order
    int peer;
    Tag tag;
    std::size_t bytes;
    Buffer buffer;
    bool complete;  // else still arriving on conns_[peer]
  };
  enum class Sink : std::uint8_t { none, recv, heap, discard };  // where a payload goes
  struct Conn {
    int fd = -1;
    int peer = -1;
    bool want_out = false;  // EPOLLOUT registered
    std::deque<SendOp> sendq;
    // Receive side: headers are parsed out of staged bytes, payloads go to dest.
    std::unique_ptr<char[]> stage;
    std::size_t stage_pos = 0, stage_end = 0;
    Sink sink = Sink::none;
    Header header{};
    char* dest = nullptr;
    std::size_t left = 0;  // payload bytes still to come
    RecvOp target{};
    std::list<Unexpected>::iterator heap;
    std::unique_ptr<char[]> discard;  // the rest of a message whose receive was cancelled
  };

  void connect_mesh(MPI_Comm comm, const TcpOptions& options);
  void close_fds();
  void read_from(Conn& c);
  void flush(Conn& c);
  void start_payload(Conn& c);
  void finish_payload(Conn& c);
  void handle_events(double timeout_seconds);
  int wait_events(epoll_event* events, int max, double timeout_seconds);
  std::optional<RecvOp> match_posted(int peer, Tag tag);
  Buffer take_buffer(std::size_t bytes);
  void give_back(Buffer buffer);
  void check_peer(int peer, const char* what) const;
  [[noreturn]] void too_long(int peer, Tag tag, std::size_t bytes, std::size_t capacity) const;
  [[noreturn]] void lost(const Conn& c, const std::string& reason) const;

  int rank_ = 0, size_ = 0;
  WaitMode wait_;
  int epoll_fd_ = -1;
  bool have_pwait2_ = true;
  std::vector<Conn> conns_;                             // indexed by peer; conns_[rank_] stays unused
  std::unordered_map<Tag, std::deque<RecvOp>> posted_;  // per tag, in posting order
  std::list<Unexpected> unexpected_;
  std::vector<Buffer> spare_;  // buffers of delivered unexpected messages, for reuse
  std::size_t spare_bytes_ = 0;
  std::vector<Completion> ready_;  // completed, returned by the next progress()
  std::size_t active_ = 0;
};

}  // namespace daqnet::evb
