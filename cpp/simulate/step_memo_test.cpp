// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/step_memo.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace daqnet::simulate {
namespace {

using Res = std::vector<int32_t>;

// Two flows of a step: 0 on resources a, b; 1 on c, b (they share b).
void shape(StepMemo& m, int32_t a, int32_t b, int32_t c, const std::vector<double>& cap, double bytes = 1e6) {
  m.begin();
  m.add(1e-6, bytes, 0, Res{a, b}, cap);
  m.add(1e-6, bytes, 1, Res{c, b}, cap);
}

TEST(StepMemo, SameProblemOnOtherResourcesIsFound) {
  const std::vector<double> cap(10, 100.0);
  StepMemo m(cap.size());
  shape(m, 0, 1, 2, cap);
  EXPECT_EQ(m.find(), nullptr);
  m.store({2.5, 40.0});
  shape(m, 7, 3, 9, cap);  // relabelled: the same problem
  const auto* hit = m.find();
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->first, 2.5);
  EXPECT_EQ(hit->second, 40.0);
  EXPECT_EQ(m.hits(), 1);
}

TEST(StepMemo, DifferentSharingCapacityOrBytesIsNotFound) {
  std::vector<double> cap(10, 100.0);
  cap[5] = 50.0;
  StepMemo m(cap.size());
  shape(m, 0, 1, 2, cap);
  m.store({1.0, 1.0});
  m.begin();  // nothing shared
  m.add(1e-6, 1e6, 0, Res{0, 1}, cap);
  m.add(1e-6, 1e6, 1, Res{2, 3}, cap);
  EXPECT_EQ(m.find(), nullptr);
  shape(m, 0, 5, 2, cap);  // the shared resource is slower
  EXPECT_EQ(m.find(), nullptr);
  shape(m, 0, 1, 2, cap, 2e6);  // more bytes
  EXPECT_EQ(m.find(), nullptr);
  m.begin();  // the flows in the other order of latency
  m.add(2e-6, 1e6, 0, Res{0, 1}, cap);
  m.add(1e-6, 1e6, 1, Res{2, 1}, cap);
  EXPECT_EQ(m.find(), nullptr);
}

TEST(StepMemo, StopsLookingAfterProbationWithoutHits) {
  const std::vector<double> cap(200, 100.0);
  StepMemo m(cap.size(), 1 << 20, 3);
  for (int32_t k = 0; k < 3; ++k) {
    m.begin();
    for (int32_t f = 0; f <= k; ++f) m.add(1e-6, 1e6, f, Res{f, 100 + f}, cap);  // every step a new shape
    EXPECT_EQ(m.find(), nullptr);
    m.store({1.0, 1.0});
  }
  EXPECT_FALSE(m.active());
  StepMemo never(cap.size(), 1 << 20, 0);
  EXPECT_FALSE(never.active());
}

TEST(StepMemo, SharedProbationCountsEveryMemo) {
  // Two memos (two threads) sharing one probation of 4 steps: two new shapes each and
  // both stop, where each alone would still look.
  const std::vector<double> cap(200, 100.0);
  StepMemo::Probation shared;
  StepMemo a, b;
  a.reset(cap.size(), 1 << 20, 4, &shared);
  b.reset(cap.size(), 1 << 20, 4, &shared);
  for (int32_t k = 0; k < 2; ++k)
    for (StepMemo* m : {&a, &b}) {
      ASSERT_TRUE(m->active()) << k;
      m->begin();
      for (int32_t f = 0; f <= k; ++f) m->add(1e-6, 1e6, f, Res{f, 100 + f}, cap);
      EXPECT_EQ(m->find(), nullptr);
      m->store({1.0, 1.0});
    }
  EXPECT_FALSE(a.active());
  EXPECT_FALSE(b.active());
  // A find in one keeps the shared probation from ending: the memo that found goes on
  // looking, and the other still ends its own probation (2 steps without a find).
  StepMemo::Probation found;
  a.reset(cap.size(), 1 << 20, 2, &found);
  b.reset(cap.size(), 1 << 20, 2, &found);
  shape(a, 0, 1, 2, cap);
  EXPECT_EQ(a.find(), nullptr);
  a.store({1.0, 2.0});
  shape(a, 3, 4, 5, cap);
  ASSERT_NE(a.find(), nullptr);
  for (int k = 0; k < 2; ++k) {
    shape(b, 6, 10, 11, cap, 1e6 * (k + 2));  // new shapes: other bytes
    EXPECT_EQ(b.find(), nullptr);
    b.store({1.0, 1.0});
  }
  EXPECT_FALSE(b.active());
  for (int k = 0; k < 3; ++k) {
    shape(a, 20, 21, 22, cap, 1e6 * (k + 2));
    EXPECT_EQ(a.find(), nullptr);
    a.store({1.0, 1.0});
    EXPECT_TRUE(a.active()) << k;
  }
}

TEST(StepMemo, ResetForgetsEverything) {
  // A memo reused from call to call: after a reset nothing of the last call is found, and
  // it counts hits and probation afresh, on a network of another size.
  std::vector<double> cap(10, 100.0);
  StepMemo m(cap.size(), 1 << 20, 2);
  shape(m, 0, 1, 2, cap);
  m.store({1.0, 2.0});
  shape(m, 3, 4, 5, cap);
  ASSERT_NE(m.find(), nullptr);
  EXPECT_EQ(m.hits(), 1);
  cap.assign(30, 100.0);
  m.reset(cap.size(), 1 << 20, 1);
  EXPECT_EQ(m.hits(), 0);
  ASSERT_TRUE(m.active());
  shape(m, 20, 21, 29, cap);
  EXPECT_EQ(m.find(), nullptr);
  EXPECT_FALSE(m.active());  // one step of probation, nothing found
}

TEST(StepMemo, KeepsNoMoreThanItsBudget) {
  const std::vector<double> cap(10, 100.0);
  StepMemo m(cap.size(), 4, 64);  // a shape of two flows needs more than 4 words
  shape(m, 0, 1, 2, cap);
  m.store({1.0, 1.0});
  shape(m, 0, 1, 2, cap);
  EXPECT_EQ(m.find(), nullptr);
}

}  // namespace
}  // namespace daqnet::simulate
