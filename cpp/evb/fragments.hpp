// Fragment sizes (seeded, per RU and event) and the fragment checksum.
//
// Sizes come from a counter-based generator: size(event, ru) is a pure function of the seed,
// so the builder knows the length it must receive without being told, and reruns repeat.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "evb/config.hpp"
#include "evb/messages.hpp"

namespace daqnet::evb {

class FragmentSizes {
public:
  FragmentSizes(const Config& config, int readout_units);
  std::size_t bytes(std::uint64_t event, int ru) const;  // multiple of 8, ≥ 64
  std::size_t max_bytes(int ru) const { return max_[ru]; }
  std::size_t max_bytes() const { return largest_; }

private:
  SizeDistribution dist_;
  double sigma_;
  std::uint64_t seed_;
  std::vector<double> mean_;
  std::vector<std::size_t> max_;
  std::size_t largest_ = 0;
};

// checksum = mix(ru, event, bytes) + Σ_k word_k · (2k + 1)  (mod 2^64) over the payload after
// the header. The odd weights make any change of one word, or a swap of two words, visible.
std::uint64_t header_mix(std::uint32_t ru, std::uint64_t event, std::uint64_t bytes);
std::uint64_t payload_sum(const unsigned char* payload, std::size_t bytes);

// The data an RU sends: one random pattern of the RU's largest fragment, with prefix sums so
// the checksum of a fragment of any length costs O(1) (the RU never reads its payload).
class Pattern {
public:
  Pattern(std::size_t max_bytes, std::uint64_t seed);
  void copy_to(unsigned char* buffer) const;  // the whole pattern
  std::uint64_t checksum(std::uint32_t ru, std::uint64_t event, std::size_t bytes) const;

private:
  std::vector<std::uint64_t> words_;
  std::vector<std::uint64_t> prefix_;  // prefix_[n] = payload_sum of the first n payload words
};

}  // namespace daqnet::evb
