// daqnet — plan, simulate and benchmark event-building networks.
#include "evb/local_channel.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace daqnet::evb {
namespace {

std::vector<Completion> drain(LocalChannel& ch) {
  std::vector<Completion> out;
  ch.take(out);
  return out;
}

TEST(LocalChannel, CopiesIntoThePostedBufferOldestFirstPerTag) {
  LocalChannel ch(3);
  std::string a = "first", b = "second", other = "other tag";
  std::vector<char> r1(16, 0), r2(16, 0), r3(16, 0);
  ch.send(7, a.data(), a.size(), 1, false);
  ch.send(7, b.data(), b.size(), 2, false);
  ch.send(8, other.data(), other.size(), 3, false);
  EXPECT_FALSE(ch.ready());
  EXPECT_EQ(ch.pending(), 3u);
  ch.recv(7, r1.data(), r1.size(), 11);
  ch.recv(7, r2.data(), r2.size(), 12);
  auto done = drain(ch);
  ASSERT_EQ(done.size(), 4u);  // send then receive, per message, in matching order
  EXPECT_EQ(done[0].kind, Completion::Kind::send);
  EXPECT_EQ(done[0].cookie, 1u);
  EXPECT_EQ(done[1].kind, Completion::Kind::recv);
  EXPECT_EQ(done[1].cookie, 11u);
  EXPECT_EQ(done[1].bytes, a.size());
  EXPECT_EQ(done[1].peer, 3);
  EXPECT_EQ(done[1].data, nullptr);
  EXPECT_FALSE(done[0].lent);
  EXPECT_EQ(std::string(r1.data()), "first");
  EXPECT_EQ(std::string(r2.data()), "second");
  EXPECT_EQ(done[3].cookie, 12u);
  EXPECT_EQ(ch.pending(), 1u);  // tag 8's send still waits
  ch.recv(8, r3.data(), r3.size(), 13);
  EXPECT_EQ(drain(ch).size(), 2u);
  EXPECT_EQ(std::string(r3.data()), "other tag");
  EXPECT_EQ(ch.pending(), 0u);
}

TEST(LocalChannel, LendsWithoutCopying) {
  LocalChannel ch(0);
  std::vector<unsigned char> frag(1000, 0xAB), posted(1000, 0);
  ch.recv(5, posted.data(), posted.size(), 21);
  ch.send(5, frag.data(), frag.size(), 9, true);
  auto done = drain(ch);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_TRUE(done[0].lent);
  EXPECT_EQ(done[1].data, frag.data());  // the receiver reads the sender's buffer
  EXPECT_EQ(done[1].loan, 9u);
  EXPECT_EQ(done[1].bytes, 1000u);
  EXPECT_EQ(posted[0], 0);  // nothing copied
}

TEST(LocalChannel, RejectsAMessageLongerThanItsReceive) {
  LocalChannel ch(2);
  std::vector<char> big(100), small(10);
  ch.recv(1, small.data(), small.size(), 1);
  EXPECT_THROW(ch.send(1, big.data(), big.size(), 2, false), TransportError);
}

TEST(LocalChannel, CancelsUnmatchedReceives) {
  LocalChannel ch(0);
  std::vector<char> r(8);
  ch.recv(1, r.data(), r.size(), 1);
  ch.recv(2, r.data(), r.size(), 2);
  EXPECT_EQ(ch.pending(), 2u);
  ch.cancel_receives();
  EXPECT_EQ(ch.pending(), 0u);
  EXPECT_FALSE(ch.ready());
}

}  // namespace
}  // namespace daqnet::evb
