// daqnet — plan, simulate and benchmark event-building networks.
#include "routing/lft_dump.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/line_reader.hpp"
#include "fabric/ibnet_file.hpp"

namespace daqnet::routing {

namespace {

constexpr int32_t kNoRoute = 255;  // OpenSM's OSM_NO_PATH

// Unicast LIDs are 0x0001-0xBFFF (IBA vol. 1, 4.1.3); 0xC000 and up are multicast, which
// LFTs do not hold (dump_lfts and OpenSM dump up to 0xBFFF at most).
constexpr uint64_t kMaxUnicastLid = 0xBFFF;

// A port with LMC k answers to the 2^k LIDs from its base LID on; LMC is at most 7.
constexpr int32_t kMaxLidsPerPort = 128;

/// A LID field: a unicast LID, or 0 if `zero_ok`. A larger number is an error, not a LID
/// cut to 16 bits.
int32_t unicast_lid(const LineReader& in, std::string_view s, const std::string& field, bool zero_ok) {
  const uint64_t lid = in.hex(s, field);
  if (lid > kMaxUnicastLid || (lid == 0 && !zero_ok))
    in.fail(field, "'" + std::string(s) + "' is not a unicast LID (0x0001-0xBFFF)");
  return static_cast<int32_t>(lid);
}

/// Who holds a LID, as a node of the fabric (or -1), and whether it is a switch or a SHARP
/// aggregation node (neither is a destination daqnet routes to).
struct LidOwner {
  NodeId node = -1;
  bool is_switch = false;
  bool aggregation = false;
};

/// Fabric nodes by GUID and by name, for resolving what the files name.
struct NodeIndex {
  explicit NodeIndex(const Fabric& f) : fabric(f) {
    for (NodeId n = 0; n < f.num_nodes(); ++n) {
      const auto& node = f.node(n);
      if (node.guid != 0) by_guid.emplace(node.guid, n);
      if (node.is_host && node.port_guid != 0) by_guid.emplace(node.port_guid, n);
      if (node.lid != 0) by_lid.emplace(node.lid, n);
    }
  }
  std::optional<NodeId> find(uint64_t guid, std::string_view description, bool is_switch) const {
    if (!by_guid.empty()) {
      // Of the kind asked for: a host's entry at a switch's GUID is no host (nor a node to index by).
      const auto it = by_guid.find(guid);
      if (it == by_guid.end() || fabric.node(it->second).is_host == is_switch) return std::nullopt;
      return it->second;
    }
    const auto n = fabric.find(fabric::ib_node_name(description, is_switch));
    if (n && fabric.node(*n).is_host == !is_switch) return n;
    return std::nullopt;
  }
  const Fabric& fabric;
  std::unordered_map<uint64_t, NodeId> by_guid;
  std::unordered_map<int32_t, NodeId> by_lid;
};

/// opensm-subnet.lst: per line two "{ TYPE ... NodeGUID:… PortGUID:… {desc} LID:xxxx PN:xx }"
/// records (the two ends of a link); the LID of each end's node.
std::unordered_map<int32_t, LidOwner> read_subnet_lst(const std::string& path, const NodeIndex& index) {
  LineReader in(path, "subnet list");
  std::unordered_map<int32_t, LidOwner> owners;
  std::unordered_map<int32_t, uint32_t> first_line;
  std::string_view line;
  while (in.next(line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t pos = 0;
    int records = 0;
    while ((pos = line.find("{ ", pos)) != std::string_view::npos) {
      const size_t close = line.find(" }", pos);
      if (close == std::string_view::npos) in.fail("record", "missing closing ' }' (truncated line?)");
      const auto rec = line.substr(pos + 2, close - pos - 2);
      pos = close + 2;
      ++records;
      const auto type = rec.substr(0, rec.find(' '));
      const bool is_switch = type.starts_with("SW");
      if (!is_switch && type != "CA") in.fail("node type", "'" + std::string(type) + "' (expected CA, SW or SW-SM)");
      // A record's "Key:value" (an error if missing, unless `optional`: then empty).
      const auto field = [&](std::string_view key, bool optional = false) {
        const size_t at = rec.find(key);
        if (at == std::string_view::npos) {
          if (optional) return std::string_view();
          in.fail(std::string(key.substr(0, key.size() - 1)), "missing");
        }
        const auto v = rec.substr(at + key.size());
        return v.substr(0, v.find(' '));
      };
      const uint64_t guid = in.hex(field("NodeGUID:"), "NodeGUID");
      const size_t d0 = rec.find('{'), d1 = rec.rfind('}');
      const auto desc = d0 == std::string_view::npos || d1 <= d0 ? std::string_view() : rec.substr(d0 + 1, d1 - d0 - 1);
      const int32_t lid = unicast_lid(in, field("LID:"), "LID", false);
      const auto node = index.find(guid, desc, is_switch);
      // By its description, or by its ids when a node-name map renamed it.
      const auto id = [&](std::string_view key) -> uint64_t {
        const auto v = field(key, true);
        return v.empty() ? 0 : in.hex(v, std::string(key.substr(0, key.size() - 1)));
      };
      const bool aggregation = !is_switch && (fabric::is_aggregation_node(desc) ||
                                              fabric::is_aggregation_device(id("VenID:"), id("DevID:")));
      const auto [it, added] = owners.emplace(lid, LidOwner{node.value_or(-1), is_switch, aggregation});
      if (added) {
        first_line[lid] = in.lineno();
      } else if (it->second.node != node.value_or(-1) || it->second.is_switch != is_switch) {
        in.fail("LID", "LID " + std::to_string(lid) + " (" + std::string(desc) +
                           ") also belongs to another node (line " + std::to_string(first_line[lid]) + ")");
      }
    }
    if (records == 0) in.fail("line", "expected '{ CA|SW ... }' link records");
  }
  if (owners.empty()) throw Error(path + ": no records: not an opensm-subnet.lst");
  return owners;
}

/// "... guid 0x0000000000200000 ('Switch1'):" or "(Switch1):" — the switch's GUID and name.
std::pair<uint64_t, std::string_view> switch_header(std::string_view line, const LineReader& in) {
  const size_t g = line.find(" guid ");
  if (g == std::string_view::npos) in.fail("switch header", "missing 'guid 0x...'");
  auto rest = line.substr(g + 6);
  const size_t sp = rest.find(' ');
  const uint64_t guid = in.hex(rest.substr(0, sp == std::string_view::npos ? rest.size() : sp), "switch guid");
  std::string_view name;
  const size_t open = rest.find('('), close = rest.rfind(')');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    name = rest.substr(open + 1, close - open - 1);
    if (name.size() >= 2 && name.front() == '\'' && name.back() == '\'') name = name.substr(1, name.size() - 2);
  }
  return {guid, name};
}

/// The top LID a switch header announces: ibroute's "Unicast lids [0x0-0x40] of switch …",
/// OpenSM's "Unicast lids [0-64] of switch …"; 0 when it announces none.
int32_t header_top(std::string_view line) {
  const size_t open = line.find('['), dash = line.find('-', open), close = line.find(']', dash);
  if (open == std::string_view::npos || dash == std::string_view::npos || close == std::string_view::npos ||
      close > line.find(" of "))
    return 0;
  auto text = line.substr(dash + 1, close - dash - 1);
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  int32_t top = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), top, base);
  return ec == std::errc() && end == text.data() + text.size() ? top : 0;
}

/// The node an entry line names in its comment: "# Channel Adapter portguid 0x…: 'Hca1'"
/// (opensm) or ": (Switch portguid 0x…: 'Switch1')" (ibroute).
struct EntryNote {
  bool present = false;
  bool is_switch = false;
  bool lmc_alias = false;  // ibroute's "(path #k out of n: portguid 0x…)": not a base LID
  uint64_t port_guid = 0;
  std::string_view name;
};

EntryNote entry_note(std::string_view rest, const LineReader& in) {
  EntryNote note;
  // ibroute (dump_lfts) names the node at a port's base LID only, and marks the port's
  // other LIDs (LMC > 0) "path #2 out of 4" and on: LIDs daqnet does not route to.
  // Both marks come before the port GUID: the words after it (a node's name) are not searched.
  const size_t pg = rest.find("portguid ");
  const std::string_view head = rest.substr(0, pg);
  note.lmc_alias = head.find("(path #") != std::string_view::npos;
  if (note.lmc_alias || pg == std::string_view::npos) return note;
  note.present = true;
  note.is_switch = head.find("Switch") != std::string_view::npos;
  auto v = rest.substr(pg + 9);
  note.port_guid = in.hex(v.substr(0, v.find_first_of(":) \t")), "portguid");
  const size_t q0 = v.find('\''), q1 = v.rfind('\'');
  if (q0 != std::string_view::npos && q1 > q0) note.name = v.substr(q0 + 1, q1 - q0 - 1);
  return note;
}

}  // namespace

std::shared_ptr<TableRouting> read_lft_dump(const std::shared_ptr<const Fabric>& fabric, const std::string& path,
                                            const std::string& subnet_path, const Progress& progress) {
  const Fabric& f = *fabric;
  const NodeIndex index(f);
  std::unordered_map<int32_t, LidOwner> subnet;
  if (!subnet_path.empty()) subnet = read_subnet_lst(subnet_path, index);

  LineReader in(path, "forwarding tables");
  auto r = std::make_shared<TableRouting>(fabric, "lft-dump " + std::filesystem::path(path).filename().string());
  const auto H = static_cast<size_t>(f.num_hosts());
  std::vector<uint32_t> entry_line(static_cast<size_t>(f.num_switches()) * H, 0);
  std::vector<uint32_t> header_line(static_cast<size_t>(f.num_switches()), 0);
  // Per switch table: the top LID its header announces ("Unicast lids [0x0-0x40]", 0 if
  // none) and the highest LID it has an entry for (see the black hole below).
  std::vector<int32_t> announced_top(static_cast<size_t>(f.num_switches()), 0);
  std::vector<int32_t> highest(static_cast<size_t>(f.num_switches()), 0);
  NodeId sw = -1;
  int64_t entries = 0;
  std::string_view line;

  // The fabric host a destination LID reaches (maybe at one of its LMC LIDs), or -1 for a
  // switch, a SHARP aggregation node or an LMC LID ibroute marks as such.
  const auto resolve = [&](int32_t lid, const EntryNote& note) -> NodeId {
    if (!index.by_lid.empty()) {
      if (const auto it = index.by_lid.find(lid); it != index.by_lid.end())
        return f.node(it->second).is_host ? it->second : -1;
      // One the topology left out (an aggregation node, maybe renamed by a node-name map,
      // which the name in this file would not tell).
      if (f.left_out(note.present ? note.port_guid : 0, lid)) return -1;
    } else if (!subnet.empty()) {
      if (const auto it = subnet.find(lid); it != subnet.end()) {
        if (it->second.is_switch || it->second.aggregation) return -1;
        if (it->second.node >= 0) return it->second.node;
      }
    }
    if (note.lmc_alias) return -1;
    // A LID neither the topology nor the subnet list holds (they list base LIDs): by the
    // port the line names, which may be another LID of that port (LMC > 0).
    if (note.present) {
      if (note.is_switch || fabric::is_aggregation_node(note.name)) return -1;
      if (const auto n = index.find(note.port_guid, note.name, false)) return *n;
    }
    std::string who = note.present ? " ('" + std::string(note.name) + "')" : "";
    const std::string how = !index.by_lid.empty() ? "the topology's LIDs"
                            : !subnet.empty()
                                ? "the subnet list " + subnet_path
                                : "the names in the file (give routing.subnet_file, or import the topology)";
    in.fail("destination LID", "LID " + std::to_string(lid) + who + " is no host of the fabric, by " + how);
  };

  // Host entries go to each host's base LID: the topology's, else the subnet list's, else
  // the lowest LID the dump names the host at (OpenSM numbers a port's LMC LIDs up from its
  // base). Entries for the other LIDs of a host are left out. Each entry goes into the
  // tables as it is read (no copy of a dump of millions of entries); where the base is
  // not known beforehand, those at the lowest LID so far, undone if a lower one comes.
  struct Entry {
    NodeId sw, dst;
    int32_t port;
    uint32_t line;
  };
  std::vector<int32_t> base_lid(H, 0);
  for (NodeId h = 0; h < f.num_hosts(); ++h) base_lid[static_cast<size_t>(h)] = f.node(h).lid;
  for (const auto& [lid, owner] : subnet) {
    if (owner.node < 0 || owner.is_switch || f.node(owner.node).lid != 0) continue;
    auto& b = base_lid[static_cast<size_t>(owner.node)];
    b = b == 0 ? lid : std::min(b, lid);
  }
  std::vector<char> known(H);  // the base LID was known before the dump
  for (size_t h = 0; h < H; ++h) known[h] = static_cast<char>(base_lid[h] != 0);
  std::vector<std::map<int32_t, uint32_t>> host_lids(H);  // the LIDs naming each host, first line of each
  std::vector<uint32_t> applied(H, 0);                    // entries in the tables for each host
  // An entry at a host's base LID into the tables, checked against the fabric.
  const auto apply = [&](const Entry& e) {
    const auto& node = f.node(e.sw);
    // dump_lfts prints port 0 for the switch's own LIDs (resolved to no host, so not here).
    if (e.port == 0)
      in.fail_at(
          e.line, "output port",
          "port 0 is switch " + node.name + " itself (its management port), not a way to host " + f.node(e.dst).name);
    if (e.port < 0 || e.port >= static_cast<int32_t>(node.ports.size()))
      in.fail_at(e.line, "output port",
                 "switch " + node.name + " has no port " + std::to_string(e.port) + " (ports 1.." +
                     std::to_string(node.ports.size() - 1) + ")");
    if (node.ports[static_cast<size_t>(e.port)].peer < 0)
      in.fail_at(e.line, "output port",
                 "port " + std::to_string(e.port) + " of switch " + node.name + " is not cabled");
    auto& seen = entry_line[static_cast<size_t>(e.sw - f.num_hosts()) * H + static_cast<size_t>(e.dst)];
    if (seen != 0)
      in.fail_at(e.line, "destination LID",
                 "second entry of switch " + node.name + " for " + f.node(e.dst).name + " (first at line " +
                     std::to_string(seen) + ")");
    seen = e.line;
    r->row(e.sw)[static_cast<size_t>(e.dst)] = static_cast<uint16_t>(e.port);  // checked above
    ++entries;
    ++applied[static_cast<size_t>(e.dst)];
  };
  // A host's entries at a LID that turned out not to be its lowest.
  // (Dumps list LIDs in ascending order, so this happens, if ever, before the host's base
  // LID is read; the search stops once the host's entries are cleared.) Unlike entries
  // held to the end, an entry at an alias LID taken as read is checked: a bad port there
  // is an error even if a lower LID of the host comes later.
  const auto undo = [&](NodeId dst) {
    auto& left = applied[static_cast<size_t>(dst)];
    for (NodeId sw2 = f.num_hosts(); left > 0 && sw2 < f.num_nodes(); ++sw2) {
      auto& seen = entry_line[static_cast<size_t>(sw2 - f.num_hosts()) * H + static_cast<size_t>(dst)];
      if (seen == 0) continue;
      seen = 0;
      r->row(sw2)[static_cast<size_t>(dst)] = 0;
      --entries;
      --left;
    }
  };

  // Progress in bytes read, then in routes walked; checked every few thousand lines (a
  // clock read per line would cost seconds over a 5 GB dump).
  ProgressMeter meter(progress, static_cast<int64_t>(in.size()) + r->finalize_work(), "reading the forwarding tables");
  uint64_t reported = 0;
  uint32_t until_report = 0;
  const auto report = [&] {
    const uint64_t now = in.size() > 0 ? std::min(in.consumed(), in.size()) : 0;  // a pipe: Ctrl-C only
    meter.advance(static_cast<int64_t>(now - reported));
    reported = now;
  };
  while (in.next(line)) {
    if (++until_report == 4096) {
      until_report = 0;
      report();
    }
    if (line.empty() || line[0] == '#') continue;
    if (line.starts_with("Unicast lids")) {
      const auto [guid, name] = switch_header(line, in);
      const auto n = index.find(guid, name, true);
      if (!n || f.node(*n).is_host) {
        char hex[17];
        const auto end = std::to_chars(hex, hex + 16, guid, 16).ptr;
        in.fail("switch", "switch guid 0x" + std::string(hex, end) +
                              (name.empty() ? "" : " ('" + std::string(name) + "')") + " is not in the fabric");
      }
      sw = *n;
      auto& seen = header_line[static_cast<size_t>(sw - f.num_hosts())];
      if (seen != 0)
        in.fail("switch",
                "second table of switch " + f.node(sw).name + " (first at line " + std::to_string(seen) + ")");
      seen = in.lineno();
      announced_top[static_cast<size_t>(sw - f.num_hosts())] = header_top(line);
      continue;
    }
    // Column headings, counts, and dump_lfts' "*** WARNING ***: replaced by dump_fts".
    if (line.starts_with("Lid") || line.starts_with("Port") || line.ends_with("lids dumped") || line.starts_with("***"))
      continue;
    if (!line.starts_with("0x"))
      in.fail("line", "expected a switch header or '0xLID PORT', got '" + std::string(line.substr(0, 40)) + "'");
    if (sw < 0) in.fail("line", "a forwarding entry before any 'Unicast lids ... of switch' header");
    size_t sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos) in.fail("output port", "missing (truncated line?)");
    const auto lid_text = line.substr(0, sp);
    const int32_t lid = unicast_lid(in, lid_text, "destination LID", true);
    auto& top = highest[static_cast<size_t>(sw - f.num_hosts())];
    top = std::max(top, lid);
    auto rest = trim(line.substr(sp));
    sp = rest.find_first_of(" \t:#");
    const int32_t port = in.decimal(rest.substr(0, sp == std::string_view::npos ? rest.size() : sp), "output port");
    // No route: what dump_lfts -a prints for unused LIDs (LID 0 among them).
    if (port == kNoRoute) continue;
    if (lid == 0) in.fail("destination LID", "'" + std::string(lid_text) + "' is not a unicast LID (0x0001-0xBFFF)");
    const EntryNote note = entry_note(sp == std::string_view::npos ? std::string_view() : rest.substr(sp), in);
    const NodeId dst = resolve(lid, note);
    if (dst < 0) continue;
    host_lids[static_cast<size_t>(dst)].emplace(lid, in.lineno());
    const Entry e{sw, dst, port, in.lineno()};
    const auto d = static_cast<size_t>(dst);
    if (!known[d] && (base_lid[d] == 0 || lid < base_lid[d])) {
      if (base_lid[d] != 0) undo(dst);
      base_lid[d] = lid;
    }
    if (lid == base_lid[d]) apply(e);
  }
  // A host's LIDs must be one LMC range: consecutive from its base, 2^LMC <= 128 of them.
  // Otherwise a line names the wrong host (an entry at another host's LID would be lost).
  for (size_t h = 0; h < H; ++h) {
    const auto& lids = host_lids[h];
    if (lids.empty()) continue;
    const std::string base = known[h] ? "whose base LID is " + std::to_string(base_lid[h])
                                      : "whose lowest LID here is " + std::to_string(base_lid[h]) + " (line " +
                                            std::to_string(lids.begin()->second) + ")";
    int32_t next = base_lid[h];
    for (const auto& [lid, at] : lids) {
      const bool in_range = lid == next && lid - base_lid[h] < kMaxLidsPerPort;
      ++next;
      if (!in_range)
        in.fail_at(at, "destination LID",
                   "LID " + std::to_string(lid) + " names host " + f.node(static_cast<NodeId>(h)).name + ", " + base +
                       ": a port's LIDs run on from its base LID (LMC > 0), at most 128");
    }
  }
  if (entries == 0)
    throw Error(path + ": no forwarding entries for the fabric's hosts: not an LFT dump of this fabric");
  meter.advance(static_cast<int64_t>(in.size() - reported));  // the rest of the file (or of one that shrank)
  try {
    r->finalize(meter);
  } catch (const RouteError& e) {
    const size_t s = static_cast<size_t>(e.switch_node() - f.num_hosts());
    const uint32_t at = entry_line[s * H + static_cast<size_t>(e.destination())];
    // A loop is every entry on it: their lines, so that the edited one is among them.
    std::string lines;
    for (NodeId sw : e.loop()) {
      const uint32_t l = entry_line[static_cast<size_t>(sw - f.num_hosts()) * H + static_cast<size_t>(e.destination())];
      if (l != 0 && l != at)
        lines += (lines.empty() ? " (the loop's other entries: line " : ", line ") + std::to_string(l);
    }
    if (!lines.empty()) lines += ")";
    if (at != 0) in.fail_at(at, "output port", e.what() + lines);
    if (header_line[s] != 0) {
      // ibroute, and dump_lfts which runs it, read the table in blocks of 64 LIDs and round
      // the last block down: a top LID that begins a block (0x40, 0x540) is never printed,
      // though the header announces it and the switch routes it (infiniband-diags).
      const int32_t top = announced_top[s];
      const int32_t lid = base_lid[static_cast<size_t>(e.destination())];
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%x", static_cast<unsigned>(top));
      const bool cut = top > 0 && top % 64 == 0 && highest[s] < top && (lid == 0 || lid == top);
      in.fail_at(header_line[s], "switch",
                 std::string(e.what()) +
                     (cut ? std::string(" (no entry in this table: it stops below LID ") + hex +
                                ", the top its header announces; ibroute and dump_lfts (infiniband-diags) "
                                "leave out a top LID that begins a block of 64, so no dump of theirs holds " +
                                hex + " on this fabric: read OpenSM's opensm-lfts.dump instead)"
                          : " (no entry in this table)"));
    }
    throw Error(path + ": " + e.what() + " (the dump has no table for switch " + f.node(e.switch_node()).name + ")");
  }
  return r;
}

void write_lft_dump(const TableRouting& routing, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("cannot write " + path + ": " + std::strerror(errno));
  const Fabric& f = routing.fabric();
  bool have_lids = true;
  for (const auto& n : f.nodes()) have_lids = have_lids && n.lid != 0;
  const auto lid = [&](NodeId n) { return have_lids ? f.node(n).lid : n + 1; };
  const auto guid = [&](NodeId n) { return f.node(n).guid != 0 ? f.node(n).guid : static_cast<uint64_t>(n + 1); };
  char buf[64];
  for (NodeId s = f.num_hosts(); s < f.num_nodes(); ++s) {
    std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid(s)));
    out << "Unicast lids of switch Lid " << lid(s) << " guid " << buf << " ('" << f.node(s).name << "'):\n";
    int32_t count = 0;
    for (NodeId d = 0; d < f.num_hosts(); ++d) {
      const int32_t p = routing.port(s, d);
      if (p == 0) continue;
      std::snprintf(buf, sizeof buf, "0x%04x %03d", lid(d), p);
      out << buf << " # Channel Adapter portguid ";
      std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid(d)));
      out << buf << ": '" << f.node(d).name << "'\n";
      ++count;
    }
    out << count << " lids dumped\n";
  }
  if (!out) throw Error("cannot write " + path + ": write failed");
}

}  // namespace daqnet::routing
