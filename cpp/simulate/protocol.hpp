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

/// How long the protocol simulation runs, and what it does beyond the benchmark's run description.
///
/// The measurement window is kept as daqnet-evb's event manager keeps it: it opens after a
/// warm-up and closes once `events` events are built in it, or `seconds` after it opened.
/// The event manager keeps assigning events until then, so every builder stays busy up to
/// the end of the window, where the simulation stops: the benchmark's drain of the events
/// under way would cost up to a round of every builder's credits and change no figure of
/// the window.
struct ProtocolOptions {
  int64_t warmup_events = 0;    ///< the window opens when this many events are built ...
  double warmup_seconds = -1;   ///< ... or, if ≥ 0, at this simulated time
  int64_t events = 1000;        ///< the window closes once this many events are built in it ...
  double seconds = 0;           ///< ... or, if events is 0, this many simulated seconds after it opened
  double local_gbps = 0;        ///< RU → BU copies within a host; 0 = instantaneous
  bool full_recompute = false;  ///< re-solve all rates at every change (a baseline for tests and benchmarks)
  /// PUSH assignments as one message per readout unit, as the real event manager sends
  /// them, rather than one per class of equal delay (see Broadcast): the same run, with
  /// credits × nodes² messages queued at the start (a baseline for tests and benchmarks).
  /// The agenda's side of the old way only: what an RU holds stays a range of events.
  bool per_ru_assignments = false;
};

/// Per built event, and totals. Python turns these into the benchmark's result document.
struct ProtocolResult {
  // One entry per built event, in the order they were built.
  std::vector<int64_t> event;
  std::vector<int32_t> builder;
  std::vector<double> built_at;    ///< seconds of simulated time
  std::vector<double> latency;     ///< from the assignment (rate_hz: the data's existence) to the last fragment
  std::vector<double> bytes;       ///< fragment bytes (headers included, meta-data not)
  std::vector<double> payload_at;  ///< network payload since the window opened, when built (-1 outside it)

  double end_seconds = 0;            ///< when the simulation stopped (the window closed, or Ctrl-C)
  int64_t partial_fragments = 0;     ///< fragments received at the end for events not yet built ...
  double partial_bytes = 0;          ///< ... and their data bytes
  double window_start_seconds = -1;  ///< when the measurement window opened (-1: it never did)
  double window_end_seconds = -1;    ///< when it closed (or the run was interrupted)
  int64_t first_in_window = 0;       ///< index of the first event built in the window ...
  int64_t window_events = 0;         ///< ... and how many were built in it
  /// Fragment data bytes that reached builders during the window, parts of fragments still
  /// moving at its edges included: the steady-state throughput is this over the window.
  double window_payload_bytes = 0;
  double window_network_payload_bytes = 0;        ///< the part that crossed the fabric (not RU → BU in one host)
  std::vector<double> ru_bytes_out, bu_bytes_in;  ///< data + meta-data, per unit, over the run
  std::vector<double> ru_window_bytes_out, bu_window_bytes_in;  ///< the same, within the window
  std::vector<int64_t> ru_fragments_out, bu_fragments_in;
  std::vector<double> link_bytes;  ///< bytes carried per directed link up to end_seconds
  int64_t control_messages = 0;    ///< credits, assignments, requests, done
  int64_t network_flows = 0, local_flows = 0;

  // Limits as observed, for tests: they must stay within the configured ones.
  int32_t max_busy_slots = 0;         ///< events a builder gathered at once
  int32_t max_gather_in_flight = 0;   ///< transfers of one gather at once
  int32_t max_process_in_flight = 0;  ///< transfers of one process at once (sends + receives)

  bool interrupted = false;
  FlowNetwork::Stats stats;
};

/// (done, total) now and then: with the warm-up and the window in events, the fragments received
/// for the first warm-up + window events the event manager gave out, in events, and that
/// sum; with a warm-up in seconds, events built in the window and `events`; with a window in
/// seconds, simulated milliseconds and the run's length in them. Return false to stop early.
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
