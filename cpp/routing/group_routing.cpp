// daqnet — plan, simulate and benchmark event-building networks.
#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/random.hpp"
#include "routing/routing.hpp"

namespace daqnet::routing {

namespace {

/// Paths are computed per call from two small tables (no per-pair storage, so 10,000 hubs
/// cost a few MB): the local link between any two switches of a group, and the global
/// links from each group to each other.
class GroupRouting final : public Routing {
public:
  GroupRouting(std::shared_ptr<const Fabric> fabric, GroupRoute how, bool spread, uint64_t seed)
      : Routing(std::move(fabric), how == GroupRoute::direct ? "direct" : "indirect"),
        how_(how),
        spread_(spread),
        seed_(seed) {
    const Fabric& f = *fabric_;
    if (f.switch_groups().empty())
      throw Error("routing.engine = " + engine_ +
                  ": needs a two-level direct network (fabric.kind = \"percs\" or \"dragonfly\")");
    const int32_t H = f.num_hosts(), G = f.num_groups();
    if (how_ == GroupRoute::indirect && G < 3)
      throw Error(
          "routing.engine = indirect: Valiant routing goes through a group other than the source's and "
          "the destination's, and this network has " +
          std::to_string(G) + (G == 1 ? " group" : " groups") + ": use routing.engine = \"direct\"");
    // Position of every switch in its group, and each group's first entry in local_.
    pos_.resize(static_cast<size_t>(f.num_switches()));
    std::vector<int32_t> size(static_cast<size_t>(G), 0);
    for (NodeId s = H; s < f.num_nodes(); ++s)
      pos_[static_cast<size_t>(s - H)] = size[static_cast<size_t>(f.switch_group(s))]++;
    group_base_.assign(static_cast<size_t>(G) + 1, 0);
    size_.assign(size.begin(), size.end());
    for (int32_t g = 0; g < G; ++g)
      group_base_[static_cast<size_t>(g) + 1] =
          group_base_[static_cast<size_t>(g)] +
          static_cast<int64_t>(size[static_cast<size_t>(g)]) * size[static_cast<size_t>(g)];
    local_.assign(static_cast<size_t>(group_base_.back()), -1);
    global_start_.assign(static_cast<size_t>(G) * static_cast<size_t>(G) + 1, 0);
    for (LinkId l = 0; l < f.num_links(); ++l) {
      const auto& link = f.link(l);
      if (f.node(link.src).is_host || f.node(link.dst).is_host) continue;
      const int32_t ga = f.switch_group(link.src), gb = f.switch_group(link.dst);
      if (ga == gb)
        local_[local_index(link.src, link.dst)] = l;
      else
        ++global_start_[static_cast<size_t>(ga) * static_cast<size_t>(G) + static_cast<size_t>(gb) + 1];
    }
    for (size_t k = 1; k < global_start_.size(); ++k) global_start_[k] += global_start_[k - 1];
    global_.resize(static_cast<size_t>(global_start_.back()));
    std::vector<int64_t> fill(global_start_.begin(), global_start_.end() - 1);
    for (LinkId l = 0; l < f.num_links(); ++l) {
      const auto& link = f.link(l);
      if (f.node(link.src).is_host || f.node(link.dst).is_host) continue;
      const int32_t ga = f.switch_group(link.src), gb = f.switch_group(link.dst);
      if (ga != gb)
        global_[static_cast<size_t>(
            fill[static_cast<size_t>(ga) * static_cast<size_t>(G) + static_cast<size_t>(gb)]++)] = l;
    }
    // Every group must be a clique and every pair of groups joined: say which is not.
    for (NodeId a = H; a < f.num_nodes(); ++a)
      for (NodeId b = H; b < f.num_nodes(); ++b)
        if (a != b && f.switch_group(a) == f.switch_group(b) && local_[local_index(a, b)] < 0)
          throw Error("routing.engine = " + engine_ + ": " + f.node(a).name + " and " + f.node(b).name +
                      " are in one group but not cabled to each other");
    for (int32_t ga = 0; ga < G; ++ga)
      for (int32_t gb = 0; gb < G; ++gb)
        if (ga != gb && globals(ga, gb).empty())
          throw Error("routing.engine = " + engine_ + ": no global link from group " + std::to_string(ga) +
                      " to group " + std::to_string(gb));
    size_t most = 1;
    for (int32_t ga = 0; ga < G; ++ga)
      for (int32_t gb = 0; gb < G; ++gb) most = std::max(most, globals(ga, gb).size());
    parallel_ = most > 1;
    const bool cliques = std::any_of(size.begin(), size.end(), [](int32_t n) { return n > 1; });
    const int32_t local_hops = cliques ? 1 : 0;
    max_hops_ = 2 + (G > 1 ? 1 + 2 * local_hops : local_hops);
    if (how_ == GroupRoute::indirect) max_hops_ = 2 + 2 + 3 * local_hops;
  }

  void paths(NodeId src, NodeId dst, uint64_t flow, PathSet& out) const override {
    out.clear();
    const Fabric& f = *fabric_;
    const NodeId a = f.host_switch(src), b = f.host_switch(dst);
    const int32_t ga = f.switch_group(a), gb = f.switch_group(b), G = f.num_groups();
    if (ga == gb) {
      const LinkId hops[1] = {-1};
      emit(src, dst, std::span<const LinkId>(hops, 0), 1.0, out);
      return;
    }
    if (how_ == GroupRoute::direct) {
      auto first = globals(ga, gb);
      if (spread_) {
        for (LinkId l : first)
          emit(src, dst, std::span<const LinkId>(&l, 1), 1.0 / static_cast<double>(first.size()), out);
        return;
      }
      // Minimal: among the parallel links, those with the fewest local hops to and from
      // them; the pair's hash picks one of these.
      const uint64_t key = splitmix64(
          seed_ ^ splitmix64((static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) | static_cast<uint32_t>(dst)));
      auto hops = [&](LinkId l) { return (f.link(l).src != a ? 1 : 0) + (f.link(l).dst != b ? 1 : 0); };
      int fewest = 2;
      size_t ties = 0;
      for (LinkId l : first) {
        const int h = hops(l);
        if (h < fewest) {
          fewest = h;
          ties = 0;
        }
        ties += h == fewest ? 1 : 0;
      }
      size_t pick = key % std::max<size_t>(ties, 1);  // ties ≥ 1: every pair of groups has a link
      for (LinkId l : first)
        if (hops(l) == fewest && pick-- == 0) {
          emit(src, dst, std::span<const LinkId>(&l, 1), 1.0, out);
          return;
        }
      return;
    }
    // Valiant: an intermediate group other than the two ends, drawn from the flow.
    const uint64_t key = splitmix64(seed_ ^ splitmix64(flow));
    int32_t gi = static_cast<int32_t>(key % static_cast<uint64_t>(G - 2));
    if (gi >= std::min(ga, gb)) ++gi;
    if (gi >= std::max(ga, gb)) ++gi;
    auto first = globals(ga, gi), second = globals(gi, gb);
    if (spread_) {
      const double w = 1.0 / static_cast<double>(first.size() * second.size());
      for (LinkId l1 : first)
        for (LinkId l2 : second) {
          const LinkId hops[2] = {l1, l2};
          emit(src, dst, hops, w, out);
        }
      return;
    }
    const uint64_t k2 = splitmix64(key);
    const LinkId hops[2] = {first[k2 % first.size()], second[(k2 >> 32) % second.size()]};
    emit(src, dst, hops, 1.0, out);
  }

  bool single_path() const override { return how_ == GroupRoute::direct && !(spread_ && parallel_); }
  int32_t max_hops() const override { return max_hops_; }

private:
  size_t local_index(NodeId a, NodeId b) const {
    const Fabric& f = *fabric_;
    const int32_t H = f.num_hosts();
    const auto g = static_cast<size_t>(f.switch_group(a));
    return static_cast<size_t>(group_base_[g]) +
           static_cast<size_t>(pos_[static_cast<size_t>(a - H)]) * static_cast<size_t>(size_[g]) +
           static_cast<size_t>(pos_[static_cast<size_t>(b - H)]);
  }
  std::span<const LinkId> globals(int32_t ga, int32_t gb) const {
    const size_t k = static_cast<size_t>(ga) * static_cast<size_t>(fabric_->num_groups()) + static_cast<size_t>(gb);
    return {global_.data() + global_start_[k], global_.data() + global_start_[k + 1]};
  }
  // One path: the source's NIC, then for each global link a local hop to the switch that
  // holds it (if not already there) and the link, a local hop to the destination's switch,
  // its NIC link.
  void emit(NodeId src, NodeId dst, std::span<const LinkId> hops, double weight, PathSet& out) const {
    const Fabric& f = *fabric_;
    out.begin();
    out.push(f.host_uplink(src));
    NodeId at = f.host_switch(src);
    for (LinkId l : hops) {
      const NodeId from = f.link(l).src;
      if (from != at) out.push(local_[local_index(at, from)]);
      out.push(l);
      at = f.link(l).dst;
    }
    const NodeId last = f.host_switch(dst);
    if (last != at) out.push(local_[local_index(at, last)]);
    out.push(f.node(dst).ports[1].in_link);
    out.set_weight(weight);
  }

  GroupRoute how_;
  bool spread_;
  uint64_t seed_;
  bool parallel_ = false;
  int32_t max_hops_ = 0;
  std::vector<int32_t> pos_;           // switch − H → position in its group
  std::vector<int32_t> size_;          // group → switches
  std::vector<int64_t> group_base_;    // group → first entry of its size² local table
  std::vector<LinkId> local_;          // (group, pos a, pos b) → link a→b
  std::vector<int64_t> global_start_;  // (ga · G + gb) → first of its global links
  std::vector<LinkId> global_;
};

}  // namespace

std::shared_ptr<Routing> group_routing(const std::shared_ptr<const Fabric>& fabric, GroupRoute how, bool spread,
                                       uint64_t seed) {
  return std::make_shared<GroupRouting>(fabric, how, spread, seed);
}

}  // namespace daqnet::routing
