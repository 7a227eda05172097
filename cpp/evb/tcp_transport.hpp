// Transport over a full mesh of TCP connections, driven by one epoll.
//
// MPI only bootstraps it (addresses, ports); every message afterwards travels over the
// sockets, so the same binary measures the kernel TCP stack against the MPI library.
// With TcpOptions::control_lane each pair of ranks has two connections: bulk tags (fragments
// and their meta-data) on one, every other tag (commands: credits, assignments, requests) on
// the other, so a command never waits behind megabytes queued in a socket (measured on
// emulated fabrics: one shared connection held commands back by 0.1-0.5 s at 100 Mbit/s). A
// tag always takes the same connection, so messages of one tag from one peer still arrive in
// order.
#pragma once

#include <mpi.h>
#include <sys/epoll.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <memory_resource>
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
  // The run's secret (32 hexadecimal digits, from run.cfg): a connection whose greeting does
  // not carry it is closed and logged, and the mesh goes on waiting for its ranks. Empty:
  // rank 0 draws one and MPI hands it to every rank.
  std::string token;
  // The longest message a peer may announce: a longer one ends the connection before any
  // memory is allocated for it (a peer's length field is never trusted beyond this).
  std::size_t max_message_bytes = std::size_t{1} << 30;
  // Bytes of unexpected messages (no receive posted yet) kept per peer: beyond it, reading
  // from that peer pauses until receives consume them, so TCP's flow control holds the sender.
  std::size_t max_unexpected_bytes = std::size_t{256} << 20;
  double greeting_seconds = 5;       // an unidentified connection gets this long to greet
  double connect_delay_seconds = 0;  // test hook: wait this long before connecting to lower ranks
  // A peer whose connection ends (or that is silent for heartbeat_seconds) is reported as a
  // peer_lost completion instead of an error, and the others go on (bench.recover).
  bool recover = false;
  double heartbeat_seconds = 2;  // with recover: idle connections carry a heartbeat every third of it
  // Two connections per peer: tags >= bulk_tag_from on the bulk one, the others on the
  // control one (see the top of this file). false: one connection per peer for everything.
  bool control_lane = false;
  Tag bulk_tag_from = 0;
  // > 0: the control connection's packets carry this DSCP (IP_TOS), so switches with a
  // priority class (and daqnet emulate's ports) serve them ahead of bulk data.
  int control_dscp = 0;
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
  int lost_peers() const override { return lost_peers_; }
  double silent_seconds(int peer) const override { return peers_[peer].silence; }
  void start_timing() override;
  void say_goodbye() override;

  /// Bytes of unexpected messages from other ranks held now (bounded per peer by the options).
  std::size_t unexpected_bytes() const;
  /// Connections refused while the mesh was built (strangers, wrong token, no greeting).
  int refusals() const { return refusals_; }
  /// Test hook: writes bytes on the connection to peer as they are, outside the protocol.
  void send_raw_for_test(int peer, const void* data, std::size_t bytes);
  static constexpr std::uint32_t kWireMagic = 0x544e5144;  // "DQNT", first field of every header
  // Control messages of recovery (empty, never matched; real tags stay below 32768).
  static constexpr Tag kHeartbeatTag = 0xFFFFFFFFu, kGoodbyeTag = 0xFFFFFFFEu;

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
  struct Greeting {  // the first bytes of every connection, from the connecting rank
    std::uint32_t magic;
    std::uint32_t who;  // rank | lane << kLaneShift
    unsigned char token[16];
  };
  static constexpr int kLaneShift = 24;  // ranks stay below 2^24
  enum Lane : int { kControl = 0, kBulk = 1 };
  struct Buffer {
    std::unique_ptr<char[]> data;
    std::size_t capacity = 0;
  };
  struct Unexpected {  // a message that arrived before its receive, in arrival order
    int peer;
    int conn;  // the index in conns_ of the connection it came on
    Tag tag;
    std::size_t bytes;
    Buffer buffer;
    bool complete;  // else still arriving on conns_[conn]
  };
  enum class Sink : std::uint8_t { none, recv, heap, discard };  // where a payload goes
  struct Conn {  // one connection to a peer (its control or its bulk lane)
    int fd = -1;
    int peer = -1;
    int index = -1;                 // in conns_ (epoll's key)
    bool want_out = false;          // data queued: EPOLLOUT wanted
    std::uint32_t events = 0;       // what epoll watches on fd (0: not registered)
    std::pmr::deque<SendOp> sendq;  // pmr: see main.cpp
    // Receive side: headers are parsed out of staged bytes, payloads go to dest.
    std::unique_ptr<char[]> stage;
    std::size_t stage_pos = 0, stage_end = 0;
    Sink sink = Sink::none;
    Header header{};
    char* dest = nullptr;
    std::size_t left = 0;  // payload bytes still to come
    RecvOp target{};
    std::pmr::list<Unexpected>::iterator heap;
    std::unique_ptr<char[]> discard;   // the rest of a message whose receive was cancelled
    std::size_t unexpected_bytes = 0;  // of unexpected messages from this connection still kept
    bool paused = false;               // reading stopped at a header (unexpected bytes at the cap)
    double last_sent = 0;              // recovery: seconds on the transport's clock
  };
  struct Peer {                 // what holds for every connection to one rank
    bool dead = false;          // recovery: the peer is gone, its connections closed
    double silence = 0;         // recovery: seconds without a word when declared dead
    bool said_goodbye = false;  // recovery: the peer's part is over, its silence is no failure
    double last_heard = 0;      // recovery: seconds on the transport's clock, any connection
  };

  void connect_mesh(MPI_Comm comm, const TcpOptions& options);
  void accept_ranks(int listener, const TcpOptions& options);
  void refused(const std::string& from, const std::string& why);
  void set_events(Conn& c);
  void resume_paused();
  void close_fds();
  void read_from(Conn& c);
  void flush(Conn& c);
  bool start_payload(Conn& c);
  void finish_payload(Conn& c);
  void handle_events(double timeout_seconds);
  int wait_events(epoll_event* events, int max, double timeout_seconds);
  std::optional<RecvOp> match_posted(int peer, Tag tag);
  Buffer take_buffer(std::size_t bytes);
  void give_back(Buffer buffer);
  void check_peer(int peer, const char* what) const;
  [[noreturn]] void too_long(int peer, Tag tag, std::size_t bytes, std::size_t capacity) const;
  // The connection failed: throws, or with recovery marks the peer dead (callers return).
  void lost(Conn& c, const std::string& reason);
  void mark_dead(int peer, const std::string& reason, bool report);
  void close_conn(Conn& c);
  // The connection a message with this tag takes to or from peer.
  Conn& conn(int peer, Tag tag) { return conns_[slot(peer, lanes_ == 2 && tag >= bulk_from_ ? kBulk : kControl)]; }
  std::size_t slot(int peer, int lane) const {
    return static_cast<std::size_t>(lane) * static_cast<std::size_t>(size_) + static_cast<std::size_t>(peer);
  }
  void heartbeat();
  double clock() const;

  int rank_ = 0, size_ = 0;
  WaitMode wait_;
  int epoll_fd_ = -1;
  bool have_pwait2_ = true;
  int lanes_ = 1;      // connections per peer (2 with TcpOptions::control_lane)
  Tag bulk_from_ = 0;  // the first tag of the bulk lane
  // Indexed by slot(peer, lane); a rank's own slots stay unused.
  std::vector<Conn> conns_;
  std::vector<Peer> peers_;
  std::unordered_map<Tag, std::pmr::deque<RecvOp>> posted_;  // per tag, in posting order
  std::pmr::list<Unexpected> unexpected_;
  std::vector<Buffer> spare_;  // buffers of delivered unexpected messages, for reuse
  std::size_t spare_bytes_ = 0;
  // Small ones (meta-data, commands) by power-of-two class, so the steady state allocates none.
  std::vector<std::vector<Buffer>> small_spare_;
  std::size_t small_spare_bytes_ = 0;
  std::vector<Completion> ready_;  // completed, returned by the next progress()
  std::size_t active_ = 0;
  unsigned char token_[16] = {};
  std::size_t max_message_ = 0, max_unexpected_ = 0;
  int paused_ = 0;           // connections with reading paused
  std::vector<int> resume_;  // peers whose reading resumes at the next progress()
  int refusals_ = 0;         // connections refused at setup (the first few are logged)
  bool recover_ = false;
  double heartbeat_seconds_ = 0, next_heartbeat_ = 0;
  int lost_peers_ = 0;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

}  // namespace daqnet::evb
