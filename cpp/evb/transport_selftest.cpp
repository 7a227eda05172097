// Checks a transport against the semantics of transport.hpp, with 2 to 4 ranks:
//   mpiexec -n 3 daqnet-transport-selftest mpi|tcp|libfabric [busy|yield|sleep]
//       [--address=IP] [--interface=NAME] [--buffer=BYTES] [--provider=P] [--domain=D] [loop]
// One line per check on rank 0, "selftest OK" at the end; any failure aborts the job with a
// message naming the rank and the check. "loop" keeps the bandwidth phase going for 30 s
// (to kill a rank by hand and watch the others notice).
#include <mpi.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "evb/mpi_transport.hpp"
#include "evb/shm_names.hpp"
#include "evb/tcp_transport.hpp"
#ifdef DAQNET_HAVE_LIBFABRIC
#include "evb/libfabric_transport.hpp"
#endif

namespace {

using namespace daqnet::evb;
using Bytes = std::vector<unsigned char>;
using Kind = Completion::Kind;

// A check that takes longer (or a bandwidth phase that stalls this long) fails.
constexpr double kCheckSeconds = 20.0;
constexpr std::size_t kMiB = std::size_t{1} << 20;

std::string g_check = "setup";  // the running check, for failure messages
int g_rank = 0;

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "rank %d: check '%s' FAILED: %s\n", g_rank, g_check.c_str(), why.c_str());
  std::fflush(stderr);
  unlink_mpi_shm_segments();  // MPI_Abort ends every rank before MPI_Finalize would
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void expect(bool ok, const std::string& why) {
  if (!ok) fail(why);
}

unsigned char pattern(std::uint64_t seed, std::size_t i) {
  return static_cast<unsigned char>((i * 131 + (i >> 11) + seed * 7919) & 0xff);
}

Bytes make(std::uint64_t seed, std::size_t bytes) {
  Bytes b(bytes);
  for (std::size_t i = 0; i < bytes; ++i) b[i] = pattern(seed, i);
  return b;
}

bool intact(const Bytes& b, std::uint64_t seed, std::size_t bytes) {
  if (b.size() < bytes) return false;
  for (std::size_t i = 0; i < bytes; ++i)
    if (b[i] != pattern(seed, i)) return false;
  return true;
}

// Waits for a non-blocking collective without spinning: MPICH's blocking collectives poll,
// and an idle rank polling on a 2-core machine halves the bandwidth of the ranks measured.
void wait_gently(MPI_Request& request) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    timespec pause{0, 200000};
    nanosleep(&pause, nullptr);
  }
}

void barrier(MPI_Comm comm) {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  wait_gently(request);
}

struct Test {
  Transport& t;
  MPI_Comm comm;  // our own communicator for barriers, apart from the transport's traffic
  int rank, size, left, right;
  std::vector<Completion> done;

  void begin(const std::string& name) {
    g_check = name;
    done.clear();
  }
  // Progress until n completions (n receives if only_recvs) have been collected since
  // begin(); without only_recvs n must be all of them.
  void collect(std::size_t n, bool only_recvs = false) {
    auto is_recv = [](const Completion& c) { return c.kind == Kind::recv; };
    auto count = [&] {
      return only_recvs ? std::count_if(done.begin(), done.end(), is_recv) : std::ptrdiff_t(done.size());
    };
    double start = MPI_Wtime();
    while (count() < std::ptrdiff_t(n)) {
      t.progress(done, 0.01);
      if (MPI_Wtime() - start > kCheckSeconds)
        fail("timed out after " + std::to_string(int(kCheckSeconds)) + " s with " + std::to_string(done.size()) +
             " of " + std::to_string(n) + " completions (pending " + std::to_string(t.pending()) + ")");
    }
    expect(only_recvs || done.size() == n, "more completions than operations");
  }
  const Completion& find(Kind kind, std::uint64_t cookie) {
    for (const Completion& c : done)
      if (c.kind == kind && c.cookie == cookie) return c;
    fail("no completion for " + std::string(kind == Kind::send ? "send" : "recv") + " cookie " +
         std::to_string(cookie));
  }
  void expect_completion(Kind kind, std::uint64_t cookie, int peer, Tag tag, std::size_t bytes) {
    const Completion& c = find(kind, cookie);
    expect(c.peer == peer && c.tag == tag && c.bytes == bytes,
           "cookie " + std::to_string(cookie) + ": expected peer " + std::to_string(peer) + " tag " +
               std::to_string(tag) + " bytes " + std::to_string(bytes) + ", got " + std::to_string(c.peer) + " " +
               std::to_string(c.tag) + " " + std::to_string(c.bytes));
  }
  void end() {
    expect(t.pending() == 0, std::to_string(t.pending()) + " operations left pending");
    barrier(comm);
    if (rank == 0) std::printf("ok  %s\n", g_check.c_str());
    std::fflush(stdout);
  }

  // (1) A message to the right neighbour and one to the left, on different tags.
  void ring() {
    begin("ring exchange");
    Bytes from_left(4096), from_right(4096);
    Bytes to_right = make(rank * 10 + 1, 100 + rank);
    Bytes to_left = make(rank * 10 + 2, 200 + rank);
    t.recv(left, 1, from_left.data(), from_left.size(), 1);
    t.recv(right, 11, from_right.data(), from_right.size(), 2);
    t.send(right, 1, to_right.data(), to_right.size(), 3);
    t.send(left, 11, to_left.data(), to_left.size(), 4);
    collect(4);
    expect_completion(Kind::recv, 1, left, 1, 100 + left);
    expect_completion(Kind::recv, 2, right, 11, 200 + right);
    expect_completion(Kind::send, 3, right, 1, 100 + rank);
    expect_completion(Kind::send, 4, left, 11, 200 + rank);
    expect(intact(from_left, left * 10 + 1, 100 + left), "data from the left corrupted");
    expect(intact(from_right, right * 10 + 2, 200 + right), "data from the right corrupted");
    end();
  }

  // (2) Receives from kAnySource report the actual source.
  void any_source() {
    begin("kAnySource receive reports the source");
    std::vector<Bytes> in(size, Bytes(64));
    Bytes out = make(rank, 4 + rank);
    for (int k = 0; k < size - 1; ++k) t.recv(kAnySource, 2, in[k].data(), 64, 100 + k);
    for (int p = 0; p < size; ++p)
      if (p != rank) t.send(p, 2, out.data(), out.size(), 200 + p);
    collect(2 * static_cast<std::size_t>(size - 1));
    std::set<int> sources;
    for (const Completion& c : done) {
      if (c.kind != Kind::recv) continue;
      std::string source = std::to_string(c.peer);
      expect(c.peer >= 0 && c.peer < size && c.peer != rank, "bad source " + source);
      expect(c.bytes == 4 + static_cast<std::size_t>(c.peer), "wrong size from " + source);
      expect(intact(in[c.cookie - 100], c.peer, c.bytes), "data does not match " + source);
      sources.insert(c.peer);
    }
    expect(static_cast<int>(sources.size()) == size - 1, "a source was reported twice");
    end();
  }

  // (3) Messages sent before their receives are posted, one large enough to be caught
  // while still arriving.
  void unexpected() {
    begin("unexpected messages");
    const std::size_t sizes[] = {10, 1000, 0, 4 * kMiB};
    std::vector<Bytes> out, in;
    for (int k = 0; k < 4; ++k) {
      out.push_back(make(rank * 100 + k, sizes[k]));
      in.emplace_back(sizes[k] + 8);
      t.send(right, k == 3 ? 33 : 3, out[k].data(), sizes[k], 10 + k);
    }
    barrier(comm);  // the small messages have arrived or are on the way
    t.progress(done, 0);
    for (int k = 0; k < 4; ++k) t.recv(left, k == 3 ? 33 : 3, in[k].data(), in[k].size(), 20 + k);
    collect(8);
    for (int k = 0; k < 4; ++k) {
      expect_completion(Kind::send, 10 + k, right, k == 3 ? 33 : 3, sizes[k]);
      expect_completion(Kind::recv, 20 + k, left, k == 3 ? 33 : 3, sizes[k]);
      expect(intact(in[k], left * 100 + k, sizes[k]), "message " + std::to_string(k) + " corrupted");
    }
    end();
  }

  // (3b) Messages from every peer in before receives from kAnySource are posted, as a rank
  // that leaves the start barrier last finds the event manager's first commands. Under
  // MPICH's UCX netmod an MPI_Irecv(MPI_ANY_SOURCE) never completed for such a message from
  // another node (MPIR_CVAR_NOLOCAL=1 makes every peer one).
  void unexpected_any_source() {
    begin("unexpected messages received from kAnySource");
    Bytes out = make(rank + 7, 8 + rank);
    for (int p = 0; p < size; ++p)
      if (p != rank) t.send(p, 5, out.data(), out.size(), 300 + p);
    barrier(comm);  // every message has arrived or is on the way
    t.progress(done, 0);
    std::vector<Bytes> in(size, Bytes(64));
    for (int k = 0; k < size - 1; ++k) t.recv(kAnySource, 5, in[k].data(), 64, 400 + k);
    collect(2 * static_cast<std::size_t>(size - 1));
    std::set<int> sources;
    for (const Completion& c : done) {
      if (c.kind != Kind::recv) continue;
      expect(c.bytes == 8 + static_cast<std::size_t>(c.peer), "wrong size from " + std::to_string(c.peer));
      expect(intact(in[c.cookie - 400], c.peer + 7, c.bytes), "data does not match " + std::to_string(c.peer));
      sources.insert(c.peer);
    }
    expect(static_cast<int>(sources.size()) == size - 1, "a source was reported twice");
    end();
  }

  // (4) 100 messages on one (peer, tag) arrive in order; half the receives are posted
  // before the sends, half (from kAnySource) after the first half completed.
  void non_overtaking() {
    begin("non-overtaking, 100 messages on one (peer, tag)");
    const int n = 100;
    std::vector<Bytes> out, in(n, Bytes(1024));
    auto bytes = [](int i) { return std::size_t(8 + (i * 37) % 900); };
    for (int i = 0; i < n / 2; ++i) t.recv(left, 4, in[i].data(), 1024, i);
    for (int i = 0; i < n; ++i) {
      out.push_back(make(rank * 1000 + i, bytes(i)));
      t.send(right, 4, out[i].data(), out[i].size(), 1000 + i);
    }
    collect(n / 2, true);
    for (int i = n / 2; i < n; ++i) t.recv(kAnySource, 4, in[i].data(), 1024, i);
    collect(2 * static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      expect_completion(Kind::recv, i, left, 4, bytes(i));
      expect(intact(in[i], left * 1000 + i, bytes(i)), "message " + std::to_string(i) + " out of order or corrupted");
    }
    end();
  }

  // (5) Tags match independently: B is posted first, A is sent first.
  void tags() {
    begin("tags matched independently");
    Bytes a = make(std::uint64_t{2} * rank, 300), b = make(std::uint64_t{2} * rank + 1, 500), in_a(1000), in_b(1000);
    t.recv(left, 6, in_b.data(), in_b.size(), 1);
    t.recv(left, 5, in_a.data(), in_a.size(), 2);
    t.send(right, 5, a.data(), a.size(), 3);
    t.send(right, 6, b.data(), b.size(), 4);
    collect(4);
    expect_completion(Kind::recv, 1, left, 6, 500);
    expect_completion(Kind::recv, 2, left, 5, 300);
    expect(intact(in_a, std::uint64_t{2} * left, 300) && intact(in_b, std::uint64_t{2} * left + 1, 500),
           "data corrupted");
    end();
  }

  // (6) One 8 MiB and four 1 MiB messages to and from every other rank, all in flight.
  void large() {
    begin("large messages (8 MiB + 4 x 1 MiB with every peer at once)");
    const std::size_t sizes[] = {8 * kMiB, kMiB, kMiB, kMiB, kMiB};
    std::vector<Bytes> out, in;
    std::vector<int> from;
    for (int k = 0; k < 5; ++k) out.push_back(make(rank * 10 + k, sizes[k]));
    int ops = 0;
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      for (int k = 0; k < 5; ++k) {
        in.emplace_back(sizes[k]);
        from.push_back(p);
        t.recv(p, 60 + (k > 0), in.back().data(), sizes[k], in.size() - 1);
        ++ops;
      }
    }
    for (int p = 0; p < size; ++p)
      for (int k = 0; k < 5 && p != rank; ++k, ++ops)
        t.send(p, 60 + (k > 0), out[k].data(), sizes[k], 1000 + p * 10 + k);
    collect(ops);
    for (std::size_t i = 0; i < in.size(); ++i) {
      int k = static_cast<int>(i % 5);
      expect_completion(Kind::recv, i, from[i], 60 + (k > 0), sizes[k]);
      expect(intact(in[i], from[i] * 10 + k, sizes[k]),
             "message " + std::to_string(k) + " from rank " + std::to_string(from[i]) + " corrupted");
    }
    end();
  }

  // (7) Messages to self: receive posted before, after (from kAnySource), and 1 MiB.
  void self() {
    begin("self-send");
    Bytes a = make(1, 50), b = make(2, 70), c = make(3, kMiB);
    Bytes in_a(64), in_b(128), in_c(kMiB);
    t.recv(rank, 7, in_a.data(), in_a.size(), 1);
    t.send(rank, 7, a.data(), a.size(), 2);
    t.send(rank, 71, b.data(), b.size(), 3);
    t.send(rank, 72, c.data(), c.size(), 4);
    t.progress(done, 0);
    t.recv(kAnySource, 71, in_b.data(), in_b.size(), 5);
    t.recv(rank, 72, in_c.data(), in_c.size(), 6);
    collect(6);
    expect_completion(Kind::recv, 1, rank, 7, 50);
    expect_completion(Kind::recv, 5, rank, 71, 70);
    expect_completion(Kind::recv, 6, rank, 72, kMiB);
    expect(intact(in_a, 1, 50) && intact(in_b, 2, 70) && intact(in_c, 3, kMiB), "data corrupted");
    end();
  }

  // (8) Zero-byte messages, expected and unexpected, to a neighbour and to self.
  void zero_bytes() {
    begin("zero-byte messages");
    Bytes in(16, 0xee), none(1);
    t.recv(left, 8, in.data(), in.size(), 1);
    t.send(right, 8, none.data(), 0, 2);
    t.send(right, 8, none.data(), 0, 3);
    t.send(rank, 8, none.data(), 0, 4);
    barrier(comm);
    t.recv(left, 8, in.data(), 0, 5);
    t.recv(rank, 8, in.data(), 0, 6);
    collect(6);
    expect_completion(Kind::recv, 1, left, 8, 0);
    expect_completion(Kind::recv, 5, left, 8, 0);
    expect_completion(Kind::recv, 6, rank, 8, 0);
    expect(in[0] == 0xee, "a zero-byte message wrote into the buffer");
    end();
  }

  // (+) cancel_receives() drops posted receives: a later message matches only a new one.
  void cancel() {
    begin("cancel_receives");
    Bytes in(64), out = make(rank, 40);
    t.recv(left, 10, in.data(), in.size(), 1);
    t.recv(kAnySource, 10, in.data(), in.size(), 2);
    t.cancel_receives();
    expect(t.pending() == 0, "cancelled receives still pending");
    barrier(comm);  // every rank has cancelled before anyone sends
    t.send(right, 10, out.data(), out.size(), 3);
    t.recv(left, 10, in.data(), in.size(), 4);
    collect(2);
    expect_completion(Kind::recv, 4, left, 10, 40);
    expect(intact(in, left, 40), "data corrupted");
    end();
  }

  // Ranks 0 and 1 exchange count 1 MiB messages, 8 sends in flight each way and
  // `posted` receives kept posted; returns seconds.
  double stream(std::size_t count, int posted) {
    const int sends = 8;
    int peer = 1 - rank;
    std::vector<Bytes> out(sends, make(rank, kMiB)), in(posted, Bytes(kMiB));
    std::size_t sent = 0, received = 0, send_done = 0, recv_done = 0;
    // cookie = index * 64 + slot * 2 + is_send, slot < 32
    auto post_recv = [&](int slot) {
      if (received < count)
        t.recv(peer, 9, in[slot].data(), kMiB, received++ * 64 + static_cast<std::size_t>(slot) * 2);
    };
    auto post_send = [&](int slot) {
      if (sent < count) t.send(peer, 9, out[slot].data(), kMiB, sent++ * 64 + static_cast<std::size_t>(slot) * 2 + 1);
    };
    double start = MPI_Wtime(), last = start;
    for (int slot = 0; slot < posted; ++slot) post_recv(slot);
    for (int slot = 0; slot < sends; ++slot) post_send(slot);
    std::vector<Completion> got;
    while (send_done < count || recv_done < count) {
      got.clear();
      t.progress(got, 0.01);
      double now = MPI_Wtime();
      if (!got.empty()) last = now;
      if (now - last > kCheckSeconds) fail("bandwidth phase stalled");
      for (const Completion& c : got) {
        expect(c.bytes == kMiB && c.peer == peer, "wrong completion");
        int slot = static_cast<int>(c.cookie / 2 % 32);
        if (c.kind == Kind::recv) {
          ++recv_done;
          post_recv(slot);
        } else {
          ++send_done;
          post_send(slot);
        }
      }
    }
    expect(intact(in[0], peer, kMiB), "bandwidth data corrupted");
    return MPI_Wtime() - start;
  }

  // (9) Informational: bandwidth between ranks 0 and 1, each run about `seconds` long.
  void bandwidth(double seconds, std::initializer_list<int> receives_posted) {
    for (int posted : receives_posted) {
      begin("bandwidth, " + std::to_string(posted) + " receives posted");
      double count = 0;
      if (rank < 2) count = std::max(64.0, 256 * seconds / stream(256, posted));
      MPI_Request request;
      MPI_Ibcast(&count, 1, MPI_DOUBLE, 0, comm, &request);
      wait_gently(request);
      // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker): wait_gently() completes it (MPI_Test until done)
      double elapsed = rank < 2 ? stream(static_cast<std::size_t>(count), posted) : 0;
      rusage usage{};
      getrusage(RUSAGE_SELF, &usage);
      long rss = usage.ru_maxrss / 1024, max_rss = 0;
      MPI_Reduce(&rss, &max_rss, 1, MPI_LONG, MPI_MAX, 0, comm);
      if (rank == 0)
        std::printf(
            "bandwidth %s 0<->1: %.2f Gb/s each way (%.0f x 1 MiB in %.2f s, "
            "8 sends in flight, %d receives posted; peak RSS %ld MiB)\n",
            t.name(), count * kMiB * 8 / elapsed / 1e9, count, elapsed, posted, max_rss);
      end();
    }
  }

  // (11, TCP) Unexpected messages beyond the per-peer cap: the receiver holds at most the cap
  // (or one message) and reads on once receives are posted; every message arrives intact.
  void unexpected_cap(std::size_t cap) {
    begin("unexpected cap");
    auto* tcp = dynamic_cast<TcpTransport*>(&t);
    constexpr int kCount = 24;
    if (rank == 1) {
      std::vector<Bytes> out;
      out.reserve(kCount);
      for (int i = 0; i < kCount; ++i) out.push_back(make(100 + i, kMiB));
      for (int i = 0; i < kCount; ++i) t.send(0, 77, out[i].data(), kMiB, i);
      collect(kCount);
    } else if (rank == 0) {
      std::size_t held = 0;
      for (double start = MPI_Wtime(); MPI_Wtime() - start < 0.5;) {
        t.progress(done, 0.01);
        held = std::max(held, tcp->unexpected_bytes());
      }
      expect(held <= std::max(cap, kMiB),
             "held " + std::to_string(held) + " unexpected bytes, cap " + std::to_string(cap));
      expect(held > 0, "nothing arrived unexpected");
      std::vector<Bytes> in(kCount, Bytes(kMiB));
      for (int i = 0; i < kCount; ++i) t.recv(1, 77, in[i].data(), kMiB, i);
      collect(kCount);
      for (int i = 0; i < kCount; ++i)
        expect(intact(in[i], 100 + i, kMiB), "message " + std::to_string(i) + " corrupted or out of order");
      std::printf("    held at most %zu unexpected bytes (cap %zu)\n", held, cap);
    }
    end();
  }

  // (13, TCP with a control lane) A small message on a control tag is not held behind bulk
  // data the receiver has not asked for: rank 1 sends rank 0 two 4 MiB messages on a bulk tag
  // (beyond the unexpected cap, so rank 0 stops reading the connection they come on), then
  // 64 bytes on a control tag; rank 0 posts a receive for the small one only, and it must
  // arrive. With one connection per peer it waits behind the bulk data until the timeout.
  void control_overtakes_bulk(Tag bulk_tag) {
    begin("a control message overtakes bulk data held back");
    constexpr std::size_t kBig = 4 * kMiB, kSmall = 64;
    if (rank == 1) {
      Bytes big0 = make(500, kBig), big1 = make(501, kBig), small = make(502, kSmall);
      t.send(0, bulk_tag, big0.data(), kBig, 1);
      t.send(0, bulk_tag, big1.data(), kBig, 2);
      t.send(0, 9, small.data(), kSmall, 3);
      collect(3);
    } else if (rank == 0) {
      Bytes small(kSmall), big0(kBig), big1(kBig);
      t.recv(1, 9, small.data(), kSmall, 3);
      collect(1, true);
      expect_completion(Kind::recv, 3, 1, 9, kSmall);
      expect(intact(small, 502, kSmall), "control message corrupted");
      t.recv(1, bulk_tag, big0.data(), kBig, 1);
      t.recv(1, bulk_tag, big1.data(), kBig, 2);
      collect(3, true);
      expect(intact(big0, 500, kBig) && intact(big1, 501, kBig), "bulk data corrupted or out of order");
    }
    end();
  }

  // (12, TCP) A rank of the run that breaks the protocol: rank 1 writes `kind` on its
  // connection to rank 0, which must end that connection with one clear error, without
  // allocating what a header announces.
  void hostile(const std::string& kind) {
    begin("hostile peer: " + kind);
    auto* tcp = dynamic_cast<TcpTransport*>(&t);
    if (rank == 1) {
      if (kind == "huge") {
        struct {
          std::uint32_t magic, tag;
          std::uint64_t bytes;
        } header{TcpTransport::kWireMagic, 3, std::uint64_t{1} << 40};  // a 1 TiB message
        tcp->send_raw_for_test(0, &header, sizeof header);
      } else {
        Bytes junk(64, 0xa5);
        tcp->send_raw_for_test(0, junk.data(), junk.size());
      }
    } else if (rank == 0) {
      std::string error;
      for (double start = MPI_Wtime(); error.empty();) {
        try {
          t.progress(done, 0.01);
        } catch (const TransportError& e) {
          error = e.what();
        }
        if (error.empty() && MPI_Wtime() - start > kCheckSeconds) fail("the hostile bytes went unnoticed");
      }
      std::printf("    rank 0: %s\n", error.c_str());
    }
    barrier(comm);
    if (rank == 0) std::printf("ok  %s\n", g_check.c_str());
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_rank = rank;
  std::string kind = argc > 1 ? argv[1] : "", wait_name = "sleep";
  TcpOptions options;
  [[maybe_unused]] std::string provider, domain;  // libfabric
  bool loop = false;
  std::string hostile;   // tcp: only the hostile-peer check, with these bytes (huge|garbage)
  Tag overtake_tag = 0;  // tcp: only the control-overtakes-bulk check, bulk data on this tag
  std::unique_ptr<Transport> transport;
  MPI_Comm comm = MPI_COMM_NULL;
  try {
    if (kind != "mpi" && kind != "tcp" && kind != "libfabric")
      fail(
          "usage: transport_selftest mpi|tcp|libfabric [busy|yield|sleep] [--address=IP] "
          "[--interface=NAME] [--buffer=BYTES] [--connect-delay=S] [--greeting-seconds=S] "
          "[--max-unexpected=BYTES] [--control-lane=FIRST_BULK_TAG] [--overtake=TAG] "
          "[--hostile=huge|garbage] [--provider=NAME] [--domain=NAME]");
    if (size < 2) fail("needs at least 2 ranks");
    for (int i = 2; i < argc; ++i) {
      std::string arg = argv[i];
      auto value = [&](const char* key) -> const char* {
        return arg.rfind(key, 0) == 0 ? arg.c_str() + std::strlen(key) : nullptr;
      };
      if (arg == "loop")
        loop = true;
      else if (const char* address = value("--address="))
        options.address = address;
      else if (const char* name = value("--interface="))
        options.interface_name = name;
      else if (const char* bytes = value("--buffer="))
        options.socket_buffer_bytes = std::stoi(bytes);
      else if (const char* seconds = value("--connect-delay="))
        options.connect_delay_seconds = std::stod(seconds);
      else if (const char* greeting = value("--greeting-seconds="))
        options.greeting_seconds = std::stod(greeting);
      else if (const char* cap = value("--max-unexpected="))
        options.max_unexpected_bytes = std::stoull(cap);
      else if (const char* first = value("--control-lane=")) {
        options.control_lane = true;
        options.bulk_tag_from = static_cast<Tag>(std::stoul(first));
      } else if (const char* tag = value("--overtake="))
        overtake_tag = static_cast<Tag>(std::stoul(tag));
      else if (const char* what = value("--hostile="))
        hostile = what;
      else if (const char* name = value("--provider="))
        provider = name;
      else if (const char* name = value("--domain="))
        domain = name;
      else
        wait_name = arg;
    }
    WaitMode wait = parse_wait_mode(wait_name);
    std::string detail;
    if (kind == "mpi") {
      transport = std::make_unique<MpiTransport>(MPI_COMM_WORLD, wait);
    } else if (kind == "tcp") {
      transport = std::make_unique<TcpTransport>(MPI_COMM_WORLD, wait, options);
    } else {
#ifdef DAQNET_HAVE_LIBFABRIC
      auto fabric = std::make_unique<LibfabricTransport>(MPI_COMM_WORLD, wait, LibfabricOptions{provider, domain});
      detail = " (" + fabric->endpoint_description() + ")";
      transport = std::move(fabric);
#else
      fail("built without libfabric (install libfabric-dev, then rebuild)");
#endif
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (rank == 0)
      std::printf("transport selftest: %s%s, %d ranks, wait mode %s\n", transport->name(), detail.c_str(), size,
                  wait_name.c_str());
    Test test{*transport, comm, rank, size, (rank + size - 1) % size, (rank + 1) % size, {}};
    if (overtake_tag > 0 || !hostile.empty()) {  // one TCP check alone
      if (kind != "tcp") fail("--overtake and --hostile are for tcp");
      if (overtake_tag > 0)
        test.control_overtakes_bulk(overtake_tag);
      else if (hostile == "huge" || hostile == "garbage")
        test.hostile(hostile);
      else
        fail("--hostile=huge|garbage");
      MPI_Barrier(MPI_COMM_WORLD);
      transport.reset();
      if (rank == 0) std::printf("selftest OK\n");
      MPI_Comm_free(&comm);
      MPI_Finalize();
      return 0;
    }
    test.ring();
    test.any_source();
    test.unexpected();
    test.unexpected_any_source();
    test.non_overtaking();
    test.tags();
    test.large();
    test.self();
    test.zero_bytes();
    test.cancel();
    if (kind == "tcp") test.unexpected_cap(options.max_unexpected_bytes);
    // With 8 receives posted the TCP receiver buffers unexpected messages up to its cap
    // (max_unexpected_bytes, 256 MiB here), so the 30 s loop keeps 32 posted.
    if (loop)
      test.bandwidth(30, {32});
    else
      test.bandwidth(1, {32, 8});
  } catch (const std::exception& e) {
    fail(e.what());
  }
  MPI_Barrier(MPI_COMM_WORLD);  // nobody closes a connection another rank still reads
  if (auto* tcp = dynamic_cast<TcpTransport*>(transport.get()); tcp && tcp->refusals() > 0)
    std::printf("rank %d refused %d connection(s) while connecting\n", rank, tcp->refusals());
  transport.reset();
  if (rank == 0) std::printf("selftest OK\n");
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
