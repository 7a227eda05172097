// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace daqnet::workload {

/// One transfer between two ranks within a step.
struct Flow {
  int32_t src = 0;  ///< source rank
  int32_t dst = 0;  ///< destination rank
};

/// Steps of flows between ranks, generated one step at a time so that memory stays
/// proportional to one step, not to the whole run.
class Schedule {
public:
  virtual ~Schedule() = default;
  virtual int32_t ranks() const = 0;
  virtual int64_t num_steps() const = 0;
  /// Fill `out` with the flows of step s (0-based; out is cleared first).
  virtual void step(int64_t s, std::vector<Flow>& out) const = 0;
  virtual std::string describe() const = 0;
};

/// Barrel shift: at step s (1..N-1 in the literature, 0-based here) rank i sends to
/// rank (i + s + 1) mod N.
std::unique_ptr<Schedule> barrel(int32_t ranks);

/// Random order: every step a permutation without fixed points, every ordered pair once
/// over the N-1 steps. Built as a seeded random relabelling σ of the ranks and a seeded
/// random order τ of the shifts: step s sends σ(i) → σ((i + τ(s)) mod N).
std::unique_ptr<Schedule> random_order(int32_t ranks, uint64_t seed);

/// All pairs in one step (event building "all in one go", or a plain all-to-all).
std::unique_ptr<Schedule> all_at_once(int32_t ranks);

/// One step per shift k: rank i sends to (i + k) mod N.
std::unique_ptr<Schedule> shifts(int32_t ranks, const std::vector<int64_t>& shift_list);

/// Steps given flow by flow (a repaired schedule, a steps file); `what` describes them.
/// Throws daqnet::Error on a rank outside 0..ranks-1 or a rank sending to itself.
std::unique_ptr<Schedule> explicit_steps(int32_t ranks, std::vector<std::vector<Flow>> steps, std::string what);

}  // namespace daqnet::workload
