// daqnet — plan, simulate and benchmark event-building networks.
#include "evb/config_keys.hpp"

#include <cstdint>
#include <limits>

#include "evb/messages.hpp"

namespace daqnet::evb {
namespace {

using Kind = ConfigKey::Kind;
constexpr double kNone = std::numeric_limits<double>::infinity();
// The longest run a length key takes: 11.6 days. bench.seconds = 1e300 was taken, and
// the protocol simulation then ran without end in sight.
constexpr double kMaxRunSeconds = 1e6;
constexpr double kInt32 = 2147483647.0;
constexpr double kInt64 = 9223372036854775807.0;

template <class Enum>
Enum pick(const std::string& text, std::initializer_list<std::pair<const char*, Enum>> names) {
  for (const auto& [name, value] : names)
    if (text == name) return value;
  return names.begin()->second;  // unreachable: the choice was checked against the table
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  // clang-format off
  static const std::vector<ConfigKey> keys = {
    {"ranks", Kind::integer, "0", 0, kInt32, {}, "", "MPI processes the run was prepared for; daqnet-evb refuses another world size (0: any)", "bench.ranks",
     [](Config& c, const ConfigValue& v) { c.ranks = static_cast<int>(v.integer); }},
    {"mode", Kind::choice, "event-manager", 0, 0, {"event-manager", "time-frames"}, "", "the EM assigns events (LHCb), or time frames go round-robin (ALICE)", "bench.mode",
     [](Config& c, const ConfigValue& v) { c.mode = pick<Mode>(v.text, {{"event-manager", Mode::event_manager}, {"time-frames", Mode::time_frames}}); }},
    {"protocol", Kind::choice, "push", 0, 0, {"push", "pull"}, "", "PUSH (RUs send when told) or PULL (BUs request each fragment)", "bench.protocol",
     [](Config& c, const ConfigValue& v) { c.protocol = pick<Protocol>(v.text, {{"push", Protocol::push}, {"pull", Protocol::pull}}); }},
    {"transport", Kind::choice, "mpi", 0, 0, {"mpi", "tcp", "libfabric"}, "", "transport of commands and data", "bench.transport",
     [](Config& c, const ConfigValue& v) { c.transport = v.text; }},
    {"local_path", Kind::choice, "lend", 0, 0, {"lend", "transport"}, "", "a fragment for the builder in its readout unit's process: lent in place (zero-copy) or sent through the transport", "bench.local_path",
     [](Config& c, const ConfigValue& v) { c.local_path = v.text; }},
    {"progress", Kind::choice, "yield", 0, 0, {"busy", "yield", "sleep"}, "", "what an idle rank does: poll, poll and yield the core, or block", "bench.progress",
     [](Config& c, const ConfigValue& v) { c.progress = v.text; }},
    {"processes_per_node", Kind::integer, "1", 1, 2, {}, "", "1: RU and BU share a process; 2: one process each", "bench.processes_per_node",
     [](Config& c, const ConfigValue& v) { c.processes_per_node = static_cast<int>(v.integer); }},
    {"senders", Kind::integer, "0", 0, kInt32, {}, "", "time-frames mode: sending ranks (FLPs)", "bench.senders",
     [](Config& c, const ConfigValue& v) { c.senders = static_cast<int>(v.integer); }},
    {"receivers", Kind::integer, "0", 0, kInt32, {}, "", "time-frames mode: receiving ranks (EPNs)", "bench.receivers",
     [](Config& c, const ConfigValue& v) { c.receivers = static_cast<int>(v.integer); }},
    {"barrier", Kind::boolean, "false", 0, 0, {}, "", "time-frames mode: frame n+1 starts once frame n is built", "bench.barrier",
     [](Config& c, const ConfigValue& v) { c.barrier = v.boolean; }},
    {"credits", Kind::integer, "2", 1, kMaxCredits, {}, "", "events built in parallel per builder", "bench.credits",
     [](Config& c, const ConfigValue& v) { c.credits = static_cast<int>(v.integer); }},
    {"in_flight", Kind::integer, "8", 1, kInt32, {}, "", "fragment transfers in flight per gather", "bench.in_flight",
     [](Config& c, const ConfigValue& v) { c.in_flight = static_cast<int>(v.integer); }},
    {"max_in_flight", Kind::integer, "0", 0, kInt32, {}, "", "transfers in flight per process, 0 = no cap (a unit's oldest may pass)", "bench.max_in_flight",
     [](Config& c, const ConfigValue& v) { c.max_in_flight = static_cast<int>(v.integer); }},
    {"schedule", Kind::choice, "barrel", 0, 0, {"barrel", "random", "all-at-once"}, "", "order of each builder's gather", "workload.schedule",
     [](Config& c, const ConfigValue& v) { c.schedule = pick<Schedule>(v.text, {{"barrel", Schedule::barrel}, {"random", Schedule::random}, {"all-at-once", Schedule::all_at_once}}); }},
    {"schedule_seed", Kind::seed, "0", 0, 0, {}, "", "seed of the random gather order", "workload.seed",
     [](Config& c, const ConfigValue& v) { c.schedule_seed = v.seed; }},
    {"fragment_bytes", Kind::integer, "1048576", 64, kInt32, {}, "bytes", "mean data fragment size", "bench.fragment_bytes",
     [](Config& c, const ConfigValue& v) { c.fragment_bytes = static_cast<double>(v.integer); }},
    {"fragment_distribution", Kind::choice, "fixed", 0, 0, {"fixed", "normal", "lognormal"}, "", "fragment size distribution", "bench.fragment_distribution",
     [](Config& c, const ConfigValue& v) { c.distribution = pick<SizeDistribution>(v.text, {{"fixed", SizeDistribution::fixed}, {"normal", SizeDistribution::normal}, {"lognormal", SizeDistribution::lognormal}}); }},
    {"fragment_sigma", Kind::number, "0.1", 0, kNone, {}, "", "relative standard deviation of the sizes", "bench.fragment_sigma",
     [](Config& c, const ConfigValue& v) { c.fragment_sigma = v.number; }},
    {"fragment_bytes_per_ru", Kind::number_list, "", 64, kInt32, {}, "bytes", "mean size per readout unit, cycled (empty: fragment_bytes for all)", "bench.fragment_bytes_per_ru",
     [](Config& c, const ConfigValue& v) { c.fragment_bytes_per_ru = v.numbers; }},
    {"events_per_fragment", Kind::integer, "1", 1, kInt32, {}, "", "events packed in one fragment (listed in the meta-data)", "bench.events_per_fragment",
     [](Config& c, const ConfigValue& v) { c.events_per_fragment = static_cast<int>(v.integer); }},
    {"meta_bytes", Kind::integer, "10240", 0, kInt32, {}, "bytes", "meta-data message size, 0 = none (else at least 64)", "bench.meta_bytes",
     [](Config& c, const ConfigValue& v) { c.meta_bytes = v.integer; }},
    {"command_bytes", Kind::integer, "64", 64, kInt32, {}, "bytes", "command message size", "bench.command_bytes",
     [](Config& c, const ConfigValue& v) { c.command_bytes = v.integer; }},
    {"rate_hz", Kind::number, "0", 0, kNone, {}, "Hz", "fragments per second per RU, 0 = as fast as possible", "bench.rate_hz",
     [](Config& c, const ConfigValue& v) { c.rate_hz = v.number; }},
    {"events", Kind::integer, "0", 0, kInt64, {}, "", "stop after this many events built after warm-up (0: use seconds)", "bench.events",
     [](Config& c, const ConfigValue& v) { c.events = v.integer; }},
    {"seconds", Kind::number, "0", 0, kMaxRunSeconds, {}, "seconds", "or stop this many seconds after warm-up (0: use events; neither given in a scenario: 5 s)", "bench.seconds",
     [](Config& c, const ConfigValue& v) { c.seconds = v.number; }},
    {"warmup_seconds", Kind::number, "0.5", 0, kMaxRunSeconds, {}, "seconds", "excluded from the measurement", "bench.warmup_seconds",
     [](Config& c, const ConfigValue& v) { c.warmup_seconds = v.number; }},
    {"seed", Kind::seed, "0", 0, 0, {}, "", "seed of sizes and payloads", "bench.seed",
     [](Config& c, const ConfigValue& v) { c.seed = v.seed; }},
    {"checksum", Kind::boolean, "true", 0, 0, {}, "", "verify every fragment's checksum (off for speed runs)", "bench.checksum",
     [](Config& c, const ConfigValue& v) { c.checksum = v.boolean; }},
    {"report_seconds", Kind::number, "1", 0.01, kNone, {}, "seconds", "period of the time series and progress", "bench.report_seconds",
     [](Config& c, const ConfigValue& v) { c.report_seconds = v.number; }},
    {"drain_timeout_seconds", Kind::number, "10", 0.1, kNone, {}, "seconds", "longest wait for the last fragments at the end", "bench.drain_timeout_seconds",
     [](Config& c, const ConfigValue& v) { c.drain_timeout_seconds = v.number; }},
    {"stall_seconds", Kind::number, "30", 0.1, kNone, {}, "seconds", "fail when no event is built for this long", "bench.stall_seconds",
     [](Config& c, const ConfigValue& v) { c.stall_seconds = v.number; }},
    {"fragment_timeout_seconds", Kind::number, "10", 0.01, kNone, {}, "seconds", "a builder that receives nothing of an event for this long gives its missing fragments up as lost and fails the run (keep it below stall_seconds)", "bench.fragment_timeout_seconds",
     [](Config& c, const ConfigValue& v) { c.fragment_timeout_seconds = v.number; }},
    {"placement", Kind::choice, "topology", 0, 0, {"topology", "hostname", "random", "file"}, "", "which rank runs which unit", "placement.order",
     [](Config& c, const ConfigValue& v) { c.placement = v.text; }},
    {"placement_seed", Kind::seed, "0", 0, 0, {}, "", "seed of the random placement", "placement.seed",
     [](Config& c, const ConfigValue& v) { c.placement_seed = v.seed; }},
    {"placement_hosts", Kind::text_list, "", 0, 0, {}, "", "host names in rank order, for placement file", "placement.file",
     [](Config& c, const ConfigValue& v) { c.placement_hosts = v.texts; }},
    {"recover", Kind::boolean, "false", 0, 0, {}, "", "go on when a rank dies (TCP transport): the EM stops assigning to a dead builder and abandons its events, a dead readout unit is handled by on_ru_failure; false: the first failure ends the run", "bench.recover",
     [](Config& c, const ConfigValue& v) { c.recover = v.boolean; }},
    {"heartbeat_seconds", Kind::number, "2", 0.01, kNone, {}, "seconds", "with recover: a peer silent for this long is declared dead (idle connections carry a heartbeat every third of it)", "bench.heartbeat_seconds",
     [](Config& c, const ConfigValue& v) { c.heartbeat_seconds = v.number; }},
    {"on_ru_failure", Kind::choice, "incomplete", 0, 0, {"incomplete", "stop"}, "", "with recover, when a readout unit dies: build later events without it (counted as incomplete) or stop the run (failed, results kept)", "bench.on_ru_failure",
     [](Config& c, const ConfigValue& v) { c.on_ru_failure = v.text; }},
    {"tcp_address", Kind::text, "", 0, 0, {}, "", "TCP: IPv4 address to listen on", "bench.tcp_address",
     [](Config& c, const ConfigValue& v) { c.tcp_address = v.text; }},
    {"tcp_interface", Kind::text, "", 0, 0, {}, "", "TCP: network interface to listen on (e.g. ib0)", "bench.tcp_interface",
     [](Config& c, const ConfigValue& v) { c.tcp_interface = v.text; }},
    {"tcp_token", Kind::text, "", 0, 0, {}, "", "TCP: the run's secret, 32 hexadecimal digits a connection must show (daqnet bench draws one per run; empty: rank 0 draws one)", "",
     [](Config& c, const ConfigValue& v) { c.tcp_token = v.text; }},
    {"tcp_socket_buffer_bytes", Kind::integer, "0", 0, kInt32, {}, "bytes", "TCP: SO_SNDBUF/SO_RCVBUF, 0 = system default, else at least 4096", "bench.tcp_socket_buffer_bytes",
     [](Config& c, const ConfigValue& v) { c.tcp_socket_buffer_bytes = static_cast<int>(v.integer); }},
    {"tcp_control_connection", Kind::boolean, "true", 0, 0, {}, "", "TCP: commands (credits, assignments, requests) on a connection of their own per peer, so they never wait behind fragments and meta-data queued on the data connection; false: one connection per peer", "bench.tcp_control_connection",
     [](Config& c, const ConfigValue& v) { c.tcp_control_connection = v.boolean; }},
    {"tcp_control_dscp", Kind::integer, "0", 0, 63, {}, "", "TCP: DSCP of the control connection's packets (IP_TOS; 46 = EF), for switches with a priority queue (daqnet emulate gives them one); 0 = unmarked", "bench.tcp_control_dscp",
     [](Config& c, const ConfigValue& v) { c.tcp_control_dscp = static_cast<int>(v.integer); }},
    {"libfabric_provider", Kind::text, "", 0, 0, {}, "", "libfabric: the provider (e.g. verbs;ofi_rxm, cxi, efa, tcp, shm), as fi_info names it; empty: libfabric's first choice (FI_PROVIDER honoured)", "bench.libfabric_provider",
     [](Config& c, const ConfigValue& v) { c.libfabric_provider = v.text; }},
    {"libfabric_domain", Kind::text, "", 0, 0, {}, "", "libfabric: the domain, i.e. the NIC or interface (e.g. mlx5_0, eth0, lo); empty: the provider's first", "bench.libfabric_domain",
     [](Config& c, const ConfigValue& v) { c.libfabric_domain = v.text; }},
    {"baseline", Kind::choice, "none", 0, 0, {"none", "alltoall", "isend", "p2p"}, "", "measured after the run, for a ratio", "bench.baseline",
     [](Config& c, const ConfigValue& v) { c.baseline = v.text; }},
    {"baseline_seconds", Kind::number, "2", 0.01, kMaxRunSeconds, {}, "seconds", "duration of the baseline", "bench.baseline_seconds",
     [](Config& c, const ConfigValue& v) { c.baseline_seconds = v.number; }},
    {"baseline_cache", Kind::choice, "warm", 0, 0, {"warm", "cold"}, "", "alltoall and isend baselines: the same buffers at every repetition, in the cache (warm, as OSU and IMB time by default), or buffer sets cycled so that the node's ranks touch 4 × the last-level cache between two uses of one (cold, IMB's -off_cache), as the event builder moves fresh fragments for every event", "bench.baseline_cache",
     [](Config& c, const ConfigValue& v) { c.baseline_cold = v.text == "cold"; }},
    {"fault_corrupt_every", Kind::integer, "0", 0, kInt64, {}, "", "test hook: RU 0 corrupts every N-th fragment", "",
     [](Config& c, const ConfigValue& v) { c.fault_corrupt_every = v.integer; }},
    {"fault_duplicate_every", Kind::integer, "0", 0, kInt64, {}, "", "test hook: RU 0 sends every N-th fragment twice", "",
     [](Config& c, const ConfigValue& v) { c.fault_duplicate_every = v.integer; }},
    {"fault_drop_every", Kind::integer, "0", 0, kInt64, {}, "", "test hook: RU 0 never sends every N-th fragment", "",
     [](Config& c, const ConfigValue& v) { c.fault_drop_every = v.integer; }},
    {"fault_delay_every", Kind::integer, "0", 0, kInt64, {}, "", "test hook: RU 0 holds every N-th fragment back for fault_delay_ms", "",
     [](Config& c, const ConfigValue& v) { c.fault_delay_every = v.integer; }},
    {"fault_delay_ms", Kind::integer, "0", 0, kInt64, {}, "ms", "test hook: how long fault_delay_every holds a fragment back", "",
     [](Config& c, const ConfigValue& v) { c.fault_delay_ms = v.integer; }},
    {"fault_allocate_every", Kind::integer, "0", 0, kInt64, {}, "", "test hook: RU 0 makes a heap allocation for every N-th fragment (the allocation counter must see it)", "",
     [](Config& c, const ConfigValue& v) { c.fault_allocate_every = v.integer; }},
  };
  // clang-format on
  return keys;
}

}  // namespace daqnet::evb
