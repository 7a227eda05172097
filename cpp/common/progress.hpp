// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "common/error.hpp"

namespace daqnet {

/// Called now and then with (work done, work in total); return false to stop early.
using Progress = std::function<bool(int64_t, int64_t)>;

/// The user stopped a phase that has no partial result to return (route building): the
/// Python layer turns it into KeyboardInterrupt.
class Interrupted : public Error {
public:
  explicit Interrupted(const std::string& what) : Error(what) {}
};

/// Counts work and reports it through a Progress at most once per period; when the
/// callback asks to stop, advance() throws Interrupted. Cheap enough to call per row.
class ProgressMeter {
public:
  ProgressMeter(const Progress& progress, int64_t total, std::string what, double period_seconds = 0.25)
      : progress_(progress),
        total_(total),
        what_(std::move(what)),
        period_(std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(period_seconds))),
        next_(clock::now() + period_) {}

  void advance(int64_t n = 1) {
    done_ += n;
    if (!progress_ || clock::now() < next_) return;
    next_ = clock::now() + period_;
    if (!progress_(done_, total_)) throw Interrupted(what_ + " interrupted");
  }
  /// Report the end (whatever the period): a progress bar then shows 100 %.
  void finish() {
    if (progress_) progress_(done_, total_);
  }
  int64_t done() const { return done_; }

private:
  using clock = std::chrono::steady_clock;
  const Progress& progress_;
  int64_t total_;
  int64_t done_ = 0;
  std::string what_;
  clock::duration period_;
  clock::time_point next_;
};

}  // namespace daqnet
