#include "evb/interrupt.hpp"

#include <csignal>

namespace daqnet::evb {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_signal(int) { g_interrupted = 1; }

}  // namespace

void catch_interrupts() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // srun passes SIGUSR2 on to the tasks as it is, where its SIGINT only prints the step's
  // state and its SIGTERM ends the step (the ranks' last results with it): daqnet bench
  // stops ranks launched by srun with SIGUSR2.
  std::signal(SIGUSR2, on_signal);
}

bool interrupted() { return g_interrupted != 0; }

}  // namespace daqnet::evb
