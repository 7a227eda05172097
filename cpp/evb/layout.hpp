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

// "node2" < "node10": digits compare as numbers (what `daqnet` calls hostname order).
bool natural_less(const std::string& a, const std::string& b);

}  // namespace daqnet::evb
