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

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

TEST(StepSolver, EndsWhatItSolvesAsTheEventsWould) {
  // Random steps over a pool of links: what the solver ends must end as with every event
  // simulated; with equal messages starting together (a shift step) it must end nearly
  // everything, and with several latencies or unequal messages it must leave some.
  int64_t solved_equal = 0, total_equal = 0, left_mixed = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const int32_t R = 4 + static_cast<int32_t>(seed % 40);
    std::uniform_int_distribution<int32_t> pick(0, R - 1);
    std::vector<double> capacity(static_cast<size_t>(R));
    for (auto& c : capacity) c = unit(rng) < 0.05 ? kUnlimited : 10 + 90 * unit(rng);
    const bool shift = seed % 2 == 0;
    Step step;
    const int flows = 1 + static_cast<int>(seed % 50);
    for (int k = 0; k < flows; ++k) {
      std::vector<int32_t> r;
      for (int len = static_cast<int>(unit(rng) * 5); len > 0; --len) r.push_back(pick(rng));
      step.add(shift || unit(rng) < 0.5 ? 1e-6 : 3e-6, shift ? 1e6 : 1e6 * (0.1 + unit(rng)), r);
    }
    StepSolver solver(capacity);
    std::vector<double> ends;
    const size_t left = solver.solve(0, step.subs, step.res, ends);
    const auto want = by_events(capacity, step);
    size_t nan = 0;
    for (size_t i = 0; i < ends.size(); ++i) {
      if (std::isnan(ends[i])) {
        ++nan;
        continue;
      }
      ASSERT_TRUE(near(ends[i], want[i])) << "seed " << seed << " sub " << i << ": " << ends[i] << " vs " << want[i];
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
  EXPECT_GT(left_mixed, 100);
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

TEST(StepSolver, SameShapeSameFigures) {
  // The step memo takes a step for the one it remembers when their shapes match up to a
  // relabelling of resources: the solver must then give the very same bits.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int32_t R = 30;
  std::uniform_int_distribution<int32_t> pick(0, R - 1);
  std::vector<double> capacity(R);
  for (auto& c : capacity) c = 10 + 90 * unit(rng);
  std::vector<int32_t> relabel(R);
  std::iota(relabel.begin(), relabel.end(), 0);
  std::shuffle(relabel.begin(), relabel.end(), rng);
  std::vector<double> moved(R);
  for (int32_t r = 0; r < R; ++r)
    moved[static_cast<size_t>(relabel[static_cast<size_t>(r)])] = capacity[static_cast<size_t>(r)];
  Step a, b;
  for (int k = 0; k < 40; ++k) {
    std::vector<int32_t> r = {pick(rng), pick(rng), pick(rng)}, q;
    for (int32_t x : r) q.push_back(relabel[static_cast<size_t>(x)]);
    a.add(1e-6, 1e6, r);
    b.add(1e-6, 1e6, q);
  }
  StepSolver sa(capacity), sb(moved);
  std::vector<double> ea, eb;
  sa.solve(0, a.subs, a.res, ea);
  sb.solve(0, b.subs, b.res, eb);
  ASSERT_EQ(ea.size(), eb.size());
  for (size_t i = 0; i < ea.size(); ++i) EXPECT_TRUE(ea[i] == eb[i] || (std::isnan(ea[i]) && std::isnan(eb[i]))) << i;
}

}  // namespace
}  // namespace daqnet::simulate
