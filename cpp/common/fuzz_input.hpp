// daqnet — plan, simulate and benchmark event-building networks.
//
// What the libFuzzer harnesses of the file readers share (*_fuzz.cpp, built with
// -DDAQNET_FUZZ=ON): the input written to a file the reader opens, and the rule every
// refusal must keep: one daqnet::Error of one line naming the file.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace daqnet::fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
  std::abort();
}

/// A file of this process for the input (the readers take paths), named `name`.
inline std::string write_input(const std::uint8_t* data, std::size_t size, const std::string& name) {
  static const std::string dir = [] {
    std::string pattern = "/tmp/daqnet-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) fail("cannot make a temporary directory");
    return pattern;
  }();
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

/// A reader's refusal: one line that names the file.
inline void check_message(const std::string& msg, const std::string& name) {
  if (msg.empty() || msg.find('\n') != std::string::npos) fail("not one line: '" + msg + "'");
  if (msg.find(name) == std::string::npos) fail("does not name the file " + name + ": '" + msg + "'");
}

}  // namespace daqnet::fuzz
