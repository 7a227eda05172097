// daqnet — plan, simulate and benchmark event-building networks.
// Tests of explicit per-pair paths (PathRouting) and of paths from forwarding tables.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "common/error.hpp"
#include "fabric/fat_tree.hpp"
#include "routing/routing.hpp"

namespace daqnet::routing {
namespace {

// h0 - s0 - s1 - h1, and a second way round through s2: s0 - s2 - s1.
std::shared_ptr<const Fabric> diamond() {
  auto f = std::make_shared<Fabric>();
  f->add_host("h0");
  f->add_host("h1");
  const NodeId s0 = f->add_switch("s0", 3), s1 = f->add_switch("s1", 3), s2 = f->add_switch("s2", 2);
  f->connect(0, 1, s0, 1, 100, 0);   // links 0 (up), 1
  f->connect(1, 1, s1, 1, 100, 0);   // 2, 3
  f->connect(s0, 2, s1, 2, 100, 0);  // 4 (s0->s1), 5
  f->connect(s0, 3, s2, 1, 100, 0);  // 6 (s0->s2), 7
  f->connect(s2, 2, s1, 3, 100, 0);  // 8 (s2->s1), 9
  return f;
}

TEST(PathRouting, WeightsAreNormalisedAndPathsKept) {
  PathRouting r(diamond(), "test");
  const std::vector<LinkId> direct{0, 4, 3}, around{0, 6, 8, 3};
  r.add(0, 1, direct, 3.0);
  r.add(0, 1, around, 1.0);
  r.finalize();
  EXPECT_FALSE(r.single_path());
  EXPECT_EQ(r.max_hops(), 4);
  PathSet set;
  r.paths(0, 1, 0, set);
  ASSERT_EQ(set.size(), 2u);
  EXPECT_DOUBLE_EQ(set.weight(0), 0.75);
  EXPECT_DOUBLE_EQ(set.weight(1), 0.25);
  EXPECT_EQ(std::vector<LinkId>(set.path(1).begin(), set.path(1).end()), around);
  EXPECT_THROW(r.paths(1, 0, 0, set), Error);  // no path that way
}

TEST(PathRouting, PathsMustBeChainsOfCables) {
  PathRouting r(diamond(), "test");
  EXPECT_THROW(r.add(0, 1, std::vector<LinkId>{0, 8, 3}, 1), Error);   // link 8 leaves s2, not s0
  EXPECT_THROW(r.add(0, 1, std::vector<LinkId>{0, 4}, 1), Error);      // ends at a switch
  EXPECT_THROW(r.add(0, 1, std::vector<LinkId>{}, 1), Error);          // empty
  EXPECT_THROW(r.add(0, 1, std::vector<LinkId>{0, 4, 3}, 0), Error);   // weight 0
  EXPECT_THROW(r.add(0, 0, std::vector<LinkId>{0, 1}, 1), Error);      // to itself
  EXPECT_THROW(r.add(0, 1, std::vector<LinkId>{0, 4, 99}, 1), Error);  // no such link
  r.add(0, 1, std::vector<LinkId>{0, 4, 3}, 1);
  EXPECT_THROW(r.finalize(true), Error);  // 1 -> 0 missing
}

TEST(TableRouting, PathsEqualTheCachedRoute) {
  fabric::FatTreeSpec spec;
  spec.radix = 4;
  spec.hosts = 8;
  auto f = std::make_shared<const Fabric>(fabric::build_fat_tree(spec));
  auto r = dmodk(f);
  PathSet set;
  for (NodeId a = 0; a < f->num_hosts(); ++a)
    for (NodeId b = 0; b < f->num_hosts(); ++b) {
      if (a == b) continue;
      r->paths(a, b, 12345, set);
      ASSERT_EQ(set.size(), 1u);
      EXPECT_EQ(set.weight(0), 1.0);
      auto p = set.path(0);
      ASSERT_FALSE(p.empty());
      EXPECT_EQ(p.front(), r->uplink(a));
      EXPECT_EQ(f->link(p.back()).dst, b);
      std::vector<LinkId> tail;
      r->tail(a, b, tail);
      EXPECT_TRUE(std::equal(p.begin() + 1, p.end(), tail.begin(), tail.end()));
    }
}

TEST(FlowKey, SameFlowSameKeyOthersDiffer) {
  EXPECT_EQ(flow_key(3, 1, 2), flow_key(3, 1, 2));
  EXPECT_NE(flow_key(3, 1, 2), flow_key(3, 2, 1));
  EXPECT_NE(flow_key(3, 1, 2), flow_key(4, 1, 2));
}

}  // namespace
}  // namespace daqnet::routing
