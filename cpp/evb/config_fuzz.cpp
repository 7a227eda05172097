// libFuzzer harness of run.cfg, the run description daqnet-evb reads (built with
// -DDAQNET_FUZZ=ON and Clang; tests/test_fuzz_cpp.py runs it, docs/fuzzing.md says how).
//
// Any text must either be refused with one ConfigError of one line naming run.cfg, or give a
// Config from which everything daqnet-evb derives before and while it runs (placement of the
// units, fragment sizes and buffer sizes, gather orders) comes out without undefined
// behaviour, within the buffers it sizes, and without an exception of any other kind.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "evb/config.hpp"
#include "evb/config_keys.hpp"
#include "evb/flow_control.hpp"
#include "evb/fragments.hpp"
#include "evb/gather_order.hpp"
#include "evb/layout.hpp"

using namespace daqnet::evb;

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "config_fuzz: %s\n", what.c_str());
  std::abort();
}

void check_message(const std::string& msg, bool names_file) {
  if (msg.empty() || msg.find('\n') != std::string::npos) fail("not one line: '" + msg + "'");
  if (names_file && msg.rfind("run.cfg", 0) != 0) fail("does not start with the file: '" + msg + "'");
}

// Every whole number run.cfg gives and Config::parse took is written in decimal digits (a
// '-' first for signed keys): anything else (blanks, '+', "-1" for a seed) must be refused,
// not read as some other number.
void check_whole_numbers(const std::string& text) {
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    line = line.substr(0, line.find('#'));
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const auto blank = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; };
    auto trim = [&](std::string s) {
      while (!s.empty() && blank(s.back())) s.pop_back();
      std::size_t i = 0;
      while (i < s.size() && blank(s[i])) ++i;
      return s.substr(i);
    };
    const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    for (const ConfigKey& k : config_keys()) {
      if (k.name != key || (k.kind != ConfigKey::Kind::integer && k.kind != ConfigKey::Kind::seed)) continue;
      std::size_t i = k.kind == ConfigKey::Kind::integer && !value.empty() && value[0] == '-' ? 1 : 0;
      bool digits = i < value.size();
      for (; i < value.size(); ++i) digits = digits && value[i] >= '0' && value[i] <= '9';
      if (!digits) fail(key + " = '" + value + "' taken as a whole number");
    }
  }
}

// What daqnet-evb derives from an accepted run description on `ranks` processes.
void derive(const Config& c, int ranks) {
  std::vector<std::string> hosts;
  for (int r = 0; r < ranks; ++r)
    hosts.push_back(c.placement == "file" && !c.placement_hosts.empty()
                        ? c.placement_hosts[static_cast<std::size_t>(r) % c.placement_hosts.size()]
                        : "node" + std::to_string(r % 3));
  for (int rank : {0, ranks - 1}) {
    Layout l;
    try {
      l = make_layout(c, rank, hosts);
    } catch (const ConfigError& e) {
      check_message(e.what(), false);
      return;
    }
    const int rus = l.readout_units(), bus = l.builder_units();
    if (rus < 1 || bus < 1) fail("a layout without readout or builder units");
    FragmentSizes sizes(c, rus);
    // A builder's slot holds one largest fragment of every RU; all its buffers: credits slots.
    std::uint64_t slot = 0;
    for (int ru = 0; ru < rus; ++ru) {
      const std::size_t top = sizes.max_bytes(ru);
      if (top < 64 || top % 8 || top > (std::size_t{1} << 31))
        fail("largest fragment of " + std::to_string(top) + " bytes");
      slot += top;
      for (std::uint64_t event : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{12345}, ~std::uint64_t{0}}) {
        const std::size_t b = sizes.bytes(event, ru);
        if (b < 64 || b > top || b % 8)
          fail("fragment of " + std::to_string(b) + " bytes, largest " + std::to_string(top));
      }
    }
    (void)(slot * static_cast<std::uint64_t>(c.credits));
    const int window = gather_window(c, rus);
    if (window < 1) fail("a gather window of " + std::to_string(window));
    for (int bu = 0; bu < bus; ++bu) {
      auto order = gather_order(c.schedule, bu, 3, 7, rus, c.schedule_seed);
      std::vector<bool> seen(static_cast<std::size_t>(rus));
      for (int ru : order) {
        if (ru < 0 || ru >= rus || seen[static_cast<std::size_t>(ru)]) fail("a gather order that is no permutation");
        seen[static_cast<std::size_t>(ru)] = true;
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Config c;
  try {
    c = Config::parse(text, "run.cfg");
  } catch (const ConfigError& e) {
    check_message(e.what(), true);
    return 0;
  }
  check_whole_numbers(text);
  if (c.baseline == "p2p" && p2p_window(c) > std::numeric_limits<int>::max())
    fail("a p2p baseline window of " + std::to_string(p2p_window(c)) + " messages");
  // MPI's world: the prepared size, or (0: any) the units time-frames mode needs, else 4;
  // capped, as a world of millions of ranks says nothing more about the reader.
  long long ranks = c.ranks > 0 ? c.ranks : c.mode == Mode::time_frames ? 0LL + c.senders + c.receivers : 4;
  if (ranks > 64) ranks = 64;
  derive(c, static_cast<int>(ranks));
  return 0;
}
