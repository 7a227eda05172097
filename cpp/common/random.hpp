// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace daqnet {

/// SplitMix64 (Steele, Lea & Flood): the same stream on every platform and compiler,
/// unlike std:: distributions, so a seed gives the same scenario everywhere.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A small seeded generator over splitmix64.
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() { return splitmix64(state_++ * 0x9e3779b97f4a7c15ULL + 1); }
  /// Uniform in [0, n) by multiply-shift (Lemire); bias below 2^-32 for n < 2^32.
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<__uint128_t>(next()) * n) >> 64); }

private:
  uint64_t state_;
};

/// A seeded uniformly random permutation of 0..n-1 (Fisher-Yates).
// In place, reusing p's memory (the event builder's steady state allocates nothing).
inline void random_permutation(std::vector<int32_t>& p, int32_t n, uint64_t seed) {
  p.resize(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  Rng rng(seed);
  for (int32_t i = n - 1; i > 0; --i) std::swap(p[static_cast<size_t>(i)], p[rng.below(static_cast<uint64_t>(i) + 1)]);
}

inline std::vector<int32_t> random_permutation(int32_t n, uint64_t seed) {
  std::vector<int32_t> p;
  random_permutation(p, n, seed);
  return p;
}

}  // namespace daqnet
