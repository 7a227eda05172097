// The run description daqnet-evb reads: one `key = value` per line, written by
// `daqnet bench` from a scenario (or by hand on a cluster). Lists are comma-separated.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace daqnet::evb {

class ConfigError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

enum class Mode { event_manager, time_frames };  // LHCb-like (EM assigns) or ALICE-like
enum class Protocol { push, pull };
enum class Schedule { barrel, random, all_at_once };
enum class SizeDistribution { fixed, normal, lognormal };

struct Config {
  int ranks = 0;  // ranks the run was prepared for; 0 = any (MPI decides)
  Mode mode = Mode::event_manager;
  Protocol protocol = Protocol::push;
  std::string transport = "mpi";
  std::string progress = "sleep";
  int processes_per_node = 1;
  int senders = 0, receivers = 0;  // time-frame mode
  bool barrier = false;            // time-frame mode: next frame after the previous is built
  int credits = 2;
  int in_flight = 8;
  int max_in_flight = 0;  // per process, 0 = no cap
  Schedule schedule = Schedule::barrel;
  std::uint64_t schedule_seed = 0;
  double fragment_bytes = 1 << 20;
  SizeDistribution distribution = SizeDistribution::fixed;
  double fragment_sigma = 0.1;
  std::vector<double> fragment_bytes_per_ru;  // empty: all RUs use fragment_bytes
  int events_per_fragment = 1;
  std::int64_t meta_bytes = 10240;
  std::int64_t command_bytes = 64;
  double rate_hz = 0;  // fragments per second per RU, 0 = as fast as possible
  std::int64_t events = 0;
  double seconds = 0;
  double warmup_seconds = 0.5;
  std::uint64_t seed = 0;
  bool checksum = true;
  double report_seconds = 1.0;
  double drain_timeout_seconds = 10.0;
  double stall_seconds = 30.0;
  std::string placement = "topology";
  std::uint64_t placement_seed = 0;
  std::vector<std::string> placement_hosts;
  std::string tcp_address, tcp_interface;
  int tcp_socket_buffer_bytes = 0;
  std::string baseline = "none";
  double baseline_seconds = 2.0;
  std::int64_t fault_corrupt_every = 0;    // test hook: RU 0 corrupts every N-th fragment
  std::int64_t fault_duplicate_every = 0;  // test hook: RU 0 sends every N-th fragment twice

  static Config read(const std::string& path);
  // The same from text; `path` names the source in messages.
  static Config parse(const std::string& text, const std::string& path);
};

}  // namespace daqnet::evb
