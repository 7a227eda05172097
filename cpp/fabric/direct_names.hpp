// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <string>

namespace daqnet::fabric {

/// Zero-padded numbers wide enough for 0..count−1, so that names sort in cabling order
/// (sn007 before sn012) as Slurm and people read them.
class NumberedName {
public:
  explicit NumberedName(int64_t count) {
    for (int64_t n = count - 1; n >= 10; n /= 10) ++width_;
  }
  std::string operator()(int64_t i) const {
    std::string s = std::to_string(i);
    if (static_cast<size_t>(width_) > s.size()) s.insert(0, static_cast<size_t>(width_) - s.size(), '0');
    return s;
  }

private:
  int32_t width_ = 1;
};

}  // namespace daqnet::fabric
