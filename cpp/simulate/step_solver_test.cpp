// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/step_solver.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "simulate/flow_network.hpp"

namespace daqnet::simulate {
namespace {

struct Step {
  std::vector<StepSub> subs;
  std::vector<int32_t> res;
  void add(double latency, double bytes, std::vector<int32_t> r) {
    const auto first = static_cast<uint32_t>(res.size());
    res.insert(res.end(), r.begin(), r.end());
    subs.push_back({latency, bytes, static_cast<int32_t>(subs.size()), first, static_cast<uint32_t>(res.size())});
  }
};

// The reference: every sub-flow through the flow network, event by event, as the step
// simulation ran them before the step solver.
std::vector<double> by_events(const std::vector<double>& capacity, const Step& step) {
  FlowNetwork net(capacity);
  std::vector<size_t> order(step.subs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return step.subs[a].latency < step.subs[b].latency; });
  std::vector<double> ends(step.subs.size(), -1);
  std::vector<uint64_t> done;
  size_t next = 0;
  while (next < order.size() || net.active() > 0) {
    const double start = next < order.size() ? step.subs[order[next]].latency : kUnlimited;
    const double finish = net.next_completion();
    net.advance(std::min(start, finish), done);
    for (uint64_t k : done) ends[k] = net.now();
    if (start <= finish)
      for (; next < order.size() && step.subs[order[next]].latency <= start; ++next) {
        const StepSub& s = step.subs[order[next]];
        net.start({step.res.data() + s.first, step.res.data() + s.last}, s.bytes, kUnlimited, order[next]);
      }
  }
  return ends;
}

// Ends that fall within kSameTime group per component here and over the step there.
bool near(double a, double b) { return std::abs(a - b) <= 1e-11 * std::max(std::abs(a), std::abs(b)); }

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

TEST(StepSolver, EndsWhatItSolvesAsTheEventsWould) {
  // Random steps over a pool of links: what the solver ends must end as with every event
  // simulated; with equal messages starting together (a shift step) it must end nearly
  // everything, and with several latencies or unequal messages it must leave some. One
  // solver solves every step, reset to a new pool of links (larger or smaller) every third
  // step, as simulate_steps reuses it from call to call; each step is compared with a
  // fresh solver's bits: nothing of one step or pool may leak into the next.
  int64_t solved_equal = 0, total_equal = 0, left_mixed = 0, exact = 0, compared = 0;
  std::vector<double> capacity;
  StepSolver reused;
  for (uint64_t seed = 1; seed <= 1200; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    // A new pool of links every third seed.
    if (seed % 3 == 1) {
      capacity.assign(static_cast<size_t>(4 + seed % 40), 0);
      for (auto& c : capacity) c = unit(rng) < 0.05 ? kUnlimited : 10 + 90 * unit(rng);
      reused.reset(capacity);
      ASSERT_EQ(reused.solves(), 0);
      ASSERT_EQ(reused.flows_solved(), 0);
    }
    std::uniform_int_distribution<int32_t> in_pool(0, static_cast<int32_t>(capacity.size()) - 1);
    const bool shift = seed % 2 == 0;
    Step step;
    const int flows = 1 + static_cast<int>(seed % 50);
    for (int k = 0; k < flows; ++k) {
      std::vector<int32_t> r;
      for (int len = static_cast<int>(unit(rng) * 5); len > 0; --len) r.push_back(in_pool(rng));
      step.add(shift || unit(rng) < 0.5 ? 1e-6 : 3e-6, shift ? 1e6 : 1e6 * (0.1 + unit(rng)), r);
    }
    StepSolver fresh(capacity);
    std::vector<double> ends, first;
    const size_t left = reused.solve(0, step.subs, step.res, ends);
    fresh.solve(0, step.subs, step.res, first);
    ASSERT_TRUE(same_bits(ends, first)) << "seed " << seed << ": a reused solver differs from a fresh one";
    const auto want = by_events(capacity, step);
    size_t nan = 0;
    for (size_t i = 0; i < ends.size(); ++i) {
      if (std::isnan(ends[i])) {
        ++nan;
        continue;
      }
      ASSERT_TRUE(near(ends[i], want[i])) << "seed " << seed << " sub " << i << ": " << ends[i] << " vs " << want[i];
      ++compared;
      exact += ends[i] == want[i] ? 1 : 0;
    }
    ASSERT_EQ(nan, left);
    if (shift) {
      solved_equal += static_cast<int64_t>(ends.size() - left);
      total_equal += static_cast<int64_t>(ends.size());
    } else {
      left_mixed += static_cast<int64_t>(left);
    }
  }
  EXPECT_GT(static_cast<double>(solved_equal), 0.95 * static_cast<double>(total_equal));
  EXPECT_GT(left_mixed, 300);
  // Nearly every end is the event loop's to the last bit.
  EXPECT_GT(static_cast<double>(exact), 0.99 * static_cast<double>(compared));
}

TEST(StepSolver, LeavesWhatWouldChangeRate) {
  // Link 0 (2 B/s): A (1 byte) and B (10 bytes) at 1 B/s; when A ends, B speeds up: left.
  // Link 1: C alone, at its 5 B/s. Link 2: D and E start at different times: left. F has
  // no resource: it ends as it starts.
  Step step;
  step.add(0, 1, {0});      // A
  step.add(0, 10, {0});     // B
  step.add(0, 10, {1});     // C
  step.add(0, 10, {2});     // D
  step.add(1, 10, {2, 1});  // E, joins C's component too
  step.add(0.5, 10, {});    // F
  StepSolver solver({2.0, 5.0, 3.0});
  std::vector<double> ends;
  EXPECT_EQ(solver.solve(0, step.subs, step.res, ends), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(std::isnan(ends[i])) << i;
  EXPECT_EQ(ends[5], 0.5);
  // Without E, C is alone: 10 bytes at 5 B/s; D alone: 10 / 3.
  Step plain;
  plain.add(0, 10, {1});
  plain.add(0, 10, {2});
  EXPECT_EQ(solver.solve(2, plain.subs, plain.res, ends), 0u);
  EXPECT_EQ(ends, (std::vector<double>{4.0, 2 + 10.0 / 3}));
}

void same_shape_same_figures(int32_t R, int flows, int per_flow) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int32_t> pick(0, R - 1);
  std::vector<double> capacity(static_cast<size_t>(R));
  for (auto& c : capacity) c = 10 + 90 * unit(rng);
  std::vector<int32_t> relabel(static_cast<size_t>(R));
  std::iota(relabel.begin(), relabel.end(), 0);
  std::shuffle(relabel.begin(), relabel.end(), rng);
  std::vector<double> moved(static_cast<size_t>(R));
  for (int32_t r = 0; r < R; ++r)
    moved[static_cast<size_t>(relabel[static_cast<size_t>(r)])] = capacity[static_cast<size_t>(r)];
  Step a, b;
  for (int k = 0; k < flows; ++k) {
    std::vector<int32_t> r, q;
    for (int j = 0; j < per_flow; ++j) r.push_back(pick(rng));
    for (int32_t x : r) q.push_back(relabel[static_cast<size_t>(x)]);
    a.add(1e-6, 1e6, r);
    b.add(1e-6, 1e6, q);
  }
  StepSolver sa(capacity), sb(moved);
  std::vector<double> ea, eb;
  const size_t left = sa.solve(0, a.subs, a.res, ea);
  EXPECT_LT(left, ea.size() / 2);  // it solves most of them
  sb.solve(0, b.subs, b.res, eb);
  EXPECT_TRUE(same_bits(ea, eb));
}

TEST(StepSolver, SameShapeSameFigures) {
  // The step memo takes a step for the one it remembers when their shapes match up to a
  // relabelling of resources: the solver must then give the very same bits. One component
  // of few shared resources (the solver scans), and many components over more than 64
  // shared ones (it keeps a heap, whose ties depend on the order it is handed).
  same_shape_same_figures(30, 40, 3);
  same_shape_same_figures(600, 500, 2);
}

}  // namespace
}  // namespace daqnet::simulate
