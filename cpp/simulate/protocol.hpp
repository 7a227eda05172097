// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "evb/config.hpp"
#include "simulate/flow_network.hpp"
#include "simulate/network_model.hpp"

namespace daqnet::simulate {

/// What the protocol simulation runs beyond the benchmark's own run description.
struct ProtocolOptions {
  int64_t events = 1000;        ///< events to build
  int64_t warmup_events = 0;    ///< the measurement starts when this many are built
  double local_gbps = 0;        ///< RU → BU copies within a host; 0 = instantaneous
  bool full_recompute = false;  ///< re-solve all rates at every change (a baseline for tests and benchmarks)
};

/// Per built event, and totals. Python turns these into the benchmark's result document.
struct ProtocolResult {
  // One entry per built event, in the order they were built.
  std::vector<int64_t> event;
  std::vector<int32_t> builder;
  std::vector<double> built_at;   ///< seconds of simulated time
  std::vector<double> latency;    ///< from the builder's assignment to its last fragment
  std::vector<double> bytes;      ///< fragment bytes (headers included, meta-data not)

  double end_seconds = 0;         ///< when the last event was built
  std::vector<double> ru_bytes_out, bu_bytes_in;  ///< data + meta-data, per unit
  std::vector<int64_t> ru_fragments_out, bu_fragments_in;
  std::vector<double> link_bytes;  ///< bytes carried per directed link
  int64_t control_messages = 0;    ///< credits, assignments, requests, done
  int64_t network_flows = 0, local_flows = 0;

  // Limits as observed, for tests: they must stay within the configured ones.
  int32_t max_busy_slots = 0;        ///< events a builder gathered at once
  int32_t max_gather_in_flight = 0;  ///< transfers of one gather at once
  int32_t max_process_in_flight = 0; ///< transfers of one process at once (sends + receives)

  bool interrupted = false;
  FlowNetwork::Stats stats;
};

/// (events built, events in total) now and then; return false to stop early.
using ProtocolProgress = std::function<bool(int64_t, int64_t)>;

/// A discrete-event, flow-level simulation of daqnet-evb's event-manager mode (see
/// docs/simulate.md): the same units, messages, credits, in-flight limits, gather orders
/// and fragment sizes as the real event builder (it uses the same code for sizes and
/// orders), with data fragments as flows at max-min fair rates over the fabric.
/// `node_host[k]` is the host of node k (its RU and BU; the EM sits on node 0).
ProtocolResult simulate_protocol(const NetworkModel& model, std::span<const int32_t> node_host,
                                 const evb::Config& config, const ProtocolOptions& options,
                                 const ProtocolProgress& progress = {}, double progress_period_seconds = 0.25);

}  // namespace daqnet::simulate
