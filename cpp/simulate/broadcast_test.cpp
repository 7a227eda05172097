// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/broadcast.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace daqnet::simulate {
namespace {

TEST(Broadcast, ReadoutUnitsFallIntoClassesOfEqualDelayInOrder) {
  // The EM's own RU (0), its leaf's, and the rest, interleaved in RU order.
  const Broadcast b({0.0, 2e-6, 4e-6, 2e-6, 4e-6, 4e-6});
  ASSERT_EQ(b.classes(), 3u);
  EXPECT_EQ(b.delay(0), 0.0);
  EXPECT_EQ(b.delay(1), 2e-6);
  EXPECT_EQ(b.delay(2), 4e-6);
  EXPECT_EQ(b.rus(0), (std::vector<int32_t>{0}));
  EXPECT_EQ(b.rus(1), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(b.rus(2), (std::vector<int32_t>{2, 4, 5}));
}

TEST(Broadcast, EachReadoutUnitSendsWhatReachedItOldestFirst) {
  Broadcast b({0.0, 1e-6});
  b.assign(0, 5, 1);
  b.assign(1, 6, 0);
  b.assign(2, 7, 1);
  EXPECT_FALSE(b.any(0));
  EXPECT_FALSE(b.any(1));
  b.arrive(0, 0);
  b.arrive(0, 1);
  ASSERT_TRUE(b.any(0));
  EXPECT_FALSE(b.any(1));  // RU 1's copies are still on the way
  EXPECT_EQ(b.event(0), 0);
  EXPECT_EQ(b.builder(0), 5);
  EXPECT_EQ(b.slot(0), 1);
  b.pop(0);
  EXPECT_EQ(b.event(0), 1);
  EXPECT_EQ(b.builder(0), 6);
  EXPECT_EQ(b.slot(0), 0);
  b.pop(0);
  EXPECT_FALSE(b.any(0));
  b.arrive(1, 0);
  b.arrive(1, 1);
  b.arrive(1, 2);
  b.arrive(0, 2);
  EXPECT_EQ(b.event(1), 0);
  EXPECT_EQ(b.event(0), 2);
  EXPECT_EQ(b.builder(0), 7);
}

TEST(Broadcast, ClassesWhoseTimesRoundToOneInstantAreTied) {
  // 1 µs and 1 µs + 1e-20 s are two classes, apart at 0, one instant at 1 s (its ulp is
  // 2.2e-16): their RUs' messages interleave there. 2 µs stays apart.
  const Broadcast b({1e-6, 1e-6 + 1e-20, 2e-6});
  ASSERT_EQ(b.classes(), 3u);
  for (size_t c = 0; c < 3; ++c) EXPECT_FALSE(b.tied(c, 0.0)) << c;
  EXPECT_TRUE(b.tied(0, 1.0));
  EXPECT_TRUE(b.tied(1, 1.0));
  EXPECT_FALSE(b.tied(2, 1.0));
  EXPECT_FALSE(Broadcast({0.0}).tied(0, 5.0));  // a single class ties with nothing
}

}  // namespace
}  // namespace daqnet::simulate
