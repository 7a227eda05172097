// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "common/progress.hpp"

namespace daqnet {

/// Independent steps shared out over threads (the conflict analysis, the step simulation).
/// Steps are claimed in chunks, in order, and a claimed chunk is finished unless a worker
/// abandons a long step when the user stops (stopping(), abandon()), so the steps done
/// when the user stops form a prefix (up to the first step abandoned). Thread 0 is the
/// calling thread: it alone reports progress, since only the thread that called in from
/// Python sees Ctrl-C.
class StepPool {
public:
  StepPool(int64_t total, int32_t threads, int64_t max_chunk, const Progress& progress, double period_seconds)
      : total_(total),
        threads_(static_cast<size_t>(std::clamp<int64_t>(threads, 1, std::max<int64_t>(total, 1)))),
        chunk_(std::clamp<int64_t>(total / (static_cast<int64_t>(threads_) * 64), 1, max_chunk)),
        progress_(progress),
        period_(std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(period_seconds))) {}

  size_t threads() const { return threads_; }

  /// Runs worker(t, pool) on threads t = 0 .. threads()-1 and joins them; rethrows the
  /// first exception a worker threw. A worker loops on next() and reports each chunk with
  /// done(); returns the steps done (a prefix of the schedule).
  template <class Worker>
  int64_t run(Worker&& worker) {
    auto guarded = [&](size_t t) {
      try {
        worker(t, *this);
      } catch (...) {
        const std::lock_guard lock(failure_mutex_);
        if (!failure_) failure_ = std::current_exception();
        stop_ = true;
      }
      {
        const std::lock_guard lock(live_mutex_);
        --live_;
      }
      live_cv_.notify_one();
    };
    next_report_ = clock::now() + period_;
    live_ = threads_;
    {
      std::vector<std::jthread> pool;
      for (size_t t = 1; t < threads_; ++t) pool.emplace_back(guarded, t);
      guarded(0);
      // No chunk left for thread 0, but others may be inside long steps: it goes on
      // reporting (the only way Ctrl-C is seen) until they end.
      // Woken as the last worker ends, not a poll period later (a 20 ms sleep made a 10 ms
      // call on 2 threads take 30).
      std::unique_lock lock(live_mutex_);
      while (live_ > 0) {
        if (!progress_) {  // nothing to report: only the end to wait for
          live_cv_.wait(lock, [&] { return live_ == 0; });
          break;
        }
        live_cv_.wait_until(lock, next_report_, [&] { return live_ == 0; });
        if (live_ == 0) break;
        lock.unlock();
        stopping(0);  // due now: reports, and moves next_report_ on
        lock.lock();
      }
    }  // joins
    if (failure_) std::rethrow_exception(failure_);
    return std::min({total_, next_.load(), abandoned_.load()});
  }

  /// The next chunk of steps [first, last); false when none is left or the user stopped.
  bool next(int64_t& first, int64_t& last) {
    if (stop_.load(std::memory_order_relaxed)) return false;
    first = next_.fetch_add(chunk_);
    if (first >= total_) return false;
    last = std::min(total_, first + chunk_);
    return true;
  }

  /// A chunk of `steps` finished on thread t; thread 0 reports progress now and then.
  void done(size_t t, int64_t steps) {
    done_.fetch_add(steps);
    if (t != 0 || !progress_ || clock::now() < next_report_) return;
    next_report_ = clock::now() + period_;
    if (!progress_(done_.load(), total_)) stop_ = true;
  }

  /// Asked now and then inside a long step (one step may take minutes): whether the user
  /// stopped. On thread 0 it reports progress too, so that Ctrl-C is seen mid-step.
  bool stopping(size_t t) {
    if (t == 0 && progress_ && clock::now() >= next_report_) {
      next_report_ = clock::now() + period_;
      if (!progress_(done_.load(), total_)) stop_ = true;
    }
    return stop_.load(std::memory_order_relaxed);
  }
  /// The worker leaves `step` unfinished (after stopping()): the steps done end before it.
  void abandon(int64_t step) {
    int64_t seen = abandoned_.load();
    while (step < seen && !abandoned_.compare_exchange_weak(seen, step)) {
    }
  }

private:
  using clock = std::chrono::steady_clock;
  int64_t total_;
  size_t threads_;
  int64_t chunk_;
  const Progress& progress_;
  clock::duration period_;
  clock::time_point next_report_;  // thread 0 only
  std::atomic<int64_t> next_{0}, done_{0}, abandoned_{std::numeric_limits<int64_t>::max()};
  std::atomic<bool> stop_{false};
  size_t live_ = 0;  // workers still running, under live_mutex_
  std::mutex live_mutex_;
  std::condition_variable live_cv_;
  std::exception_ptr failure_;
  std::mutex failure_mutex_;
};

}  // namespace daqnet
