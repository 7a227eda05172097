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

}  // namespace
}  // namespace daqnet::simulate
