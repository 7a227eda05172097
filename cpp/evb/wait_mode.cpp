#include "evb/wait_mode.hpp"

#include <sched.h>

#include <algorithm>
#include <ctime>
#include <stdexcept>

namespace daqnet::evb {

WaitMode parse_wait_mode(const std::string& text) {
  if (text == "busy") return WaitMode::busy;
  if (text == "yield") return WaitMode::yield;
  if (text == "sleep") return WaitMode::sleep;
  throw std::invalid_argument("progress must be busy, yield or sleep, not '" + text + "'");
}

void PollPause::after_poll(bool completed, double timeout_seconds) {
  if (completed || timeout_seconds <= 0) {
    idle_polls_ = 0;
    return;
  }
  // Nothing completed, and waiting means polling again; the wait mode decides what happens
  // to the core in between.
  ++idle_polls_;
  if (mode_ == WaitMode::sleep && idle_polls_ > 64) {
    // Sleep grows from 1 µs to 64 µs while idle: short enough not to starve large
    // transfers that need this rank's progress, long enough to free the core.
    long ns = std::min(64000L, 1000L << std::min(6, (idle_polls_ - 64) / 16));
    timespec ts{0, ns};
    nanosleep(&ts, nullptr);
  } else if (mode_ == WaitMode::yield || mode_ == WaitMode::sleep) {  // sleep mode: its first 64 idle polls
    sched_yield();
  }
}

}  // namespace daqnet::evb
