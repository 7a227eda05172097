// daqnet — plan, simulate and benchmark event-building networks.
#include "evb/buffer_budget.hpp"

#include <gtest/gtest.h>

#include <string>

namespace daqnet::evb {
namespace {

// Counted by hand from docs/bench.md "Memory": a builder keeps `credits` slots of each RU's
// largest fragment and its meta-data; a readout unit makes credits × builders fragments of
// its largest size up front (fewer under max_in_flight).
TEST(BufferBudget, CountsSlotsAndPremadeFragments) {
  // RU sizes cycle through the list: 1000, 3000, 1000, 3000 (multiples of 8, ≥ 64 already).
  const Config c =
      Config::parse("seconds = 1\ncredits = 2\nmeta_bytes = 64\nfragment_bytes_per_ru = 1000,3000\n", "run.cfg");
  const BufferBudget b = buffer_budget(c, 4, 4);
  EXPECT_EQ(b.builder_bytes, 2.0 * (1000 + 3000 + 1000 + 3000 + 4 * 64));
  EXPECT_EQ(b.premade, 8u);
  EXPECT_EQ(b.readout_bytes, 8.0 * 3000);
  // Five RUs: the cycle once and a part of it; a billion: no list per RU.
  EXPECT_EQ(buffer_budget(c, 5, 4).builder_bytes, 2.0 * (1000 + 3000 + 1000 + 3000 + 1000 + 5 * 64));
  EXPECT_EQ(buffer_budget(c, 1'000'000'001, 4).builder_bytes, 2.0 * (500'000'000.0 * 4128 + 1064));
}

TEST(BufferBudget, SizesAllowForTheSpreadAndTheCap) {
  // Log-normal sizes are clipped at mean·(1 + 8σ) = 1000 · 3 = 3000; a cap of 3 transfers
  // per process makes 3 + 1 fragments up front.
  const Config c = Config::parse(
      "seconds = 1\ncredits = 4\nmeta_bytes = 0\nfragment_bytes = 1000\nfragment_distribution = lognormal\n"
      "fragment_sigma = 0.25\nmax_in_flight = 3\n",
      "run.cfg");
  const BufferBudget b = buffer_budget(c, 2, 5);
  EXPECT_EQ(b.builder_bytes, 4.0 * 2 * 3000);
  EXPECT_EQ(b.premade, 4u);
  EXPECT_EQ(b.readout_bytes, 4.0 * 3000);
}

}  // namespace
}  // namespace daqnet::evb
