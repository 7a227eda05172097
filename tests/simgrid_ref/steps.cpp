// daqnet — plan, simulate and benchmark event-building networks.
//
// Reference step simulator on SimGrid (S4U, tested with 3.32), independent of daqnet's
// code: tests compare daqnet's max-min fair step times with the times printed here.
//
// Usage: steps INPUT OUTPUT
//
// INPUT is whitespace-separated "keyword values..." records, in this order ('#' starts a
// comment that runs to the end of the line):
//   levels H
//   down m_1 .. m_H          children per switch, level 1 (leaf) first
//   up w_1 .. w_H            parents per node of the level below (w_1: leaves per host)
//   parallel p_1 .. p_H      cables between a node and each of its parents
//   hosts N                  hosts used; SimGrid always builds all m_1·…·m_H of them
//   bandwidth B              bytes/s of each direction of every cable
//   latency L                seconds per cable
//   message_bytes S          size of every flow
//   steps K                  then K records:
//   step F src dst ...       F flows as 0-based host indices (SimGrid's fat-tree order)
//
// OUTPUT: one line per step with its duration in seconds (%.17g), then the lines
// "platform_wall_seconds X" (building the platform) and "simulation_wall_seconds Y"
// (Engine::run, i.e. all steps).
//
// Model. Every flow of a step starts at the step's start; it first waits hops·L (its
// latency, hops = cables on SimGrid's route) and then moves S bytes at its max-min fair
// share of every cable direction on its route. A step ends when its last flow ends and
// the next step starts then. The cables are SPLITDUPLEX (each direction is its own
// resource) and the network model is CM02 with every correction off.
//
// Why the latency is paid by delaying the start rather than by the cables: CM02 weighs a
// flow's share by its route latency (its "sharing penalty"), so a 2-cable flow would get
// twice the rate of a 4-cable flow on a shared cable. With zero-latency cables every flow
// has the same penalty and the sharing is plain max-min; the controller then starts each
// flow hops·L after the step's start, which is exactly what CM02 does with latency on
// the cables (a flow takes no bandwidth until its latency is paid).

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

struct Input {
  unsigned levels = 0;
  std::vector<unsigned> down, up, parallel;
  long hosts = 0;
  double bandwidth = 0, latency = 0, message_bytes = 0;
  std::vector<std::vector<std::pair<long, long>>> steps;
};

Input read_input(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  for (std::string line; std::getline(f, line);) text << line.substr(0, line.find('#')) << '\n';
  Input in;
  auto expect = [&](const char* key) {
    std::string k;
    if (!(text >> k) || k != key) throw std::runtime_error(std::string("expected '") + key + "', got '" + k + "'");
  };
  auto number = [&](auto& v, const char* what) {
    if (!(text >> v)) throw std::runtime_error(std::string("bad or missing ") + what);
  };
  auto vec = [&](const char* key, std::vector<unsigned>& v) {
    expect(key);
    v.resize(in.levels);
    for (auto& x : v) number(x, key);
  };
  expect("levels");
  number(in.levels, "levels");
  vec("down", in.down);
  vec("up", in.up);
  vec("parallel", in.parallel);
  long capacity = 1;
  for (unsigned m : in.down) capacity *= m;
  expect("hosts");
  number(in.hosts, "hosts");
  if (in.hosts < 1 || in.hosts > capacity)
    throw std::runtime_error("hosts = " + std::to_string(in.hosts) + ": the tree holds 1.." + std::to_string(capacity));
  expect("bandwidth");
  number(in.bandwidth, "bandwidth");
  expect("latency");
  number(in.latency, "latency");
  expect("message_bytes");
  number(in.message_bytes, "message_bytes");
  if (!(in.bandwidth > 0) || !(in.latency >= 0) || !(in.message_bytes > 0))
    throw std::runtime_error("need bandwidth > 0, latency >= 0, message_bytes > 0");
  size_t k = 0;
  expect("steps");
  number(k, "steps");
  in.steps.resize(k);
  for (auto& step : in.steps) {
    size_t n = 0;
    expect("step");
    number(n, "flow count");
    step.resize(n);
    for (auto& [s, d] : step) {
      number(s, "src");
      number(d, "dst");
      if (s < 0 || d < 0 || s >= in.hosts || d >= in.hosts)
        throw std::runtime_error("flow " + std::to_string(s) + "->" + std::to_string(d) + " outside 0.." +
                                 std::to_string(in.hosts - 1));
      if (s == d) throw std::runtime_error("self flow " + std::to_string(s) + "->" + std::to_string(d));
    }
  }
  std::string extra;
  if (text >> extra) throw std::runtime_error("unexpected '" + extra + "' after the last step");
  return in;
}

// One actor runs the steps in order. Flows with the same latency start together, groups in
// increasing latency; sendto_async needs no receiver actor or mailbox. The route lookup
// for the hop count costs ~10% of the run (SimGrid routes each comm again internally).
void controller(const Input& in, const std::vector<sg4::Host*>& hosts, uint64_t bytes, std::vector<double>& times) {
  // hops of every ordered pair that occurs, from SimGrid's own route (cached per pair)
  std::map<std::pair<long, long>, size_t> hops;
  std::vector<sg4::Link*> route;
  for (const auto& step : in.steps) {
    const double t0 = sg4::Engine::get_clock();
    std::map<size_t, std::vector<std::pair<long, long>>> by_hops;
    for (const auto& f : step) {
      auto [it, fresh] = hops.try_emplace(f, 0);
      if (fresh && in.latency > 0) {  // without latency every flow starts at once
        route.clear();
        double lat = 0;
        hosts[f.first]->route_to(hosts[f.second], route, &lat);
        it->second = route.size();
      }
      by_hops[it->second].push_back(f);
    }
    std::vector<sg4::CommPtr> comms;
    comms.reserve(step.size());
    for (const auto& [h, flows] : by_hops) {
      if (in.latency > 0) sg4::this_actor::sleep_until(t0 + static_cast<double>(h) * in.latency);
      for (const auto& [s, d] : flows) comms.push_back(sg4::Comm::sendto_async(hosts[s], hosts[d], bytes));
    }
    sg4::Comm::wait_all(comms);
    times.push_back(sg4::Engine::get_clock() - t0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using clock = std::chrono::steady_clock;
  sg4::Engine e(&argc, argv);  // takes --cfg=... options; the settings below override them
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " INPUT OUTPUT\n";
    return 2;
  }
  Input in;
  try {
    in = read_input(argv[1]);
  } catch (const std::exception& err) {
    std::cerr << argv[1] << ": " << err.what() << "\n";
    return 2;
  }

  // Plain max-min: no RTT weighting (weight-S), no slow-start factors, no TCP window
  // bound (gamma 0 turns it off; it also needs a route latency, and ours is 0), no 5%
  // reverse traffic. Lazy and Full updates give the same times; Lazy is the faster.
  // surf/precision: SimGrid merges events less than this apart (default 1e-9 s), which
  // with sub-ns latencies cost ~1e-5 of a step; 1e-15 s is a few ulps of the clock. Rates
  // are compared to 1e-5 B/s (~1e-14 of a link). Step times then agree with an exact
  // rational max-min to ~1e-14 relative.
  xbt_log_control_set("xbt_cfg.thres:warning");  // no "Configuration change" lines on stderr
  e.set_config("network/model:CM02");
  e.set_config("network/crosstraffic:0");
  e.set_config("network/TCP-gamma:0");
  e.set_config("network/weight-S:0");
  e.set_config("network/latency-factor:1");
  e.set_config("network/bandwidth-factor:1");
  e.set_config("network/optim:Lazy");
  e.set_config("surf/precision:1e-15");
  e.set_config("maxmin/precision:1e-5");

  // sendto_async takes whole bytes: scale bytes and bandwidth by the same power of two,
  // which is exact in floating point and leaves every time unchanged.
  double bytes = in.message_bytes, bandwidth = in.bandwidth;
  while (bytes != std::floor(bytes)) bytes *= 2, bandwidth *= 2;
  if (bytes > 9e15) {
    std::cerr << "message_bytes too large or too fine-grained\n";
    return 2;
  }

  const auto t_build = clock::now();
  std::vector<sg4::Host*> hosts;
  // Host i is created for the leaf with id i, which FatTreeZone puts at position i.
  auto host_cb = [&hosts](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    auto* h = zone->create_host("h" + std::to_string(id), 1e9);
    if (hosts.size() <= id) hosts.resize(id + 1);
    hosts[id] = h;
    return std::make_pair(h->get_netpoint(), static_cast<simgrid::kernel::routing::NetPoint*>(nullptr));
  };
  auto* zone = sg4::create_fatTree_zone("fabric", nullptr, sg4::FatTreeParams(in.levels, in.down, in.up, in.parallel),
                                        sg4::ClusterCallbacks(host_cb), bandwidth, 0.0,
                                        sg4::Link::SharingPolicy::SPLITDUPLEX);
  zone->seal();

  std::vector<double> times;
  sg4::Actor::create("controller", hosts[0],
                     [&in, &hosts, &times, bytes] { controller(in, hosts, static_cast<uint64_t>(bytes), times); });
  const auto t_run = clock::now();
  e.run();
  const auto t_end = clock::now();
  if (times.size() != in.steps.size()) {
    std::cerr << "simulation ended after " << times.size() << " of " << in.steps.size() << " steps\n";
    return 1;
  }

  FILE* out = std::fopen(argv[2], "w");
  if (!out) {
    std::cerr << "cannot write " << argv[2] << "\n";
    return 2;
  }
  for (double t : times) std::fprintf(out, "%.17g\n", t);
  std::fprintf(out, "platform_wall_seconds %.6f\n", std::chrono::duration<double>(t_run - t_build).count());
  std::fprintf(out, "simulation_wall_seconds %.6f\n", std::chrono::duration<double>(t_end - t_run).count());
  return std::fclose(out) == 0 ? 0 : 2;
}
