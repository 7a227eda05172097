#include "evb/tcp_transport.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

namespace daqnet::evb {
namespace {

constexpr std::uint32_t kMagic = TcpTransport::kWireMagic;
// Headers and small payloads are read many at a time into a staging buffer; a large payload
// loses at most this many bytes to a copy, the rest is read straight into its destination.
constexpr std::size_t kStageBytes = 8192;
// Bytes read from one connection per progress() call, so one fast sender cannot starve the
// others; epoll (level-triggered) reports the connection again.
constexpr std::size_t kReadBudget = std::size_t{16} << 20;
constexpr int kMaxIov = 64;  // iovecs per sendmsg: up to 32 queued messages in one call
constexpr int kMaxEvents = 64;
constexpr double kAcceptSeconds = 60;         // for every higher rank to connect
constexpr std::size_t kMaxUnidentified = 64;  // connections still to greet; more are refused at once
constexpr int kRefusalsLogged = 10;           // then one line says further ones are not
// Large unexpected messages reuse buffers (up to kSpareBytes kept): fresh memory costs the
// kernel a page fault and a cleared page per 4 KiB, more than copying the message out.
constexpr std::size_t kSpareMin = std::size_t{64} << 10;
constexpr std::size_t kSpareBytes = std::size_t{64} << 20;
// Smaller ones are kept too, rounded up to a power of two from 256 bytes (up to 8 MiB kept):
// without them every early meta-data message would be a fresh allocation.
constexpr std::size_t kSmallSpareBytes = std::size_t{8} << 20;
constexpr int kSmallClassMin = 8;  // 256 bytes
int small_class(std::size_t bytes) {
  int k = kSmallClassMin;
  while ((std::size_t{1} << k) < bytes) ++k;
  return k - kSmallClassMin;
}

struct Endpoint {  // what every rank publishes, in network byte order
  std::uint32_t addr;
  std::uint16_t port;
};

struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) close(fd);
  }
};

[[noreturn]] void sys_error(const std::string& call, int err = errno) {
  throw TransportError("tcp: " + call + " failed: " + std::strerror(err));
}

int check_sys(int result, const std::string& call) {
  if (result < 0) sys_error(call);
  return result;
}

std::string ip_text(const in_addr& addr) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &addr, text, sizeof text);
  return text;
}

void set_buffers(int fd, int bytes) {
  if (bytes <= 0) return;
  check_sys(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes), "setsockopt SO_SNDBUF");
  check_sys(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes), "setsockopt SO_RCVBUF");
}

// The IPv4 address this rank listens on (see TcpOptions).
std::string listen_address(MPI_Comm comm, const TcpOptions& options) {
  // Every rank takes part in the exchange of host names whatever its options, so the
  // collective calls of all ranks stay matched.
  int size = 0, len = 0;
  MPI_Comm_size(comm, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  MPI_Get_processor_name(name, &len);
  std::vector<char> names(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  bool one_host = true;
  for (int r = 0; r < size; ++r)
    one_host = one_host && std::strncmp(name, &names[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME],
                                        MPI_MAX_PROCESSOR_NAME) == 0;

  if (!options.address.empty()) return options.address;
  if (!options.interface_name.empty()) {
    ifaddrs* list = nullptr;
    check_sys(getifaddrs(&list), "getifaddrs");
    std::string found;
    for (ifaddrs* a = list; a != nullptr && found.empty(); a = a->ifa_next)
      if (a->ifa_addr != nullptr && a->ifa_addr->sa_family == AF_INET && options.interface_name == a->ifa_name)
        found = ip_text(reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr);
    freeifaddrs(list);
    if (found.empty())
      throw TransportError("tcp: network interface '" + options.interface_name +
                           "' does not exist or has no IPv4 address");
    return found;
  }
  if (one_host) return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int err = getaddrinfo(name, nullptr, &hints, &found); err != 0)
    throw TransportError(std::string("tcp: cannot resolve host name '") + name + "': " + gai_strerror(err) +
                         "; give an address or an interface");
  in_addr addr = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
  freeaddrinfo(found);
  // Debian-style /etc/hosts map the host name to 127.0.1.1, useless to other hosts.
  if ((ntohl(addr.s_addr) >> 24) == 127)
    throw TransportError(std::string("tcp: host name '") + name + "' resolves to " + ip_text(addr) +
                         ", unreachable from other hosts; give an " + "address or an interface");
  return ip_text(addr);
}

// 32 hexadecimal digits into 16 bytes; false for an empty text.
bool parse_token(const std::string& text, unsigned char (&out)[16]) {
  if (text.empty()) return false;
  auto digit = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  bool ok = text.size() == 32;
  for (std::size_t i = 0; ok && i < 16; ++i) {
    int hi = digit(text[2 * i]), lo = digit(text[2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    out[i] = static_cast<unsigned char>(ok ? hi * 16 + lo : 0);
  }
  if (!ok) throw TransportError("tcp: tcp_token must be 32 hexadecimal digits");
  return true;
}

// Compares every byte whatever the first difference, so timing tells a guesser nothing.
bool same_token(const unsigned char* a, const unsigned char* b) {
  unsigned diff = 0;
  for (int i = 0; i < 16; ++i) diff |= static_cast<unsigned>(a[i] ^ b[i]);
  return diff == 0;
}

std::string peer_text(int fd) {
  sockaddr_in from{};
  socklen_t len = sizeof from;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&from), &len) != 0 || from.sin_family != AF_INET) return "?";
  return ip_text(from.sin_addr) + ":" + std::to_string(ntohs(from.sin_port));
}

}  // namespace

TcpTransport::TcpTransport(MPI_Comm comm, WaitMode wait, const TcpOptions& options) : wait_(wait) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  if (size_ >= (1 << kLaneShift)) throw TransportError("tcp: more ranks than the greeting can name");
  lanes_ = options.control_lane ? 2 : 1;
  bulk_from_ = options.bulk_tag_from;
  conns_.resize(static_cast<std::size_t>(lanes_) * static_cast<std::size_t>(size_));
  peers_.resize(static_cast<std::size_t>(size_));
  spare_.reserve(256);
  small_spare_.resize(static_cast<std::size_t>(small_class(kSpareMin - 1)) + 1);
  for (auto& v : small_spare_) v.reserve(256);
  try {
    connect_mesh(comm, options);
  } catch (...) {
    close_fds();  // the destructor does not run for a constructor that throws
    throw;
  }
}

TcpTransport::~TcpTransport() { close_fds(); }

void TcpTransport::close_fds() {
  for (Conn& c : conns_)
    if (c.fd >= 0) close(std::exchange(c.fd, -1));
  if (epoll_fd_ >= 0) close(std::exchange(epoll_fd_, -1));
}

void TcpTransport::connect_mesh(MPI_Comm comm, const TcpOptions& options) {
  max_message_ = options.max_message_bytes;
  // Spare buffers for early (unexpected) messages, made now, so that reaching a new high of
  // them later in the run needs no allocation. Untouched pages cost no resident memory.
  if (max_message_ >= kSpareMin)
    for (std::size_t n = std::min<std::size_t>(256, (std::size_t{16} << 20) / max_message_); n > 0; --n)
      give_back({std::make_unique_for_overwrite<char[]>(max_message_), max_message_});
  for (std::size_t bytes = std::size_t{1} << kSmallClassMin; bytes < kSpareMin; bytes *= 2)
    for (int n = 0; n < 64; ++n) give_back({std::make_unique_for_overwrite<char[]>(bytes), bytes});
  max_unexpected_ = options.max_unexpected_bytes;
  recover_ = options.recover;
  heartbeat_seconds_ = options.heartbeat_seconds;
  // The run's token: run.cfg's, else one rank 0 draws; MPI (trusted) gives rank 0's to all,
  // and every rank that read one checks it is the same (one run.cfg for the whole run).
  unsigned char own[16] = {};
  bool given = false;
  int bad_format = 0;
  try {
    given = parse_token(options.token, own);
  } catch (const TransportError&) {
    bad_format = 1;  // every rank must still reach the collectives below
  }
  if (given)
    std::memcpy(token_, own, sizeof token_);
  else if (rank_ == 0 && getrandom(token_, sizeof token_, 0) != static_cast<ssize_t>(sizeof token_))
    sys_error("getrandom");
  MPI_Bcast(token_, sizeof token_, MPI_BYTE, 0, comm);
  const int mine_differs = bad_format ? 2 : (given && !same_token(own, token_)) ? 1 : 0;
  int differs = 0;
  MPI_Allreduce(&mine_differs, &differs, 1, MPI_INT, MPI_MAX, comm);
  if (differs == 2) throw TransportError("tcp: tcp_token must be 32 hexadecimal digits");
  if (differs == 1) throw TransportError("tcp: ranks read different tcp_token values: not one run.cfg for the run");

  std::string address = listen_address(comm, options);
  sockaddr_in self{};
  self.sin_family = AF_INET;
  if (inet_pton(AF_INET, address.c_str(), &self.sin_addr) != 1)
    throw TransportError("tcp: '" + address + "' is not an IPv4 address");
  FdGuard listener{check_sys(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket")};
  set_buffers(listener.fd, options.socket_buffer_bytes);  // accepted sockets inherit them
  // Bound to this address only (never INADDR_ANY): nothing listens on other interfaces.
  check_sys(bind(listener.fd, reinterpret_cast<sockaddr*>(&self), sizeof self), "bind to " + address);
  // A long backlog: strangers queueing up must not crowd out the ranks still to connect.
  check_sys(listen(listener.fd, std::max(size_, SOMAXCONN)), "listen");
  socklen_t len = sizeof self;
  check_sys(getsockname(listener.fd, reinterpret_cast<sockaddr*>(&self), &len), "getsockname");
  Endpoint mine{};
  mine.addr = self.sin_addr.s_addr;
  mine.port = self.sin_port;
  std::vector<Endpoint> all(static_cast<std::size_t>(size_));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm);

  if (options.connect_delay_seconds > 0 && rank_ > 0)  // test hook: rank 0 listens meanwhile
    poll(nullptr, 0, static_cast<int>(options.connect_delay_seconds * 1e3));
  // Connect to every lower rank: the kernel completes the handshake before that rank calls
  // accept(), so connecting all first and accepting afterwards cannot deadlock.
  for (int lane = 0; lane < lanes_; ++lane) {
    for (int peer = 0; peer < rank_; ++peer) {
      int fd = check_sys(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket");
      conns_[slot(peer, lane)].fd = fd;
      set_buffers(fd, options.socket_buffer_bytes);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_addr.s_addr = all[peer].addr;
      to.sin_port = all[peer].port;
      std::string where =
          "rank " + std::to_string(peer) + " at " + ip_text(to.sin_addr) + ":" + std::to_string(ntohs(to.sin_port));
      check_sys(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), "connect to " + where);
      Greeting hello{kMagic, static_cast<std::uint32_t>(rank_) | static_cast<std::uint32_t>(lane) << kLaneShift, {}};
      std::memcpy(hello.token, token_, sizeof token_);
      if (::send(fd, &hello, sizeof hello, MSG_NOSIGNAL) != sizeof hello) sys_error("greeting " + where);
    }
  }
  accept_ranks(listener.fd, options);

  epoll_fd_ = check_sys(epoll_create1(EPOLL_CLOEXEC), "epoll_create1");
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    Conn& c = conns_[i];
    c.peer = static_cast<int>(i % static_cast<std::size_t>(size_));
    c.index = static_cast<int>(i);
    if (c.peer == rank_) continue;
    int one = 1;
    check_sys(setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), "setsockopt TCP_NODELAY");
    if (lanes_ == 2 && i < static_cast<std::size_t>(size_) && options.control_dscp > 0) {
      const int tos = options.control_dscp << 2;  // DSCP is the upper six bits of the TOS byte
      check_sys(setsockopt(c.fd, IPPROTO_IP, IP_TOS, &tos, sizeof tos), "setsockopt IP_TOS");
    }
    check_sys(fcntl(c.fd, F_SETFL, check_sys(fcntl(c.fd, F_GETFL), "fcntl") | O_NONBLOCK), "fcntl");
    c.stage = std::make_unique_for_overwrite<char[]>(kStageBytes);
    set_events(c);
  }
  t0_ = std::chrono::steady_clock::now();
  for (Conn& c : conns_) c.last_sent = 0;
  for (Peer& p : peers_) p.last_heard = 0;
  next_heartbeat_ = heartbeat_seconds_ / 3;
}

// Watches a connection for what it needs now: input unless reading is paused, output while
// data is queued. A paused connection with nothing to send leaves epoll altogether, so a
// peer that hangs up meanwhile is not reported again and again.
void TcpTransport::set_events(Conn& c) {
  const std::uint32_t want = (c.paused ? 0u : static_cast<std::uint32_t>(EPOLLIN)) | (c.want_out ? EPOLLOUT : 0u);
  if (want == c.events) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u32 = static_cast<std::uint32_t>(c.index);
  const int op = want == 0 ? EPOLL_CTL_DEL : c.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  check_sys(epoll_ctl(epoll_fd_, op, c.fd, &ev), "epoll_ctl");
  c.events = want;
}

void TcpTransport::resume_paused() {
  if (paused_ == 0) return;
  paused_ = 0;
  for (Conn& c : conns_)
    if (c.paused) {
      c.paused = false;
      set_events(c);
      resume_.push_back(c.index);  // its staged header is looked at again in progress()
    }
}

void TcpTransport::refused(const std::string& from, const std::string& why) {
  ++refusals_;
  if (refusals_ <= kRefusalsLogged)
    std::fprintf(stderr, "tcp rank %d: refused a connection from %s: %s%s\n", rank_, from.c_str(), why.c_str(),
                 refusals_ == kRefusalsLogged ? " (further refusals are not logged)" : "");
}

// Accepts every higher rank (a connection per lane). A connection names its rank and lane and shows the run's token in
// its first bytes; one that does not within options.greeting_seconds, or shows anything else, is closed and logged, and
// waiting goes on: a stranger on the network (a port scan, a stale rank of another run, a slow-loris peer) neither
// joins the run nor stops it.
void TcpTransport::accept_ranks(int listener, const TcpOptions& options) {
  using Clock = std::chrono::steady_clock;
  auto after = [](double seconds) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  };
  struct Unidentified {
    int fd;
    std::string from;
    Clock::time_point deadline;
    Greeting greeting;
    std::size_t have;
  };
  std::vector<Unidentified> waiting;
  auto drop = [&](std::size_t i, const std::string& why) {
    refused(waiting[i].from, why);
    close(waiting[i].fd);
    waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
  };
  const Clock::time_point give_up = after(kAcceptSeconds);
  int missing = (size_ - rank_ - 1) * lanes_;
  std::vector<pollfd> fds;
  try {
    while (missing > 0) {
      Clock::time_point next = give_up;
      for (const Unidentified& u : waiting) next = std::min(next, u.deadline);
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
      fds.assign(1, {listener, POLLIN, 0});
      for (const Unidentified& u : waiting) fds.push_back({u.fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(ms, 0, 60000))) < 0 && errno != EINTR)
        sys_error("poll");
      // Greetings first (fds[1..] are waiting[0..], which the loop below may shorten).
      for (std::size_t i = waiting.size(); i-- > 0;) {
        Unidentified& u = waiting[i];
        if (fds[i + 1].revents) {
          ssize_t n = ::recv(u.fd, reinterpret_cast<char*>(&u.greeting) + u.have, sizeof(Greeting) - u.have, 0);
          if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            drop(i, n == 0 ? "closed before greeting" : std::strerror(errno));
            continue;
          }
          if (n > 0) u.have += static_cast<std::size_t>(n);
        }
        if (u.have == sizeof(Greeting)) {
          const Greeting& g = u.greeting;
          const std::uint32_t claimed = g.who & ((1u << kLaneShift) - 1), lane = g.who >> kLaneShift;
          const auto peer = static_cast<int>(claimed);
          if (g.magic != kMagic)
            drop(i, "not a daqnet-evb greeting");
          else if (!same_token(g.token, token_))
            drop(i, "wrong token (not this run's run.cfg)");
          else if (claimed >= static_cast<std::uint32_t>(size_) || peer <= rank_)
            drop(i, "claims rank " + std::to_string(claimed) + ", not a higher rank of this run");
          else if (lane >= static_cast<std::uint32_t>(lanes_))
            drop(i, "claims lane " + std::to_string(lane) + ", not one of this run (tcp_control_connection differs?)");
          else if (conns_[slot(peer, static_cast<int>(lane))].fd >= 0)
            drop(i, "claims rank " + std::to_string(peer) + ", already connected");
          else {
            conns_[slot(peer, static_cast<int>(lane))].fd = u.fd;
            waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
            --missing;
          }
        } else if (Clock::now() >= u.deadline) {
          char within[32];
          std::snprintf(within, sizeof within, "%g", options.greeting_seconds);
          drop(i, std::string("no greeting within ") + within + " s");
        }
      }
      if (fds[0].revents & POLLIN) {
        int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
          if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) sys_error("accept");
        } else {
          // Full: the oldest goes, not the newcomer, which may be a rank (ranks greet at once,
          // so a flood of silent strangers cannot keep one out).
          if (waiting.size() >= kMaxUnidentified) drop(0, "too many connections still to greet");
          waiting.push_back({fd, peer_text(fd), after(options.greeting_seconds), {}, 0});
        }
      }
      if (missing > 0 && Clock::now() >= give_up) {
        std::string who;
        for (int peer = rank_ + 1; peer < size_; ++peer)
          if (conns_[slot(peer, 0)].fd < 0 || conns_[slot(peer, lanes_ - 1)].fd < 0)
            who += (who.empty() ? "" : ", ") + std::to_string(peer);
        throw TransportError("tcp: rank " + std::to_string(rank_) + " timed out waiting for connections from rank(s) " +
                             who);
      }
    }
  } catch (...) {
    for (const Unidentified& u : waiting) close(u.fd);
    throw;
  }
  while (!waiting.empty()) drop(waiting.size() - 1, "every rank had connected");
}

void TcpTransport::check_peer(int peer, const char* what) const {
  if (peer < 0 || peer >= size_)
    throw TransportError(std::string("tcp: ") + what + " with rank " + std::to_string(peer) + ", not in 0.." +
                         std::to_string(size_ - 1));
}

void TcpTransport::too_long(int peer, Tag tag, std::size_t bytes, std::size_t capacity) const {
  throw TransportError("tcp: message from rank " + std::to_string(peer) + " to rank " + std::to_string(rank_) +
                       " with tag " + std::to_string(tag) + " has " + std::to_string(bytes) +
                       " bytes, the posted receive only " + std::to_string(capacity));
}

void TcpTransport::lost(Conn& c, const std::string& reason) {
  if (!recover_) throw TransportError("tcp: connection to rank " + std::to_string(c.peer) + " lost: " + reason);
  mark_dead(c.peer, reason, !peers_[c.peer].said_goodbye);
}

double TcpTransport::clock() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

// Recovery: the peer is gone. Its connections close; the caller hears of it first (peer_lost,
// unless the peer had said goodbye), then of every operation with it still under way (failed).
void TcpTransport::mark_dead(int peer, const std::string& reason, bool report) {
  Peer& p = peers_[peer];
  if (p.dead) return;
  p.dead = true;
  p.silence = p.last_heard > 0 ? clock() - p.last_heard : 0;
  ++lost_peers_;
  if (report) {
    std::fprintf(stderr, "tcp rank %d: rank %d lost: %s; going on without it\n", rank_, peer, reason.c_str());
    ++active_;  // returned by progress() like an operation
    ready_.push_back({Completion::Kind::peer_lost, 0, peer, 0, 0});
  }
  for (int lane = 0; lane < lanes_; ++lane) close_conn(conns_[slot(peer, lane)]);
  for (auto& [tag, queue] : posted_)
    for (auto it = queue.begin(); it != queue.end();)
      if (it->peer == peer) {
        ready_.push_back({Completion::Kind::recv, it->cookie, peer, tag, 0, false, nullptr, 0, true});
        it = queue.erase(it);
      } else {
        ++it;
      }
}

// Closes one connection of a dead peer; its operations under way complete as failed.
void TcpTransport::close_conn(Conn& c) {
  if (c.events != 0) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  c.events = 0;
  if (c.fd >= 0) close(std::exchange(c.fd, -1));
  if (c.paused) {
    c.paused = false;
    --paused_;
  }
  c.want_out = false;
  for (const SendOp& op : c.sendq)  // control messages (heartbeats, goodbye) are no operations
    if (op.header.tag < kGoodbyeTag)
      ready_.push_back({Completion::Kind::send, op.cookie, c.peer, op.header.tag, 0, false, nullptr, 0, true});
  c.sendq.clear();
  if (c.sink == Sink::recv) {
    ready_.push_back({Completion::Kind::recv, c.target.cookie, c.peer, c.header.tag, 0, false, nullptr, 0, true});
  } else if (c.sink == Sink::heap) {  // half a message that nobody asked for yet: dropped
    c.unexpected_bytes -= c.heap->bytes;
    give_back(std::move(c.heap->buffer));
    unexpected_.erase(c.heap);
  }
  c.sink = Sink::none;
  c.left = 0;
  c.discard.reset();
  c.stage_pos = c.stage_end = 0;
}

// Recovery: a heartbeat on every control connection with nothing sent for a third of the
// timeout, and a peer heard of (on any connection) for no longer than the timeout is dead (a
// peer with a paused connection, whose reading this rank stopped itself, is not timed).
void TcpTransport::heartbeat() {
  const double now = clock();
  if (now < next_heartbeat_) return;
  next_heartbeat_ = now + heartbeat_seconds_ / 6;
  for (int peer = 0; peer < size_; ++peer) {
    Peer& p = peers_[peer];
    if (peer == rank_ || p.dead) continue;
    bool paused = false;
    for (int lane = 0; lane < lanes_; ++lane) paused = paused || conns_[slot(peer, lane)].paused;
    // Timed from start_timing (every rank ready) or once heard of: a rank still setting up
    // (allocating its buffers) sends nothing yet.
    if (!p.said_goodbye && !paused && p.last_heard > 0 && now - p.last_heard > heartbeat_seconds_) {
      char text[64];
      std::snprintf(text, sizeof text, "silent for %.3g s (heartbeat_seconds)", now - p.last_heard);
      mark_dead(peer, text, true);
      continue;
    }
    Conn& c = conns_[slot(peer, kControl)];
    if (c.sendq.empty() && now - c.last_sent >= heartbeat_seconds_ / 3) {
      c.sendq.push_back({{kMagic, kHeartbeatTag, 0}, nullptr, 0, 0});
      flush(c);
    }
  }
}

void TcpTransport::start_timing() {
  const double now = clock();
  for (Peer& p : peers_)
    if (!p.dead) p.last_heard = now;
  next_heartbeat_ = now;  // tell every peer at once
}

// On every connection, after what is queued on it, so no data of this rank is overtaken.
void TcpTransport::say_goodbye() {
  if (!recover_) return;
  for (Conn& c : conns_) {
    if (c.peer == rank_ || peers_[c.peer].dead) continue;
    c.sendq.push_back({{kMagic, kGoodbyeTag, 0}, nullptr, 0, 0});
    if (c.sendq.size() == 1) flush(c);
  }
}

std::optional<TcpTransport::RecvOp> TcpTransport::match_posted(int peer, Tag tag) {
  auto found = posted_.find(tag);
  if (found == posted_.end()) return std::nullopt;
  auto& queue = found->second;
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    if (it->peer != peer && it->peer != kAnySource) continue;
    RecvOp op = *it;
    queue.erase(it);
    return op;
  }
  return std::nullopt;
}

TcpTransport::Buffer TcpTransport::take_buffer(std::size_t bytes) {
  if (bytes < kSpareMin) {
    auto k = static_cast<std::size_t>(small_class(bytes));
    if (k < small_spare_.size() && !small_spare_[k].empty()) {
      Buffer buffer = std::move(small_spare_[k].back());
      small_spare_[k].pop_back();
      small_spare_bytes_ -= buffer.capacity;
      return buffer;
    }
    std::size_t capacity = std::size_t{1} << (k + kSmallClassMin);
    return {std::make_unique_for_overwrite<char[]>(capacity), capacity};
  }
  auto best = spare_.end();  // the smallest spare buffer that fits
  for (auto it = spare_.begin(); bytes >= kSpareMin && it != spare_.end(); ++it)
    if (it->capacity >= bytes && (best == spare_.end() || it->capacity < best->capacity)) best = it;
  if (best == spare_.end()) return {std::make_unique_for_overwrite<char[]>(bytes), bytes};
  std::swap(*best, spare_.back());
  Buffer buffer = std::move(spare_.back());
  spare_.pop_back();
  spare_bytes_ -= buffer.capacity;
  return buffer;
}

void TcpTransport::give_back(Buffer buffer) {
  if (buffer.capacity < kSpareMin) {
    if (small_spare_bytes_ + buffer.capacity > kSmallSpareBytes) return;
    auto k = static_cast<std::size_t>(small_class(buffer.capacity));
    small_spare_bytes_ += buffer.capacity;
    small_spare_[k].push_back(std::move(buffer));
    return;
  }
  if (buffer.capacity < kSpareMin || spare_bytes_ + buffer.capacity > kSpareBytes) return;
  spare_bytes_ += buffer.capacity;
  spare_.push_back(std::move(buffer));
}

void TcpTransport::send(int peer, Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie) {
  check_peer(peer, "send");
  const char* data = static_cast<const char*>(buf);
  if (peer == rank_) {  // delivered in memory as if it had arrived
    std::optional<RecvOp> op = match_posted(peer, tag);
    if (op && bytes > op->capacity) too_long(peer, tag, bytes, op->capacity);
    active_ += 1;
    ready_.push_back({Completion::Kind::send, cookie, peer, tag, bytes});
    if (op) {
      if (bytes > 0) std::memcpy(op->buf, data, bytes);
      ready_.push_back({Completion::Kind::recv, op->cookie, peer, tag, bytes});
    } else {
      // NOLINTNEXTLINE(clang-analyzer-cplusplus.NewDeleteLeaks): Buffer's unique_ptr owns it, moved into unexpected_
      Buffer copy = take_buffer(bytes);
      if (bytes > 0) std::memcpy(copy.data.get(), data, bytes);
      unexpected_.push_back({peer, -1, tag, bytes, std::move(copy), true});
    }
    return;
  }
  Conn& c = conn(peer, tag);
  if (peers_[peer].dead) {  // recovery: the peer is gone, the send fails at once
    ++active_;
    ready_.push_back({Completion::Kind::send, cookie, peer, tag, 0, false, nullptr, 0, true});
    return;
  }
  c.sendq.push_back({{kMagic, tag, bytes}, data, 0, cookie});
  ++active_;
  if (c.sendq.size() == 1) flush(c);  // else the queue already waits for EPOLLOUT
}

void TcpTransport::recv(int peer, Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie) {
  if (peer != kAnySource) check_peer(peer, "recv");
  char* dest = static_cast<char*>(buf);
  for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
    if (it->tag != tag || (peer != kAnySource && peer != it->peer)) continue;
    if (it->bytes > capacity) too_long(it->peer, tag, it->bytes, capacity);
    ++active_;
    if (it->complete) {
      if (it->bytes > 0) std::memcpy(dest, it->buffer.data.get(), it->bytes);
      ready_.push_back({Completion::Kind::recv, cookie, it->peer, tag, it->bytes});
    } else {
      // Still arriving: copy what is there and let the rest go straight to buf.
      Conn& c = conns_[static_cast<std::size_t>(it->conn)];
      std::size_t got = it->bytes - c.left;
      std::memcpy(dest, it->buffer.data.get(), got);
      c.sink = Sink::recv;
      c.target = {it->peer, dest, capacity, cookie};
      c.dest = dest + got;
    }
    if (it->peer != rank_) conns_[static_cast<std::size_t>(it->conn)].unexpected_bytes -= it->bytes;
    give_back(std::move(it->buffer));
    unexpected_.erase(it);
    resume_paused();
    return;
  }
  ++active_;
  if (peer != kAnySource && peer != rank_ && peers_[peer].dead) {  // recovery: nothing will come
    ready_.push_back({Completion::Kind::recv, cookie, peer, tag, 0, false, nullptr, 0, true});
    return;
  }
  posted_[tag].push_back({peer, dest, capacity, cookie});
  resume_paused();  // the receive may match a paused connection's next message
}

// Starts the payload of the header in c.header; false (nothing changed) when it would be an
// unexpected message beyond the peer's cap, to be looked at again once receives are posted.
bool TcpTransport::start_payload(Conn& c) {
  const Header& h = c.header;
  if (h.magic != kMagic) {
    lost(c, "bad message header, the byte stream is out of step");
    return true;  // only with recovery: the connection is closed
  }
  // Checked before anything is allocated or matched: the length comes from the network.
  if (h.bytes > max_message_) {
    lost(c, "it announced a message of " + std::to_string(h.bytes) + " bytes, more than the longest of this run (" +
                std::to_string(max_message_) + ")");
    return true;
  }
  if (h.tag >= kGoodbyeTag && h.bytes == 0) {  // recovery's control messages
    if (h.tag == kGoodbyeTag) peers_[c.peer].said_goodbye = true;
    c.sink = Sink::none;
    c.left = 0;
    return true;
  }
  if (std::optional<RecvOp> op = match_posted(c.peer, h.tag)) {
    if (h.bytes > op->capacity) too_long(c.peer, h.tag, h.bytes, op->capacity);
    c.sink = Sink::recv;
    c.target = *op;
    c.dest = op->buf;
  } else {
    if (c.unexpected_bytes > 0 && c.unexpected_bytes + h.bytes > max_unexpected_) return false;
    c.unexpected_bytes += h.bytes;
    unexpected_.push_back({c.peer, c.index, h.tag, h.bytes, take_buffer(h.bytes), false});
    c.sink = Sink::heap;
    c.heap = std::prev(unexpected_.end());
    c.dest = c.heap->buffer.data.get();
  }
  c.left = h.bytes;
  if (c.left == 0) finish_payload(c);
  return true;
}

void TcpTransport::finish_payload(Conn& c) {
  if (c.sink == Sink::recv)
    ready_.push_back({Completion::Kind::recv, c.target.cookie, c.peer, c.header.tag, c.header.bytes});
  else if (c.sink == Sink::heap)
    c.heap->complete = true;
  c.discard.reset();
  c.sink = Sink::none;
}

// Reads until the socket is drained (or the budget is spent). c.left > 0 means a payload is
// in progress; otherwise the next bytes are a header.
void TcpTransport::read_from(Conn& c) {
  if (c.paused || peers_[c.peer].dead) return;
  std::size_t budget = kReadBudget;
  for (;;) {
    // Consume the staged bytes; stops with the stage empty or holding a partial header.
    while (!peers_[c.peer].dead && c.stage_pos < c.stage_end) {
      std::size_t have = c.stage_end - c.stage_pos;
      if (c.left > 0) {
        std::size_t n = std::min(have, c.left);
        std::memcpy(c.dest, c.stage.get() + c.stage_pos, n);
        c.stage_pos += n;
        c.dest += n;
        c.left -= n;
        if (c.left == 0) finish_payload(c);
      } else if (have >= sizeof(Header)) {
        std::memcpy(&c.header, c.stage.get() + c.stage_pos, sizeof(Header));
        if (!start_payload(c)) {  // the header stays staged; TCP holds back the rest
          c.paused = true;
          ++paused_;
          set_events(c);
          return;
        }
        if (peers_[c.peer].dead) return;
        c.stage_pos += sizeof(Header);
      } else {
        break;
      }
    }
    if (budget == 0 || peers_[c.peer].dead) return;
    bool direct = c.left > 0;
    std::size_t asked;
    ssize_t n;
    if (direct) {  // the stage is empty: the payload goes straight to its destination
      asked = std::min(c.left, budget);
      n = ::recv(c.fd, c.dest, asked, 0);
    } else {
      std::memmove(c.stage.get(), c.stage.get() + c.stage_pos, c.stage_end - c.stage_pos);
      c.stage_end -= c.stage_pos;
      c.stage_pos = 0;
      asked = kStageBytes - c.stage_end;
      n = ::recv(c.fd, c.stage.get() + c.stage_end, asked, 0);
    }
    if (n == 0) return lost(c, "connection closed by the peer");
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      return lost(c, std::strerror(errno));
    }
    peers_[c.peer].last_heard = clock();
    auto got = static_cast<std::size_t>(n);
    budget -= std::min(budget, got);
    if (direct) {
      c.dest += got;
      c.left -= got;
      if (c.left == 0) finish_payload(c);
    } else {
      c.stage_end += got;
    }
    // A short read drained the socket: consume the stage, skip the recv() that would
    // only say EAGAIN (epoll reports anything arriving meanwhile).
    if (got < asked) budget = 0;
  }
}

// Writes queued messages, many per sendmsg, until the queue is empty or the socket is full.
void TcpTransport::flush(Conn& c) {
  while (!peers_[c.peer].dead && !c.sendq.empty()) {
    iovec iov[kMaxIov];
    int n = 0;
    std::size_t asked = 0;
    for (auto it = c.sendq.begin(); it != c.sendq.end() && n + 2 <= kMaxIov; ++it) {
      std::size_t done = it->done;
      if (done < sizeof(Header)) {
        iov[n++] = {reinterpret_cast<char*>(&it->header) + done, sizeof(Header) - done};
        done = sizeof(Header);
      }
      std::size_t offset = done - sizeof(Header);
      if (offset < it->header.bytes) iov[n++] = {const_cast<char*>(it->buf) + offset, it->header.bytes - offset};
    }
    for (int i = 0; i < n; ++i) asked += iov[i].iov_len;
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(n);
    ssize_t w = sendmsg(c.fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return lost(c, std::strerror(errno));
    }
    if (w > 0) c.last_sent = clock();
    for (auto left = static_cast<std::size_t>(w); left > 0;) {
      SendOp& op = c.sendq.front();
      std::size_t total = sizeof(Header) + op.header.bytes;
      std::size_t take = std::min(left, total - op.done);
      op.done += take;
      left -= take;
      if (op.done < total) break;
      if (op.header.tag < kGoodbyeTag)  // a control message has no completion
        ready_.push_back({Completion::Kind::send, op.cookie, c.peer, op.header.tag, op.header.bytes});
      c.sendq.pop_front();
    }
    if (static_cast<std::size_t>(w) < asked) break;  // the socket buffer is full
  }
  if (peers_[c.peer].dead) return;
  c.want_out = !c.sendq.empty();
  set_events(c);
}

int TcpTransport::wait_events(epoll_event* events, int max, double timeout_seconds) {
  if (timeout_seconds > 0 && have_pwait2_) {
    double whole = std::floor(timeout_seconds);
    timespec ts{static_cast<time_t>(whole), static_cast<long>((timeout_seconds - whole) * 1e9)};
    int n = epoll_pwait2(epoll_fd_, events, max, &ts, nullptr);
    if (n >= 0 || (errno != ENOSYS && errno != EPERM)) return n;
    // Kernel before 5.11 (or a seccomp filter that predates the call): whole
    // milliseconds, rounded down.
    have_pwait2_ = false;
  }
  int ms = static_cast<int>(std::min(timeout_seconds * 1e3, double{INT_MAX}));
  if (timeout_seconds > 0 && ms == 0) sched_yield();
  return epoll_wait(epoll_fd_, events, max, std::max(ms, 0));
}

void TcpTransport::handle_events(double timeout_seconds) {
  epoll_event events[kMaxEvents];
  int n = wait_events(events, kMaxEvents, timeout_seconds);
  if (n < 0 && errno != EINTR) sys_error("epoll_wait");
  for (int i = 0; i < n; ++i) {
    Conn& c = conns_[events[i].data.u32];
    if (peers_[c.peer].dead) continue;  // closed by an earlier event of this batch
    if (events[i].events & EPOLLOUT) flush(c);
    if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) read_from(c);
  }
}

void TcpTransport::progress(std::vector<Completion>& out, double timeout_seconds) {
  for (int index : resume_) read_from(conns_[static_cast<std::size_t>(index)]);  // read_from never adds to resume_
  resume_.clear();
  handle_events(0);
  if (recover_) heartbeat();
  if (ready_.empty() && timeout_seconds > 0) {
    if (wait_ == WaitMode::yield)
      sched_yield();
    else if (wait_ == WaitMode::sleep)
      handle_events(timeout_seconds);  // the kernel wakes us when a socket is ready
  }
  out.insert(out.end(), ready_.begin(), ready_.end());
  active_ -= ready_.size();
  ready_.clear();
}

std::size_t TcpTransport::unexpected_bytes() const {
  std::size_t total = 0;
  for (const Conn& c : conns_) total += c.unexpected_bytes;
  return total;
}

void TcpTransport::send_raw_for_test(int peer, const void* data, std::size_t bytes) {
  check_peer(peer, "send_raw_for_test");
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::send(conns_[slot(peer, kControl)].fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) sys_error("send_raw_for_test");
    if (n > 0) {
      p += n;
      bytes -= static_cast<std::size_t>(n);
    }
  }
}

void TcpTransport::cancel_receives() {
  for (auto& [tag, queue] : posted_) active_ -= queue.size();
  posted_.clear();
  for (Conn& c : conns_) {
    if (c.sink != Sink::recv) continue;
    // A receive being filled: the rest of its message is read and dropped.
    c.discard = std::make_unique_for_overwrite<char[]>(c.left);
    c.dest = c.discard.get();
    c.sink = Sink::discard;
    --active_;
  }
}

}  // namespace daqnet::evb
