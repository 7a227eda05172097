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
  static constexpr bool kPerFlow = true;  // paths may depend on the flow key

  template <class Visit>
  int64_t operator()(int32_t a, int32_t b, uint64_t flow, Visit&& visit) {
    routing_.paths(a, b, flow, set_);
    auto links = set_.all_links();
    if (single_ || set_.size() == 1) {
      for (LinkId l : links) visit(l);
      return static_cast<int64_t>(links.size());
    }
    ++spread_;
    unique_.assign(links.begin(), links.end());
    std::sort(unique_.begin(), unique_.end());
    unique_.erase(std::unique(unique_.begin(), unique_.end()), unique_.end());
    for (LinkId l : unique_) visit(l);
    return static_cast<int64_t>(unique_.size());
  }
  /// The links of n flows appended to buf[used..]; returns the new used count.
  size_t gather(const int32_t* a, const int32_t* b, const uint64_t* flow, size_t n, std::vector<LinkId>& buf,
                size_t used) {
    buf.resize(used);
    for (size_t k = 0; k < n; ++k) (*this)(a[k], b[k], flow[k], [&](LinkId l) { buf.push_back(l); });
    return buf.size();
  }
  /// Flows visited so far whose traffic is split over several paths.
  int64_t spread() const { return spread_; }

private:
  const routing::Routing& routing_;
  bool single_;
  int64_t spread_ = 0;
  routing::PathSet set_;
  std::vector<LinkId> unique_;
};

/// The same for forwarding tables, straight from their route cache (no copy, no virtual
/// call): the analysis spends most of its time here.
class TableLinks {
public:
  explicit TableLinks(const routing::TableRouting& r) : routing_(r) {}
  static constexpr bool kPerFlow = false;

  template <class Visit>
  int64_t operator()(int32_t a, int32_t b, uint64_t, Visit&& visit) const {
    visit(routing_.uplink(a));
    return 1 + static_cast<int64_t>(routing_.for_each_tail(a, b, visit));
  }
  /// The links of n flows written to buf[used..] (grown as needed); returns the new used count.
  size_t gather(const int32_t* a, const int32_t* b, const uint64_t*, size_t n, std::vector<LinkId>& buf,
                size_t used) const {
    const size_t room = used + n * static_cast<size_t>(routing_.max_hops());
    if (buf.size() < room) buf.resize(room);
    return used + routing_.gather_paths(a, b, n, buf.data() + used);
  }
  static int64_t spread() { return 0; }  // one path per pair

private:
  const routing::TableRouting& routing_;
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
