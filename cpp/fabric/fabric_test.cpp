// daqnet — plan, simulate and benchmark event-building networks.
// Tests of the general fabric model (cpp/fabric/fabric.cpp): named link classes, optional and
// inferred levels, and the checks on cabling.
#include "fabric/fabric.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "fabric/fat_tree.hpp"

namespace daqnet::fabric {
namespace {

// Two hosts on each of three switches in a triangle: no tree, no levels given.
Fabric triangle() {
  Fabric f;
  for (int s = 0; s < 3; ++s)
    for (int k = 0; k < 2; ++k) f.add_host("h" + std::to_string(s) + std::to_string(k));
  for (int s = 0; s < 3; ++s) f.add_switch("s" + std::to_string(s), 4);
  for (int s = 0; s < 3; ++s)
    for (int k = 0; k < 2; ++k) f.connect(2 * s + k, 1, 6 + s, k + 1, 100, 1e-7);
  const int32_t ring = f.link_class("ring");
  for (int s = 0; s < 3; ++s) f.connect(6 + s, 3, 6 + (s + 1) % 3, 4, 50, 2e-7, ring, ring);
  return f;
}

TEST(Fabric, ClassesNamedAfterLevelsOrGiven) {
  Fabric f = triangle();
  // Levels unknown when the host cables were made: classes say host and switch.
  EXPECT_EQ(f.link_class_names(), (std::vector<std::string>{"host->switch", "switch->host", "ring"}));
  ASSERT_EQ(f.num_links(), 2 * 9);
  EXPECT_EQ(f.link(0).link_class, 0);  // the cable's first end to its second
  EXPECT_EQ(f.link(1).link_class, 1);
  EXPECT_EQ(f.link(12).link_class, 2);
  EXPECT_EQ(f.link(12).gbps, 50);
  EXPECT_EQ(f.link(12).latency_seconds, 2e-7);
  EXPECT_EQ(f.num_levels(), 0);
}

TEST(Fabric, InferLevelsByDistanceToHosts) {
  Fabric f;
  f.add_host("h0");
  f.add_host("h1");
  const NodeId a = f.add_switch("a", 3), b = f.add_switch("b", 3), top = f.add_switch("top", 2);
  f.connect(0, 1, a, 1, 100, 0);
  f.connect(1, 1, b, 1, 100, 0);
  f.connect(a, 2, top, 1, 100, 0);
  f.connect(b, 2, top, 2, 100, 0);
  f.infer_levels();
  EXPECT_EQ(f.node(a).level, 1);
  EXPECT_EQ(f.node(b).level, 1);
  EXPECT_EQ(f.node(top).level, 2);
  EXPECT_EQ(f.num_levels(), 2);
  EXPECT_EQ(f.level_name(1), "leaf");
  EXPECT_EQ(f.level_name(2), "spine");
}

// Three leaves of two hosts under two spines, and a management node on spine s0: by distance
// alone s0 was a leaf (a host is one cable away), so every leaf lost that up-link in the
// per-level views. Its sibling s1 serves the same leaves: s0 is a spine.
TEST(Fabric, ASpineWithAHostStaysASpine) {
  Fabric f;
  for (int k = 0; k < 6; ++k) f.add_host("h" + std::to_string(k));
  const NodeId mgmt = f.add_host("mgmt");
  const std::vector<NodeId> leaf{f.add_switch("leaf0", 4), f.add_switch("leaf1", 4), f.add_switch("leaf2", 4)};
  const NodeId s0 = f.add_switch("s0", 4), s1 = f.add_switch("s1", 4);
  for (int k = 0; k < 6; ++k) f.connect(k, 1, leaf[static_cast<size_t>(k / 2)], k % 2 + 1, 100, 0);
  for (int l = 0; l < 3; ++l) {
    f.connect(leaf[static_cast<size_t>(l)], 3, s0, l + 1, 100, 0);
    f.connect(leaf[static_cast<size_t>(l)], 4, s1, l + 1, 100, 0);
  }
  f.connect(mgmt, 1, s0, 4, 100, 0);
  f.infer_levels();
  for (NodeId l : leaf) EXPECT_EQ(f.node(l).level, 1);
  EXPECT_EQ(f.node(s0).level, 2);
  EXPECT_EQ(f.node(s1).level, 2);
  EXPECT_EQ(f.num_levels(), 2);
}

// Two pods of two leaves (two hosts each) under two spines, and four cores: c0 and c1 on
// spine 0 of each pod, c2 and c3 on spine 1. `extra` hosts go on core c0 (a management node)
// when asked.
struct ThreeLevels {
  Fabric f;
  std::vector<NodeId> leaf, spine, core;
};
ThreeLevels three_levels(bool host_on_core) {
  ThreeLevels t;
  Fabric& f = t.f;
  for (int k = 0; k < 8; ++k) f.add_host("h" + std::to_string(k));
  const NodeId mgmt = host_on_core ? f.add_host("mgmt") : -1;
  for (int l = 0; l < 4; ++l) t.leaf.push_back(f.add_switch("leaf" + std::to_string(l), 4));
  for (int s = 0; s < 4; ++s) t.spine.push_back(f.add_switch("spine" + std::to_string(s), 4));
  for (int c = 0; c < 4; ++c) t.core.push_back(f.add_switch("core" + std::to_string(c), 3));
  const auto at = [](const std::vector<NodeId>& v, int i) { return v[static_cast<size_t>(i)]; };
  for (int k = 0; k < 8; ++k) f.connect(k, 1, at(t.leaf, k / 2), k % 2 + 1, 100, 0);
  for (int l = 0; l < 4; ++l)  // leaf l of pod l / 2 to that pod's spines 2 (l / 2) and 2 (l / 2) + 1
    for (int j = 0; j < 2; ++j) f.connect(at(t.leaf, l), 3 + j, at(t.spine, 2 * (l / 2) + j), l % 2 + 1, 100, 0);
  for (int s = 0; s < 4; ++s)  // spine j of each pod to cores 2j and 2j + 1
    for (int j = 0; j < 2; ++j) f.connect(at(t.spine, s), 3 + j, at(t.core, 2 * (s % 2) + j), s / 2 + 1, 100, 0);
  if (host_on_core) f.connect(mgmt, 1, at(t.core, 0), 3, 100, 0);
  f.infer_levels();
  return t;
}

// A management node on a core switch: by distance alone core0 was a leaf; its sibling core1
// serves the same spines, so it is a core, and the tree keeps three levels.
TEST(Fabric, ACoreWithAHostStaysACore) {
  for (bool host_on_core : {false, true}) {
    const ThreeLevels t = three_levels(host_on_core);
    for (NodeId l : t.leaf) EXPECT_EQ(t.f.node(l).level, 1);
    for (NodeId s : t.spine) EXPECT_EQ(t.f.node(s).level, 2);
    for (NodeId c : t.core) EXPECT_EQ(t.f.node(c).level, 3) << t.f.node(c).name << ", host on core0: " << host_on_core;
    EXPECT_EQ(t.f.num_levels(), 3);
  }
}

// Leaves with hosts beside empty leaves are cabled to the same spines, as a core with a host
// beside its siblings: they stay leaves, whether the empty ones are fewer or more.
TEST(Fabric, LeavesBesideEmptyLeavesStayLeaves) {
  for (int with_hosts : {1, 2, 3}) {
    Fabric f;
    for (int k = 0; k < 2 * with_hosts; ++k) f.add_host("h" + std::to_string(k));
    const std::vector<NodeId> leaf{f.add_switch("leaf0", 4), f.add_switch("leaf1", 4), f.add_switch("leaf2", 4),
                                   f.add_switch("leaf3", 4)};
    const NodeId s0 = f.add_switch("s0", 4), s1 = f.add_switch("s1", 4);
    for (int k = 0; k < 2 * with_hosts; ++k) f.connect(k, 1, leaf[static_cast<size_t>(k / 2)], k % 2 + 1, 100, 0);
    for (int l = 0; l < 4; ++l) {
      f.connect(leaf[static_cast<size_t>(l)], 3, s0, l + 1, 100, 0);
      f.connect(leaf[static_cast<size_t>(l)], 4, s1, l + 1, 100, 0);
    }
    f.infer_levels();
    for (int l = 0; l < with_hosts; ++l) EXPECT_EQ(f.node(leaf[static_cast<size_t>(l)]).level, 1) << with_hosts;
    EXPECT_EQ(f.node(s0).level, 2);
    EXPECT_EQ(f.node(s1).level, 2);
  }
}

// Without a sibling to tell it apart, a switch with hosts cabled to others with hosts (a
// direct network's routers, the triangle) keeps the distance rule: every router a leaf.
TEST(Fabric, RoutersWithHostsStayAtOneLevel) {
  Fabric f = triangle();
  f.infer_levels();
  for (NodeId s = 6; s < 9; ++s) EXPECT_EQ(f.node(s).level, 1);
}

TEST(Fabric, FatTreeClassesKeepTheOldTierOrder) {
  FatTreeSpec spec;
  spec.radix = 4;
  spec.hosts = 8;
  spec.levels = 3;
  const Fabric f = build_fat_tree(spec);
  EXPECT_EQ(f.link_class_names(), (std::vector<std::string>{"host->leaf", "leaf->host", "leaf->spine", "spine->leaf",
                                                            "spine->core", "core->spine"}));
  for (const Link& l : f.links()) {
    const std::string want = f.level_name(f.node(l.src).level) + "->" + f.level_name(f.node(l.dst).level);
    EXPECT_EQ(f.link_class_names()[static_cast<size_t>(l.link_class)], want);
  }
}

TEST(Fabric, BadCablingIsRefused) {
  Fabric f;
  f.add_host("h0");
  f.add_host("h1");
  const NodeId s = f.add_switch("s", 2);
  EXPECT_THROW(f.add_host("late"), Error);                   // hosts first
  EXPECT_THROW(f.connect(0, 1, 1, 1, 100, 0), Error);        // host to host
  EXPECT_THROW(f.connect(0, 1, s, 3, 100, 0), Error);        // no such port
  EXPECT_THROW(f.connect(0, 1, s, 1, 0, 0), Error);          // no rate
  EXPECT_THROW(f.connect(0, 1, s, 1, 100, -1), Error);       // negative latency
  EXPECT_THROW(f.connect(s, 1, s, 2, 100, 0), Error);        // to itself
  EXPECT_THROW(f.connect(0, 1, s, 1, 100, 0, 0, 7), Error);  // unknown class
  f.connect(0, 1, s, 1, 100, 0);
  EXPECT_THROW(f.connect(1, 1, s, 1, 100, 0), Error);  // port taken
  EXPECT_THROW(f.add_switch("s", 2), Error);           // duplicate name
}

}  // namespace
}  // namespace daqnet::fabric
