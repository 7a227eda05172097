#include "evb/fragments.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/random.hpp"

namespace daqnet::evb {
namespace {

constexpr std::size_t kHeaderWords = sizeof(FragmentHeader) / 8;

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// In (0, 1). bits >> 11 < 2^53, so its conversion to double is exact.
double uniform(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

std::size_t round8(double bytes) {
  auto b = static_cast<std::size_t>(std::ceil(bytes));
  return (b + 7) / 8 * 8;
}

}  // namespace

FragmentSizes::FragmentSizes(const Config& config, int readout_units)
    : dist_(config.distribution), sigma_(config.fragment_sigma), seed_(config.seed) {
  for (int ru = 0; ru < readout_units; ++ru) {
    double mean = config.fragment_bytes_per_ru.empty()
                      ? config.fragment_bytes
                      : config.fragment_bytes_per_ru[ru % config.fragment_bytes_per_ru.size()];
    mean_.push_back(mean);
    // Draws are clipped to mean·(1 + 8σ) so buffers stay bounded: for normal sizes that
    // never happens in practice; for log-normal ones with large σ a small tail is clipped.
    double top = dist_ == SizeDistribution::fixed ? mean : mean * (1 + 8 * sigma_);
    max_.push_back(std::max<std::size_t>(64, round8(top)));
    largest_ = std::max(largest_, max_.back());
  }
}

std::size_t FragmentSizes::bytes(std::uint64_t event, int ru) const {
  double mean = mean_[ru];
  double b = mean;
  if (dist_ != SizeDistribution::fixed && sigma_ > 0) {
    std::uint64_t key = mix(seed_ ^ mix(event * 0x100000001B3ULL + static_cast<std::uint64_t>(ru)));
    double u1 = uniform(key), u2 = uniform(mix(key));
    double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);  // Box–Muller
    if (dist_ == SizeDistribution::normal) {
      b = mean * (1 + sigma_ * z);
    } else {  // log-normal with this mean and relative standard deviation sigma
      double s2 = std::log1p(sigma_ * sigma_);
      b = mean * std::exp(std::sqrt(s2) * z - s2 / 2);
    }
  }
  return std::clamp<std::size_t>(round8(std::max(b, 64.0)), 64, max_[ru]);
}

std::uint64_t header_mix(std::uint32_t ru, std::uint64_t event, std::uint64_t bytes) {
  return mix(mix(event) ^ (static_cast<std::uint64_t>(ru) << 32) ^ mix(bytes));
}

std::uint64_t payload_sum(const unsigned char* payload, std::size_t bytes) {
  std::uint64_t sum = 0;
  std::size_t n = bytes / 8;
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t w;
    std::memcpy(&w, payload + 8 * k, 8);
    sum += w * (2 * k + 1);
  }
  return sum;
}

Pattern::Pattern(std::size_t max_bytes, std::uint64_t seed) : words_(max_bytes / 8) {
  Rng rng(seed);
  for (auto& w : words_) w = rng.next();
  std::size_t n = words_.size() - kHeaderWords;
  prefix_.assign(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) prefix_[k + 1] = prefix_[k] + words_[kHeaderWords + k] * (2 * k + 1);
}

void Pattern::copy_to(unsigned char* buffer) const { std::memcpy(buffer, words_.data(), words_.size() * 8); }

std::uint64_t Pattern::checksum(std::uint32_t ru, std::uint64_t event, std::size_t bytes) const {
  return header_mix(ru, event, bytes) + prefix_[bytes / 8 - kHeaderWords];
}

}  // namespace daqnet::evb
