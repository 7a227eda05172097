// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

namespace daqnet::evb {

// SIGINT, SIGTERM and SIGUSR2 (daqnet bench's Ctrl-C, passed on by the launcher) set a flag
// that the run and the baselines read between steps, so that every rank writes what it
// measured and leaves with 130. Installed first thing in main: a signal while MPI starts used to end the
// rank at once, and with it the whole run, without results.
void catch_interrupts();
bool interrupted();

}  // namespace daqnet::evb
