// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <string>

namespace daqnet {

/// "65,536": a number with thousands separators, as the Python side prints them.
inline std::string thousands(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// "1 fragment", "2,048 fragments": a count with its noun in the right number, for messages.
inline std::string count(std::uint64_t n, const std::string& noun) {
  return thousands(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace daqnet
