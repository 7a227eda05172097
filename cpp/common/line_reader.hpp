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

/// A text file read line by line (streaming: one line in memory), lines trimmed, a UTF-8
/// byte-order mark dropped, every line checked to be UTF-8.
class LineReader {
public:
  /// `what` names the file's role for the open error ("topology", "forwarding tables").
  LineReader(std::string path, const std::string& what) : path_(std::move(path)) {
    // The error_code form: a name too long or a loop of links is the open's error below,
    // not a std::filesystem::filesystem_error.
    std::error_code ec;
    if (std::filesystem::is_directory(path_, ec)) throw Error("cannot read " + what + " " + path_ + ": is a directory");
    in_.open(path_, std::ios::binary);
    if (!in_) throw Error("cannot read " + what + " " + path_ + ": " + std::strerror(errno));
  }

  /// The next line, trimmed; false at the end of the file.
  bool next(std::string_view& line) {
    if (!std::getline(in_, text_)) {
      if (in_.bad()) throw Error("cannot read " + path_ + ": read error");
      return false;
    }
    ++lineno_;
    if (lineno_ == 1 && text_.starts_with("\xEF\xBB\xBF")) text_.erase(0, 3);
    if (const size_t bad = invalid_utf8(text_); bad != std::string_view::npos) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto b = static_cast<unsigned char>(text_[bad]);
      fail("text", std::string("not UTF-8: byte 0x") + kHex[b >> 4] + kHex[b & 15] + " at column " +
                       std::to_string(bad + 1) + " (save the file as UTF-8)");
    }
    line = trim(text_);
    return true;
  }

  uint32_t lineno() const { return lineno_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& field, const std::string& what) const { fail_at(lineno_, field, what); }
  [[noreturn]] void fail_at(uint32_t line, const std::string& field, const std::string& what) const {
    throw Error(path_ + ":" + std::to_string(line) + ": " + field + ": " + what);
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
  std::string path_;
  std::ifstream in_;
  std::string text_;
  uint32_t lineno_ = 0;
};

}  // namespace daqnet
