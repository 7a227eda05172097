// daqnet — plan, simulate and benchmark event-building networks.
#include "workload/patterns.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <string>

#include "common/count.hpp"
#include "common/error.hpp"
#include "common/random.hpp"

namespace daqnet::workload {

namespace {

// All ways to write n as an ordered product of k factors in decreasing order; keep the
// one with the smallest largest/smallest ratio (ties: lexicographically largest first).
void search(int64_t n, int32_t k, int64_t most, std::vector<int32_t>& cur, std::vector<int32_t>& best, double& ratio) {
  if (k == 1) {
    if (n > most) return;
    cur.push_back(static_cast<int32_t>(n));
    const double r = static_cast<double>(cur.front()) / static_cast<double>(cur.back());
    if (r < ratio) {
      ratio = r;
      best = cur;
    }
    cur.pop_back();
    return;
  }
  for (int64_t f = std::min(most, n); f >= 1; --f) {
    if (n % f != 0) continue;
    // f is the largest remaining factor: the rest must fit under it.
    int64_t bound = 1;
    for (int32_t i = 1; i < k && bound < n / f + 1; ++i) bound *= f;
    if (bound < n / f) break;
    cur.push_back(static_cast<int32_t>(f));
    search(n / f, k - 1, f, cur, best, ratio);
    cur.pop_back();
  }
}

class Steps final : public Schedule {
public:
  Steps(int32_t ranks, int64_t steps, std::string what, std::function<void(int64_t, std::vector<Flow>&)> fill)
      : ranks_(ranks), steps_(steps), what_(std::move(what)), fill_(std::move(fill)) {}
  int32_t ranks() const override { return ranks_; }
  int64_t num_steps() const override { return steps_; }
  void step(int64_t s, std::vector<Flow>& out) const override {
    out.clear();
    fill_(s, out);
  }
  std::string describe() const override { return what_; }

private:
  int32_t ranks_;
  int64_t steps_;
  std::string what_;
  std::function<void(int64_t, std::vector<Flow>&)> fill_;
};

std::string shape(const std::vector<int32_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? " × " : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace

std::vector<int32_t> task_grid(int64_t tasks, int32_t dims) {
  if (dims < 1 || dims > 8) throw Error("workload: a task grid has 1 to 8 dimensions, not " + std::to_string(dims));
  if (tasks < 1 || tasks > std::numeric_limits<int32_t>::max())
    throw Error("workload: " + std::to_string(tasks) + " tasks cannot form a task grid");
  std::vector<int32_t> cur, best;
  double ratio = std::numeric_limits<double>::infinity();
  search(tasks, dims, tasks, cur, best, ratio);
  return best;
}

std::unique_ptr<Schedule> stencil(const std::vector<int32_t>& dims) {
  int64_t n = 1;
  for (int32_t d : dims) {
    if (d < 1) throw Error("workload: stencil grid sizes must be >= 1");
    n *= d;
  }
  if (dims.empty() || n < 2 || n > std::numeric_limits<int32_t>::max())
    throw Error("workload: a stencil needs a grid of 2 to 2^31-1 tasks, not " + shape(dims));
  const auto k = dims.size();
  std::vector<int64_t> stride(k, 1);
  for (size_t i = k - 1; i > 0; --i) stride[i - 1] = stride[i] * dims[i];
  auto fill = [dims, stride, n, k](int64_t, std::vector<Flow>& out) {
    out.reserve(static_cast<size_t>(n) * 2 * k);
    for (int64_t t = 0; t < n; ++t)
      for (size_t i = 0; i < k; ++i) {
        if (dims[i] == 1) continue;
        const int64_t c = (t / stride[i]) % dims[i];
        const int64_t up = (c + 1) % dims[i], down = (c + dims[i] - 1) % dims[i];
        out.push_back({static_cast<int32_t>(t), static_cast<int32_t>(t + (up - c) * stride[i])});
        out.push_back({static_cast<int32_t>(t), static_cast<int32_t>(t + (down - c) * stride[i])});
      }
  };
  return std::make_unique<Steps>(static_cast<int32_t>(n), 1,
                                 std::to_string(2 * k + 1) + "-point stencil on a periodic " + shape(dims) + " grid",
                                 fill);
}

std::unique_ptr<Schedule> multicast(int32_t ranks, int32_t targets, uint64_t seed) {
  if (ranks < 2) throw Error("workload: a multicast needs at least 2 tasks");
  if (targets < 1 || targets >= ranks)
    throw Error("workload.targets = " + std::to_string(targets) +
                ": must be from 1 to tasks − 1 = " + std::to_string(ranks - 1));
  auto fill = [ranks, targets, seed](int64_t, std::vector<Flow>& out) {
    out.reserve(static_cast<size_t>(ranks) * static_cast<size_t>(targets));
    std::vector<int32_t> chosen;
    for (int32_t t = 0; t < ranks; ++t) {
      Rng rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(t))));
      chosen.clear();
      while (static_cast<int32_t>(chosen.size()) < targets) {
        const auto d = static_cast<int32_t>(rng.below(static_cast<uint64_t>(ranks)));
        if (d == t || std::find(chosen.begin(), chosen.end(), d) != chosen.end()) continue;
        chosen.push_back(d);
        out.push_back({t, d});
      }
    }
  };
  return std::make_unique<Steps>(
      ranks, 1,
      "multicast: every task to " + std::to_string(targets) + " random others (seed " + std::to_string(seed) + ")",
      fill);
}

std::unique_ptr<Schedule> bisection(int32_t ranks, int32_t rounds, uint64_t seed) {
  if (ranks < 2 || ranks % 2 != 0)
    throw Error("workload: a random bisection needs an even number of tasks, not " + std::to_string(ranks));
  if (rounds < 1) throw Error("workload.rounds = " + std::to_string(rounds) + ": must be >= 1");
  auto fill = [ranks, seed](int64_t s, std::vector<Flow>& out) {
    const auto perm = random_permutation(ranks, splitmix64(seed ^ splitmix64(static_cast<uint64_t>(s))));
    const int32_t half = ranks / 2;
    out.reserve(static_cast<size_t>(ranks));
    for (int32_t i = 0; i < half; ++i) {
      const auto x = static_cast<size_t>(i), y = static_cast<size_t>(i) + static_cast<size_t>(half);
      out.push_back({perm[x], perm[y]});
      out.push_back({perm[y], perm[x]});
    }
  };
  return std::make_unique<Steps>(ranks, rounds,
                                 "random bisection: " + count(static_cast<uint64_t>(rounds), "round") + " of " +
                                     count(static_cast<uint64_t>(ranks / 2), "pair") + " exchanging (seed " +
                                     std::to_string(seed) + ")",
                                 fill);
}

}  // namespace daqnet::workload
