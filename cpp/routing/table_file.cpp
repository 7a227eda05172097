// daqnet — plan, simulate and benchmark event-building networks.
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>

#include "common/error.hpp"
#include "routing/routing.hpp"

namespace daqnet::routing {

namespace {

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

}  // namespace

std::shared_ptr<TableRouting> read_table_file(const std::shared_ptr<const Fabric>& fabric, const std::string& path,
                                              const Progress& progress) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read routing table " + path + ": " + std::strerror(errno));
  std::error_code ec;  // not the throwing form (its filesystem_error is no daqnet::Error)
  if (std::filesystem::is_directory(path, ec)) throw Error("cannot read routing table " + path + ": is a directory");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);  // a UTF-8 byte-order mark from some editors

  const auto& f = *fabric;
  auto r = std::make_shared<TableRouting>(fabric, "table " + path);
  std::vector<uint32_t> first_line(static_cast<size_t>(f.num_switches()) * static_cast<size_t>(f.num_hosts()), 0);
  size_t pos = 0;
  uint32_t lineno = 0;
  int64_t entries = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++lineno;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const auto w = split_words(line);
    if (w.empty()) {
      if (end == text.size()) break;
      continue;
    }
    const std::string at = path + ":" + std::to_string(lineno) + ": ";
    if (w.size() != 3)
      throw Error(at + "expected '<switch> <destination host> <output port>', got " + std::to_string(w.size()) +
                  " fields");
    const auto sw = f.find(std::string(w[0]));
    if (!sw) throw Error(at + "unknown switch '" + std::string(w[0]) + "'");
    if (f.node(*sw).is_host) throw Error(at + "'" + std::string(w[0]) + "' is a host, not a switch");
    const auto dst = f.find(std::string(w[1]));
    if (!dst) throw Error(at + "unknown destination host '" + std::string(w[1]) + "'");
    if (!f.node(*dst).is_host) throw Error(at + "destination '" + std::string(w[1]) + "' is a switch, not a host");
    int32_t port = 0;
    const auto [p, ec] = std::from_chars(w[2].data(), w[2].data() + w[2].size(), port);
    if (ec == std::errc::result_out_of_range)
      throw Error(at + "output port '" + std::string(w[2]) + "' is out of range");
    if (ec != std::errc() || p != w[2].data() + w[2].size())
      throw Error(at + "output port '" + std::string(w[2]) + "' is not a whole number");
    const auto& n = f.node(*sw);
    if (port < 1 || port >= static_cast<int32_t>(n.ports.size()))
      throw Error(at + "switch " + n.name + " has no port " + std::to_string(port) + " (ports 1.." +
                  std::to_string(n.ports.size() - 1) + ")");
    if (n.ports[static_cast<size_t>(port)].peer < 0)
      throw Error(at + "port " + std::to_string(port) + " of switch " + n.name + " is not cabled");
    auto& seen = first_line[static_cast<size_t>(*sw - f.num_hosts()) * static_cast<size_t>(f.num_hosts()) +
                            static_cast<size_t>(*dst)];
    if (seen != 0)
      throw Error(at + "second entry for switch " + n.name + " and destination " + f.node(*dst).name +
                  " (first at line " + std::to_string(seen) + ")");
    seen = lineno;
    r->set_port(*sw, *dst, port);
    ++entries;
    if (end == text.size()) break;
  }
  if (entries == 0) throw Error(path + ": no forwarding entries in routing table");
  r->finalize(progress);
  return r;
}

void write_table_file(const TableRouting& routing, const std::string& path, const Progress& progress) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("cannot write routing table " + path + ": " + std::strerror(errno));
  const auto& f = routing.fabric();
  ProgressMeter meter(progress, static_cast<int64_t>(f.num_switches()) * f.num_hosts(), "writing the tables");
  out << "# daqnet forwarding tables (format 1), engine " << routing.engine() << "\n"
      << "# " << f.describe() << "\n"
      << "# <switch> <destination host> <output port>\n";
  std::string line;
  for (NodeId sw = f.num_hosts(); sw < f.num_nodes(); ++sw) {
    const auto& name = f.node(sw).name;
    for (NodeId d = 0; d < f.num_hosts(); ++d) {
      const int32_t p = routing.port(sw, d);
      if (p == 0) continue;
      line.clear();
      line.append(name).append(" ").append(f.node(d).name).append(" ").append(std::to_string(p)).append("\n");
      out << line;
    }
    meter.advance(f.num_hosts());
  }
  meter.finish();
  if (!out) throw Error("cannot write routing table " + path + ": write failed");
}

}  // namespace daqnet::routing
