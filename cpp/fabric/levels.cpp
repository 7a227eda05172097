// daqnet — plan, simulate and benchmark event-building networks.
#include "fabric/levels.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

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
  std::vector<int32_t> d = distances(neighbours, host, none);  // not const: returned as it is
  // The switches a switch is cabled to at distance `at`, when two or more.
  auto cabled_at = [&](size_t k, int32_t at) {
    std::vector<int32_t> out;
    for (int32_t b : neighbours[k])
      if (!host[static_cast<size_t>(b)] && d[static_cast<size_t>(b)] == at) out.push_back(b);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  // Switches without hosts by (level, the switches one level below them): a spine by its
  // leaves, a core by its spines. A switch with hosts cabled to the same switches at one
  // level is their sibling, one level up.
  using Key = std::pair<int32_t, std::vector<int32_t>>;
  std::map<Key, int32_t> siblings;
  for (size_t k = 0; k < neighbours.size(); ++k)
    if (!host[k] && d[k] >= 2)
      if (auto s = cabled_at(k, d[k] - 1); s.size() >= 2) ++siblings[{d[k], std::move(s)}];
  if (siblings.empty()) return d;
  std::vector<std::pair<size_t, Key>> found;
  std::map<Key, int32_t> hosted;  // switches with hosts that look like a sibling of each key
  for (size_t k = 0; k < neighbours.size(); ++k) {
    if (host[k] || d[k] != 1) continue;
    std::set<int32_t> levels;
    for (int32_t b : neighbours[k])
      if (!host[static_cast<size_t>(b)] && d[static_cast<size_t>(b)] >= 1) levels.insert(d[static_cast<size_t>(b)]);
    for (int32_t at : levels)
      if (Key key{at + 1, cabled_at(k, at)}; key.second.size() >= 2 && siblings.contains(key)) {
        ++hosted[key];
        found.emplace_back(k, std::move(key));
        break;
      }
  }
  // Above the spines, leaves with hosts beside empty leaves look alike (both cabled to the
  // same spines): a core with a host is one among siblings without, so those must be as
  // many at least. The check below catches the rest.
  std::vector<uint8_t> above(neighbours.size(), 0);
  bool any = false;
  for (const auto& [k, key] : found)
    if (key.first == 2 || siblings[key] >= hosted[key]) above[k] = any = true;
  if (!any) return d;
  std::vector<int32_t> lifted = distances(neighbours, host, above);
  // Each switch so placed must reach its siblings' level through the switches below it
  // (leaves with hosts taken for cores would leave their spines unreached): else the
  // distance rule stands.
  for (const auto& [k, key] : found)
    if (above[k] && lifted[k] != key.first) return d;
  return lifted;
}

}  // namespace daqnet::fabric
