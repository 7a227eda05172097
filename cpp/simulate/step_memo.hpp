// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace daqnet::simulate {

/// Remembers the outcome of simulated steps by the shape of their flows, so that a step
/// identical to an earlier one up to a relabelling of resources is not simulated again.
/// On a regular fabric most steps of a barrel shift in topology order are the same problem
/// on other links (every flow on links of its own, or the same conflicts elsewhere).
///
/// A step's shape lists its sub-flows in order: latency, bytes, flow index, and resources
/// renumbered by first appearance, each new one with its capacity. Equal shapes are the
/// same problem in the same order, so the flow network computes the very same figures:
/// reuse changes no bit of any result. Shapes are compared in full, not only by hash.
class StepMemo {
public:
  /// The probation of the memos of one call's threads, counted together as well: when
  /// `probation` steps of all threads found nothing, every memo stops, where each would
  /// otherwise look at `probation` steps of its own (each memo still finds only the shapes
  /// its own thread stored). A heuristic of speed only: no figure depends on it.
  struct Probation {
    std::atomic<int64_t> looked{0};
    std::atomic<int64_t> hits{0};
    std::atomic<bool> over{false};  // nothing found in time: every memo stops looking
  };

  /// Up to `max_words` 8-byte words of shapes are kept; a memo that found nothing in its
  /// first `probation` steps stops looking (steps with contention rarely repeat); with
  /// `probation` 0 it never looks.
  StepMemo(size_t num_resources, size_t max_words = size_t{1} << 22, int probation = 64);
  StepMemo() : StepMemo(0, 0, 0) {}
  /// Forgets every shape and starts over as if new, keeping the buffers' memory (a memo is
  /// reused from call to call of simulate_steps).
  /// With `shared`, the probation counts the steps and finds of every memo sharing it.
  void reset(size_t num_resources, size_t max_words, int probation, Probation* shared = nullptr);

  /// Starts the shape of a step.
  void begin();
  void add(double latency, double bytes, int32_t flow, std::span<const int32_t> resources,
           std::span<const double> capacity);
  /// The outcome of an earlier step of this shape, if any.
  const std::pair<double, double>* find();
  /// Keeps the outcome of the step whose shape was built last.
  void store(std::pair<double, double> outcome);
  bool active() const { return active_ && (shared_ == nullptr || !shared_->over.load(std::memory_order_relaxed)); }
  int64_t hits() const { return hits_; }

private:
  void stop() {
    active_ = false;
    known_.clear();
  }

  std::vector<uint64_t> shape_;
  std::vector<int32_t> label_;  // resource → its number in this shape (valid when seen_ == stamp_)
  std::vector<uint32_t> seen_;
  uint32_t stamp_ = 0;
  int32_t next_label_ = 0;
  uint64_t hash_ = 0;
  std::unordered_multimap<uint64_t, std::pair<std::vector<uint64_t>, std::pair<double, double>>> known_;
  size_t words_ = 0, max_words_;
  int probation_;
  int64_t looked_ = 0;
  int64_t hits_ = 0;
  bool active_ = true;
  Probation* shared_ = nullptr;
};

}  // namespace daqnet::simulate
