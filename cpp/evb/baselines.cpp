#include "evb/baselines.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "evb/buffer.hpp"
#include "evb/interrupt.hpp"
#include "evb/stats.hpp"

namespace daqnet::evb {
namespace {

// The slowest rank's time: the operation is done when the last rank is.
double max_over(MPI_Comm comm, double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
  return out;
}

// What every rank decides on after a timed part, in one allreduce: the slowest rank's time,
// and whether a signal came to any.
struct Agreed {
  double seconds = 0;
  bool interrupted = false;
};
Agreed agree(MPI_Comm comm, double seconds) {
  double mine[2] = {seconds, interrupted() ? 1.0 : 0.0}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, comm);
  return {all[0], all[1] > 0};
}

// Rounds of a chunk lasting about a twentieth of `seconds`, from `done` rounds that took `took`.
long chunk_rounds(double seconds, double took, long done) {
  const double per = std::max(took, 1e-7) / static_cast<double>(done);
  return std::clamp(static_cast<long>(seconds / 20 / per), 1L, 100000000L);
}

// Runs chunk(rounds) until `seconds` have passed on the slowest rank and `least` rounds are
// done (a cold baseline's every buffer set used), or a signal came to any. Every rank agrees
// after each chunk, so all run as many rounds, and a Ctrl-C ends the baseline within a chunk,
// a twentieth of its length (ranks inside a collective do not see a signal, and were killed
// 10 s later), with what it timed.
template <class Chunk>
void timed_chunks(MPI_Comm comm, double seconds, long least, long rounds, BaselineResult& r, long& timed, Chunk chunk) {
  MPI_Barrier(comm);
  const double t = MPI_Wtime();
  timed = 0;
  for (;;) {
    chunk(rounds);  // by every rank alike: one that left a collective early would hang the rest
    timed += rounds;
    const Agreed a = agree(comm, MPI_Wtime() - t);
    r.seconds = a.seconds;
    r.interrupted = a.interrupted;
    if (a.interrupted || (a.seconds >= seconds && timed >= least)) break;
  }
}

}  // namespace

std::string BaselineResult::json() const {
  JsonObject o;
  o.add("name", name)
      .add("throughput_gbps", gbps)
      .add("seconds", seconds)
      .add("bytes", static_cast<std::uint64_t>(bytes))  // a whole number, exactly
      .add("message_bytes", static_cast<std::uint64_t>(message_bytes))
      .add("pairs", pairs)
      .add("interrupted", interrupted);
  if (!cache.empty())
    o.add("cache", cache).add("buffer_sets", buffer_sets).add("cache_bytes", static_cast<std::uint64_t>(cache_bytes));
  return o.str();
}

std::size_t last_level_cache_bytes() {
  // sysfs lists the caches one CPU sees (a VM: its own share); glibc's sysconf may add up
  // the host's (on this project's VMs, 320 MiB against the 32 MiB sysfs lists).
  std::size_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size"), type_file(dir + "type");
    int level = 0;
    std::string size, type;
    if (!(level_file >> level) || !(size_file >> size) || !(type_file >> type)) continue;
    if (type == "Instruction" || level < best_level || size.empty()) continue;
    std::size_t scale = 1;
    if (size.back() == 'K') scale = std::size_t{1} << 10;
    if (size.back() == 'M') scale = std::size_t{1} << 20;
    std::size_t bytes = std::strtoull(size.c_str(), nullptr, 10) * scale;
    if (bytes == 0) continue;
    best = bytes;
    best_level = level;
  }
  if (best > 0) return best;
#ifdef _SC_LEVEL3_CACHE_SIZE
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    long v = sysconf(name);
    if (v > 0) return static_cast<std::size_t>(v);
  }
#endif
  return std::size_t{64} << 20;
}

int all_to_all_buffer_sets(bool cold, std::size_t set_bytes, int node_ranks, std::size_t cache_bytes) {
  if (!cold) return 1;
  // Measured on a 2-core VM (32 MiB L3, 4 ranks, 1 MiB messages): MPI_Alltoall at 206 Gb/s
  // with one set, 127 with sets touching 2 × the cache in between, 111 with 3 ×, 95-98 from
  // 7 × on: 4 × is within 15 % of cold.
  const double node_set = static_cast<double>(set_bytes) * std::max(1, node_ranks);
  const double apart = 4.0 * static_cast<double>(cache_bytes);
  if (node_set >= apart) return 1;
  return 1 + static_cast<int>(std::ceil(apart / node_set));
}

// Times `once(i)` (the i-th all-to-all of message_bytes per pair of the n ranks) repeated for
// about `seconds`, and at least `least` rounds, every rank doing as many. The first round
// warms up the connections; then rounds are timed in doubling batches until a batch lasts a
// twentieth of `seconds`, which sets the chunk the timed part repeats (the first round
// alone, with its connection set-up, made a 2 s baseline last 0.2 s).
template <class Once>
BaselineResult timed_all_to_all(MPI_Comm comm, const char* name, int n, std::size_t message_bytes, double seconds,
                                long least, Once once) {
  BaselineResult r;
  r.name = name;
  r.message_bytes = message_bytes;
  MPI_Barrier(comm);
  long next = 0;
  once(next++);
  long batch = 1;
  double took = 0;
  for (;;) {
    double t = MPI_Wtime();
    for (long i = 0; i < batch; ++i) once(next++);
    const Agreed a = agree(comm, MPI_Wtime() - t);  // every rank gets the same, so all decide alike
    took = a.seconds;
    if (took >= seconds / 20 || batch >= (1L << 24) || a.interrupted) break;
    batch *= 2;
  }
  long reps = 0;
  timed_chunks(comm, seconds, least, chunk_rounds(seconds, took, batch), r, reps, [&](long rounds) {
    for (long i = 0; i < rounds; ++i) once(next++);
  });
  r.bytes = static_cast<double>(reps) * n * n * static_cast<double>(message_bytes);
  r.gbps = r.seconds > 0 ? r.bytes * 8 / r.seconds / 1e9 : 0;
  return r;
}

namespace {

// The send and receive buffers of an all-to-all baseline: `sets` of n messages each, of the
// event builder's kind of memory, every byte written once before timing (no first-touch
// page faults in the timed part).
struct AllToAllBuffers {
  AllToAllBuffers(MPI_Comm comm, int n, std::size_t message_bytes, bool cold)
      : set_bytes(message_bytes * static_cast<std::size_t>(n)) {
    MPI_Comm node;  // the ranks sharing this node's cache
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_ranks = 1;
    MPI_Comm_size(node, &node_ranks);
    MPI_Comm_free(&node);
    cache_bytes = last_level_cache_bytes();
    // Every rank of a node the same count (they compute it from the same figures).
    sets = all_to_all_buffer_sets(cold, 2 * set_bytes, node_ranks, cache_bytes);
    send = Buffer(set_bytes * static_cast<std::size_t>(sets));
    recv = Buffer(set_bytes * static_cast<std::size_t>(sets));
    std::memset(send.data(), 1, send.size());
    std::memset(recv.data(), 0, recv.size());
  }
  unsigned char* send_set(long i) { return send.data() + set_bytes * static_cast<std::size_t>(i % sets); }
  unsigned char* recv_set(long i) { return recv.data() + set_bytes * static_cast<std::size_t>(i % sets); }
  void describe(BaselineResult& r, bool cold) const {
    r.cache = cold ? "cold" : "warm";
    r.buffer_sets = sets;
    r.cache_bytes = cache_bytes;
  }
  std::size_t set_bytes, cache_bytes = 0;
  int sets = 1;
  Buffer send, recv;
};

}  // namespace

BaselineResult alltoall_baseline(MPI_Comm comm, std::size_t message_bytes, double seconds, bool cold) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  AllToAllBuffers b(comm, n, message_bytes, cold);
  auto count = static_cast<int>(message_bytes);
  BaselineResult r = timed_all_to_all(comm, "alltoall", n, message_bytes, seconds, b.sets, [&](long i) {
    MPI_Alltoall(b.send_set(i), count, MPI_BYTE, b.recv_set(i), count, MPI_BYTE, comm);
  });
  b.describe(r, cold);
  return r;
}

BaselineResult isend_alltoall_baseline(MPI_Comm comm, std::size_t message_bytes, double seconds, bool cold) {
  int n = 0, me = 0;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &me);
  AllToAllBuffers b(comm, n, message_bytes, cold);
  std::vector<MPI_Request> requests(2 * static_cast<std::size_t>(n));
  auto count = static_cast<int>(message_bytes);
  constexpr int kTag = 3 * 8192 + 1;
  BaselineResult r = timed_all_to_all(comm, "isend", n, message_bytes, seconds, b.sets, [&](long i) {
    unsigned char* send = b.send_set(i);
    unsigned char* recv = b.recv_set(i);
    for (int k = 0; k < n; ++k) {
      int from = (me - k + n) % n;
      MPI_Irecv(recv + message_bytes * from, count, MPI_BYTE, from, kTag, comm, &requests[k]);
    }
    for (int k = 0; k < n; ++k) {
      int to = (me + k) % n;
      MPI_Isend(send + message_bytes * to, count, MPI_BYTE, to, kTag, comm, &requests[n + k]);
    }
    // MPI_COMM_SELF returns errors (MpiTransport): this baseline keeps its communicator's.
    if (int err = MPI_Waitall(2 * n, requests.data(), MPI_STATUSES_IGNORE); err != MPI_SUCCESS)
      MPI_Comm_call_errhandler(comm, err);
  });
  b.describe(r, cold);
  return r;
}

BaselineResult p2p_baseline(MPI_Comm comm, Transport& transport, const Layout& layout, int node_size,
                            std::size_t message_bytes, int window, double seconds) {
  const P2pPeer me = p2p_peer(layout, node_size, transport.rank());
  const bool paired = me.peer >= 0, sender = me.sender;
  const int peer = me.peer;
  const int pairs = layout.ranks / node_size / 2 * node_size;
  std::vector<Buffer> bufs;
  for (int b = 0; b < window; ++b) {
    bufs.emplace_back(message_bytes);
    std::memset(bufs.back().data(), 2, message_bytes);
  }
  constexpr Tag kTag = 3 * 8192;
  std::vector<Completion> done;

  auto stream = [&](long messages) {
    if (!paired) return;
    long started = 0, finished = 0;
    // Each buffer has one operation at a time: a finished one's buffer takes the next.
    auto start = [&](std::size_t b) {
      if (sender)
        transport.send(peer, kTag, bufs[b].data(), message_bytes, b);
      else
        transport.recv(peer, kTag, bufs[b].data(), message_bytes, b);
      ++started;
    };
    for (long b = 0; b < std::min<long>(window, messages); ++b) start(static_cast<std::size_t>(b));
    while (finished < messages) {
      done.clear();
      transport.progress(done, 0.001);
      for (auto& c : done) {
        ++finished;
        if (started < messages) start(c.cookie);
      }
    }
  };
  BaselineResult r;
  r.name = "p2p";
  r.message_bytes = message_bytes;
  r.pairs = pairs;
  MPI_Barrier(comm);
  double t = MPI_Wtime();
  long first = 4L * window;
  stream(first);
  long messages = 0;
  timed_chunks(comm, seconds, 0, chunk_rounds(seconds, max_over(comm, MPI_Wtime() - t), first), r, messages, stream);
  r.bytes = static_cast<double>(messages) * pairs * static_cast<double>(message_bytes);
  r.gbps = r.seconds > 0 ? r.bytes * 8 / r.seconds / 1e9 : 0;
  return r;
}

}  // namespace daqnet::evb
