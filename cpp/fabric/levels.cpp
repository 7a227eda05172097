// daqnet — plan, simulate and benchmark event-building networks.
#include "fabric/levels.hpp"

#include <algorithm>
#include <set>

namespace daqnet::fabric {

namespace {

// Breadth first from every host at once; a host does not make an `above` switch a leaf.
std::vector<int32_t> distances(const std::vector<std::vector<int32_t>>& neighbours, const std::vector<uint8_t>& host,
                               const std::vector<uint8_t>& above) {
  std::vector<int32_t> d(neighbours.size(), -1), frontier, next;
  for (size_t k = 0; k < neighbours.size(); ++k)
    if (host[k]) {
      d[k] = 0;
      frontier.push_back(static_cast<int32_t>(k));
    }
  while (!frontier.empty()) {
    next.clear();
    for (int32_t a : frontier)
      for (int32_t b : neighbours[static_cast<size_t>(a)]) {
        const auto bu = static_cast<size_t>(b);
        if (d[bu] >= 0 || (host[static_cast<size_t>(a)] && above[bu])) continue;
        d[bu] = d[static_cast<size_t>(a)] + 1;
        next.push_back(b);
      }
    frontier.swap(next);
  }
  return d;
}

}  // namespace

std::vector<int32_t> cabling_levels(const std::vector<std::vector<int32_t>>& neighbours,
                                    const std::vector<uint8_t>& host) {
  const std::vector<uint8_t> none(neighbours.size(), 0);
  std::vector<int32_t> d = distances(neighbours, host, none);
  // The leaves (switches at 1) each switch is cabled to, when two or more.
  auto leaves_of = [&](size_t k) {
    std::vector<int32_t> out;
    for (int32_t b : neighbours[k])
      if (!host[static_cast<size_t>(b)] && d[static_cast<size_t>(b)] == 1) out.push_back(b);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  std::set<std::vector<int32_t>> siblings;  // the leaf sets of switches without hosts
  for (size_t k = 0; k < neighbours.size(); ++k)
    if (!host[k] && d[k] >= 2)
      if (auto s = leaves_of(k); s.size() >= 2) siblings.insert(std::move(s));
  if (siblings.empty()) return d;
  std::vector<uint8_t> above(neighbours.size(), 0);
  bool any = false;
  for (size_t k = 0; k < neighbours.size(); ++k)
    if (!host[k] && d[k] == 1)
      if (auto s = leaves_of(k); s.size() >= 2 && siblings.contains(s)) above[k] = any = true;
  return any ? distances(neighbours, host, above) : d;
}

}  // namespace daqnet::fabric
