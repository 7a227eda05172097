// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/flow_network.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "common/error.hpp"

namespace daqnet::simulate {
namespace {

using Res = std::vector<int32_t>;

// Equal within a relative 1e-9 (rates and times of the two solvers differ in the last bits),
// or the same infinity.
bool near(double a, double b) { return a == b || std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)}); }

// Advances to the next completion and returns its time and the tags completed.
double step(FlowNetwork& net, std::vector<uint64_t>& done) {
  const double t = net.next_completion();
  net.advance(t, done);
  std::sort(done.begin(), done.end());
  return t;
}

TEST(FlowNetwork, OneFlow) {
  FlowNetwork net({100.0});
  const auto f = net.start(Res{0}, 1000, kUnlimited, 7);
  EXPECT_EQ(net.active(), 1u);
  EXPECT_DOUBLE_EQ(net.rate(f), 100);
  std::vector<uint64_t> done;
  EXPECT_DOUBLE_EQ(step(net, done), 10);
  EXPECT_EQ(done, (std::vector<uint64_t>{7}));
  EXPECT_EQ(net.active(), 0u);
  EXPECT_EQ(net.next_completion(), kUnlimited);
}

TEST(FlowNetwork, TwoFlowsShareALink) {
  // 100 B/s shared: both at 50 until the short one ends at t=2; the long one then has
  // 200 bytes left at the full 100 B/s and ends at t=4.
  FlowNetwork net({100.0});
  const auto a = net.start(Res{0}, 100, kUnlimited, 1);
  const auto b = net.start(Res{0}, 300, kUnlimited, 2);
  EXPECT_DOUBLE_EQ(net.rate(a), 50);
  EXPECT_DOUBLE_EQ(net.rate(b), 50);
  std::vector<uint64_t> done;
  EXPECT_DOUBLE_EQ(step(net, done), 2);
  EXPECT_EQ(done, (std::vector<uint64_t>{1}));
  EXPECT_DOUBLE_EQ(net.remaining(b), 200);
  EXPECT_DOUBLE_EQ(net.rate(b), 100);
  EXPECT_DOUBLE_EQ(step(net, done), 4);
  EXPECT_EQ(done, (std::vector<uint64_t>{2}));
}

TEST(FlowNetwork, EqualFlowsFinishTogether) {
  FlowNetwork net({30.0});
  for (uint64_t tag = 0; tag < 3; ++tag) net.start(Res{0}, 10, kUnlimited, tag);
  std::vector<uint64_t> done;
  EXPECT_DOUBLE_EQ(step(net, done), 1);
  EXPECT_EQ(done, (std::vector<uint64_t>{0, 1, 2}));
}

TEST(FlowNetwork, LateStart) {
  // A alone at 100 B/s for 1 s (200 of 300 bytes left), then B joins: both at 50; B's 100
  // bytes end at t=3, A's last 100 bytes at full rate at t=4.
  FlowNetwork net({100.0});
  const auto a = net.start(Res{0}, 300, kUnlimited, 1);
  std::vector<uint64_t> done;
  net.advance(1.0, done);
  EXPECT_TRUE(done.empty());
  EXPECT_DOUBLE_EQ(net.now(), 1);
  EXPECT_DOUBLE_EQ(net.remaining(a), 200);
  net.start(Res{0}, 100, kUnlimited, 2);
  EXPECT_DOUBLE_EQ(step(net, done), 3);
  EXPECT_EQ(done, (std::vector<uint64_t>{2}));
  EXPECT_DOUBLE_EQ(net.remaining(a), 100);
  EXPECT_DOUBLE_EQ(step(net, done), 4);
  EXPECT_EQ(done, (std::vector<uint64_t>{1}));
}

TEST(FlowNetwork, EndingFlowFreesBandwidth) {
  // Parking lot: the long flow crosses links 0 and 1 (100 B/s each), a short flow link 0,
  // another link 1 with a cap of 20. Link 0: 50/50. The short flow's 100 bytes end at
  // t=2; the long flow (300 left) then gets 80 B/s of link 1 (the capped flow keeps 20).
  FlowNetwork net({100.0, 100.0});
  const auto lng = net.start(Res{0, 1}, 400, kUnlimited, 1);
  net.start(Res{0}, 100, kUnlimited, 2);
  const auto capped = net.start(Res{1}, 1e6, 20, 3);
  EXPECT_DOUBLE_EQ(net.rate(lng), 50);
  EXPECT_DOUBLE_EQ(net.rate(capped), 20);
  std::vector<uint64_t> done;
  EXPECT_DOUBLE_EQ(step(net, done), 2);
  EXPECT_EQ(done, (std::vector<uint64_t>{2}));
  EXPECT_DOUBLE_EQ(net.rate(lng), 80);
  EXPECT_DOUBLE_EQ(step(net, done), 2 + 300.0 / 80);
  EXPECT_EQ(done, (std::vector<uint64_t>{1}));
  const auto loads = net.loads();
  EXPECT_DOUBLE_EQ(loads[0], 0);
  EXPECT_DOUBLE_EQ(loads[1], 20);
}

TEST(FlowNetwork, FlowWithoutResources) {
  FlowNetwork net({10.0});
  net.start(Res{}, 100, 25, 1);           // only its cap: 4 s
  net.start(Res{0}, 100, kUnlimited, 2);  // 10 s, unaffected
  std::vector<uint64_t> done;
  EXPECT_DOUBLE_EQ(step(net, done), 4);
  EXPECT_EQ(done, (std::vector<uint64_t>{1}));
  net.start(Res{}, 5, kUnlimited, 3);  // nothing limits it: done at once
  EXPECT_DOUBLE_EQ(step(net, done), 4);
  EXPECT_EQ(done, (std::vector<uint64_t>{3}));
  EXPECT_DOUBLE_EQ(step(net, done), 10);
  EXPECT_EQ(done, (std::vector<uint64_t>{2}));
}

TEST(FlowNetwork, UnlimitedResources) {
  // A flow over unlimited resources only, without a cap, is limited by nothing: it ends at
  // once, even when it shares them with a limited flow.
  FlowNetwork net({kUnlimited, 10.0});
  net.start(Res{0, 1}, 100, kUnlimited, 1);  // limited by resource 1: 10 s
  const auto free_flow = net.start(Res{0}, 100, kUnlimited, 2);
  const auto capped = net.start(Res{0}, 100, 50, 3);  // its cap: 2 s
  EXPECT_EQ(net.rate(free_flow), kUnlimited);
  EXPECT_DOUBLE_EQ(net.rate(capped), 50);
  std::vector<uint64_t> done;
  EXPECT_DOUBLE_EQ(step(net, done), 0);
  EXPECT_EQ(done, (std::vector<uint64_t>{2}));
  EXPECT_DOUBLE_EQ(step(net, done), 2);
  EXPECT_EQ(done, (std::vector<uint64_t>{3}));
  EXPECT_DOUBLE_EQ(step(net, done), 10);
  EXPECT_EQ(done, (std::vector<uint64_t>{1}));
}

TEST(FlowNetwork, BadInputThrows) {
  EXPECT_THROW(FlowNetwork({-1.0}), Error);
  FlowNetwork net({1.0, 1.0});
  EXPECT_THROW(net.start(Res{0}, 0), Error);
  EXPECT_THROW(net.start(Res{0}, kUnlimited), Error);
  EXPECT_THROW(net.start(Res{0}, 1, -1), Error);
  EXPECT_THROW(net.start(Res{2}, 1), Error);
  EXPECT_THROW(net.start(Res(FlowNetwork::kMaxResources + 1, 0), 1), Error);
  net.start(Res{0}, 1);
  std::vector<uint64_t> done;
  EXPECT_THROW(net.advance(2.0, done), Error);  // past the completion at t=1
}

// Random sequences: two networks fed the same starts and advances, one solving
// incrementally and one from scratch at every change, must agree on every rate, every
// completion time and every set of completed flows.
struct Lockstep {
  FlowNetwork inc, full;
  std::vector<FlowNetwork::FlowId> ids_inc, ids_full;  // by tag
  std::vector<uint8_t> active;

  explicit Lockstep(const std::vector<double>& capacity) : inc(capacity), full(capacity) {
    full.set_full_recompute(true);
  }
  void start(const Res& res, double bytes, double cap) {
    const auto tag = static_cast<uint64_t>(ids_inc.size());
    ids_inc.push_back(inc.start(res, bytes, cap, tag));
    ids_full.push_back(full.start(res, bytes, cap, tag));
    active.push_back(1);
  }
  void expect_same_rates(const char* when) {
    ASSERT_EQ(inc.active(), full.active()) << when;
    for (size_t tag = 0; tag < active.size(); ++tag) {
      if (!active[tag]) continue;
      const double a = inc.rate(ids_inc[tag]), b = full.rate(ids_full[tag]);
      ASSERT_TRUE(near(a, b)) << when << ": flow " << tag << ": incremental " << a << ", full " << b;
    }
    const double ta = inc.next_completion(), tb = full.next_completion();
    // Every capacity and cap is > 0: every active flow moves, something completes.
    if (full.active() > 0) {
      for (size_t tag = 0; tag < active.size(); ++tag)
        if (active[tag]) {
          ASSERT_GT(full.rate(ids_full[tag]), 0) << when << ": flow " << tag << " stalls";
        }
      ASSERT_LT(tb, kUnlimited) << when;
    }
    ASSERT_TRUE(near(ta, tb)) << when << ": next completion, incremental " << ta << ", full " << tb;
  }
  void advance(double t) {
    std::vector<uint64_t> done_inc, done_full;
    inc.advance(t, done_inc);
    full.advance(t, done_full);
    std::sort(done_inc.begin(), done_inc.end());
    std::sort(done_full.begin(), done_full.end());
    ASSERT_EQ(done_inc, done_full) << "at t=" << t;
    for (uint64_t tag : done_inc) active[static_cast<size_t>(tag)] = 0;
  }
};

void run_random(uint64_t seed, int32_t num_resources, int32_t num_flows) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int32_t> pick_res(0, num_resources - 1);
  std::uniform_int_distribution<int32_t> pick_len(0, 4);
  std::uniform_int_distribution<int32_t> burst(1, 4);

  std::vector<double> capacity(static_cast<size_t>(num_resources));
  for (auto& c : capacity) c = unit(rng) < 0.1 ? kUnlimited : 10 + 90 * unit(rng);
  Lockstep nets(capacity);

  int32_t started = 0;
  // Each iteration starts a flow or moves the clock; a bound catches a clock that stalls.
  for (int64_t iteration = 0; started < num_flows || nets.inc.active() > 0; ++iteration) {
    ASSERT_LT(iteration, 100 * num_flows)
        << "seed " << seed << ": the simulation does not progress at t=" << nets.full.now() << ", next completion "
        << nets.full.next_completion() << ", " << nets.full.active() << " flows active";
    const double u = unit(rng);
    if (started < num_flows && (u < 0.5 || nets.inc.active() == 0)) {
      // A burst of flows at the same instant, each over distinct resources (now and then one twice).
      for (int32_t k = burst(rng); k > 0 && started < num_flows; --k, ++started) {
        Res res;
        for (int32_t len = pick_len(rng); len > 0; --len) {
          const int32_t r = pick_res(rng);
          // A resource listed twice counts twice (a route through one link twice).
          if (std::find(res.begin(), res.end(), r) == res.end() || unit(rng) < 0.05) res.push_back(r);
        }
        if (res.empty() && unit(rng) < 0.7) res.push_back(pick_res(rng));
        nets.start(res, 1 + 1000 * unit(rng), unit(rng) < 0.15 ? 5 + 40 * unit(rng) : kUnlimited);
      }
      ASSERT_NO_FATAL_FAILURE(nets.expect_same_rates("after starts")) << "seed " << seed;
    } else if (u < 0.8) {
      ASSERT_NO_FATAL_FAILURE(nets.advance(nets.full.next_completion())) << "seed " << seed;
      ASSERT_NO_FATAL_FAILURE(nets.expect_same_rates("after completions")) << "seed " << seed;
    } else {
      // Part of the way to the next completion: flows then start mid-transfer.
      const double next = nets.full.next_completion();
      ASSERT_NO_FATAL_FAILURE(nets.advance(nets.full.now() + (next - nets.full.now()) * unit(rng) * 0.9))
          << "seed " << seed;
    }
  }
  EXPECT_EQ(nets.inc.now(), nets.full.now());
  // On many resources, incremental means less work: the full network re-solves every flow
  // at every change. (On a handful, widening can make it more.)
  if (num_resources >= 20) {
    EXPECT_LT(nets.inc.stats().flows_solved, nets.full.stats().flows_solved) << "seed " << seed;
  }
}

TEST(FlowNetwork, IncrementalEqualsFullRecomputeSmall) {
  for (uint64_t seed = 1; seed <= 30; ++seed) run_random(seed, 6, 60);
}

TEST(FlowNetwork, IncrementalEqualsFullRecomputeDense) {
  // Three resources: nearly every flow shares with every other.
  for (uint64_t seed = 501; seed <= 550; ++seed) run_random(seed, 3, 100);
}

TEST(FlowNetwork, IncrementalEqualsFullRecomputeLarge) {
  for (uint64_t seed = 1001; seed <= 1010; ++seed) run_random(seed, 40, 400);
}

TEST(FlowNetwork, SlowerFlowsStayOutOfTheLocalProblem) {
  // Link 0 (100 B/s) holds A (capped at 10), a short flow S and D: A 10, S 45, D 45. When S
  // ends, A (slower than S) keeps its rate and is not re-solved: only D is, and gets 90. A
  // new flow E on link 0 gets at least 100 / 3: A, still slower, stays out again.
  Lockstep nets({100.0});
  nets.start(Res{0}, 1000, 10);          // A
  nets.start(Res{0}, 45, kUnlimited);    // S
  nets.start(Res{0}, 1000, kUnlimited);  // D
  ASSERT_NO_FATAL_FAILURE(nets.expect_same_rates("start"));
  EXPECT_DOUBLE_EQ(nets.inc.rate(nets.ids_inc[1]), 45);
  const int64_t before = nets.inc.stats().flows_solved;
  ASSERT_NO_FATAL_FAILURE(nets.advance(nets.full.next_completion()));
  ASSERT_NO_FATAL_FAILURE(nets.expect_same_rates("after S"));
  EXPECT_EQ(nets.inc.stats().flows_solved - before, 1);  // D alone
  EXPECT_DOUBLE_EQ(nets.inc.rate(nets.ids_inc[2]), 90);
  EXPECT_DOUBLE_EQ(nets.inc.rate(nets.ids_inc[0]), 10);
  const int64_t before_start = nets.inc.stats().flows_solved;
  nets.start(Res{0}, 1000, kUnlimited);  // E
  ASSERT_NO_FATAL_FAILURE(nets.expect_same_rates("after E"));
  EXPECT_EQ(nets.inc.stats().flows_solved - before_start, 2);  // D and E
  EXPECT_DOUBLE_EQ(nets.inc.rate(nets.ids_inc[3]), 45);
  // A new flow capped below A's rate (F, at 5) brings A back in: A is no longer known to keep
  // its rate.
  const int64_t before_capped = nets.inc.stats().flows_solved;
  nets.start(Res{0}, 1000, 5);  // F
  ASSERT_NO_FATAL_FAILURE(nets.expect_same_rates("after F"));
  EXPECT_EQ(nets.inc.stats().flows_solved - before_capped, 4);
}

TEST(FlowNetwork, IncrementalSolverWidens) {
  // Link 0 (60 B/s) holds A and a short flow S; link 1 (100) holds A and B; link 2 (100) B
  // and C. Rates: A 30, S 30, B 50, C 50 (link 1 not full). When S ends, re-solving link 0
  // alone would give A 60 and push link 1 to 110: the set must widen to link 1, and A gets
  // 50. Checked against the full recompute, and by hand.
  Lockstep nets({60.0, 100.0, 100.0});
  nets.start(Res{0, 1}, 1000, kUnlimited);  // A
  nets.start(Res{1, 2}, 1000, kUnlimited);  // B
  nets.start(Res{2}, 1000, kUnlimited);     // C
  nets.start(Res{0}, 30, kUnlimited);       // S
  ASSERT_NO_FATAL_FAILURE(nets.expect_same_rates("start"));
  EXPECT_DOUBLE_EQ(nets.inc.rate(nets.ids_inc[0]), 30);
  EXPECT_DOUBLE_EQ(nets.inc.rate(nets.ids_inc[1]), 50);
  ASSERT_NO_FATAL_FAILURE(nets.advance(nets.full.next_completion()));
  EXPECT_EQ(nets.inc.now(), 1);
  ASSERT_NO_FATAL_FAILURE(nets.expect_same_rates("after S"));
  EXPECT_DOUBLE_EQ(nets.inc.rate(nets.ids_inc[0]), 50);
  EXPECT_GT(nets.inc.stats().widenings, 0);
  while (nets.inc.active() > 0) {
    ASSERT_NO_FATAL_FAILURE(nets.advance(nets.full.next_completion()));
    ASSERT_NO_FATAL_FAILURE(nets.expect_same_rates("after completions"));
  }
}

TEST(FlowNetwork, DrainEndsFlowsAsAdvancingWould) {
  // Two networks fed the same flows: one drains, the other advances through every
  // completion. A drain must give the very same times and tags and leave the same state (a
  // flow started afterwards gets the same rate); a refused drain must change nothing.
  int drained = 0, refused = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const int32_t R = 3 + static_cast<int32_t>(seed % 20);
    std::uniform_int_distribution<int32_t> pick_res(0, R - 1);
    std::vector<double> capacity(static_cast<size_t>(R));
    for (auto& c : capacity) c = unit(rng) < 0.1 ? kUnlimited : 10 + 90 * unit(rng);
    FlowNetwork a(capacity), b(capacity);
    const bool equal = seed % 2 == 0;  // equal messages: the step simulation's case
    const int flows = 1 + static_cast<int>(seed % 30);
    std::vector<uint64_t> done;
    for (int k = 0; k < flows; ++k) {
      Res res;
      for (int len = 1 + static_cast<int>(unit(rng) * 4); len > 0; --len) res.push_back(pick_res(rng));
      const double bytes = equal ? 1000 : 1 + 1000 * unit(rng);
      const double cap = unit(rng) < 0.1 ? 5 + 40 * unit(rng) : kUnlimited;
      a.start(res, bytes, cap, static_cast<uint64_t>(k));
      b.start(res, bytes, cap, static_cast<uint64_t>(k));
      if (!equal && unit(rng) < 0.2) {  // flows that start mid-way through others
        const double t = a.next_completion() * 0.5;
        a.advance(t, done);
        b.advance(t, done);
      }
    }
    std::vector<std::pair<double, uint64_t>> got, want;
    if (a.drain(got)) {
      ++drained;
      while (b.active() > 0) {
        b.advance(b.next_completion(), done);
        for (uint64_t tag : done) want.emplace_back(b.now(), tag);
      }
      ASSERT_EQ(got, want) << "seed " << seed;
      ASSERT_EQ(a.active(), 0u);
      ASSERT_EQ(a.now(), b.now()) << "seed " << seed;
      // New flows on both run to the end alike: the drained network is in the same state.
      for (int k = 0; k < 6; ++k) {
        Res res;
        for (int len = 1 + static_cast<int>(unit(rng) * 3); len > 0; --len) res.push_back(pick_res(rng));
        const double bytes = 1 + 100 * unit(rng);
        a.start(res, bytes, kUnlimited, 100 + static_cast<uint64_t>(k));
        b.start(res, bytes, kUnlimited, 100 + static_cast<uint64_t>(k));
      }
      ASSERT_EQ(a.loads(), b.loads()) << "seed " << seed;
      while (b.active() > 0) {
        std::vector<uint64_t> done_a;
        ASSERT_EQ(a.next_completion(), b.next_completion()) << "seed " << seed;
        a.advance(a.next_completion(), done_a);
        b.advance(b.next_completion(), done);
        ASSERT_EQ(done_a, done) << "seed " << seed;
      }
      ASSERT_EQ(a.active(), 0u);
    } else {
      ++refused;
      ASSERT_TRUE(got.empty());
      while (b.active() > 0) {
        ASSERT_EQ(a.next_completion(), b.next_completion()) << "seed " << seed;
        std::vector<uint64_t> done_a;
        a.advance(a.next_completion(), done_a);
        b.advance(b.next_completion(), done);
        ASSERT_EQ(done_a, done) << "seed " << seed;
      }
      ASSERT_EQ(a.active(), 0u);
    }
  }
  // Both branches ran, often: the test checks something either way.
  EXPECT_GT(drained, 100);
  EXPECT_GT(refused, 20);
}

TEST(FlowNetwork, DrainRefusesAFlowThatWouldSpeedUp) {
  // A and B share link 0 (2 B/s) at 1 B/s each; A ends first, and B then gets 2 B/s: its
  // end is not its start plus bytes / rate, so no drain.
  FlowNetwork net({2.0});
  net.start(Res{0}, 1, kUnlimited, 0);
  net.start(Res{0}, 10, kUnlimited, 1);
  std::vector<std::pair<double, uint64_t>> drained;
  EXPECT_FALSE(net.drain(drained));
  std::vector<uint64_t> done;
  EXPECT_EQ(step(net, done), 1);
  EXPECT_EQ(step(net, done), 5.5);  // 9 bytes left at 2 B/s
  // B slower than A (held at 0.5 B/s by link 1): B keeps its rate, the drain holds.
  FlowNetwork held({2.0, 0.5});
  held.start(Res{0}, 1, kUnlimited, 0);
  held.start(Res{0, 1}, 10, kUnlimited, 1);
  ASSERT_TRUE(held.drain(drained));
  EXPECT_EQ(drained, (std::vector<std::pair<double, uint64_t>>{{1.0 / 1.5, 0}, {20.0, 1}}));
  EXPECT_EQ(held.active(), 0u);
  // A flow that never ends (a resource of capacity 0) cannot drain.
  FlowNetwork stuck({0.0});
  stuck.start(Res{0}, 1);
  EXPECT_FALSE(stuck.drain(drained));
}

}  // namespace
}  // namespace daqnet::simulate
