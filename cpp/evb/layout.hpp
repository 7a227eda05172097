// Which rank runs which unit: the scenario's placement applied to the launched ranks.
#pragma once

#include <string>
#include <vector>

#include "evb/config.hpp"

namespace daqnet::evb {

struct Layout {
  int ranks = 0;
  std::vector<int> order;    // logical position → rank (placement order)
  std::vector<int> ru_rank;  // rank of readout unit i
  std::vector<int> bu_rank;  // rank of builder unit j
  int em_rank = 0;
  // This rank's units (-1: none).
  int my_ru = -1, my_bu = -1;
  bool my_em = false;

  int readout_units() const { return static_cast<int>(ru_rank.size()); }
  int builder_units() const { return static_cast<int>(bu_rank.size()); }
};

// hostnames[r] is the host of rank r. Throws ConfigError when the ranks do not fit.
Layout make_layout(const Config& config, int rank, const std::vector<std::string>& hostnames);

// The p2p baseline's pairing: nodes of `node_size` consecutive ranks in placement order,
// paired 0→1, 2→3, ..., process k of one to process k of the other (paired by position, 2
// processes per node paired a node's readout and builder processes: a copy in one host's
// memory). `peer` is -1 for a rank left out (an odd node).
struct P2pPeer {
  int peer = -1;
  bool sender = false;
};
P2pPeer p2p_peer(const Layout& layout, int node_size, int rank);

// "node2" < "node10": digits compare as numbers (what `daqnet` calls hostname order).
bool natural_less(const std::string& a, const std::string& b);

}  // namespace daqnet::evb
