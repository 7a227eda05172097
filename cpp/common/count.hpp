// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <string>

namespace daqnet {

/// "1 fragment", "2 fragments": a count with its noun in the right number, for messages.
inline std::string count(std::uint64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace daqnet
