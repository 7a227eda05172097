#include "evb/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "evb/config_keys.hpp"
#include "evb/flow_control.hpp"
#include "evb/messages.hpp"

namespace daqnet::evb {
namespace {

// Counts and sizes daqnet-evb keeps in an int (rank counts, as MPI's; fragment sizes).
constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "path:line: what", for an error at one line of the file.
ConfigError line_error(const std::string& path, int line, const std::string& what) {
  std::string msg = path;
  msg += ':';
  msg += std::to_string(line);
  msg += ": ";
  msg += what;
  return ConfigError(msg);
}

// "path:line: key what" for a key run.cfg gives, "path: key what" for one it leaves out.
ConfigError key_error(const std::string& path, const std::map<std::string, std::pair<std::string, int>>& values,
                      const std::string& key, const std::string& what) {
  std::string msg = path;
  if (auto it = values.find(key); it != values.end()) {
    msg += ':';
    msg += std::to_string(it->second.second);
  }
  msg += ": ";
  msg += key;
  msg += ' ';
  msg += what;
  return ConfigError(msg);
}

// A number as run.cfg writes it: the whole text, decimal (fixed or scientific), finite.
// std::from_chars, not strtod, which also took hexadecimal ("0x10" = 16), leading blanks
// and '+', none of which Python's reader of run.cfg (daqnet collect) reads the same.
bool parse_number(const std::string& text, double& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out, std::chars_format::general);
  return ec == std::errc() && ptr == end && std::isfinite(out);
}

// A whole number as run.cfg writes it: the whole text, decimal digits after an optional '-'
// (signed types only), in range. No blank, '+' or other prefix: strtoll would skip a
// vertical tab and strtoull would take "-1" as 2^64-1.
template <class Int>
bool parse_whole(const std::string& text, Int& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!trim(item).empty()) out.push_back(trim(item));
  return out;
}

// Whole limits in full (2147483647, not 2.14748e+09), others as the stream writes them.
std::string number_text(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  std::ostringstream out;
  out << v;
  return out.str();
}

// The text of one key as its kind says, checked against the key's limits and choices.
ConfigValue read_value(const ConfigKey& k, const std::string& text,
                       const std::function<void(const std::string&)>& fail) {
  using Kind = ConfigKey::Kind;
  ConfigValue v;
  const auto within = [&](double x, const std::string& shown) {
    if (x < k.minimum) fail("= " + shown + " must be at least " + number_text(k.minimum));
    if (x > k.maximum) fail("= " + shown + " must be at most " + number_text(k.maximum));
  };
  switch (k.kind) {
  case Kind::integer:
    if (!parse_whole(text, v.integer)) fail("= '" + text + "' is not a whole number");
    within(static_cast<double>(v.integer), text);
    break;
  case Kind::number:
    if (!parse_number(text, v.number)) fail("= '" + text + "' is not a number");
    within(v.number, text);
    break;
  case Kind::seed:
    if (!parse_whole(text, v.seed)) fail("= '" + text + "' is not a seed (a whole number from 0 to 2^64-1)");
    break;
  case Kind::boolean:
    if (text == "1" || text == "true")
      v.boolean = true;
    else if (text == "0" || text == "false")
      v.boolean = false;
    else
      fail("= '" + text + "' must be true or false");
    break;
  case Kind::text:
    v.text = text;
    break;
  case Kind::choice: {
    std::string names;
    for (const auto& c : k.choices) {
      if (text == c) {
        v.text = text;
        return v;
      }
      names += (names.empty() ? "" : ", ") + c;
    }
    fail("= '" + text + "' is not one of " + names);
    break;
  }
  case Kind::number_list:
    for (const auto& item : split_list(text)) {
      double x = 0;
      // Byte counts are whole, as fragment_bytes is: 65.5 was taken (and rounded up to 72).
      const bool whole = k.unit == "bytes";
      if (!parse_number(item, x) || x < k.minimum || x > k.maximum || (whole && x != std::floor(x)))
        fail("has '" + item + "' (items are " + (whole ? "whole numbers of bytes" : "numbers") + " from " +
             number_text(k.minimum) + " to " + number_text(k.maximum) + ")");
      v.numbers.push_back(x);
    }
    break;
  case Kind::text_list:
    v.texts = split_list(text);
    break;
  }
  return v;
}

}  // namespace

Config Config::read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

namespace {

// Config::parse, also giving each key's value as read when `read` is not null.
Config parse_config(const std::string& text, const std::string& path, std::map<std::string, ConfigValue>* read) {
  std::istringstream in(text);
  std::map<std::string, std::pair<std::string, int>> values;  // key → (text, line)
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    // C functions would end a value at a NUL byte and ignore the rest of the line.
    if (line.find('\0') != std::string::npos) throw line_error(path, number, "a NUL byte: run.cfg is a text file");
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) throw line_error(path, number, "expected key = value");
    std::string key = trim(line.substr(0, eq));
    if (values.contains(key)) throw line_error(path, number, key + " given twice");
    values[key] = {trim(line.substr(eq + 1)), number};
  }

  // Every key from the one table (config_keys.cpp): its default when run.cfg leaves it out,
  // its limits and choices; then the rules between keys.
  Config c;
  std::set<std::string> known;
  for (const ConfigKey& k : config_keys()) {
    known.insert(k.name);
    auto it = values.find(k.name);
    const std::string& text = it == values.end() ? k.default_text : it->second.first;
    ConfigValue v = read_value(k, text, [&](const std::string& what) { throw key_error(path, values, k.name, what); });
    k.store(c, v);
    if (read) (*read)[k.name] = std::move(v);
  }
  const auto fail = [&](const std::string& key, const std::string& what) { throw key_error(path, values, key, what); };
  if (c.meta_bytes > 0 && c.meta_bytes < 64) fail("meta_bytes", "must be 0 (no meta-data) or at least 64");
  // The meta-data lists the packed events' sizes after the header, 4 bytes each: more events
  // than it holds were cut from the list without a word (1,000,000 per fragment ran, 2 G
  // events/s of 1-byte events).
  if (const auto listed = (c.meta_bytes - static_cast<std::int64_t>(sizeof(FragmentHeader))) / 4;
      c.meta_bytes > 0 && c.events_per_fragment > listed)
    fail("events_per_fragment",
         "= " + std::to_string(c.events_per_fragment) + ": the meta-data lists the events' sizes, 4 bytes each after " +
             std::to_string(sizeof(FragmentHeader)) + " bytes of header, and meta_bytes = " +
             std::to_string(c.meta_bytes) + " holds " + std::to_string(listed) + "; raise meta_bytes to at least " +
             std::to_string(sizeof(FragmentHeader) + 4 * static_cast<std::size_t>(c.events_per_fragment)));
  const auto& sizes = c.fragment_bytes_per_ru;
  const double smallest = sizes.empty() ? c.fragment_bytes : *std::min_element(sizes.begin(), sizes.end());
  if (c.events_per_fragment > 1 && smallest < c.events_per_fragment)
    fail("events_per_fragment", "= " + std::to_string(c.events_per_fragment) + " events in fragments of " +
                                    number_text(smallest) + " bytes: events of 0 bytes");
  // Smaller socket buffers stall TCP for seconds at a time (1 byte: a fragment called lost).
  if (c.transport == "tcp" && c.tcp_socket_buffer_bytes > 0 && c.tcp_socket_buffer_bytes < 4096)
    fail("tcp_socket_buffer_bytes", "must be 0 (the system's default) or at least 4096");
  if (!c.tcp_token.empty() &&
      (c.tcp_token.size() != 32 || c.tcp_token.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos))
    fail("tcp_token", "must be 32 hexadecimal digits");
  // Buffers hold one largest fragment per readout unit: mean × (1 + 8 σ) for drawn sizes
  // (fragments.cpp), which must stay below 2 GiB, as daqnet bench checks in the scenario.
  if (c.distribution != SizeDistribution::fixed) {
    const auto& per_ru = c.fragment_bytes_per_ru;
    const double mean = per_ru.empty() ? c.fragment_bytes : *std::max_element(per_ru.begin(), per_ru.end());
    if (mean * (1 + 8 * c.fragment_sigma) > static_cast<double>(kIntMax))
      fail("fragment_sigma", "= " + number_text(c.fragment_sigma) + " makes fragments of up to " +
                                 (per_ru.empty() ? "fragment_bytes" : "max(fragment_bytes_per_ru)") + " × (1 + 8 × " +
                                 number_text(c.fragment_sigma) + ") bytes, more than 2 GiB");
  }
  if ((c.events > 0) == (c.seconds > 0)) throw ConfigError(path + ": give exactly one of events and seconds");
  if (c.mode == Mode::time_frames && (c.senders < 1 || c.receivers < 1))
    throw ConfigError(path + ": time-frames mode needs senders ≥ 1 and receivers ≥ 1");
  // One rank per unit: the sum is a rank count (an int, as MPI's).
  if (c.mode == Mode::time_frames && std::int64_t{c.senders} + c.receivers > kIntMax)
    fail("receivers", "= " + std::to_string(c.receivers) +
                          ": senders + receivers = " + std::to_string(std::int64_t{c.senders} + c.receivers) +
                          " ranks, more than " + std::to_string(kIntMax));
  // As daqnet bench refuses them (docs/bench.md): a hand-written run.cfg ran them as if fine.
  if (c.recover && c.transport != "tcp") fail("recover", "= true: failure recovery needs transport = tcp");
  if (c.recover && c.mode == Mode::time_frames)
    fail("recover", "= true: time-frames mode does not recover from a rank's death");
  if (c.baseline_cold && c.baseline == "p2p")
    fail("baseline_cache", "= cold: applies to the alltoall and isend baselines, not to p2p");
  if (c.baseline == "p2p" && p2p_window(c) > kIntMax)
    fail("in_flight", "= " + std::to_string(c.in_flight) + ": the p2p baseline keeps credits × in_flight = " +
                          std::to_string(p2p_window(c)) + " messages in flight, more than " + std::to_string(kIntMax));
  for (auto& [key, value] : values)
    if (!known.contains(key)) throw line_error(path, value.second, "unknown key " + key);
  return c;
}

}  // namespace

Config Config::parse(const std::string& text, const std::string& path) { return parse_config(text, path, nullptr); }

std::map<std::string, ConfigValue> read_config_values(const std::string& text, const std::string& path) {
  std::map<std::string, ConfigValue> read;
  parse_config(text, path, &read);
  return read;
}

}  // namespace daqnet::evb
