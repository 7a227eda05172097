#include "evb/layout.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <numeric>

#include "common/random.hpp"

namespace daqnet::evb {

P2pPeer p2p_peer(const Layout& layout, int node_size, int rank) {
  const int pos = static_cast<int>(std::find(layout.order.begin(), layout.order.end(), rank) - layout.order.begin());
  const int nodes = layout.ranks / node_size, node = pos / node_size;
  if (node >= nodes / 2 * 2) return {};
  const bool sender = node % 2 == 0;
  return {layout.order[static_cast<std::size_t>(sender ? pos + node_size : pos - node_size)], sender};
}

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

Layout make_layout(const Config& c, int rank, const std::vector<std::string>& hostnames) {
  Layout l;
  l.ranks = static_cast<int>(hostnames.size());
  const std::int64_t need = c.mode == Mode::time_frames ? std::int64_t{c.senders} + c.receivers : 0;
  if (c.mode == Mode::time_frames && need != l.ranks)
    throw ConfigError("time-frames mode needs senders + receivers = " + std::to_string(need) + " ranks, but " +
                      std::to_string(l.ranks) + " were launched");
  if (c.mode == Mode::event_manager && l.ranks % c.processes_per_node != 0)
    throw ConfigError(std::to_string(l.ranks) + " ranks do not divide into nodes of processes_per_node = " +
                      std::to_string(c.processes_per_node));
  if (c.mode == Mode::event_manager && l.ranks / c.processes_per_node < 1) throw ConfigError("need at least one node");

  l.order.resize(l.ranks);
  std::iota(l.order.begin(), l.order.end(), 0);
  if (c.placement == "hostname") {
    std::stable_sort(l.order.begin(), l.order.end(),
                     [&](int a, int b) { return natural_less(hostnames[a], hostnames[b]); });
  } else if (c.placement == "random") {
    auto perm = random_permutation(l.ranks, c.placement_seed);
    for (int p = 0; p < l.ranks; ++p) l.order[p] = perm[p];
  } else if (c.placement == "file") {
    // A host listed once takes all its ranks there, one after another; a host listed once
    // per task (as SLURM_HOSTFILE, which daqnet repair writes) gives its k-th rank the k-th
    // line naming it.
    std::map<std::string, std::vector<long>> lines;
    for (std::size_t i = 0; i < c.placement_hosts.size(); ++i)
      lines[c.placement_hosts[i]].push_back(static_cast<long>(i));
    std::map<std::string, std::size_t> taken;
    std::vector<long> pos(l.ranks);
    for (int r = 0; r < l.ranks; ++r) {
      const auto it = lines.find(hostnames[r]);
      if (it == lines.end())
        throw ConfigError("placement_hosts does not list host '" + hostnames[r] + "' of rank " + std::to_string(r));
      std::size_t& k = taken[hostnames[r]];
      pos[r] = it->second[std::min(k++, it->second.size() - 1)];
    }
    std::stable_sort(l.order.begin(), l.order.end(), [&](int a, int b) { return pos[a] < pos[b]; });
  }

  if (c.mode == Mode::time_frames) {
    for (int p = 0; p < c.senders; ++p) l.ru_rank.push_back(l.order[p]);
    for (int p = c.senders; p < l.ranks; ++p) l.bu_rank.push_back(l.order[p]);
  } else {
    int ppn = c.processes_per_node;
    for (int n = 0; n < l.ranks / ppn; ++n) {
      const std::size_t first = static_cast<std::size_t>(n) * ppn;  // the node's first rank in placement order
      // A node's processes share its host: split over two, its readout unit's "own"
      // fragment crossed the network unsaid (a host file in no block order did it).
      for (std::size_t k = first + 1; k < first + static_cast<std::size_t>(ppn); ++k)
        if (hostnames[static_cast<std::size_t>(l.order[k])] != hostnames[static_cast<std::size_t>(l.order[first])])
          throw ConfigError("node " + std::to_string(n) + " of processes_per_node = " + std::to_string(ppn) +
                            " consecutive ranks in placement order has rank " + std::to_string(l.order[first]) +
                            " on host '" + hostnames[static_cast<std::size_t>(l.order[first])] + "' and rank " +
                            std::to_string(l.order[k]) + " on '" + hostnames[static_cast<std::size_t>(l.order[k])] +
                            "': a node's processes run on one host (a host file lists a host's ranks in a row)");
      l.ru_rank.push_back(l.order[first]);
      l.bu_rank.push_back(l.order[first + ppn - 1]);
    }
  }
  l.em_rank = l.order[0];
  l.my_em = rank == l.em_rank;
  for (int i = 0; i < l.readout_units(); ++i)
    if (l.ru_rank[i] == rank) l.my_ru = i;
  for (int j = 0; j < l.builder_units(); ++j)
    if (l.bu_rank[j] == rank) l.my_bu = j;
  return l;
}

}  // namespace daqnet::evb
