#include "evb/stats.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace daqnet::evb {

void LatencyHistogram::add(double seconds) {
  std::size_t k = seconds <= kBase ? 0 : static_cast<std::size_t>(std::log(seconds / kBase) / std::log(kGrowth));
  if (k >= buckets_.size()) buckets_.resize(k + 1, 0);
  ++buckets_[k];
  ++count_;
  if (seconds > max_) max_ = seconds;
}

std::string LatencyHistogram::json() const {
  std::string b = "[";
  for (std::size_t k = 0; k < buckets_.size(); ++k) {
    if (!buckets_[k]) continue;
    if (b.size() > 1) b += ",";
    b += "[" + std::to_string(k) + "," + std::to_string(buckets_[k]) + "]";
  }
  b += "]";
  return JsonObject()
      .add("base_seconds", kBase)
      .add("growth", kGrowth)
      .add("count", count_)
      .add("max_seconds", max_)
      .raw("buckets", b)
      .str();
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += ch;
  }
  return out + "\"";
}

void JsonObject::key(const std::string& k) {
  if (!body_.empty()) body_ += ",";
  body_ += json_string(k) + ":";
}
JsonObject& JsonObject::add(const std::string& k, double v) {
  key(k);
  if (!std::isfinite(v)) {
    body_ += "null";
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  body_ += buf;
  return *this;
}
JsonObject& JsonObject::add(const std::string& k, std::uint64_t v) {
  key(k);
  body_ += std::to_string(v);
  return *this;
}
JsonObject& JsonObject::add(const std::string& k, std::int64_t v) {
  key(k);
  body_ += std::to_string(v);
  return *this;
}
JsonObject& JsonObject::add(const std::string& k, bool v) {
  key(k);
  body_ += v ? "true" : "false";
  return *this;
}
JsonObject& JsonObject::add(const std::string& k, const std::string& v) {
  key(k);
  body_ += json_string(v);
  return *this;
}
JsonObject& JsonObject::raw(const std::string& k, const std::string& json) {
  key(k);
  body_ += json;
  return *this;
}
JsonObject& JsonObject::add(const std::string& k, const Counters& c) {
  return raw(k, JsonObject()
                    .add("bytes_in", c.bytes_in)
                    .add("bytes_out", c.bytes_out)
                    .add("messages_in", c.messages_in)
                    .add("messages_out", c.messages_out)
                    .add("fragments_in", c.fragments_in)
                    .add("fragments_out", c.fragments_out)
                    .add("events_built", c.events_built)
                    .add("built_bytes", c.built_bytes)
                    .str());
}

void write_atomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text << "\n";
    out.close();
    if (!out) {
      std::remove(tmp.c_str());  // a full disk leaves no half file behind
      throw std::runtime_error("cannot write " + tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
}

}  // namespace daqnet::evb
