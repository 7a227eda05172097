// daqnet — plan, simulate and benchmark event-building networks.
// Tests of read_table_file / write_table_file (cpp/routing/table_file.cpp, format in
// docs/routing-table.md) on a small fat tree.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "fabric/fat_tree.hpp"
#include "routing/routing.hpp"

namespace daqnet::routing {
namespace {

// The table-based routing class, named only here (and through `auto` elsewhere), so that a
// rename touches one line.
using Tables = TableRouting;

using fabric::FatTreeSpec;

// radix 4, 5 hosts: leaves leaf0..leaf2 with 2, 2 and 1 hosts (port 2 of leaf2 uncabled),
// spines spine0, spine1 with 4 down-ports of which 3 are cabled (port 4 uncabled).
std::shared_ptr<const Fabric> small_tree() {
  FatTreeSpec spec;
  spec.radix = 4;
  spec.hosts = 5;
  return std::make_shared<const Fabric>(fabric::build_fat_tree(spec));
}

class TableFile : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "daqnet-table-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fab_ = small_tree();
    // The good file: D-mod-K's tables as daqnet writes them.
    const auto good = dmodk(fab_);
    write_table_file(*good, path("good.txt"));
    good_ = lines_of(path("good.txt"));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::vector<std::string> lines_of(const std::string& file) {
    std::ifstream in(file);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::string write(const std::vector<std::string>& lines, const std::string& name = "t.txt") const {
    std::ofstream out(path(name));
    for (const auto& l : lines) out << l << '\n';
    return path(name);
  }
  std::shared_ptr<const Tables> read(const std::string& file) const { return read_table_file(fab_, file); }

  // Node names and the port of `from` whose cable leads to `to`.
  std::string name(NodeId n) const { return fab_->node(n).name; }
  NodeId id(const std::string& n) const { return *fab_->find(n); }
  int32_t port_toward(const std::string& from, const std::string& to) const {
    const auto& ports = fab_->node(id(from)).ports;
    for (size_t p = 1; p < ports.size(); ++p)
      if (ports[p].peer == id(to)) return static_cast<int32_t>(p);
    ADD_FAILURE() << from << " has no cable to " << to;
    return 0;
  }

  // `lines` with the entry (sw, host) given another port, or removed (port 0).
  static std::vector<std::string> with_entry(const std::vector<std::string>& lines, const std::string& sw,
                                             const std::string& host, int32_t port) {
    const std::string pair = sw + " " + host + " ";
    std::vector<std::string> out;
    bool found = false;
    for (const auto& l : lines) {
      if (l.starts_with(pair)) {
        found = true;
        if (port > 0) out.push_back(pair + std::to_string(port));
      } else {
        out.push_back(l);
      }
    }
    EXPECT_TRUE(found) << "no entry " << sw << " " << host;
    return out;
  }
  // The good file with `line` inserted so that it becomes line number `at` (from 1).
  std::vector<std::string> with_line(size_t at, const std::string& line) const {
    auto out = good_;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at - 1), line);
    return out;
  }

  // Reading `file` throws daqnet::Error whose message starts with "<file>:<line>: " (or,
  // for line 0, names the file) and contains `what`. Returns the message.
  std::string expect_error(const std::string& file, int line, const std::string& what) const {
    try {
      read(file);
      ADD_FAILURE() << "no error reading " << file << " (expected: " << what << ")";
      return "";
    } catch (const Error& e) {
      std::string msg = e.what();
      if (line > 0) {
        EXPECT_TRUE(msg.starts_with(file + ":" + std::to_string(line) + ": ")) << "message: " << msg;
      } else {
        EXPECT_NE(msg.find(file), std::string::npos) << "message: " << msg;
      }
      EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg;
      return msg;
    }
  }

  std::filesystem::path dir_;
  std::shared_ptr<const Fabric> fab_;
  std::vector<std::string> good_;  // lines of the good file (3 comment lines, then entries)
};

TEST_F(TableFile, GoodFileRoundTrips) {
  const auto expected = dmodk(fab_);
  const auto tables = read(path("good.txt"));
  ASSERT_TRUE(tables->finalized());
  EXPECT_NE(tables->engine().find(path("good.txt")), std::string::npos);
  for (NodeId sw = fab_->num_hosts(); sw < fab_->num_nodes(); ++sw)
    for (NodeId d = 0; d < fab_->num_hosts(); ++d)
      EXPECT_EQ(tables->port(sw, d), expected->port(sw, d)) << name(sw) << " -> " << name(d);
  // Written again: the same entries, in the same order (the header names the engine).
  write_table_file(*tables, path("again.txt"));
  auto entries = [](std::vector<std::string> lines) {
    std::erase_if(lines, [](const std::string& l) { return l.starts_with("#"); });
    return lines;
  };
  const auto again = lines_of(path("again.txt"));
  EXPECT_EQ(entries(again), entries(good_));
  EXPECT_EQ(again.size(), good_.size());
  EXPECT_EQ(entries(good_).size(), 3u * 5u + 2u * 5u);  // every switch, every destination
}

TEST_F(TableFile, CommentsBlankLinesTabsAndCrLf) {
  // The same tables, written by hand: a byte-order mark, comments, blank lines, tabs, CRLF,
  // and only the entries that routes use.
  std::ostringstream text;
  text << "\xEF\xBB\xBF# hand-written\r\n\r\n";
  const auto expected = dmodk(fab_);
  for (NodeId sw = fab_->num_hosts(); sw < fab_->num_nodes(); ++sw)
    for (NodeId d = 0; d < fab_->num_hosts(); ++d)
      text << "  " << name(sw) << "\t" << name(d) << "   " << expected->port(sw, d) << "  # entry\r\n";
  text << "   \n# no newline at the end";
  { std::ofstream(path("hand.txt"), std::ios::binary) << text.str(); }
  const auto tables = read(path("hand.txt"));
  for (NodeId sw = fab_->num_hosts(); sw < fab_->num_nodes(); ++sw)
    for (NodeId d = 0; d < fab_->num_hosts(); ++d) EXPECT_EQ(tables->port(sw, d), expected->port(sw, d));
}

// Problems found by walking the routes: the message names the file (in the engine's name)
// and the switch and destination, not a line (a route is made of several lines).
TEST_F(TableFile, Loop) {
  // leaf0 sends node4's traffic up to spine0, which sends it back down to leaf0.
  auto lines = with_entry(good_, "leaf0", "node4", port_toward("leaf0", "spine0"));
  lines = with_entry(lines, "spine0", "node4", port_toward("spine0", "leaf0"));
  const auto msg = expect_error(write(lines), 0, "loop toward node4: ");
  EXPECT_TRUE(msg.ends_with(": loop toward node4: leaf0 -> spine0 -> leaf0")) << "message: " << msg;
}

TEST_F(TableFile, BlackHole) {
  auto lines = with_entry(good_, "leaf0", "node4", port_toward("leaf0", "spine0"));
  std::erase_if(lines, [](const std::string& l) { return l.starts_with("spine0 node4 "); });
  expect_error(write(lines), 0, "black hole: switch spine0 has no route to node4 (reached from leaf0)");
}

TEST_F(TableFile, BlackHoleAtTheFirstSwitch) {
  expect_error(write(with_entry(good_, "leaf1", "node0", 0)), 0, "black hole: switch leaf1 has no route to node0");
}

TEST_F(TableFile, Misdelivery) {
  expect_error(write(with_entry(good_, "leaf0", "node1", port_toward("leaf0", "node0"))), 0,
               "traffic for node1 is delivered to host node0 by switch leaf0");
}

// Problems of one line: the message starts with "<file>:<line>: ".
TEST_F(TableFile, UnknownSwitch) { expect_error(write(with_line(5, "leafX node0 1")), 5, "unknown switch 'leafX'"); }

TEST_F(TableFile, HostInsteadOfSwitch) {
  expect_error(write(with_line(6, "node1 node0 1")), 6, "'node1' is a host, not a switch");
}

TEST_F(TableFile, UnknownHost) {
  expect_error(write(with_line(5, "leaf0 node9 1")), 5, "unknown destination host 'node9'");
}

TEST_F(TableFile, SwitchInsteadOfHost) {
  expect_error(write(with_line(5, "leaf0 spine1 3")), 5, "destination 'spine1' is a switch, not a host");
}

TEST_F(TableFile, PortOutOfRange) {
  expect_error(write(with_line(4, "leaf0 node0 5")), 4, "switch leaf0 has no port 5 (ports 1..4)");
  expect_error(write(with_line(4, "leaf0 node0 0")), 4, "switch leaf0 has no port 0");
  expect_error(write(with_line(4, "leaf0 node0 99999999999")), 4, "output port '99999999999' is out of range");
}

TEST_F(TableFile, PortNotANumber) {
  expect_error(write(with_line(7, "leaf0 node0 up")), 7, "output port 'up' is not a whole number");
  expect_error(write(with_line(7, "leaf0 node0 2x")), 7, "output port '2x' is not a whole number");
}

TEST_F(TableFile, UncabledPort) {
  expect_error(write(with_line(5, "leaf2 node4 2")), 5, "port 2 of switch leaf2 is not cabled");
  expect_error(write(with_line(9, "spine1 node0 4")), 9, "port 4 of switch spine1 is not cabled");
}

TEST_F(TableFile, DuplicateEntry) {
  // good_[3] is line 4, the first entry; a copy of it becomes line 8.
  const std::string first = good_[3];
  const auto sw = first.substr(0, first.find(' '));
  expect_error(write(with_line(8, first)), 8, "second entry for switch " + sw + " and destination");
  expect_error(write(with_line(8, first)), 8, "(first at line 4)");
}

TEST_F(TableFile, WrongFieldCount) {
  expect_error(write(with_line(5, "leaf0 node0")), 5, "got 2 fields");
  expect_error(write(with_line(5, "leaf0 node0 1 extra")), 5, "got 4 fields");
  // A comment is not a field: this is a good line, and a second entry for line 4's pair.
  ASSERT_EQ(good_[3], "leaf0 node0 1");
  expect_error(write(with_line(5, "leaf0 node0 1 # a comment")), 5,
               "second entry for switch leaf0 and destination node0 (first at line 4)");
}

TEST_F(TableFile, NoEntries) { expect_error(write({"# only a comment", ""}), 0, "no forwarding entries"); }

TEST_F(TableFile, UnreadableFile) {
  expect_error(path("missing.txt"), 0, "cannot read routing table " + path("missing.txt"));
  std::filesystem::create_directory(path("dir.txt"));
  expect_error(path("dir.txt"), 0, "is a directory");
}

}  // namespace
}  // namespace daqnet::routing
