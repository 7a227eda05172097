// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cctype>
#include <string_view>

namespace daqnet {

/// "Natural" order of names: runs of digits compare as numbers, so leaf2 < leaf10 and
/// node9 < node010 (equal numbers: the shorter run first). Used to put imported
/// switches in the order an administrator numbered them.
inline bool natural_less(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      size_t is = i, js = j;  // skip leading zeros, then compare by length, then digits
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const auto na = a.substr(is, ie - is), nb = b.substr(js, je - js);
      if (na != nb) return na < nb;
      if (ie - i != je - j) return ie - i < je - j;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace daqnet
