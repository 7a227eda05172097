// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "routing/routing.hpp"

namespace daqnet::analysis::detail {

using routing::LinkId;

/// The links a flow between two hosts uses, for any routing: every link of every one of its
/// paths, once (a flow spread over several paths loads each of their links). Visiting
/// returns the number of links. Table routings take TableLinks instead, the fast path.
class PathLinks {
public:
  explicit PathLinks(const routing::Routing& r) : routing_(r), single_(r.single_path()) {}

  template <class Visit>
  int64_t operator()(int32_t a, int32_t b, uint64_t flow, Visit&& visit) {
    routing_.paths(a, b, flow, set_);
    auto links = set_.all_links();
    if (single_ || set_.size() == 1) {
      for (LinkId l : links) visit(l);
      return static_cast<int64_t>(links.size());
    }
    unique_.assign(links.begin(), links.end());
    std::sort(unique_.begin(), unique_.end());
    unique_.erase(std::unique(unique_.begin(), unique_.end()), unique_.end());
    for (LinkId l : unique_) visit(l);
    return static_cast<int64_t>(unique_.size());
  }

private:
  const routing::Routing& routing_;
  bool single_;
  routing::PathSet set_;
  std::vector<LinkId> unique_;
};

/// The same for forwarding tables, straight from their route cache (no copy, no call):
/// the analysis spends most of its time here.
class TableLinks {
public:
  explicit TableLinks(const routing::TableRouting& r)
      : links_(r.cache_links()),
        offsets_(r.cache_offsets()),
        edge_(r.edge_index()),
        uplink_(r.uplinks()),
        hosts_(static_cast<size_t>(r.fabric().num_hosts())) {}

  template <class Visit>
  int64_t operator()(int32_t a, int32_t b, uint64_t, Visit&& visit) const {
    visit(uplink_[a]);
    const size_t k = static_cast<size_t>(edge_[a]) * hosts_ + static_cast<size_t>(b);
    const uint32_t first = offsets_[k], last = offsets_[k + 1];
    for (uint32_t i = first; i < last; ++i) visit(links_[i]);
    return 1 + static_cast<int64_t>(last - first);
  }

private:
  const LinkId* links_;
  const uint32_t* offsets_;
  const int32_t* edge_;
  const LinkId* uplink_;
  size_t hosts_;
};

/// Call f(walker) with the walker that suits the routing.
template <class F>
decltype(auto) with_flow_links(const routing::Routing& r, F&& f) {
  if (const auto* t = dynamic_cast<const routing::TableRouting*>(&r)) {
    TableLinks walk(*t);
    return f(walk);
  }
  PathLinks walk(r);
  return f(walk);
}

}  // namespace daqnet::analysis::detail
