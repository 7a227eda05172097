#include "evb/baselines.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "evb/buffer.hpp"
#include "evb/stats.hpp"

namespace daqnet::evb {
namespace {

// The slowest rank's time: the operation is done when the last rank is.
double max_over(MPI_Comm comm, double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
  return out;
}

// Repetitions that take about `seconds`, from the time of a first try.
long repetitions(double seconds, double first, long done_in_first) {
  double per = std::max(first, 1e-7) / static_cast<double>(done_in_first);
  return std::clamp(static_cast<long>(seconds / per), 3L, 100000000L);
}

}  // namespace

std::string BaselineResult::json() const {
  return JsonObject()
      .add("name", name)
      .add("throughput_gbps", gbps)
      .add("seconds", seconds)
      .add("bytes", bytes)
      .add("message_bytes", static_cast<std::uint64_t>(message_bytes))
      .add("pairs", pairs)
      .str();
}

// Times `once` (an all-to-all of message_bytes per pair of the n ranks) repeated for about
// `seconds`, every rank doing as many rounds; the first round warms up the connections.
template <class Once>
BaselineResult timed_all_to_all(MPI_Comm comm, const char* name, int n, std::size_t message_bytes, double seconds,
                                Once once) {
  MPI_Barrier(comm);
  double t = MPI_Wtime();
  once();
  long reps = repetitions(seconds, max_over(comm, MPI_Wtime() - t), 1);
  MPI_Bcast(&reps, 1, MPI_LONG, 0, comm);
  MPI_Barrier(comm);
  t = MPI_Wtime();
  for (long i = 0; i < reps; ++i) once();
  BaselineResult r;
  r.name = name;
  r.seconds = max_over(comm, MPI_Wtime() - t);
  r.message_bytes = message_bytes;
  r.bytes = static_cast<double>(reps) * n * n * static_cast<double>(message_bytes);
  r.gbps = r.bytes * 8 / r.seconds / 1e9;
  return r;
}

BaselineResult alltoall_baseline(MPI_Comm comm, std::size_t message_bytes, double seconds) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  Buffer send(message_bytes * n), recv(message_bytes * n);  // the event builder's kind of memory
  std::memset(send.data(), 1, send.size());
  auto count = static_cast<int>(message_bytes);
  return timed_all_to_all(comm, "alltoall", n, message_bytes, seconds,
                          [&] { MPI_Alltoall(send.data(), count, MPI_BYTE, recv.data(), count, MPI_BYTE, comm); });
}

BaselineResult isend_alltoall_baseline(MPI_Comm comm, std::size_t message_bytes, double seconds) {
  int n = 0, me = 0;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &me);
  Buffer send(message_bytes * n), recv(message_bytes * n);  // the event builder's kind of memory
  std::memset(send.data(), 1, send.size());
  std::vector<MPI_Request> requests(2 * static_cast<std::size_t>(n));
  auto count = static_cast<int>(message_bytes);
  constexpr int kTag = 3 * 8192 + 1;
  return timed_all_to_all(comm, "isend", n, message_bytes, seconds, [&] {
    for (int k = 0; k < n; ++k) {
      int from = (me - k + n) % n;
      MPI_Irecv(recv.data() + message_bytes * from, count, MPI_BYTE, from, kTag, comm, &requests[k]);
    }
    for (int k = 0; k < n; ++k) {
      int to = (me + k) % n;
      MPI_Isend(send.data() + message_bytes * to, count, MPI_BYTE, to, kTag, comm, &requests[n + k]);
    }
    MPI_Waitall(2 * n, requests.data(), MPI_STATUSES_IGNORE);
  });
}

BaselineResult p2p_baseline(MPI_Comm comm, Transport& transport, const Layout& layout, std::size_t message_bytes,
                            int window, double seconds) {
  int me = transport.rank();
  int pos = static_cast<int>(std::find(layout.order.begin(), layout.order.end(), me) - layout.order.begin());
  int pairs = layout.ranks / 2;
  bool paired = pos < 2 * pairs;
  bool sender = paired && pos % 2 == 0;
  int peer = paired ? layout.order[sender ? pos + 1 : pos - 1] : -1;
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
  MPI_Barrier(comm);
  double t = MPI_Wtime();
  long first = 4L * window;
  stream(first);
  long reps = repetitions(seconds, max_over(comm, MPI_Wtime() - t), first);
  MPI_Bcast(&reps, 1, MPI_LONG, 0, comm);
  MPI_Barrier(comm);
  t = MPI_Wtime();
  stream(reps);
  BaselineResult r;
  r.name = "p2p";
  r.seconds = max_over(comm, MPI_Wtime() - t);
  r.message_bytes = message_bytes;
  r.pairs = pairs;
  r.bytes = static_cast<double>(reps) * pairs * static_cast<double>(message_bytes);
  r.gbps = r.bytes * 8 / r.seconds / 1e9;
  return r;
}

}  // namespace daqnet::evb
