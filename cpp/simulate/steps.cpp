// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/steps.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>

#include "analysis/conflicts.hpp"
#include "common/error.hpp"
#include "common/object_pool.hpp"
#include "common/step_pool.hpp"
#include "simulate/step_memo.hpp"
#include "simulate/step_solver.hpp"

namespace daqnet::simulate {

namespace {

// What a thread keeps for one kind of run (real or contention-free): the step solver, the
// memo, and the flow network for the sub-flows the solver leaves, built when first needed
// (in most runs no step leaves any, and its per-resource lists are the run's largest
// allocation).
struct StepRunner {
  const std::vector<double>* capacity = nullptr;
  StepSolver solver;
  StepMemo memo;
  std::optional<FlowNetwork> net;
  // Whether the user stopped, asked inside a long step (StepPool::stopping).
  std::function<bool()> stopping;

  // Ready for a call on a network of these capacities: nothing carries over but memory.
  void prepare(const std::vector<double>& c, int probation, StepMemo::Probation& shared) {
    capacity = &c;
    solver.reset(c);
    memo.reset(c.size(), size_t{1} << 22, probation, &shared);
    net.reset();
  }
  // The call is over: the memo's shapes and the flow network are freed now.
  void release() {
    capacity = nullptr;
    memo.reset(0, 0, 0);
    net.reset();
    stopping = nullptr;
  }
  FlowNetwork& network() {
    if (!net) net.emplace(*capacity);
    return *net;
  }
};

// Per thread: the messages over each link, and whether every path carried a whole one.
struct LinkUses {
  std::vector<int64_t> count;
  bool whole = true;
};

// A step left unfinished because the user stopped (its network is dropped with it).
struct StepAbandoned {};

// The flows of one step, each split into one sub-flow per path of its routing.
struct StepFlows {
  using Sub = StepSub;
  std::vector<Sub> subs;
  std::vector<int32_t> res;
  std::vector<double> flow_latency;  // per flow: its shortest path's latency
  std::vector<double> sub_end;       // per sub-flow: its end from the step solver, NaN if left
  std::vector<Sub> rest;             // the sub-flows left to the flow network

  // `uses`, when given, counts the links each path crosses; a path with a share of a
  // message clears its `whole` (its bytes are then no count of messages). A step of tens of
  // millions of flows takes seconds to route: `stopping` is asked every 65,536 flows.
  void build(const NetworkModel& model, const std::vector<workload::Flow>& flows, std::span<const int32_t> placement,
             int64_t step, double bytes, bool ideal, Routes& routes, LinkUses* uses,
             const std::function<bool()>& stopping) {
    subs.clear();
    res.clear();
    flow_latency.clear();
    auto add = [&](int32_t a, int32_t b, int32_t flow, double latency, double share, uint32_t first) {
      const auto last = static_cast<uint32_t>(res.size());
      // Every step must run on the flow network if the step solver leaves it: the same
      // limit for all, not an error only in the steps that have contention.
      if (last - first > FlowNetwork::kMaxResources)
        throw Error("simulate: the route from host " + std::to_string(a) + " to host " + std::to_string(b) + " has " +
                    std::to_string(last - first) + " resources (links and NIC limits); at most " +
                    std::to_string(FlowNetwork::kMaxResources) + " are simulated");
      if (uses != nullptr) {
        uses->whole = uses->whole && share == 1;
        for (size_t k = first; k < last; ++k)
          if (res[k] < model.num_links()) ++uses->count[static_cast<size_t>(res[k])];  // NIC limits are not links
      }
      subs.push_back({latency, bytes * share, flow, first, last});
    };
    uint32_t until_check = 0;
    for (const auto& f : flows) {
      if (++until_check == 65536) {
        until_check = 0;
        if (stopping && stopping()) throw StepAbandoned{};
      }
      const int32_t a = placement[static_cast<size_t>(f.src)], b = placement[static_cast<size_t>(f.dst)];
      if (a == b) continue;  // ranks on one host: no network
      const auto flow = static_cast<int32_t>(flow_latency.size());
      const auto at = static_cast<uint32_t>(res.size());
      double latency = 0;
      if (model.append_path(a, b, ideal, res, latency)) {  // tables: one path, a whole message
        add(a, b, flow, latency, 1.0, at);
        flow_latency.push_back(latency);
        continue;
      }
      model.routes(a, b, routing::flow_key(step, f.src, f.dst), ideal, routes);
      double shortest = kUnlimited;
      for (size_t k = 0; k < routes.size(); ++k) {
        const auto r = routes.resources(k);
        const auto first = static_cast<uint32_t>(res.size());
        res.insert(res.end(), r.begin(), r.end());
        add(a, b, flow, routes.latency(k), routes.weight(k), first);
        shortest = std::min(shortest, routes.latency(k));
      }
      flow_latency.push_back(shortest);
    }
  }
  size_t flows() const { return flow_latency.size(); }

  // Looks the step up by its shape; runs it (and remembers it) when it is new.
  std::pair<double, double> run(StepRunner& runner, double bytes, std::vector<double>& flow_end,
                                std::vector<uint64_t>& done, std::vector<std::pair<double, uint64_t>>& drained);
};

// The sub-flows the step solver left (by latency), event by event on the flow network:
// each waits for its path's latency, then shares the bandwidth as flows start and end.
// One step can hold millions of events: the user may stop in the middle of it.
template <class Ended>
void run_events(FlowNetwork& net, const StepFlows& step, const std::vector<StepSub>& subs, double t0,
                std::vector<uint64_t>& done, std::vector<std::pair<double, uint64_t>>& drained,
                const std::function<bool()>& stopping, Ended&& ended) {
  size_t next = 0;
  bool drain = true;
  while (next < subs.size() || net.active() > 0) {
    // Every turn: a turn of a step of millions of flows re-solves components of up to
    // millions of flows (every 1,024 turns left Ctrl-C unheard for 20 s), and stopping() is
    // a clock read and an atomic load between reports, next to a turn's microseconds.
    if (stopping && stopping()) throw StepAbandoned{};
    // Once every sub-flow is under way, the rates usually hold to the end (the fastest
    // flows end first): the network ends them all in one go.
    if (next == subs.size() && drain) {
      drain = false;
      if (net.drain(drained)) {
        for (const auto& [t, k] : drained) ended(subs[k].flow, t);
        break;
      }
    }
    const double start = next < subs.size() ? t0 + subs[next].latency : kUnlimited;
    const double finish = net.next_completion();
    if (start <= finish) {
      net.advance(start, done);
      while (next < subs.size() && t0 + subs[next].latency <= start) {
        const auto& sub = subs[next];
        // The tag is the sub-flow's index: it names its flow.
        net.start({step.res.data() + sub.first, step.res.data() + sub.last}, sub.bytes, kUnlimited, next);
        ++next;
      }
    } else {
      net.advance(finish, done);
    }
    for (uint64_t k : done) ended(subs[k].flow, net.now());
  }
}

// One step on one network: returns (duration, slowest flow's average rate in bytes/s). Each
// sub-flow waits for its path's latency, then shares the bandwidth; a flow ends with its
// last sub-flow. The step solver ends the sub-flows whose rates hold from start to end;
// the flow network runs the rest as events.
std::pair<double, double> run_step(StepRunner& runner, StepFlows& step, double bytes, std::vector<double>& flow_end,
                                   std::vector<uint64_t>& done, std::vector<std::pair<double, uint64_t>>& drained) {
  const double t0 = 0;  // every step starts on a restarted network
  flow_end.assign(step.flows(), t0);
  double end = t0;
  auto ended = [&](int32_t flow, double t) {
    flow_end[static_cast<size_t>(flow)] = std::max(flow_end[static_cast<size_t>(flow)], t);
    end = std::max(end, t);
  };
  runner.solver.solve(t0, step.subs, step.res, step.sub_end);
  auto& subs = step.rest;
  subs.clear();
  for (size_t i = 0; i < step.subs.size(); ++i)
    if (std::isnan(step.sub_end[i]))
      subs.push_back(step.subs[i]);
    else
      ended(step.subs[i].flow, step.sub_end[i]);
  std::sort(subs.begin(), subs.end(), [](const auto& x, const auto& y) { return x.latency < y.latency; });
  if (!subs.empty()) {
    FlowNetwork& net = runner.network();
    run_events(net, step, subs, t0, done, drained, runner.stopping, ended);
    net.restart();
  }
  double slowest = kUnlimited;
  for (size_t f = 0; f < step.flows(); ++f)
    slowest = std::min(slowest, bytes / (flow_end[f] - t0 - step.flow_latency[f]));
  return {end - t0, slowest};
}

std::pair<double, double> StepFlows::run(StepRunner& runner, double bytes, std::vector<double>& flow_end,
                                         std::vector<uint64_t>& done,
                                         std::vector<std::pair<double, uint64_t>>& drained) {
  StepMemo& memo = runner.memo;
  if (memo.active()) {
    memo.begin();
    for (const Sub& s : subs)
      memo.add(s.latency, s.bytes, s.flow, {res.data() + s.first, res.data() + s.last}, *runner.capacity);
    if (const auto* known = memo.find()) return *known;
  }
  const auto outcome = run_step(runner, *this, bytes, flow_end, done, drained);
  if (memo.active()) memo.store(outcome);
  return outcome;
}

// Everything one thread works with, kept in a pool from call to call (common/object_pool.hpp)
// so that its buffers keep their memory.
struct StepThread {
  StepRunner real, ideal;
  LinkUses uses;
  std::vector<workload::Flow> flows;
  StepFlows step_flows;
  Routes routes;
  std::vector<double> flow_end;
  std::vector<uint64_t> finished;
  std::vector<std::pair<double, uint64_t>> drained;
};

// Enough for two calls at once on every core; more are freed as their calls end.
ObjectPool<StepThread>& step_threads() {
  static ObjectPool<StepThread> pool(size_t{2} * std::max(1U, std::thread::hardware_concurrency()));
  return pool;
}

}  // namespace

StepResult simulate_steps(const NetworkModel& model, std::span<const int32_t> placement,
                          const workload::Schedule& schedule, double message_bytes, bool ideal_run,
                          const StepProgress& progress, double progress_period_seconds, int32_t threads, bool reuse) {
  analysis::check_placement(model.routing(), placement, schedule);
  if (!(message_bytes > 0) || !std::isfinite(message_bytes))
    throw Error("simulate.message_bytes must be a finite number > 0");
  StepResult result;
  result.steps_total = schedule.num_steps();
  const int64_t total = result.steps_total;
  std::vector<StepTime> steps(static_cast<size_t>(total));
  std::vector<int64_t> network_flows(static_cast<size_t>(total), 0);
  // Every step runs on a fresh or restarted network, so each step's figures are the same
  // whichever thread runs it, after whichever steps.
  StepPool pool(total, threads, 16, progress, progress_period_seconds);
  std::vector<FlowNetwork::Stats> stats(pool.threads());
  std::vector<int64_t> reused(pool.threads(), 0);
  // Link crossings counted per thread, added up as each thread ends: integers, so the sum
  // is the same in any order.
  LinkUses uses;
  uses.count.assign(static_cast<size_t>(model.num_links()), 0);
  std::mutex uses_mutex;
  StepMemo::Probation real_probation, ideal_probation;  // one verdict for all threads
  const int64_t steps_done = pool.run([&](size_t t, StepPool& chunks) {
    const ObjectPool<StepThread>::Lease lease(step_threads());
    StepThread& my = *lease;
    // However the thread ends (an error included), the memos' shapes and the flow
    // networks are freed before the pool takes the rest back.
    struct Release {
      StepThread& my;
      ~Release() {
        my.real.release();
        my.ideal.release();
      }
    } const release{my};
    const int probation = reuse ? 64 : 0;  // 0: the memos stop looking at once
    StepRunner& real = my.real;
    StepRunner& ideal = my.ideal;
    real.prepare(model.capacity(), probation, real_probation);
    if (ideal_run) ideal.prepare(model.capacity(), probation, ideal_probation);
    real.stopping = ideal.stopping = [&chunks, t] { return chunks.stopping(t); };
    StepFlows& step_flows = my.step_flows;
    LinkUses& my_uses = my.uses;
    my_uses.count.assign(static_cast<size_t>(model.num_links()), 0);
    my_uses.whole = true;
    auto simulate_step = [&](int64_t s) {
      schedule.step(s, my.flows);
      StepTime& st = steps[static_cast<size_t>(s)];
      st.step = s;
      st.flows = static_cast<int64_t>(my.flows.size());
      step_flows.build(model, my.flows, placement, s, message_bytes, false, my.routes, &my_uses, real.stopping);
      network_flows[static_cast<size_t>(s)] = static_cast<int64_t>(step_flows.flows());
      const auto [seconds, slowest] = step_flows.run(real, message_bytes, my.flow_end, my.finished, my.drained);
      st.seconds = seconds;
      st.min_gbps = step_flows.flows() == 0 ? 0 : slowest * 8 / 1e9;
      if (ideal_run) {
        step_flows.build(model, my.flows, placement, s, message_bytes, true, my.routes, nullptr, ideal.stopping);
        st.ideal_seconds = step_flows.run(ideal, message_bytes, my.flow_end, my.finished, my.drained).first;
      } else {
        st.ideal_seconds = std::numeric_limits<double>::quiet_NaN();
      }
    };
    int64_t first = 0, last = 0;
    bool abandoned = false;
    while (!abandoned && chunks.next(first, last)) {
      for (int64_t s = first; s < last && !abandoned; ++s) {
        try {
          simulate_step(s);
        } catch (const StepAbandoned&) {
          // The steps done end before this one. Its links were counted, and so may be later
          // steps of other threads: the link loads are left to a pass over the steps done.
          // Its networks hold flows still: freed as the thread ends (Release), once their
          // stats, of the work done, are counted.
          chunks.abandon(s);
          my_uses.whole = false;
          abandoned = true;
        }
      }
      if (!abandoned) chunks.done(t, last - first);
    }
    if (real.net) stats[t] = real.net->stats();
    stats[t].solves += real.solver.solves();
    stats[t].flows_solved += real.solver.flows_solved();
    reused[t] = real.memo.hits() + (ideal_run ? ideal.memo.hits() : 0);
    {
      const std::lock_guard lock(uses_mutex);
      uses.whole = uses.whole && my_uses.whole;
      for (size_t l = 0; l < uses.count.size(); ++l) uses.count[l] += my_uses.count[l];
    }
  });

  // Totals in step order, so that sums do not depend on the threads either.
  result.interrupted = steps_done < total;
  steps.resize(static_cast<size_t>(steps_done));
  for (const StepTime& st : steps) {
    result.bytes += message_bytes * static_cast<double>(network_flows[static_cast<size_t>(st.step)]);
    result.total_seconds += st.seconds;
    result.ideal_seconds += st.ideal_seconds;
  }
  result.steps = std::move(steps);
  for (const auto& s : stats) {
    result.stats.solves += s.solves;
    result.stats.widenings += s.widenings;
    result.stats.flows_solved += s.flows_solved;
    result.stats.rate_changes += s.rate_changes;
  }
  for (int64_t n : reused) result.reused_steps += n;
  if (uses.whole) result.link_uses = std::move(uses.count);
  return result;
}

}  // namespace daqnet::simulate
