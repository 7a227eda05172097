#include "evb/wait_mode.hpp"

#include <stdexcept>

namespace daqnet::evb {

WaitMode parse_wait_mode(const std::string& text) {
  if (text == "busy") return WaitMode::busy;
  if (text == "yield") return WaitMode::yield;
  if (text == "sleep") return WaitMode::sleep;
  throw std::invalid_argument("progress must be busy, yield or sleep, not '" + text + "'");
}

}  // namespace daqnet::evb
