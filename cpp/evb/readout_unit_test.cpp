// daqnet — plan, simulate and benchmark event-building networks.
#include "evb/readout_unit.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "evb/flow_control.hpp"
#include "evb/null_transport_test.hpp"

namespace daqnet::evb {
namespace {

Config push_config(int max_in_flight) {
  Config c = Config::parse(
      "seconds = 1\nmeta_bytes = 0\nfragment_bytes = 4194304\nmax_in_flight = " + std::to_string(max_in_flight) + "\n",
      "run.cfg");
  c.protocol = Protocol::push;
  return c;
}

Layout one_ru_three_builders() {  // rank 0: the readout unit; ranks 1-3: builders
  Layout l;
  l.ranks = 4;
  l.order = {0, 1, 2, 3};
  l.ru_rank = {0};
  l.bu_rank = {1, 2, 3};
  l.my_ru = 0;
  return l;
}

// The fragments a steady state keeps under way are made with the unit, before the ranks'
// clocks start. Made on first use, each was zeroed and filled inside the window: 64 MiB
// fragments then built at 13 Gb/s for seconds where they reach 96 Gb/s from the start.
TEST(ReadoutUnit, MakesItsFragmentsBeforeTheRun) {
  const Config c = push_config(0);
  const Layout l = one_ru_three_builders();
  NullTransport t(4);
  Node node(c, l, t, ::testing::TempDir(), "host");
  ReadoutUnit ru(node, 0);
  const std::size_t premade = premade_fragments(c, l.builder_units());
  ASSERT_EQ(premade, 6u);  // 2 credits × 3 builders
  const std::uint64_t made = ru.buffer_bytes();
  EXPECT_GE(made, premade * static_cast<std::uint64_t>(c.fragment_bytes));

  // As many sends as every builder's credits allow take no new memory ...
  std::uint64_t event = 0;
  for (std::uint32_t round = 0; round < 2; ++round)
    for (std::uint32_t bu = 0; bu < 3; ++bu)
      ru.on_command({CommandType::assign, UnitKind::ru, UnitKind::em, 0, round, bu, event++, 0, 0}, 0);
  ru.pump();
  EXPECT_EQ(t.sends, 6);
  EXPECT_EQ(ru.buffer_bytes(), made);
  // ... and one more than that (which no steady state asks for) is still served, from a new slab
  // (4 MiB fragments: two per slab).
  ru.on_command({CommandType::assign, UnitKind::ru, UnitKind::em, 0, 0, 0, event, 0, 0}, 0);
  ru.pump();
  EXPECT_EQ(t.sends, 7);
  EXPECT_GT(ru.buffer_bytes(), made);
}

// With a cap on transfers per process, the sends under way are the cap and one exempt send.
TEST(ReadoutUnit, PremadeFragmentsFollowTheProcessCap) {
  EXPECT_EQ(premade_fragments(push_config(0), 500), 1000u);
  EXPECT_EQ(premade_fragments(push_config(4), 500), 5u);
  EXPECT_EQ(premade_fragments(push_config(4000), 500), 1000u);
}

}  // namespace
}  // namespace daqnet::evb
