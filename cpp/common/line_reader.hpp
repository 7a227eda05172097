// daqnet — plan, simulate and benchmark event-building networks.
//
// Reading the text files of other tools (ibnetdiscover, LFT dumps, subnet lists) line by
// line, with every error naming the file, the line and the field: "FILE:LINE: FIELD: what".
#pragma once

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "common/error.hpp"

namespace daqnet {

/// Blanks inside a line: space, tab, and the '\r' of files written on Windows.
inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

inline void skip_blanks(std::string_view s, size_t& i) {
  while (i < s.size() && is_blank(s[i])) ++i;
}

inline std::string_view trim(std::string_view s) {
  size_t i = 0;
  skip_blanks(s, i);
  size_t j = s.size();
  while (j > i && is_blank(s[j - 1])) --j;
  return s.substr(i, j - i);
}

/// Where the first byte that is not part of valid UTF-8 sits in s, or npos. Names read from
/// these files become Python strings: an invalid byte must be an error naming its line here,
/// not a decode error later.
inline size_t invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // Lead byte: length and the smallest code point it may encode (no overlong forms).
    size_t n = 0;
    uint32_t cp = 0, least = 0;
    if ((c & 0xE0) == 0xC0) {
      n = 2, cp = c & 0x1Fu, least = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 3, cp = c & 0x0Fu, least = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 4, cp = c & 0x07u, least = 0x10000;
    } else {
      return i;
    }
    if (i + n > s.size()) return i;
    for (size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3Fu);
    }
    if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n;
  }
  return std::string_view::npos;
}

/// A text file read line by line (streaming: a block of the file in memory, grown only for
/// a longer line), lines trimmed, a UTF-8 byte-order mark dropped, every line checked to
/// be UTF-8. Blocks rather than std::getline: forwarding-table dumps run to millions of
/// lines, and getline's per-line scan and copy were most of their import.
class LineReader {
public:
  /// `what` names the file's role for the open error ("topology", "forwarding tables").
  LineReader(std::string path, const std::string& what) : path_(std::move(path)) {
    // The error_code form: a name too long or a loop of links is the open's error below,
    // not a std::filesystem::filesystem_error.
    std::error_code ec;
    if (std::filesystem::is_directory(path_, ec)) throw Error("cannot read " + what + " " + path_ + ": is a directory");
    // A device never ends (/dev/zero: one line, grown until the kernel killed the reader).
    if (std::filesystem::is_character_file(path_, ec) || std::filesystem::is_block_file(path_, ec) ||
        std::filesystem::is_socket(path_, ec))
      throw Error("cannot read " + what + " " + path_ + ": not a regular file (a device or socket)");
    in_.open(path_, std::ios::binary);
    if (!in_) throw Error("cannot read " + what + " " + path_ + ": " + std::strerror(errno));
    buf_.resize(kBlock);
    const auto size = std::filesystem::file_size(path_, ec);  // none for a pipe
    size_ = ec ? 0 : static_cast<uint64_t>(size);
  }

  /// Bytes of the file read up to the end of the last line, and its size (0 if not known:
  /// a pipe), for progress reports.
  uint64_t consumed() const { return before_ + pos_; }
  uint64_t size() const { return size_; }

  /// The next line, trimmed; false at the end of the file. The view holds until the next call.
  bool next(std::string_view& line) {
    size_t stop = 0;  // the line is buf_[pos_, stop)
    for (;;) {
      if (const void* nl = std::memchr(buf_.data() + pos_, '\n', end_ - pos_)) {
        stop = static_cast<size_t>(static_cast<const char*>(nl) - buf_.data());
        break;
      }
      if (eof_) {
        if (pos_ == end_) return false;
        stop = end_;  // a last line without a newline
        unterminated_ = true;
        break;
      }
      // No line of these files comes near this: binary data, or a stream without newlines.
      if (end_ - pos_ > kMaxLine)
        fail_at(lineno_ + 1, "text", "a line of over " + std::to_string(kMaxLine >> 20) + " MiB: not a text file");
      refill();
    }
    std::string_view text(buf_.data() + pos_, stop - pos_);
    pos_ = stop < end_ ? stop + 1 : stop;
    ++lineno_;
    if (lineno_ == 1 && text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    // Most files are ASCII throughout: only a line holding a byte >= 0x80 is checked.
    if (high_ < stop) {
      if (const size_t bad = invalid_utf8(text); bad != std::string_view::npos) {
        static constexpr char kHex[] = "0123456789ABCDEF";
        const auto b = static_cast<unsigned char>(text[bad]);
        fail("text", std::string("not UTF-8: byte 0x") + kHex[b >> 4] + kHex[b & 15] + " at column " +
                         std::to_string(bad + 1) + " (save the file as UTF-8)");
      }
      high_ = first_high(pos_);
    }
    line = trim(text);
    return true;
  }

  uint32_t lineno() const { return lineno_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& field, const std::string& what) const { fail_at(lineno_, field, what); }
  [[noreturn]] void fail_at(uint32_t line, const std::string& field, const std::string& what) const {
    // A dump cut short (a tool stopped while writing it) ends inside a line: said, or the
    // half line's error (a LID with no name) sent the user after names and subnet lists.
    const char* cut = line == lineno_ && unterminated_
                          ? " (the file ends inside this line, with no line break: cut short? write it again)"
                          : "";
    throw Error(path_ + ":" + std::to_string(line) + ": " + field + ": " + what + cut);
  }

  /// A hexadecimal number, with or without 0x, of the current line's `field`.
  uint64_t hex(std::string_view s, const std::string& field) const {
    if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
    uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
      fail(field, "'" + std::string(s) + "' is not a hexadecimal number");
    return v;
  }

  /// A decimal whole number of the current line's `field`.
  int32_t decimal(std::string_view s, const std::string& field) const {
    int32_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size())
      fail(field, "'" + std::string(s) + "' is not a whole number");
    return v;
  }

private:
  static constexpr size_t kBlock = size_t{1} << 20;
  static constexpr size_t kMaxLine = size_t{16} << 20;

  /// The partial line to the front of the buffer, and the next block of the file after it.
  void refill() {
    const size_t keep = end_ - pos_;
    before_ += pos_;
    std::memmove(buf_.data(), buf_.data() + pos_, keep);
    high_ = high_ == end_ ? keep : high_ - pos_;
    const size_t scanned = end_ - pos_;
    pos_ = 0;
    end_ = keep;
    if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);  // a line longer than the buffer
    in_.read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
    if (in_.bad()) throw Error("cannot read " + path_ + ": read error");
    const auto got = static_cast<size_t>(in_.gcount());
    eof_ = got == 0;
    end_ += got;
    if (high_ == scanned) high_ = first_high(scanned);
  }

  /// The first byte >= 0x80 in buf_[from, end_), or end_; eight bytes at a time.
  size_t first_high(size_t from) const {
    size_t i = from;
    for (; i + 8 <= end_; i += 8) {
      uint64_t w = 0;
      std::memcpy(&w, buf_.data() + i, 8);
      if (w & 0x8080808080808080u) break;
    }
    while (i < end_ && static_cast<unsigned char>(buf_[i]) < 0x80) ++i;
    return i;
  }

  std::string path_;
  std::ifstream in_;
  std::vector<char> buf_;
  uint64_t before_ = 0, size_ = 0;  // bytes of the file before buf_[0]; its size
  bool unterminated_ = false;       // the last line read had no newline (the file's end)
  size_t pos_ = 0, end_ = 0;        // the unread part of buf_
  size_t high_ = 0;                 // the first byte >= 0x80 at or after pos_ in it, or end_
  bool eof_ = false;
  uint32_t lineno_ = 0;
};

}  // namespace daqnet
