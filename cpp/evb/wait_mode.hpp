// How a transport waits when progress() finds nothing to do.
#pragma once

#include <string>

namespace daqnet::evb {

// busy:  poll again at once (lowest latency; one core per rank needed)
// yield: poll, then give the core away with sched_yield() (oversubscribed ranks)
// sleep: poll, then sleep or block in the kernel for short, growing intervals (default)
enum class WaitMode { busy, yield, sleep };

WaitMode parse_wait_mode(const std::string& text);  // throws std::invalid_argument

// What a polling transport (MPI, libfabric: data moves only inside their calls) does after a
// poll: nothing after one that completed something, else what its wait mode says.
class PollPause {
public:
  explicit PollPause(WaitMode mode) : mode_(mode) {}
  void after_poll(bool completed, double timeout_seconds);

private:
  WaitMode mode_;
  int idle_polls_ = 0;
};

}  // namespace daqnet::evb
