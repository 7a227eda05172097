// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/steps.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "analysis/conflicts.hpp"
#include "common/error.hpp"

namespace daqnet::simulate {

namespace {

struct Pending {
  double latency;
  int32_t a, b;
};

// One step on one network: returns (duration, slowest flow's rate in bytes/s).
std::pair<double, double> run_step(FlowNetwork& net, const NetworkModel& model, std::vector<Pending>& pending,
                                   double bytes, bool ideal, std::vector<int32_t>& res, std::vector<uint64_t>& done) {
  std::sort(pending.begin(), pending.end(), [](const Pending& x, const Pending& y) { return x.latency < y.latency; });
  const double t0 = net.now();
  double end = t0, slowest = kUnlimited;
  size_t next = 0;
  while (next < pending.size() || net.active() > 0) {
    const double start = next < pending.size() ? t0 + pending[next].latency : kUnlimited;
    const double finish = net.next_completion();
    if (start <= finish) {
      net.advance(start, done);
      while (next < pending.size() && t0 + pending[next].latency <= start) {
        model.resources(pending[next].a, pending[next].b, ideal, res);
        // The tag is the flow's index in `pending`: its latency gives its average rate.
        net.start(res, bytes, kUnlimited, next);
        ++next;
      }
    } else {
      net.advance(finish, done);
    }
    for (uint64_t k : done) slowest = std::min(slowest, bytes / (net.now() - t0 - pending[k].latency));
    if (!done.empty()) end = net.now();
  }
  return {end - t0, slowest};
}

}  // namespace

StepResult simulate_steps(const NetworkModel& model, std::span<const int32_t> placement,
                          const workload::Schedule& schedule, double message_bytes, bool ideal_run,
                          const StepProgress& progress,
                          double progress_period_seconds) {
  analysis::check_placement(model.routing(), placement, schedule);
  if (!(message_bytes > 0) || !std::isfinite(message_bytes))
    throw Error("simulate.message_bytes must be a finite number > 0");
  StepResult result;
  result.steps_total = schedule.num_steps();
  FlowNetwork real(model.capacity()), ideal(model.capacity());
  std::vector<workload::Flow> flows;
  std::vector<Pending> pending;
  std::vector<int32_t> res;
  std::vector<uint64_t> done;
  using clock = std::chrono::steady_clock;
  auto last_report = clock::now();
  for (int64_t s = 0; s < result.steps_total; ++s) {
    schedule.step(s, flows);
    pending.clear();
    for (const auto& f : flows) {
      const int32_t a = placement[static_cast<size_t>(f.src)], b = placement[static_cast<size_t>(f.dst)];
      if (a != b) pending.push_back({model.latency(a, b), a, b});
    }
    StepTime st;
    st.step = s;
    st.flows = static_cast<int64_t>(flows.size());
    const auto [seconds, slowest] = run_step(real, model, pending, message_bytes, false, res, done);
    st.seconds = seconds;
    st.min_gbps = pending.empty() ? 0 : slowest * 8 / 1e9;
    st.ideal_seconds = ideal_run ? run_step(ideal, model, pending, message_bytes, true, res, done).first
                                 : std::numeric_limits<double>::quiet_NaN();
    result.bytes += message_bytes * static_cast<double>(pending.size());
    result.total_seconds += st.seconds;
    result.ideal_seconds += st.ideal_seconds;
    result.steps.push_back(st);
    if (progress && clock::now() - last_report >= std::chrono::duration<double>(progress_period_seconds)) {
      last_report = clock::now();
      if (!progress(s + 1, result.steps_total)) {
        result.interrupted = s + 1 < result.steps_total;
        break;
      }
    }
  }
  result.stats = real.stats();
  return result;
}

}  // namespace daqnet::simulate
