// daqnet — plan, simulate and benchmark event-building networks.
#include <cmath>

#include "common/error.hpp"
#include "routing/routing.hpp"

namespace daqnet::routing {

PathRouting::PathRouting(std::shared_ptr<const Fabric> fabric, std::string engine)
    : Routing(std::move(fabric), std::move(engine)) {
  const auto H = static_cast<uint64_t>(fabric_->num_hosts());
  if (H * H > (uint64_t{1} << 26))
    throw Error("routing (" + engine_ + "): explicit paths for " + std::to_string(H) +
                " hosts are too many pairs to store; use an engine that computes paths");
  sets_.resize(static_cast<size_t>(H * H));
}

void PathRouting::add(NodeId src, NodeId dst, std::span<const LinkId> links, double weight) {
  const auto& f = *fabric_;
  const std::string who = "routing (" + engine_ + ")";
  const int32_t H = f.num_hosts();
  if (src < 0 || src >= H || dst < 0 || dst >= H || src == dst) throw Error(who + ": a path joins two different hosts");
  const std::string pair = f.node(src).name + " -> " + f.node(dst).name;
  // "routing (engine): path a -> b" followed by `what`.
  auto path_error = [&](const std::string& what) {
    std::string msg = who;
    msg += ": path ";
    msg += pair;
    msg += what;
    return Error(msg);
  };
  if (!(weight > 0) || !std::isfinite(weight)) throw path_error(": weight must be > 0");
  if (links.empty()) throw path_error(" has no link");
  NodeId at = src;
  for (size_t i = 0; i < links.size(); ++i) {
    const LinkId l = links[i];
    if (l < 0 || l >= f.num_links()) throw path_error(": no link " + std::to_string(l));
    const auto& link = f.link(l);
    if (link.src != at)
      throw path_error(": link " + std::to_string(l) + " leaves " + f.node(link.src).name + ", not " + f.node(at).name);
    at = link.dst;
    if (f.node(at).is_host && i + 1 < links.size()) throw path_error(" passes through host " + f.node(at).name);
  }
  if (at != dst) throw path_error(" ends at " + f.node(at).name);
  auto& set = sets_[pair_index(src, dst)];
  set.add(links, weight);
  if (set.size() > 1) single_ = false;
  max_hops_ = std::max(max_hops_, static_cast<int32_t>(links.size()));
}

void PathRouting::finalize(bool all_pairs) {
  const int32_t H = fabric_->num_hosts();
  for (NodeId a = 0; a < H; ++a)
    for (NodeId b = 0; b < H; ++b) {
      auto& set = sets_[pair_index(a, b)];
      if (set.empty()) {
        if (all_pairs && a != b)
          throw Error("routing (" + engine_ + "): no path from " + fabric_->node(a).name + " to " +
                      fabric_->node(b).name);
        continue;
      }
      double total = 0;
      for (size_t k = 0; k < set.size(); ++k) total += set.weight(k);
      PathSet normalised;
      for (size_t k = 0; k < set.size(); ++k) normalised.add(set.path(k), set.weight(k) / total);
      set = std::move(normalised);
    }
}

void PathRouting::paths(NodeId src, NodeId dst, uint64_t, PathSet& out) const {
  const auto& set = sets_[pair_index(src, dst)];
  if (set.empty())
    throw Error("routing (" + engine_ + "): no path from " + fabric_->node(src).name + " to " +
                fabric_->node(dst).name);
  out = set;
}

}  // namespace daqnet::routing
