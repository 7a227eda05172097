// Counters and latency histograms of the units, and the per-rank result files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace daqnet::evb {

struct Counters {
  std::uint64_t bytes_in = 0, bytes_out = 0;
  std::uint64_t messages_in = 0, messages_out = 0;
  std::uint64_t fragments_in = 0, fragments_out = 0;
  std::uint64_t events_built = 0;
  std::uint64_t built_bytes = 0;  // payload of the events built (data fragments only)
  Counters operator-(const Counters& o) const {
    return {bytes_in - o.bytes_in,         bytes_out - o.bytes_out,       messages_in - o.messages_in,
            messages_out - o.messages_out, fragments_in - o.fragments_in, fragments_out - o.fragments_out,
            events_built - o.events_built, built_bytes - o.built_bytes};
  }
};

// Log-spaced buckets 1 % wide from 100 ns: percentiles to 1 %, merged across ranks by adding.
class LatencyHistogram {
public:
  static constexpr double kBase = 1e-7, kGrowth = 1.01;
  // Room for latencies up to ~100 s (2,100 buckets, 17 KiB): no allocation while measuring.
  LatencyHistogram() { buckets_.reserve(2100); }
  void add(double seconds);
  std::uint64_t count() const { return count_; }
  double max() const { return max_; }
  std::string json() const;  // {"base_seconds", "growth", "count", "max_seconds", "buckets": [[k, n], ...]}

private:
  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0;
  double max_ = 0;
};

// A small JSON object writer: enough for flat result documents, no dependency.
class JsonObject {
public:
  JsonObject& add(const std::string& key, double v);
  JsonObject& add(const std::string& key, std::uint64_t v);
  JsonObject& add(const std::string& key, std::int64_t v);
  JsonObject& add(const std::string& key, int v) { return add(key, static_cast<std::int64_t>(v)); }
  JsonObject& add(const std::string& key, bool v);
  JsonObject& add(const std::string& key, const std::string& v);
  JsonObject& add(const std::string& key, const char* v) { return add(key, std::string(v)); }
  JsonObject& raw(const std::string& key, const std::string& json);
  JsonObject& add(const std::string& key, const Counters& c);
  std::string str() const { return "{" + body_ + "}"; }

private:
  void key(const std::string& k);
  std::string body_;
};
std::string json_string(const std::string& s);

// Writes text to path atomically (temporary file, then rename), so a reader or a crash never
// sees half a document.
void write_atomically(const std::string& path, const std::string& text);

}  // namespace daqnet::evb
