// daqnet — plan, simulate and benchmark event-building networks.
#include "common/line_reader.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

// The file's lines as the reader gives them.
std::vector<std::string> read_lines(const std::string& text) {
  // One file per test: ctest runs the tests in parallel processes.
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const auto path = (std::filesystem::temp_directory_path() / ("daqnet_line_reader_" + name + ".txt")).string();
  std::ofstream(path, std::ios::binary) << text;
  LineReader in(path, "test");
  std::vector<std::string> lines;
  std::string_view line;
  while (in.next(line)) lines.emplace_back(line);
  std::filesystem::remove(path);
  return lines;
}

std::string error_of(const std::string& text) {
  try {
    read_lines(text);
  } catch (const Error& e) {
    const std::string what = e.what();
    return what.substr(what.find(".txt:") + 4);  // from ":LINE: ..."
  }
  return "";
}

TEST(LineReader, SplitsAsGetlineWould) {
  EXPECT_TRUE(read_lines("").empty());
  EXPECT_EQ(read_lines("a\n"), std::vector<std::string>{"a"});
  EXPECT_EQ(read_lines("a\n\n  b c \r\nlast"), (std::vector<std::string>{"a", "", "b c", "last"}));
  EXPECT_EQ(read_lines("\xEF\xBB\xBF"
                       "first\n"),
            std::vector<std::string>{"first"});
}

TEST(LineReader, LinesAcrossBlocksAndLongerThanOne) {
  // Lines of every length around the block (1 MiB) and one of several blocks.
  std::string text;
  std::vector<std::string> want;
  for (size_t i = 0; text.size() < (3u << 20); ++i) {
    want.emplace_back(1 + i * 7919 % 1000, static_cast<char>('a' + i % 26));
    text += want.back() + "\n";
  }
  want.emplace_back(5u << 20, 'x');
  text += want.back() + "\n";
  want.emplace_back("end");
  text += "end";
  EXPECT_EQ(read_lines(text), want);
}

TEST(LineReader, NamesTheLineOfABadByteAnywhere) {
  std::string text;
  for (int i = 0; i < 40000; ++i) text += "0x0001 001 # Switch 'leaf\xC3\xA9'\n";  // é: valid
  text += "0x0002 002 # 'leaf\xE9'\n";
  EXPECT_EQ(error_of(text), ":40001: text: not UTF-8: byte 0xE9 at column 19 (save the file as UTF-8)");
  EXPECT_EQ(error_of(std::string(3u << 20, 'a') + "\n\nb\xFF\n"),
            ":3: text: not UTF-8: byte 0xFF at column 2 (save the file as UTF-8)");
}

// A file cut short ends inside a line: its error says so (a half line read as a LID with no
// name sent the user after subnet lists); an error on a whole line does not.
TEST(LineReader, SaysWhenTheFailingLineIsCutShort) {
  const std::string cut = " (the file ends inside this line, with no line break: cut short? write it again)";
  EXPECT_EQ(error_of(std::string(3u << 20, 'a') + "\n\nb\xFF"),
            ":3: text: not UTF-8: byte 0xFF at column 2 (save the file as UTF-8)" + cut);
  const auto fail_on = [](const std::string& text, const std::string& bad) {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const auto path = (std::filesystem::temp_directory_path() / ("daqnet_cut_" + name + ".txt")).string();
    std::ofstream(path, std::ios::binary) << text;
    std::string what;
    try {
      LineReader in(path, "test");
      std::string_view line;
      while (in.next(line))
        if (line == bad) in.fail("LID", "no host");
    } catch (const Error& e) {
      what = e.what();
    }
    std::filesystem::remove(path);
    return what.substr(what.find(".txt:") + 4);
  };
  EXPECT_EQ(fail_on("0x0001 001\n0x03d8 0", "0x03d8 0"), ":2: LID: no host" + cut);
  EXPECT_EQ(fail_on("0x0001 001\n0x03d8 0\n", "0x03d8 0"), ":2: LID: no host");
  EXPECT_EQ(fail_on("0x03d8 0\n0x0001 001", "0x03d8 0"), ":1: LID: no host");
}

// Binary data or an endless stream: one line naming it, not memory until the kernel steps in.
TEST(LineReader, RefusesALineNoTextFileHolds) {
  EXPECT_EQ(error_of("a\n" + std::string(17u << 20, 'z')), ":2: text: a line of over 16 MiB: not a text file");
  try {
    LineReader in("/dev/zero", "topology");
    FAIL() << "a device was read";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cannot read topology /dev/zero: not a regular file (a device or socket)");
  }
}

}  // namespace
}  // namespace daqnet
