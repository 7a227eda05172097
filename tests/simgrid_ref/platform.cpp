// daqnet — plan, simulate and benchmark event-building networks.
//
// Loads a SimGrid platform file (daqnet export --format simgrid) with SimGrid's own parser
// and runs steps of flows between named hosts over it, to check that the exported
// platform is one SimGrid 3.32 accepts and that it routes as daqnet does.
//
// Usage: platform PLATFORM INPUT OUTPUT
//
// INPUT: "message_bytes S" (a whole number), "steps K", then K records
// "step F src dst ..." with host names. OUTPUT: the number of hosts and links SimGrid
// built ("hosts N", "links L" without SimGrid's loopback), then one line per step with its duration in seconds.
// Every flow of a step starts at the step's start (the test platforms have no latency)
// and shares links by plain max-min (the platform's <config>, the settings of steps.cpp).

#include <xbt/log.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sg4 = simgrid::s4u;

int main(int argc, char** argv) {
  sg4::Engine e(&argc, argv);
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " PLATFORM INPUT OUTPUT\n";
    return 2;
  }
  xbt_log_control_set("xbt_cfg.thres:warning");
  // The network model comes from the platform file's <config>, as for a user's own program
  // (SimGrid's defaults made a barrel step 15 % longer); only the solver's precision here.
  e.set_config("surf/precision:1e-15");
  e.set_config("maxmin/precision:1e-5");
  e.load_platform(argv[1]);

  std::ifstream in(argv[2]);
  std::string word;
  uint64_t bytes = 0;
  size_t nsteps = 0;
  in >> word >> bytes >> word >> nsteps;
  std::vector<std::vector<std::pair<sg4::Host*, sg4::Host*>>> steps(nsteps);
  for (auto& step : steps) {
    size_t flows = 0;
    in >> word >> flows;
    for (size_t i = 0; i < flows; ++i) {
      std::string a, b;
      in >> a >> b;
      step.emplace_back(e.host_by_name(a), e.host_by_name(b));
    }
  }
  if (!in) {
    std::cerr << argv[2] << ": truncated input\n";
    return 2;
  }

  std::vector<double> times;
  sg4::Actor::create("controller", e.get_all_hosts().front(), [&] {
    for (const auto& step : steps) {
      const double t0 = sg4::Engine::get_clock();
      std::vector<sg4::CommPtr> comms;
      for (const auto& [s, d] : step) comms.push_back(sg4::Comm::sendto_async(s, d, bytes));
      sg4::Comm::wait_all(comms);
      times.push_back(sg4::Engine::get_clock() - t0);
    }
  });
  e.run();

  FILE* out = std::fopen(argv[3], "w");
  if (!out) return 2;
  size_t links = 0;  // the platform's own, not the loopback SimGrid adds to a Full zone
  for (const auto* l : e.get_all_links()) links += l->get_name().rfind("__", 0) == 0 ? 0 : 1;
  std::fprintf(out, "hosts %zu\nlinks %zu\n", e.get_host_count(), links);
  for (double t : times) std::fprintf(out, "%.17g\n", t);
  std::fclose(out);
  return 0;
}
