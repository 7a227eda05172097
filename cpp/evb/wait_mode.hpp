// How a transport waits when progress() finds nothing to do.
#pragma once

#include <string>

namespace daqnet::evb {

// busy:  poll again at once (lowest latency; one core per rank needed)
// yield: poll, then give the core away with sched_yield() (oversubscribed ranks)
// sleep: poll, then sleep or block in the kernel for short, growing intervals (default)
enum class WaitMode { busy, yield, sleep };

WaitMode parse_wait_mode(const std::string& text);  // throws std::invalid_argument

}  // namespace daqnet::evb
