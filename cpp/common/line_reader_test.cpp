// daqnet — plan, simulate and benchmark event-building networks.
#include "common/line_reader.hpp"

#include <gtest/gtest.h>

namespace daqnet {
namespace {

constexpr size_t kNone = std::string_view::npos;

TEST(InvalidUtf8, AcceptsAsciiAndWellFormedSequences) {
  EXPECT_EQ(invalid_utf8(""), kNone);
  EXPECT_EQ(invalid_utf8("leaf5 \"S-00\" # lid 9"), kNone);
  EXPECT_EQ(invalid_utf8("caf\xC3\xA9"), kNone);         // é, 2 bytes
  EXPECT_EQ(invalid_utf8("\xE2\x82\xAC 5"), kNone);      // €, 3 bytes
  EXPECT_EQ(invalid_utf8("x\xF0\x9F\x98\x80y"), kNone);  // U+1F600, 4 bytes
  EXPECT_EQ(invalid_utf8("\xF4\x8F\xBF\xBF"), kNone);    // U+10FFFF, the last code point
}

TEST(InvalidUtf8, GivesTheFirstByteOfWhatIsNot) {
  EXPECT_EQ(invalid_utf8("leaf\xE9"
                         "5"),
            4u);                                    // é in Latin-1
  EXPECT_EQ(invalid_utf8("ab\xFF"), 2u);            // never a lead byte
  EXPECT_EQ(invalid_utf8("\x80"), 0u);              // a continuation byte alone
  EXPECT_EQ(invalid_utf8("a\xE2\x82"), 1u);         // cut short by the line's end
  EXPECT_EQ(invalid_utf8("a\xE2(\xAC"), 1u);        // cut short by another byte
  EXPECT_EQ(invalid_utf8("\xC0\xAF"), 0u);          // overlong '/'
  EXPECT_EQ(invalid_utf8("\xE0\x80\xAF"), 0u);      // overlong, 3 bytes
  EXPECT_EQ(invalid_utf8("ok \xED\xA0\x80"), 3u);   // a UTF-16 surrogate
  EXPECT_EQ(invalid_utf8("\xF4\x90\x80\x80"), 0u);  // beyond U+10FFFF
  EXPECT_EQ(invalid_utf8("caf\xC3\xA9 \xC3"), 6u);  // after a good one
}

}  // namespace
}  // namespace daqnet
