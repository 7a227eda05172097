// daqnet — plan, simulate and benchmark event-building networks.
#include "common/step_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace daqnet {
namespace {

using std::chrono::steady_clock;

// Thread 1 is inside a long step while thread 0 has none left: the user's stop (the progress
// callback's false) must still reach it. Thread 0 left and joined, and nobody reported any
// more: the step ran to its end however long.
TEST(StepPool, StopReachesALongStepOnAnotherThread) {
  int reports = 0;
  const Progress progress = [&](int64_t, int64_t) { return ++reports < 2; };
  StepPool pool(2, 2, 1, progress, 0.01);
  ASSERT_EQ(pool.threads(), 2U);
  std::atomic<bool> claimed{false}, timed_out{false};
  const int64_t done = pool.run([&](size_t t, StepPool& p) {
    if (t == 0)
      while (!claimed) std::this_thread::yield();  // thread 1 takes the first step
    int64_t first = 0, last = 0;
    while (p.next(first, last)) {
      if (t == 0) {  // a quick step
        p.done(t, last - first);
        continue;
      }
      claimed = true;
      const auto give_up = steady_clock::now() + std::chrono::seconds(10);
      while (!p.stopping(t))
        if (steady_clock::now() > give_up) {
          timed_out = true;
          break;
        }
      p.abandon(first);
      return;
    }
  });
  EXPECT_FALSE(timed_out);
  EXPECT_GE(reports, 2);
  EXPECT_EQ(done, 0);  // step 0 was abandoned: no step of the prefix is done
}

// Abandoned steps end the prefix at the earliest of them, whichever thread left it.
TEST(StepPool, DoneStepsEndBeforeTheFirstAbandonedOne) {
  const Progress none;
  StepPool pool(10, 1, 1, none, 1.0);
  const int64_t done = pool.run([&](size_t, StepPool& p) {
    int64_t first = 0, last = 0;
    while (p.next(first, last)) {
      if (first == 7) p.abandon(7);
      if (first == 4) p.abandon(4);
      p.done(0, last - first);
    }
  });
  EXPECT_EQ(done, 4);
}

}  // namespace
}  // namespace daqnet
