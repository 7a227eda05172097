#include "evb/config.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "evb/messages.hpp"

namespace daqnet::evb {
namespace {

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

struct Reader {
  std::string path;
  std::map<std::string, std::pair<std::string, int>> values;  // key → (text, line)
  std::set<std::string> used;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    auto it = values.find(key);
    std::string where = path + (it == values.end() ? "" : ":" + std::to_string(it->second.second));
    throw ConfigError(where + ": " + key + " " + what);
  }
  const std::string* text(const std::string& key) {
    used.insert(key);
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second.first;
  }
  void get(const std::string& key, std::string& out) {
    if (auto t = text(key)) out = *t;
  }
  void get(const std::string& key, double& out, double lo = -INFINITY) {
    auto t = text(key);
    if (!t) return;
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(t->c_str(), &end);
    if (end == t->c_str() || *end || errno || !std::isfinite(v)) fail(key, "= '" + *t + "' is not a number");
    if (v < lo) fail(key, "= " + *t + " must be at least " + std::to_string(lo));
    out = v;
  }
  template <class Int>
  void get_int(const std::string& key, Int& out, long long lo) {
    auto t = text(key);
    if (!t) return;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(t->c_str(), &end, 10);
    if (end == t->c_str() || *end || errno) fail(key, "= '" + *t + "' is not a whole number");
    if (v < lo) fail(key, "= " + *t + " must be at least " + std::to_string(lo));
    out = static_cast<Int>(v);
  }
  void get(const std::string& key, std::uint64_t& out) {
    auto t = text(key);
    if (!t) return;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(t->c_str(), &end, 10);
    if (end == t->c_str() || *end || errno || (*t)[0] == '-') fail(key, "= '" + *t + "' is not a seed");
    out = v;
  }
  void get(const std::string& key, bool& out) {
    auto t = text(key);
    if (!t) return;
    if (*t == "1" || *t == "true")
      out = true;
    else if (*t == "0" || *t == "false")
      out = false;
    else
      fail(key, "= '" + *t + "' must be true or false");
  }
  template <class Enum>
  void get_enum(const std::string& key, Enum& out, std::initializer_list<std::pair<const char*, Enum>> choices) {
    auto t = text(key);
    if (!t) return;
    std::string names;
    for (auto& [name, value] : choices) {
      if (*t == name) {
        out = value;
        return;
      }
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    fail(key, "= '" + *t + "' is not one of " + names);
  }
  std::vector<std::string> list(const std::string& key) {
    std::vector<std::string> out;
    auto t = text(key);
    if (!t) return out;
    std::stringstream ss(*t);
    std::string item;
    while (std::getline(ss, item, ','))
      if (!trim(item).empty()) out.push_back(trim(item));
    return out;
  }
};

}  // namespace

Config Config::read(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

Config Config::parse(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  Reader r{path, {}, {}};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) throw line_error(path, number, "expected key = value");
    std::string key = trim(line.substr(0, eq));
    if (r.values.contains(key)) throw line_error(path, number, key + " given twice");
    r.values[key] = {trim(line.substr(eq + 1)), number};
  }

  Config c;
  r.get_int("ranks", c.ranks, 0);
  r.get_enum("mode", c.mode, {{"event-manager", Mode::event_manager}, {"time-frames", Mode::time_frames}});
  r.get_enum("protocol", c.protocol, {{"push", Protocol::push}, {"pull", Protocol::pull}});
  r.get("transport", c.transport);
  if (c.transport != "mpi" && c.transport != "tcp")
    r.fail("transport", "= '" + c.transport + "' is not one of mpi, tcp");
  r.get("progress", c.progress);
  r.get_int("processes_per_node", c.processes_per_node, 1);
  if (c.processes_per_node > 2) r.fail("processes_per_node", "must be 1 or 2");
  r.get_int("senders", c.senders, 0);
  r.get_int("receivers", c.receivers, 0);
  r.get("barrier", c.barrier);
  r.get_int("credits", c.credits, 1);
  if (c.credits > static_cast<int>(kMaxCredits)) r.fail("credits", "must be at most " + std::to_string(kMaxCredits));
  r.get_int("in_flight", c.in_flight, 1);
  r.get_int("max_in_flight", c.max_in_flight, 0);
  r.get_enum("schedule", c.schedule,
             {{"barrel", Schedule::barrel}, {"random", Schedule::random}, {"all-at-once", Schedule::all_at_once}});
  r.get("schedule_seed", c.schedule_seed);
  r.get("fragment_bytes", c.fragment_bytes, 64);
  r.get_enum("fragment_distribution", c.distribution,
             {{"fixed", SizeDistribution::fixed},
              {"normal", SizeDistribution::normal},
              {"lognormal", SizeDistribution::lognormal}});
  r.get("fragment_sigma", c.fragment_sigma, 0);
  for (auto& item : r.list("fragment_bytes_per_ru")) {
    char* end = nullptr;
    double v = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end || !(v >= 64))
      r.fail("fragment_bytes_per_ru", "has '" + item + "' (sizes are numbers ≥ 64)");
    c.fragment_bytes_per_ru.push_back(v);
  }
  r.get_int("events_per_fragment", c.events_per_fragment, 1);
  r.get_int("meta_bytes", c.meta_bytes, 0);
  if (c.meta_bytes > 0 && c.meta_bytes < 64) r.fail("meta_bytes", "must be 0 (no meta-data) or at least 64");
  r.get_int("command_bytes", c.command_bytes, 64);
  r.get("rate_hz", c.rate_hz, 0);
  r.get_int("events", c.events, 0);
  r.get("seconds", c.seconds, 0);
  if ((c.events > 0) == (c.seconds > 0)) throw ConfigError(path + ": give exactly one of events and seconds");
  r.get("warmup_seconds", c.warmup_seconds, 0);
  r.get("seed", c.seed);
  r.get("checksum", c.checksum);
  r.get("report_seconds", c.report_seconds, 0.01);
  r.get("drain_timeout_seconds", c.drain_timeout_seconds, 0.1);
  r.get("stall_seconds", c.stall_seconds, 0.1);
  r.get("placement", c.placement);
  if (c.placement != "topology" && c.placement != "hostname" && c.placement != "random" && c.placement != "file")
    r.fail("placement", "= '" + c.placement + "' is not one of topology, hostname, random, file");
  r.get("placement_seed", c.placement_seed);
  c.placement_hosts = r.list("placement_hosts");
  r.get("tcp_address", c.tcp_address);
  r.get("tcp_interface", c.tcp_interface);
  r.get_int("tcp_socket_buffer_bytes", c.tcp_socket_buffer_bytes, 0);
  r.get("baseline", c.baseline);
  if (c.baseline != "none" && c.baseline != "alltoall" && c.baseline != "p2p")
    r.fail("baseline", "= '" + c.baseline + "' is not one of none, alltoall, p2p");
  r.get("baseline_seconds", c.baseline_seconds, 0.01);
  r.get_int("fault_corrupt_every", c.fault_corrupt_every, 0);
  r.get_int("fault_duplicate_every", c.fault_duplicate_every, 0);
  if (c.mode == Mode::time_frames && (c.senders < 1 || c.receivers < 1))
    throw ConfigError(path + ": time-frames mode needs senders ≥ 1 and receivers ≥ 1");
  for (auto& [key, value] : r.values)
    if (!r.used.contains(key)) throw line_error(path, value.second, "unknown key " + key);
  return c;
}

}  // namespace daqnet::evb
