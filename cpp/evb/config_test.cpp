// daqnet — plan, simulate and benchmark event-building networks.
// Tests of Config::parse (run.cfg) on what its fuzz harness (config_fuzz.cpp) found or
// checks: each bad run description gives one ConfigError naming run.cfg, its line and key.
#include "evb/config.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "evb/flow_control.hpp"
#include "evb/fragments.hpp"
#include "evb/layout.hpp"

namespace daqnet::evb {
namespace {

// The message Config::parse refuses `text` with ("" if it accepts it).
std::string refusal(const std::string& text) {
  try {
    Config::parse(text, "run.cfg");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RunConfig, DefaultsAndOneRunLength) {
  Config c = Config::parse("# written by hand\nseconds = 2\ncredits = 4  # four\n", "run.cfg");
  EXPECT_EQ(c.credits, 4);
  EXPECT_EQ(c.seconds, 2.0);
  EXPECT_EQ(c.fragment_bytes, 1048576.0);
}

TEST(RunConfig, FragmentsWithTheirSpreadStayBelowTwoGiB) {
  // Found by the fuzzer: buffers of mean × (1 + 8 σ) bytes, past 2 GiB, or past what a
  // size_t holds (undefined behaviour in FragmentSizes) for a larger σ.
  EXPECT_EQ(refusal("seconds = 1\nfragment_distribution = normal\nfragment_sigma = 564\n"),
            "run.cfg:3: fragment_sigma = 564 makes fragments of up to fragment_bytes × (1 + 8 × 564) bytes, more than "
            "2 GiB");
  EXPECT_NE(refusal("seconds = 1\nfragment_distribution = lognormal\nfragment_sigma = 1e300\n"), "");
  EXPECT_NE(refusal("seconds = 1\nfragment_distribution = normal\nfragment_sigma = 1\nfragment_bytes_per_ru = "
                    "64, 300000000\n"),
            "");
  // A fixed size has no spread, and a spread that fits is fine.
  Config c = Config::parse("seconds = 1\nfragment_sigma = 564\n", "run.cfg");
  EXPECT_EQ(FragmentSizes(c, 3).max_bytes(), 1048576u);
  c = Config::parse("seconds = 1\nfragment_distribution = normal\nfragment_sigma = 100\n", "run.cfg");
  EXPECT_EQ(FragmentSizes(c, 3).max_bytes(), 1048576u * 801);
}

TEST(RunConfig, TinyTcpSocketBuffersAreRefused) {
  // 1 byte stalled TCP until a fragment was called lost; a run.cfg written by hand is
  // checked as daqnet bench checks the scenario. Other transports do not read the key.
  EXPECT_NE(refusal("seconds = 1\ntransport = tcp\ntcp_socket_buffer_bytes = 1\n").find("at least 4096"),
            std::string::npos);
  EXPECT_EQ(refusal("seconds = 1\ntransport = tcp\ntcp_socket_buffer_bytes = 4096\n"), "");
  EXPECT_EQ(refusal("seconds = 1\ntransport = tcp\ntcp_socket_buffer_bytes = 0\n"), "");
  EXPECT_EQ(refusal("seconds = 1\ntcp_socket_buffer_bytes = 1\n"), "");
}

TEST(RunConfig, RecoveryOnlyWhereItWorks) {
  // A run.cfg written by hand ran recover = true over MPI as if it were fine; daqnet bench
  // refuses it, and so does the run description now.
  EXPECT_EQ(refusal("seconds = 1\nrecover = true\n"),
            "run.cfg:2: recover = true: failure recovery needs transport = tcp");
  EXPECT_NE(refusal("seconds = 1\ntransport = tcp\nrecover = true\nmode = time-frames\nsenders = 1\nreceivers = 1\n")
                .find("does not recover"),
            std::string::npos);
  EXPECT_EQ(refusal("seconds = 1\ntransport = tcp\nrecover = true\n"), "");
}

TEST(RunConfig, WholeNumbersAreDigitsOnly) {
  // strtoull skipped a vertical tab and read "-1" behind it as 2^64-1.
  EXPECT_EQ(refusal("seconds = 1\nseed = \v-1\n"),
            "run.cfg:2: seed = '\v-1' is not a seed (a whole number from 0 to 2^64-1)");
  EXPECT_NE(refusal("seconds = 1\nseed = -1\n"), "");
  EXPECT_NE(refusal("seconds = 1\nseed = +5\n"), "");
  EXPECT_NE(refusal("seconds = 1\nseed = 18446744073709551616\n"), "");
  EXPECT_EQ(Config::parse("seconds = 1\nseed = 18446744073709551615\n", "run.cfg").seed, ~0ULL);
  EXPECT_EQ(refusal("seconds = 1\ncredits = \v4\n"), "run.cfg:2: credits = '\v4' is not a whole number");
  EXPECT_NE(refusal("seconds = 1\ncredits = 4x\n"), "");
  EXPECT_NE(refusal("events = 9223372036854775808\n"), "");
  EXPECT_EQ(Config::parse("events = -0\nseconds = 1\n", "run.cfg").events, 0);
}

TEST(RunConfig, NumbersAreDecimal) {
  // Found comparing daqnet collect's reader with this one (tests/fuzz_readers.py): strtod took
  // "0x10" as 16 seconds, where Python's float() refuses it.
  EXPECT_EQ(refusal("seconds = 0x10\n"), "run.cfg:1: seconds = '0x10' is not a number");
  EXPECT_NE(refusal("seconds = +2\n"), "");
  EXPECT_NE(refusal("seconds = \v2\n"), "");
  EXPECT_NE(refusal("seconds = 1\nfragment_bytes_per_ru = 64, 0x100\n"), "");
  // Byte counts are whole, as fragment_bytes is: 65.5 was taken.
  EXPECT_EQ(refusal("seconds = 1\nfragment_bytes_per_ru = 65536, 65.5\n"),
            "run.cfg:2: fragment_bytes_per_ru has '65.5' (items are whole numbers of bytes from 64 to 2147483647)");
  EXPECT_EQ(
      Config::parse("seconds = 1\nfragment_bytes_per_ru = 65536.0, 1e5\n", "run.cfg").fragment_bytes_per_ru.size(), 2U);
  EXPECT_NE(refusal("seconds = infinity\n"), "");
  EXPECT_EQ(Config::parse("seconds = 1.5e1\nwarmup_seconds = .5\nreport_seconds = 2.\n", "run.cfg").seconds, 15.0);
}

TEST(RunConfig, NulBytesAreRefused) {
  // Found by the fuzzer: strtoll and strtod stopped at a NUL, so "10240\0anything" was 10240.
  using namespace std::string_literals;
  EXPECT_EQ(refusal("seconds = 1\nmeta_bytes = 10240\0 x = 64\n"s), "run.cfg:2: a NUL byte: run.cfg is a text file");
  EXPECT_EQ(refusal("seconds = 1\0 oops\n"s), "run.cfg:1: a NUL byte: run.cfg is a text file");
}

TEST(RunConfig, TimeFrameRanksFitAnInt) {
  // senders + receivers overflowed an int in make_layout (undefined behaviour).
  EXPECT_EQ(refusal("mode = time-frames\nsenders = 2147483647\nreceivers = 1\nseconds = 1\n"),
            "run.cfg:3: receivers = 1: senders + receivers = 2147483648 ranks, more than 2147483647");
  Config c = Config::parse("mode = time-frames\nsenders = 2147483646\nreceivers = 1\nseconds = 1\n", "run.cfg");
  EXPECT_THROW(make_layout(c, 0, {"a", "b", "c"}), ConfigError);
}

TEST(RunConfig, P2pBaselineWindowFitsAnInt) {
  // credits × in_flight overflowed an int in daqnet-evb's main (undefined behaviour).
  EXPECT_EQ(refusal("seconds = 1\nbaseline = p2p\ncredits = 8192\nin_flight = 2147483647\n"),
            "run.cfg:4: in_flight = 2147483647: the p2p baseline keeps credits × in_flight = 17592186036224 messages "
            "in flight, more than 2147483647");
  Config c = Config::parse("seconds = 1\ncredits = 8192\nin_flight = 2147483647\n", "run.cfg");
  EXPECT_EQ(p2p_window(c), 17592186036224);  // no baseline, no window: accepted
  c = Config::parse("seconds = 1\nbaseline = p2p\ncredits = 3\nin_flight = 5\n", "run.cfg");
  EXPECT_EQ(p2p_window(c), 15);
}

TEST(RunConfig, AHostListedOncePerRankGivesItsRanksItsLines) {
  // As SLURM_HOSTFILE lists them (daqnet repair with two tasks a node): b's first rank is
  // line 0, a's two ranks lines 1 and 3, b's second line 2. A host listed once took all
  // its ranks at its first line, whatever the others' lines said.
  Config c = Config::parse("seconds = 1\nranks = 4\nplacement = file\nplacement_hosts = b,a,b,a\n", "run.cfg");
  // ranks 0 and 2 run on a, 1 and 3 on b
  EXPECT_EQ(make_layout(c, 0, {"a", "b", "a", "b"}).order, (std::vector<int>{1, 0, 3, 2}));
  c = Config::parse("seconds = 1\nranks = 4\nplacement = file\nplacement_hosts = b,a\n", "run.cfg");
  EXPECT_EQ(make_layout(c, 0, {"a", "b", "a", "b"}).order, (std::vector<int>{1, 3, 0, 2}));
}

TEST(RunConfig, ANodesProcessesShareItsHost) {
  // 2 processes a node, a host file in no block order: node 0 was rank 1 on b and rank 0 on
  // a, its readout unit's "own" fragment sent over the network.
  Config c = Config::parse(
      "seconds = 1\nranks = 4\nprocesses_per_node = 2\nplacement = file\nplacement_hosts = b,a,b,a\n", "run.cfg");
  EXPECT_THROW(make_layout(c, 0, {"a", "b", "a", "b"}), ConfigError);
  c = Config::parse("seconds = 1\nranks = 4\nprocesses_per_node = 2\nplacement = file\nplacement_hosts = b,b,a,a\n",
                    "run.cfg");
  EXPECT_EQ(make_layout(c, 0, {"a", "b", "a", "b"}).order, (std::vector<int>{1, 3, 0, 2}));
}

TEST(RunConfig, P2pPairsNodesProcessByProcess) {
  // 2 processes a node, 3 nodes: node 0's processes send to node 1's, node 2 sits out. By
  // position, a node's readout process streamed to its own builder process.
  Config c = Config::parse("seconds = 1\nranks = 6\nprocesses_per_node = 2\n", "run.cfg");
  const Layout l = make_layout(c, 0, {"a", "a", "b", "b", "c", "c"});
  EXPECT_EQ(p2p_peer(l, 2, 0).peer, 2);
  EXPECT_TRUE(p2p_peer(l, 2, 0).sender);
  EXPECT_EQ(p2p_peer(l, 2, 1).peer, 3);
  EXPECT_EQ(p2p_peer(l, 2, 3).peer, 1);
  EXPECT_FALSE(p2p_peer(l, 2, 3).sender);
  EXPECT_EQ(p2p_peer(l, 2, 4).peer, -1);
  EXPECT_EQ(p2p_peer(l, 1, 0).peer, 1);  // a node a rank: 0→1, 2→3, 4→5
  EXPECT_EQ(p2p_peer(l, 1, 5).peer, 4);
}

}  // namespace
}  // namespace daqnet::evb
