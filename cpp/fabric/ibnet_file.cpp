// daqnet — plan, simulate and benchmark event-building networks.
#include "fabric/ibnet_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/count.hpp"
#include "common/error.hpp"
#include "common/line_reader.hpp"
#include "common/natural_order.hpp"
#include "fabric/levels.hpp"

namespace daqnet::fabric {

namespace {

// Per-lane data rates as the InfiniBand names are used (4 lanes of EDR = 100 Gb/s).
constexpr std::array<std::pair<std::string_view, double>, 9> kSpeeds{{{"SDR", 2.5},
                                                                      {"DDR", 5},
                                                                      {"QDR", 10},
                                                                      {"FDR10", 10},
                                                                      {"FDR", 14},
                                                                      {"EDR", 25},
                                                                      {"HDR", 50},
                                                                      {"NDR", 100},
                                                                      {"XDR", 200}}};
constexpr std::array<int, 5> kWidths{4, 1, 2, 8, 12};

// InfiniBand unicast LIDs are 0x0001-0xBFFF (0xC000-0xFFFE multicast, 0xFFFF permissive);
// 0 is a port without a LID (ibsim net files write "lid 0").
constexpr int32_t kMaxUnicastLid = 0xBFFF;

/// One record of the file before the nodes are cabled.
struct RawNode {
  std::string id;  // the quoted node id: "S-<guid>" from ibnetdiscover, any text in ibsim files
  bool is_switch = false;
  int32_t num_ports = 0;
  std::string desc;  // node description, "" if the line has none
  uint64_t guid = 0;
  uint64_t port_guid = 0;
  int32_t lid = 0;
  uint32_t line = 0;
  uint32_t lid_line = 0;     // where the LID is: the node line (switch) or its port's (CA)
  bool aggregation = false;  // a SHARP Aggregation Node: left out of the fabric
};

struct RawPort {
  int32_t node = 0;
  int32_t port = 0;
  std::string remote_id;
  int32_t remote_port = 1;
  double gbps = 0;  // 0: the line gives no width × speed
  uint32_t line = 0;
};

/// Reads one file line by line; every error names the file, the line and the field.
class Parser {
public:
  explicit Parser(const std::string& path) : in_(path, "topology") {}

  [[noreturn]] void fail(uint32_t line, const std::string& field, const std::string& what) const {
    in_.fail_at(line, field, what);
  }

  void parse() {
    std::string_view line;
    int32_t current = -1;  // the node whose port lines follow
    while (in_.next(line)) {
      if (line.empty()) {
        current = -1;
        continue;
      }
      if (line[0] == '#') {
        if (line.starts_with("# Topology file: generated")) captured = true;
        continue;
      }
      if (line[0] == '[') {
        if (current < 0) in_.fail("port line", "a port line outside a node record (no Switch/Ca line above)");
        parse_port(line, current);
        continue;
      }
      if (parse_guid_line(line)) continue;
      if (line.starts_with("vendid=") || line.starts_with("devid=")) {  // the next node's vendor and device
        const bool vendor = line[0] == 'v';
        const auto v = line.substr(vendor ? 7 : 6);
        (vendor ? pending_vendid_ : pending_devid_) =
            in_.hex(v.substr(0, v.find_first_of(" \t")), vendor ? "vendid" : "devid");
        continue;
      }
      if (starts_with_word(line, "Switch") || starts_with_word(line, "Ca") || starts_with_word(line, "Hca") ||
          starts_with_word(line, "Rt")) {
        current = parse_node(line);
        continue;
      }
      if (line.starts_with("Hostname:") || line.starts_with("Chassis ") || line == "Non-Chassis Nodes")
        continue;  // identification lines daqnet does not need; chassis headings of -g output
      if (line.starts_with("DR path ")) continue;  // ibnetdiscover -s: its discovery steps, before the topology itself
      if (starts_with_word(line, "SW") || starts_with_word(line, "CA") || starts_with_word(line, "RT"))
        in_.fail("line",
                 "this is ibnetdiscover -p output, a list of ports: capture the topology with plain ibnetdiscover");
      if (starts_with_word(line, "include") || starts_with_word(line, "do"))
        in_.fail("line", "ibsim's '" + std::string(line.substr(0, line.find_first_of(" \t"))) +
                             "' extension is not supported: give one self-contained file");
      in_.fail("line", "expected a node line (Switch, Ca, Hca), a port line ([n] ...) or a guid line, got '" +
                           std::string(line.substr(0, 40)) + "'");
    }
  }

  std::vector<RawNode> nodes;
  std::vector<RawPort> ports;
  bool captured = false;  // ibnetdiscover's header: every cable is listed from both ends
  std::unordered_map<std::string, int32_t> by_id;

private:
  static bool starts_with_word(std::string_view s, std::string_view w) {
    return s.starts_with(w) && s.size() > w.size() && is_blank(s[w.size()]);
  }

  /// switchguid=0x…(portguid), caguid=0x…, rtguid=0x…, sysimgguid=0x…: the next node's GUIDs.
  bool parse_guid_line(std::string_view line) {
    for (std::string_view key : {"switchguid=", "caguid=", "rtguid=", "sysimgguid="}) {
      if (!line.starts_with(key)) continue;
      if (key == "sysimgguid=") return true;
      std::string_view v = line.substr(key.size());
      v = v.substr(0, v.find_first_of(" \t#"));
      const size_t paren = v.find('(');
      pending_guid_key_ = key.substr(0, key.size() - 1);
      pending_guid_line_ = in_.lineno();
      pending_guid_ = in_.hex(v.substr(0, paren), std::string(pending_guid_key_));
      pending_port_guid_ = 0;
      if (paren != std::string_view::npos) {
        const size_t close = v.find(')', paren);
        if (close == std::string_view::npos) in_.fail("port guid", "missing ')'");
        pending_port_guid_ = in_.hex(v.substr(paren + 1, close - paren - 1), "port guid");
      }
      return true;
    }
    return false;
  }

  /// A quoted string at s[i] ('"' expected); i moves past the closing quote.
  std::string_view quoted(std::string_view s, size_t& i, const std::string& field) const {
    if (i >= s.size() || s[i] != '"') in_.fail(field, "expected a quoted name");
    const size_t close = s.find('"', i + 1);
    if (close == std::string_view::npos) in_.fail(field, "missing closing quote");
    const auto q = s.substr(i + 1, close - i - 1);
    i = close + 1;
    return q;
  }

  /// "[n]" at s[i]; i moves past it.
  int32_t bracketed(std::string_view s, size_t& i, const std::string& field) const {
    const size_t close = s.find(']', i);
    if (close == std::string_view::npos) in_.fail(field, "missing ']'");
    const int32_t v = in_.decimal(trim(s.substr(i + 1, close - i - 1)), field);
    i = close + 1;
    return v;
  }

  /// "[ext n]" of ibnetdiscover -g: the external (front-panel) number, not needed here.
  static void skip_ext(std::string_view s, size_t& i) {
    if (s.substr(i).starts_with("[ext")) {
      const size_t close = s.find(']', i);
      i = close == std::string_view::npos ? s.size() : close + 1;
    }
  }

  /// "(hexguid)" at s[i], if there is one.
  uint64_t paren_guid(std::string_view s, size_t& i, const std::string& field) const {
    skip_blanks(s, i);
    if (i >= s.size() || s[i] != '(') return 0;
    const size_t close = s.find(')', i);
    if (close == std::string_view::npos) in_.fail(field, "missing ')'");
    const uint64_t g = in_.hex(s.substr(i + 1, close - i - 1), field);
    i = close + 1;
    return g;
  }

  /// The number after the first "lid" word of `s`, 0 if none.
  int32_t lid_after(std::string_view s) const {
    size_t at = 0;
    while ((at = s.find("lid", at)) != std::string_view::npos) {
      const bool word_start = at == 0 || is_blank(s[at - 1]);
      size_t i = at + 3;
      if (word_start && i < s.size() && is_blank(s[i])) {
        skip_blanks(s, i);
        size_t j = i;
        while (j < s.size() && !is_blank(s[j])) ++j;
        const int32_t lid = in_.decimal(s.substr(i, j - i), "lid");
        if (lid < 0 || lid > kMaxUnicastLid)
          in_.fail("lid", "LID " + std::to_string(lid) + " is outside the unicast range 1-49151 (0x0001-0xBFFF)");
        return lid;
      }
      at += 3;
    }
    return 0;
  }

  /// The rate of the first width × speed word ("4xEDR") in a comment, 0 if none.
  double rate_in(std::string_view comment) const {
    size_t i = 0;
    while (i < comment.size()) {
      skip_blanks(comment, i);
      size_t j = i;
      while (j < comment.size() && !is_blank(comment[j])) ++j;
      const auto w = comment.substr(i, j - i);
      i = j;
      const size_t x = w.find('x');
      if (x == 0 || x == std::string_view::npos || x > 2) continue;
      if (!std::all_of(w.begin(), w.begin() + static_cast<ptrdiff_t>(x),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
        continue;
      const auto gbps = ib_link_gbps(w);
      if (!gbps)
        in_.fail("width x speed",
                 "'" + std::string(w) +
                     "' is not an InfiniBand link (e.g. 4xEDR; speeds SDR DDR QDR FDR10 FDR EDR HDR NDR XDR)");
      return *gbps;
    }
    return 0;
  }

  /// Switch 36 "S-…" # "desc" base port 0 lid 3 lmc 0  |  Ca 2 "H-…" # "desc"
  int32_t parse_node(std::string_view line) {
    RawNode n;
    n.line = in_.lineno();
    n.is_switch = line.starts_with("Switch");
    if (line.starts_with("Rt"))
      in_.fail("node type", "routers (Rt) are not supported: daqnet models one subnet of hosts and switches");
    // After the type word, which ends at a blank as starts_with_word saw it ('\r' included).
    size_t i = static_cast<size_t>(std::find_if(line.begin(), line.end(), is_blank) - line.begin());
    skip_blanks(line, i);
    size_t j = i;
    while (j < line.size() && !is_blank(line[j]) && line[j] != '"') ++j;
    // "Ca : 0x… ports 1 …" is ibnetdiscover -l (a list of nodes, with no cables).
    if (line.substr(i, j - i) == ":")
      in_.fail("node line",
               "this is ibnetdiscover -l (or -H, -S) output, a list without cables: capture the topology "
               "with plain ibnetdiscover");
    n.num_ports = in_.decimal(line.substr(i, j - i), "number of ports");
    if (n.num_ports < 1 || n.num_ports > 254)
      in_.fail("number of ports", std::to_string(n.num_ports) + " is not in 1..254");
    i = j;
    skip_blanks(line, i);
    n.id = std::string(quoted(line, i, "node id"));
    if (n.id.empty()) in_.fail("node id", "empty");
    skip_blanks(line, i);
    if (i < line.size() && line[i] == '#') {
      ++i;
      skip_blanks(line, i);
      if (i < line.size() && line[i] == '"') n.desc = std::string(trim(quoted(line, i, "node description")));
      if (n.is_switch) {
        n.lid = lid_after(line.substr(i));
        n.lid_line = n.line;
      }
    } else if (i < line.size()) {
      in_.fail("node line", "unexpected '" + std::string(line.substr(i)) + "' after the node id");
    }
    n.guid = pending_guid_;
    n.port_guid = pending_port_guid_;
    n.aggregation =
        !n.is_switch && (is_aggregation_node(n.desc) || is_aggregation_device(pending_vendid_, pending_devid_));
    // GUIDs are unique in a subnet: a copied record would make two nodes one in the LFT dumps.
    // Node and port GUIDs are checked apart (a switch's port 0 carries its node GUID).
    if (n.guid != 0) unique_guid(node_guids_, n.guid, "node GUID", n.id, pending_guid_line_, pending_guid_key_);
    if (n.is_switch && n.port_guid != 0)
      unique_guid(port_guids_, n.port_guid, "port GUID", n.id, pending_guid_line_, "port guid");
    pending_guid_ = pending_port_guid_ = pending_vendid_ = pending_devid_ = 0;
    const auto [it, added] = by_id.emplace(n.id, static_cast<int32_t>(nodes.size()));
    if (!added)
      in_.fail("node id", "\"" + n.id + "\" already defined at line " +
                              std::to_string(nodes[static_cast<size_t>(it->second)].line));
    nodes.push_back(std::move(n));
    return static_cast<int32_t>(nodes.size()) - 1;
  }

  /// [p][ext e](portguid)  "REMOTE"[q][ext e](guid)  # comment
  void parse_port(std::string_view line, int32_t node) {
    RawNode& n = nodes[static_cast<size_t>(node)];
    RawPort p;
    p.node = node;
    p.line = in_.lineno();
    size_t i = 0;
    p.port = bracketed(line, i, "port number");
    if (p.port < 1 || p.port > n.num_ports)
      in_.fail("port number", "port " + std::to_string(p.port) + " of \"" + n.id + "\" is beyond its " +
                                  std::to_string(n.num_ports) + " ports");
    skip_ext(line, i);
    const uint64_t own_guid = paren_guid(line, i, "port guid");
    skip_blanks(line, i);
    p.remote_id = std::string(quoted(line, i, "remote node id"));
    if (i < line.size() && line[i] == '[') p.remote_port = bracketed(line, i, "remote port number");
    skip_ext(line, i);
    paren_guid(line, i, "remote port guid");
    skip_blanks(line, i);
    std::string_view comment;
    if (i < line.size() && line[i] == '#')
      comment = line.substr(i + 1);
    else if (i < line.size() && line.substr(i).find('=') == std::string_view::npos)
      in_.fail("port line", "unexpected '" + std::string(line.substr(i)) + "' after the remote port");
    if (!n.is_switch) {
      // "# lid 6 lmc 0 "remote" lid 3 4xEDR": the CA port's own LID comes first.
      const size_t quote = comment.find('"');
      const int32_t lid = lid_after(comment.substr(0, quote));
      if (own_guid != 0) unique_guid(port_guids_, own_guid, "port GUID", n.id, p.line, "port guid");
      if (n.lid == 0) {
        n.lid = lid;
        n.lid_line = p.line;
        n.port_guid = own_guid != 0 ? own_guid : n.port_guid;
      }
    }
    // The width × speed follows the remote's description (which may hold any words).
    const size_t last_quote = comment.rfind('"');
    p.gbps = rate_in(last_quote == std::string_view::npos ? comment : comment.substr(last_quote + 1));
    ports.push_back(std::move(p));
  }

  /// Fails at `line` if `guid` was already seen (`seen`: GUID → node id and line).
  void unique_guid(std::unordered_map<uint64_t, std::pair<std::string, uint32_t>>& seen, uint64_t guid,
                   const std::string& kind, const std::string& id, uint32_t line, std::string_view field) const {
    const auto [it, added] = seen.emplace(guid, std::pair(id, line));
    if (added) return;
    char hex[17];
    const auto end = std::to_chars(hex, hex + 16, guid, 16).ptr;
    in_.fail_at(line, std::string(field),
                kind + " 0x" + std::string(hex, end) + " of \"" + id + "\" is also the " + kind + " of \"" +
                    it->second.first + "\" (line " + std::to_string(it->second.second) + ")");
  }

  LineReader in_;
  uint64_t pending_guid_ = 0;
  uint64_t pending_port_guid_ = 0;
  uint64_t pending_vendid_ = 0;
  uint64_t pending_devid_ = 0;
  uint32_t pending_guid_line_ = 0;
  std::string_view pending_guid_key_;  // "switchguid" or "caguid": a literal
  std::unordered_map<uint64_t, std::pair<std::string, uint32_t>> node_guids_, port_guids_;
};

/// Names of the nodes: `names` as the fabric gets them, `described` from the descriptions.
struct NodeNames {
  std::vector<std::string> names, described;
};

/// Switch names: the description with blanks as '_'; hosts: its first word. A node without
/// one, or sharing it with another node of its kind, keeps its ibnetdiscover id.
NodeNames node_names(const std::vector<RawNode>& nodes) {
  std::vector<std::string> described(nodes.size());
  std::unordered_map<std::string, int> count;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const auto& n = nodes[k];
    described[k] = ib_node_name(n.desc, n.is_switch);
    if (!described[k].empty() && !n.aggregation) ++count[described[k]];
  }
  std::vector<std::string> names = described;
  std::vector<bool> by_id(nodes.size());
  for (size_t k = 0; k < nodes.size(); ++k) by_id[k] = names[k].empty() || count[names[k]] > 1;
  // An id may also be another node's description ("S-…" found by the fuzzer): that node
  // keeps its id too, until no name is taken twice (ids are unique).
  for (bool changed = true; changed;) {
    changed = false;
    std::unordered_set<std::string_view> ids;
    for (size_t k = 0; k < nodes.size(); ++k)
      if (by_id[k] && !nodes[k].aggregation) ids.insert(nodes[k].id);
    for (size_t k = 0; k < nodes.size(); ++k)
      if (!by_id[k] && ids.contains(names[k])) by_id[k] = changed = true;
  }
  for (size_t k = 0; k < nodes.size(); ++k)
    if (by_id[k]) names[k] = nodes[k].id;
  return {std::move(names), std::move(described)};
}

}  // namespace

std::string ib_node_name(std::string_view description, bool is_switch) {
  description = trim(description);
  std::string name;
  if (is_switch) {
    for (char c : description) name.push_back(is_blank(c) ? '_' : c);
  } else {
    name = std::string(description.substr(0, description.find_first_of(" \t")));
  }
  return name;
}

bool is_aggregation_device(uint64_t vendor_id, uint64_t device_id) {
  // Mellanox/NVIDIA's vendor id and the Aggregation Node's device id (53001).
  return vendor_id == 0x2c9 && device_id == 0xcf09;
}

bool is_aggregation_node(std::string_view description) {
  // "Mellanox Technologies Aggregation Node" as Quantum firmware writes it; the suffix also
  // matches a vendor name changed with the brand.
  return trim(description).ends_with("Aggregation Node");
}

std::optional<double> ib_link_gbps(std::string_view width_speed) {
  const size_t x = width_speed.find('x');
  if (x == std::string_view::npos || x == 0) return std::nullopt;
  int width = 0;
  const auto [p, ec] = std::from_chars(width_speed.data(), width_speed.data() + x, width);
  if (ec != std::errc() || p != width_speed.data() + x) return std::nullopt;
  if (std::find(kWidths.begin(), kWidths.end(), width) == kWidths.end()) return std::nullopt;
  const auto speed = width_speed.substr(x + 1);
  for (const auto& [name, lane] : kSpeeds)
    if (speed == name) return width * lane;
  return std::nullopt;
}

std::optional<std::string> ib_width_speed(double gbps) {
  for (int width : kWidths)
    for (const auto& [name, lane] : kSpeeds)
      if (std::abs(width * lane - gbps) < 1e-9 * gbps) return std::to_string(width) + "x" + std::string(name);
  return std::nullopt;
}

std::shared_ptr<Fabric> read_ibnetdiscover(const std::string& path, const IbnetOptions& options) {
  Parser parser(path);
  parser.parse();
  const auto& nodes = parser.nodes;
  if (nodes.empty()) throw Error(path + ": no Switch or Ca records: not ibnetdiscover output");

  std::unordered_map<int32_t, size_t> by_lid;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (nodes[k].lid == 0) continue;
    const auto [it, added] = by_lid.emplace(nodes[k].lid, k);
    // Named by description where there is one (node00, not H-0000000000100000), at the
    // lines that hold the LIDs.
    auto name = [&](size_t i) { return "\"" + (nodes[i].desc.empty() ? nodes[i].id : nodes[i].desc) + "\""; };
    if (!added)
      parser.fail(nodes[k].lid_line ? nodes[k].lid_line : nodes[k].line, "lid",
                  "LID " + std::to_string(nodes[k].lid) + " of " + name(k) + " is also the LID of " + name(it->second) +
                      " (line " +
                      std::to_string(nodes[it->second].lid_line ? nodes[it->second].lid_line : nodes[it->second].line) +
                      ")");
  }

  // Cable every port line to its remote end; both ends of a cable usually appear, and must agree.
  struct End {
    int32_t node = -1;
    int32_t port = 0;
    size_t record = 0;  // index into parser.ports
  };
  std::vector<std::vector<End>> peer(nodes.size());
  for (size_t k = 0; k < nodes.size(); ++k) peer[k].resize(static_cast<size_t>(nodes[k].num_ports) + 1);
  for (size_t r = 0; r < parser.ports.size(); ++r) {
    const auto& p = parser.ports[r];
    const auto it = parser.by_id.find(p.remote_id);
    if (it == parser.by_id.end())
      parser.fail(p.line, "remote node id", "\"" + p.remote_id + "\" has no record in the file (truncated file?)");
    const auto& remote = nodes[static_cast<size_t>(it->second)];
    if (p.remote_port < 1 || p.remote_port > remote.num_ports)
      parser.fail(p.line, "remote port number",
                  "port " + std::to_string(p.remote_port) + " of \"" + remote.id + "\" is beyond its " +
                      std::to_string(remote.num_ports) + " ports");
    if (it->second == p.node) parser.fail(p.line, "remote node id", "a cable from \"" + remote.id + "\" to itself");
    if (remote.aggregation || nodes[static_cast<size_t>(p.node)].aggregation) continue;  // its port stays free
    auto& e = peer[static_cast<size_t>(p.node)][static_cast<size_t>(p.port)];
    if (e.node >= 0)
      parser.fail(
          p.line, "port number",
          "port " + std::to_string(p.port) + " already listed at line " + std::to_string(parser.ports[e.record].line));
    e = End{it->second, p.remote_port, r};
  }
  for (size_t a = 0; a < nodes.size(); ++a)
    for (size_t pa = 1; pa < peer[a].size(); ++pa) {
      const End& e = peer[a][pa];
      if (e.node < 0) continue;
      End& back = peer[static_cast<size_t>(e.node)][static_cast<size_t>(e.port)];
      if (back.node < 0) {  // listed from one end only (hand-written net files)
        // ibnetdiscover prints every cable from both ends: one end missing is a capture
        // edited or damaged, read as a fabric without a word before.
        if (parser.captured)
          parser.fail(parser.ports[e.record].line, "remote node id",
                      "\"" + nodes[a].id + "\"[" + std::to_string(pa) + "] is cabled to \"" +
                          nodes[static_cast<size_t>(e.node)].id + "\"[" + std::to_string(e.port) +
                          "], whose record lists no such port: ibnetdiscover lists every cable from both ends "
                          "(an edited or damaged capture?)");
        back = End{static_cast<int32_t>(a), static_cast<int32_t>(pa), e.record};
        continue;
      }
      if (back.node != static_cast<int32_t>(a) || back.port != static_cast<int32_t>(pa)) {
        const auto& rec = parser.ports[e.record];
        parser.fail(rec.line, "remote node id",
                    "\"" + nodes[a].id + "\"[" + std::to_string(pa) + "] is cabled to \"" +
                        nodes[static_cast<size_t>(e.node)].id + "\"[" + std::to_string(e.port) + "], but line " +
                        std::to_string(parser.ports[back.record].line) + " cables that port to \"" +
                        nodes[static_cast<size_t>(back.node)].id + "\"[" + std::to_string(back.port) + "]");
      }
    }

  // Hosts: CAs with exactly one cabled port, cabled to a switch.
  std::vector<int32_t> host_port(nodes.size(), 0);
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (nodes[k].is_switch || nodes[k].aggregation) continue;
    for (size_t p = 1; p < peer[k].size(); ++p) {
      if (peer[k][p].node < 0) continue;
      if (host_port[k] != 0)
        parser.fail(nodes[k].line, "node",
                    "CA \"" + nodes[k].id + "\" has cabled ports " + std::to_string(host_port[k]) + " and " +
                        std::to_string(p) + ": daqnet models one NIC port per host");
      if (!nodes[static_cast<size_t>(peer[k][p].node)].is_switch)
        parser.fail(parser.ports[peer[k][p].record].line, "remote node id",
                    "a cable between two CAs (\"" + nodes[k].id + "\", \"" +
                        nodes[static_cast<size_t>(peer[k][p].node)].id + "\")");
      host_port[k] = static_cast<int32_t>(p);
    }
    if (host_port[k] == 0) parser.fail(nodes[k].line, "node", "CA \"" + nodes[k].id + "\" has no cabled port");
  }
  // Switches only: every command but export stopped later at "the fabric has no hosts",
  // naming neither the file nor why, and export wrote a net file of 0 hosts.
  if (std::none_of(host_port.begin(), host_port.end(), [](int32_t p) { return p != 0; }))
    throw Error(path + ": no Ca records: switches only, no host (a capture cut short, or one of switches only?)");

  // Levels from the cabling, as Fabric::infer_levels (aggregation nodes are no hosts).
  std::vector<int32_t> level;
  {
    std::vector<std::vector<int32_t>> neighbours(nodes.size());
    std::vector<uint8_t> host(nodes.size(), 0);
    for (size_t k = 0; k < nodes.size(); ++k) {
      host[k] = !nodes[k].is_switch && !nodes[k].aggregation;
      for (const End& e : peer[k])
        if (e.node >= 0) neighbours[k].push_back(e.node);
    }
    level = cabling_levels(neighbours, host);  // kNoLevel where no host reaches
  }

  // Topology order: switches by level (unreached last), then name; hosts by leaf, then port.
  const NodeNames named = node_names(nodes);
  const std::vector<std::string>& names = named.names;  // lambdas below capture it (no structured binding)
  std::vector<size_t> switches, hosts;
  size_t aggregation_nodes = 0;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (nodes[k].aggregation)
      ++aggregation_nodes;
    else
      (nodes[k].is_switch ? switches : hosts).push_back(k);
  }
  const auto level_key = [&](size_t k) { return level[k] == kNoLevel ? INT32_MAX : level[k]; };
  std::sort(switches.begin(), switches.end(), [&](size_t a, size_t b) {
    if (level_key(a) != level_key(b)) return level_key(a) < level_key(b);
    return natural_less(names[a], names[b]);
  });
  std::vector<int32_t> switch_rank(nodes.size(), 0);
  for (size_t r = 0; r < switches.size(); ++r) switch_rank[switches[r]] = static_cast<int32_t>(r);
  const auto leaf_of = [&](size_t h) { return peer[h][static_cast<size_t>(host_port[h])]; };
  std::sort(hosts.begin(), hosts.end(), [&](size_t a, size_t b) {
    const End ea = leaf_of(a), eb = leaf_of(b);
    const auto ka = std::pair(switch_rank[static_cast<size_t>(ea.node)], ea.port);
    const auto kb = std::pair(switch_rank[static_cast<size_t>(eb.node)], eb.port);
    return ka < kb;
  });

  auto f = std::make_shared<Fabric>();
  std::vector<NodeId> id(nodes.size(), -1);
  for (size_t k : hosts) {
    id[k] = f->add_host(names[k]);
    f->set_address(id[k], nodes[k].guid, nodes[k].port_guid, nodes[k].lid);
  }
  std::vector<int32_t> position(nodes.size() + 1, 0);  // per level; a level is below nodes.size()
  for (size_t k : switches) {
    const int32_t l = level[k];
    id[k] = f->add_switch(names[k], nodes[k].num_ports, l, l == kNoLevel ? 0 : position[static_cast<size_t>(l)]++);
    f->set_address(id[k], nodes[k].guid, nodes[k].port_guid, nodes[k].lid);
  }
  // Cables in node order, each once (from its end with the lower daqnet id).
  int64_t defaulted = 0;
  for (size_t a = 0; a < nodes.size(); ++a)
    for (size_t pa = 1; pa < peer[a].size(); ++pa) {
      const End& e = peer[a][pa];
      if (e.node < 0) continue;
      const auto b = static_cast<size_t>(e.node);
      if (id[a] > id[b] || (id[a] == id[b] && static_cast<int32_t>(pa) > e.port)) continue;
      const auto& rec = parser.ports[e.record];
      const End& back = peer[b][static_cast<size_t>(e.port)];
      double gbps = rec.gbps;
      if (gbps == 0) gbps = parser.ports[back.record].gbps;
      if (gbps == 0) {
        gbps = options.default_gbps;
        ++defaulted;
      }
      const int32_t port_a = nodes[a].is_switch ? static_cast<int32_t>(pa) : 1;
      const int32_t port_b = nodes[b].is_switch ? e.port : 1;
      f->connect(id[a], port_a, id[b], port_b, gbps, options.latency_seconds);
    }
  f->set_default_rate_cables(defaulted);
  for (const auto& n : nodes)
    if (n.aggregation) f->add_left_out(n.port_guid != 0 ? n.port_guid : n.guid, n.lid);
  // The description is what `daqnet conflicts` prints of the fabric: say what was left out,
  // and which hosts could not be named by their description (two HCAs of one server share
  // its first word: placement by hostname will not find them under it).
  std::string notes;
  if (aggregation_nodes > 0)
    notes += ", " + std::to_string(aggregation_nodes) + " SHARP aggregation node" + (aggregation_nodes > 1 ? "s" : "") +
             " left out";
  std::vector<std::string> shared;  // hosts' description names given to more than one host
  size_t kept_id = 0;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const std::string& name = named.described[k];
    if (nodes[k].is_switch || nodes[k].aggregation || name.empty() || names[k] != nodes[k].id) continue;
    ++kept_id;
    if (std::find(shared.begin(), shared.end(), name) == shared.end()) shared.push_back(name);
  }
  if (kept_id > 0) {
    std::sort(shared.begin(), shared.end(), natural_less);
    std::string list;
    for (size_t i = 0; i < shared.size() && i < 3; ++i) list += (i ? ", " : "") + shared[i];
    if (shared.size() > 3) list += ", ...";
    notes += ", " + std::to_string(kept_id) + " host" + (kept_id > 1 ? "s" : "") +
             " named by their ibnetdiscover id: their descriptions' first word is another node's too (" + list + ")";
  }
  const int32_t H = f->num_hosts(), S = f->num_switches();
  f->set_description(thousands(static_cast<uint64_t>(H)) + (H == 1 ? " host, " : " hosts, ") +
                     thousands(static_cast<uint64_t>(S)) + (S == 1 ? " switch from " : " switches from ") +
                     std::filesystem::path(path).filename().string() + notes);
  return f;
}

void write_ibsim_net(const Fabric& f, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("cannot write " + path + ": " + std::strerror(errno));
  const auto ws = [&](const Link& l) {
    const auto s = ib_width_speed(l.gbps);
    if (!s) {
      char rate[32];  // 1536, not std::to_string's 1536.000000
      std::snprintf(rate, sizeof rate, "%g", l.gbps);
      throw Error("cannot write " + path + ": no InfiniBand width x speed carries " + rate + " Gb/s (link " +
                  f.node(l.src).name + " -> " + f.node(l.dst).name +
                  "): export --format graphviz or simgrid keeps any rate");
    }
    return *s;
  };
  for (const auto& n : f.nodes())
    if (n.name.find('"') != std::string::npos || n.name.size() > 64)
      throw Error("cannot write " + path + ": node name '" + n.name +
                  "' is not a valid ibsim id (quote, or over 64 characters)");
  out << "# ibsim net file written by daqnet: " << f.describe() << "\n";
  // Switches first: ibsim attaches the subnet manager to the first node, and OpenSM's
  // routing does not depend on where it sits.
  for (NodeId s = f.num_hosts(); s < f.num_nodes(); ++s) {
    const auto& n = f.node(s);
    out << "\nSwitch\t" << n.ports.size() - 1 << " \"" << n.name << "\"\n";
    for (size_t p = 1; p < n.ports.size(); ++p) {
      const auto& port = n.ports[p];
      if (port.peer < 0) continue;
      const auto& peer = f.node(port.peer);
      out << "[" << p << "]\t\"" << peer.name << "\"[" << port.peer_port << "]\t\t# \"" << peer.name << "\" lid 0 "
          << ws(f.link(port.out_link)) << "\n";
    }
  }
  for (NodeId h = 0; h < f.num_hosts(); ++h) {
    const auto& n = f.node(h);
    const auto& port = n.ports[1];
    if (port.peer < 0) continue;
    const auto& peer = f.node(port.peer);
    out << "\nHca\t1 \"" << n.name << "\"\n"
        << "[1]\t\"" << peer.name << "\"[" << port.peer_port << "]\t\t# lid 0 lmc 0 \"" << peer.name << "\" lid 0 "
        << ws(f.link(port.out_link)) << "\n";
  }
  if (!out) throw Error("cannot write " + path + ": write failed");
}

}  // namespace daqnet::fabric
