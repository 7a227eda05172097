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

/// The run description, as read by parse(). Defaults, limits, units and meanings of every
/// key are in one table, config_keys.cpp (also the Python package's source for the scenario's
/// [bench] keys); the fields here only hold the values.
struct Config {
  int ranks{};  // ranks the run was prepared for; 0 = any (MPI decides)
  Mode mode{};
  Protocol protocol{};
  std::string transport;
  std::string progress;
  std::string local_path;  // lend | transport
  int processes_per_node{};
  int senders{}, receivers{};  // time-frame mode
  bool barrier{};              // time-frame mode: next frame after the previous is built
  int credits{};
  int in_flight{};
  int max_in_flight{};  // per process, 0 = no cap
  Schedule schedule{};
  std::uint64_t schedule_seed{};
  double fragment_bytes{};
  SizeDistribution distribution{};
  double fragment_sigma{};
  std::vector<double> fragment_bytes_per_ru;  // empty: all RUs use fragment_bytes
  int events_per_fragment{};
  std::int64_t meta_bytes{};
  std::int64_t command_bytes{};
  double rate_hz{};  // fragments per second per RU, 0 = as fast as possible
  std::int64_t events{};
  double seconds{};
  double warmup_seconds{};
  std::uint64_t seed{};
  bool checksum{};
  bool recover{};  // go on when a rank dies (TCP): see docs/bench.md "Failure recovery"
  double report_seconds{};
  double drain_timeout_seconds{};
  double stall_seconds{};
  double fragment_timeout_seconds{};  // a builder gives an event's missing fragments up as lost
  double heartbeat_seconds{};         // with recover: a peer silent this long is dead
  std::string on_ru_failure;          // incomplete | stop
  std::string placement;
  std::uint64_t placement_seed{};
  std::vector<std::string> placement_hosts;
  std::string tcp_address, tcp_interface;
  std::string tcp_token;  // never written to results: whoever has it may join the run
  int tcp_socket_buffer_bytes{};
  bool tcp_control_connection{};
  bool baseline_cold{};  // alltoall, isend: fresh buffers at every repetition (IMB's -off_cache)
  int tcp_control_dscp{};
  std::string libfabric_provider, libfabric_domain;
  std::string baseline;
  double baseline_seconds{};
  std::int64_t fault_corrupt_every{};    // test hook: RU 0 corrupts every N-th fragment
  std::int64_t fault_duplicate_every{};  // test hook: RU 0 sends every N-th fragment twice
  std::int64_t fault_drop_every{};       // test hook: RU 0 never sends every N-th fragment
  std::int64_t fault_delay_every{};      // test hook: RU 0 holds every N-th fragment back ...
  std::int64_t fault_delay_ms{};         // ... for this long
  std::int64_t fault_allocate_every{};   // test hook: RU 0 allocates once per N fragments

  static Config read(const std::string& path);
  // The same from text; `path` names the source in messages.
  static Config parse(const std::string& text, const std::string& path);
};

}  // namespace daqnet::evb
