// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/fair_share.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace daqnet::simulate {
namespace {

// A fair-share problem in the solver's layout: flow f uses resources[offsets[f] .. offsets[f+1]).
struct Problem {
  std::vector<double> capacity;
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> resources;
  std::vector<double> cap;  // empty, or one per flow

  void add(std::vector<int32_t> res, double flow_cap = kUnlimited) {
    resources.insert(resources.end(), res.begin(), res.end());
    offsets.push_back(static_cast<int64_t>(resources.size()));
    cap.push_back(flow_cap);
  }
  size_t flows() const { return offsets.size() - 1; }
  std::vector<double> solve() const { return max_min_rates(capacity, offsets, resources, cap); }
};

// Relative tolerance of the checks: the solver subtracts rates from capacities, so results
// carry rounding errors of a few ulps per flow.
constexpr double kTol = 1e-9;

bool close(double a, double b) {
  if (a == b) return true;  // also equal infinities
  return std::abs(a - b) <= kTol * std::max({1.0, std::abs(a), std::abs(b)});
}

// The max-min characterisation, which identifies the allocation uniquely: rates are
// feasible (no resource over capacity, no flow over its cap), and every flow either sits
// at its cap or has a saturated resource on which no flow gets more than it. A flow with
// an infinite rate must be limited by nothing.
void expect_max_min(const Problem& p, const std::vector<double>& rates) {
  ASSERT_EQ(rates.size(), p.flows());
  const size_t R = p.capacity.size();
  std::vector<double> load(R, 0.0), top(R, 0.0);
  for (size_t f = 0; f < p.flows(); ++f) {
    ASSERT_GE(rates[f], 0.0) << "flow " << f;
    for (int64_t k = p.offsets[f]; k < p.offsets[f + 1]; ++k) {
      const auto r = static_cast<size_t>(p.resources[static_cast<size_t>(k)]);
      load[r] += rates[f];
      top[r] = std::max(top[r], rates[f]);
    }
  }
  for (size_t r = 0; r < R; ++r) {
    if (std::isfinite(p.capacity[r])) {
      EXPECT_LE(load[r], p.capacity[r] * (1 + kTol) + kTol) << "resource " << r << " over capacity";
    }
  }
  for (size_t f = 0; f < p.flows(); ++f) {
    const double c = p.cap.empty() ? kUnlimited : p.cap[f];
    EXPECT_LE(rates[f], c * (1 + kTol)) << "flow " << f << " over its cap";
    if (close(rates[f], c)) continue;  // bottlenecked by its own cap
    bool bottleneck = false;
    for (int64_t k = p.offsets[f]; k < p.offsets[f + 1]; ++k) {
      const auto r = static_cast<size_t>(p.resources[static_cast<size_t>(k)]);
      const bool saturated = std::isfinite(p.capacity[r]) && load[r] >= p.capacity[r] * (1 - kTol) - kTol;
      if (saturated && rates[f] >= top[r] * (1 - kTol)) bottleneck = true;
    }
    EXPECT_TRUE(bottleneck) << "flow " << f << " (rate " << rates[f]
                            << ") could grow: no saturated resource where it gets the most";
  }
}

// Random instance: resources with finite, zero or infinite capacity; flows over 0..5
// resources (a repeated resource now and then) with caps on some.
Problem random_problem(std::mt19937_64& rng, int32_t num_resources, int32_t num_flows) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int32_t> pick_res(0, num_resources - 1);
  std::uniform_int_distribution<int32_t> pick_len(0, 5);
  Problem p;
  p.cap.clear();
  for (int32_t r = 0; r < num_resources; ++r) {
    const double u = unit(rng);
    p.capacity.push_back(u < 0.1 ? kUnlimited : u < 0.13 ? 0.0 : 1 + 99 * unit(rng));
  }
  for (int32_t f = 0; f < num_flows; ++f) {
    std::vector<int32_t> res(static_cast<size_t>(pick_len(rng)));
    for (auto& r : res) r = pick_res(rng);
    p.add(res, unit(rng) < 0.2 ? 50 * unit(rng) : kUnlimited);
  }
  return p;
}

TEST(FairShare, ParkingLot) {
  // Three links in a row; one long flow over all, one short flow per link.
  Problem p;
  p.capacity = {10, 10, 10};
  p.add({0, 1, 2});
  p.add({0});
  p.add({1});
  p.add({2});
  const auto rates = p.solve();
  for (double x : rates) EXPECT_DOUBLE_EQ(x, 5);
}

TEST(FairShare, ParkingLotUnequalLinks) {
  // Link 0 fills first (2 flows on 1): the long flow freezes at 0.5 and its neighbour on
  // link 1 takes the rest of link 1.
  Problem p;
  p.capacity = {1, 2};
  p.add({0, 1});
  p.add({0});
  p.add({1});
  const auto rates = p.solve();
  EXPECT_DOUBLE_EQ(rates[0], 0.5);
  EXPECT_DOUBLE_EQ(rates[1], 0.5);
  EXPECT_DOUBLE_EQ(rates[2], 1.5);
}

TEST(FairShare, CapsFreezeFlowsEarly) {
  // 10 shared by flows capped at 2 and 3 and one without a cap, which takes what is left.
  Problem p;
  p.capacity = {10};
  p.add({0}, 2);
  p.add({0}, 3);
  p.add({0});
  const auto rates = p.solve();
  EXPECT_DOUBLE_EQ(rates[0], 2);
  EXPECT_DOUBLE_EQ(rates[1], 3);
  EXPECT_DOUBLE_EQ(rates[2], 5);
}

TEST(FairShare, CapAboveFairShareDoesNotBind) {
  Problem p;
  p.capacity = {10};
  p.add({0}, 1);
  p.add({0}, 6);  // its fair share, 4.5, is below its cap
  p.add({0});
  const auto rates = p.solve();
  EXPECT_DOUBLE_EQ(rates[0], 1);
  EXPECT_DOUBLE_EQ(rates[1], 4.5);
  EXPECT_DOUBLE_EQ(rates[2], 4.5);
}

TEST(FairShare, UnlimitedResources) {
  // Resource 0 is unlimited: it limits nobody. Flow 0 uses only it (infinite rate), flow 1
  // also a link of 4, flow 2 has a cap.
  Problem p;
  p.capacity = {kUnlimited, 4};
  p.add({0});
  p.add({0, 1});
  p.add({0}, 3);
  const auto rates = p.solve();
  EXPECT_EQ(rates[0], kUnlimited);
  EXPECT_DOUBLE_EQ(rates[1], 4);
  EXPECT_DOUBLE_EQ(rates[2], 3);
}

TEST(FairShare, FlowWithoutResources) {
  Problem p;
  p.capacity = {6};
  p.add({});     // nothing to share and no cap: unlimited
  p.add({}, 7);  // nothing to share: its cap
  p.add({0});
  p.add({0});
  const auto rates = p.solve();
  EXPECT_EQ(rates[0], kUnlimited);
  EXPECT_DOUBLE_EQ(rates[1], 7);
  EXPECT_DOUBLE_EQ(rates[2], 3);
  EXPECT_DOUBLE_EQ(rates[3], 3);
}

TEST(FairShare, ZeroCapacityAndRepeatedResource) {
  Problem p;
  p.capacity = {0, 9};
  p.add({0, 1});  // stopped by the zero-capacity resource
  p.add({1, 1});  // crosses resource 1 twice: counts twice
  p.add({1});
  const auto rates = p.solve();
  EXPECT_EQ(rates[0], 0);
  EXPECT_DOUBLE_EQ(rates[1], 3);
  EXPECT_DOUBLE_EQ(rates[2], 3);
}

TEST(FairShare, NoCapsGiven) {
  const std::vector<double> capacity{8};
  const std::vector<int64_t> offsets{0, 1, 2};
  const std::vector<int32_t> resources{0, 0};
  const auto rates = max_min_rates(capacity, offsets, resources);
  EXPECT_EQ(rates, (std::vector<double>{4, 4}));
  EXPECT_TRUE(max_min_rates(capacity, std::vector<int64_t>{0}, std::vector<int32_t>{}).empty());
}

TEST(FairShare, MalformedInputThrows) {
  const std::vector<double> cap1{1};
  const std::vector<int32_t> res1{0};
  EXPECT_THROW(max_min_rates(cap1, std::vector<int64_t>{}, std::vector<int32_t>{}), Error);
  EXPECT_THROW(max_min_rates(cap1, std::vector<int64_t>{1, 1}, res1), Error);        // does not start at 0
  EXPECT_THROW(max_min_rates(cap1, std::vector<int64_t>{0, 2}, res1), Error);        // last offset too large
  EXPECT_THROW(max_min_rates(cap1, std::vector<int64_t>{0, 1, 0, 1}, res1), Error);  // decreasing
  EXPECT_THROW(max_min_rates(std::vector<double>{-1}, std::vector<int64_t>{0, 1}, res1), Error);
  EXPECT_THROW(max_min_rates(std::vector<double>{NAN}, std::vector<int64_t>{0, 1}, res1), Error);
  EXPECT_THROW(max_min_rates(cap1, std::vector<int64_t>{0, 1}, std::vector<int32_t>{1}), Error);   // out of range
  EXPECT_THROW(max_min_rates(cap1, std::vector<int64_t>{0, 1}, std::vector<int32_t>{-1}), Error);  // out of range
  EXPECT_THROW(max_min_rates(cap1, std::vector<int64_t>{0, 1}, res1, std::vector<double>{1, 2}), Error);  // caps
  EXPECT_THROW(max_min_rates(cap1, std::vector<int64_t>{0, 1}, res1, std::vector<double>{-1}), Error);
}

TEST(FairShare, RandomInstancesAreMaxMinFair) {
  // Few resources: the solver's scan path.
  std::mt19937_64 rng(20240601);
  for (int trial = 0; trial < 300; ++trial) {
    const Problem p = random_problem(rng, 1 + trial % 40, 1 + trial % 60);
    ASSERT_NO_FATAL_FAILURE(expect_max_min(p, p.solve())) << "trial " << trial;
  }
}

TEST(FairShare, LargeRandomInstancesAreMaxMinFair) {
  // More than 64 resources: the solver's heap path.
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 40; ++trial) {
    const Problem p = random_problem(rng, 65 + 20 * trial, 50 + 40 * trial);
    ASSERT_NO_FATAL_FAILURE(expect_max_min(p, p.solve())) << "trial " << trial;
  }
}

TEST(FairShare, HeapAndScanPathsAgree) {
  // The same problem solved with few resources (scan) and padded with unused resources
  // beyond 64 (heap) gives the same rates.
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 300; ++trial) {
    const Problem p = random_problem(rng, 1 + trial % 64, 1 + trial % 80);
    Problem padded = p;
    padded.capacity.resize(200, 1.0);
    const auto scan = p.solve();
    const auto heap = padded.solve();
    ASSERT_EQ(scan.size(), heap.size());
    for (size_t f = 0; f < scan.size(); ++f)
      ASSERT_TRUE(close(scan[f], heap[f]))
          << "trial " << trial << ", flow " << f << ": scan " << scan[f] << ", heap " << heap[f];
  }
}

TEST(FairShare, SolverReuseGivesFreshResults) {
  // FairShareSolver keeps working memory between calls; a solve after others of different
  // sizes must equal a fresh one exactly.
  std::mt19937_64 rng(99);
  FairShareSolver reused;
  std::vector<double> rates;
  for (int trial = 0; trial < 100; ++trial) {
    const Problem p = random_problem(rng, 1 + (trial * 37) % 120, 1 + (trial * 53) % 150);
    reused.solve(p.capacity, p.offsets, p.resources, p.cap, rates);
    EXPECT_EQ(rates, p.solve()) << "trial " << trial;
  }
}

}  // namespace
}  // namespace daqnet::simulate
