// daqnet — plan, simulate and benchmark event-building networks.
#include "analysis/rank_search.hpp"

#include <chrono>
#include <limits>

#include "analysis/detail/flow_links.hpp"
#include "common/error.hpp"
#include "common/random.hpp"

namespace daqnet::analysis {

namespace {

// Every flow of the schedule with its step, and per rank the flows it takes part in.
struct AllFlows {
  std::vector<Flow> flows;
  std::vector<int32_t> step;
  std::vector<int64_t> rank_first;  // CSR over ranks into rank_flows
  std::vector<int32_t> rank_flows;

  AllFlows(const workload::Schedule& schedule) {
    std::vector<Flow> buf;
    for (int64_t s = 0; s < schedule.num_steps(); ++s) {
      schedule.step(s, buf);
      for (const Flow& f : buf) {
        flows.push_back(f);
        step.push_back(static_cast<int32_t>(s));
      }
    }
    const auto n = static_cast<size_t>(schedule.ranks());
    rank_first.assign(n + 1, 0);
    for (const Flow& f : flows) {
      ++rank_first[static_cast<size_t>(f.src) + 1];
      if (f.dst != f.src) ++rank_first[static_cast<size_t>(f.dst) + 1];
    }
    for (size_t r = 0; r < n; ++r) rank_first[r + 1] += rank_first[r];
    rank_flows.resize(static_cast<size_t>(rank_first[n]));
    std::vector<int64_t> fill(rank_first.begin(), rank_first.end() - 1);
    for (size_t i = 0; i < flows.size(); ++i) {
      rank_flows[static_cast<size_t>(fill[static_cast<size_t>(flows[i].src)]++)] = static_cast<int32_t>(i);
      if (flows[i].dst != flows[i].src)
        rank_flows[static_cast<size_t>(fill[static_cast<size_t>(flows[i].dst)]++)] = static_cast<int32_t>(i);
    }
  }
};

template <class FlowLinks>
RankSearchResult search(const routing::Routing& routing, std::span<const int32_t> start,
                        const workload::Schedule& schedule, FlowLinks& flow_links, uint64_t seed, int64_t max_moves,
                        const Progress& progress, double period, int64_t max_table_bytes) {
  const AllFlows all(schedule);
  const auto L = static_cast<size_t>(routing.fabric().num_links());
  const auto S = static_cast<size_t>(schedule.num_steps());
  if (static_cast<double>(L) * static_cast<double>(S) * 2.0 > static_cast<double>(max_table_bytes))
    throw Error("rank-order search: " + std::to_string(S) + " steps × " + std::to_string(L) + " links need " +
                std::to_string(L * S * 2 / (1 << 20)) + " MiB of load table, more than the limit of " +
                std::to_string(max_table_bytes >> 20) + " MiB");

  RankSearchResult r;
  r.placement.assign(start.begin(), start.begin() + schedule.ranks());
  std::vector<int32_t>& host = r.placement;
  std::vector<uint16_t> load(L * S, 0);
  int64_t conflicts = 0;

  // Add (+1) or remove (-1) one flow's links, keeping the conflict total exact.
  auto apply = [&](int32_t i, int sign) {
    const Flow& f = all.flows[static_cast<size_t>(i)];
    const int32_t a = host[static_cast<size_t>(f.src)], b = host[static_cast<size_t>(f.dst)];
    if (a == b) return;
    const int32_t s = all.step[static_cast<size_t>(i)];
    uint16_t* row = load.data() + static_cast<size_t>(s) * L;
    flow_links(a, b, routing::flow_key(s, f.src, f.dst), [&](LinkId l) {
      uint16_t& x = row[static_cast<size_t>(l)];
      if (sign > 0) {
        if (x == std::numeric_limits<uint16_t>::max())
          throw Error("rank-order search: more than 65535 flows on a link");
        conflicts += x >= 1 ? 1 : 0;
        ++x;
      } else {
        conflicts -= x >= 2 ? 1 : 0;
        --x;
      }
    });
  };
  // Whether a flow crosses a link that carries another flow in its step.
  auto conflicting = [&](int32_t i) {
    const Flow& f = all.flows[static_cast<size_t>(i)];
    const int32_t a = host[static_cast<size_t>(f.src)], b = host[static_cast<size_t>(f.dst)];
    if (a == b) return false;
    const int32_t s = all.step[static_cast<size_t>(i)];
    const uint16_t* row = load.data() + static_cast<size_t>(s) * L;
    bool hit = false;
    flow_links(a, b, routing::flow_key(s, f.src, f.dst), [&](LinkId l) { hit |= row[static_cast<size_t>(l)] >= 2; });
    return hit;
  };

  for (size_t i = 0; i < all.flows.size(); ++i) apply(static_cast<int32_t>(i), +1);
  r.conflicts_start = conflicts;

  const int32_t n = schedule.ranks();
  Rng rng(splitmix64(seed ^ 0x7a2c5eedULL));
  std::vector<uint32_t> mark(all.flows.size(), 0);
  uint32_t epoch = 0;
  std::vector<int32_t> touched;
  auto flows_of = [&](int32_t x, int32_t y) {
    ++epoch;
    touched.clear();
    for (int32_t rank : {x, y})
      for (int64_t k = all.rank_first[static_cast<size_t>(rank)]; k < all.rank_first[static_cast<size_t>(rank) + 1];
           ++k) {
        const int32_t i = all.rank_flows[static_cast<size_t>(k)];
        if (mark[static_cast<size_t>(i)] != epoch) {
          mark[static_cast<size_t>(i)] = epoch;
          touched.push_back(i);
        }
      }
  };

  using clock = std::chrono::steady_clock;
  auto next_report = clock::now();
  const auto every = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(period));
  while (conflicts > 0 && r.moves < max_moves && n >= 2) {
    if ((r.moves & 63) == 0 && progress && clock::now() >= next_report) {
      next_report = clock::now() + every;
      if (!progress(r.moves, max_moves)) {
        r.interrupted = true;
        break;
      }
    }
    // One rank from a conflicting flow (a few draws), the other anywhere.
    int32_t x = static_cast<int32_t>(rng.below(static_cast<uint64_t>(n)));
    for (int t = 0; t < 32 && !all.flows.empty(); ++t) {
      const auto i = static_cast<int32_t>(rng.below(all.flows.size()));
      if (conflicting(i)) {
        const Flow& f = all.flows[static_cast<size_t>(i)];
        x = (rng.next() & 1) != 0 ? f.src : f.dst;
        break;
      }
    }
    int32_t y = static_cast<int32_t>(rng.below(static_cast<uint64_t>(n - 1)));
    if (y >= x) ++y;
    ++r.moves;
    if (host[static_cast<size_t>(x)] == host[static_cast<size_t>(y)]) continue;
    flows_of(x, y);
    const int64_t before = conflicts;
    for (int32_t i : touched) apply(i, -1);
    std::swap(host[static_cast<size_t>(x)], host[static_cast<size_t>(y)]);
    for (int32_t i : touched) apply(i, +1);
    if (conflicts <= before) {
      ++r.accepted;
      continue;
    }
    for (int32_t i : touched) apply(i, -1);
    std::swap(host[static_cast<size_t>(x)], host[static_cast<size_t>(y)]);
    for (int32_t i : touched) apply(i, +1);
  }
  r.conflicts = conflicts;
  return r;
}

}  // namespace

RankSearchResult improve_rank_order(const routing::Routing& routing, std::span<const int32_t> placement,
                                    const workload::Schedule& schedule, uint64_t seed, int64_t max_moves,
                                    const Progress& progress, double progress_period_seconds, int64_t max_table_bytes) {
  check_placement(routing, placement, schedule);
  return detail::with_flow_links(routing, [&](auto& links) {
    return search(routing, placement, schedule, links, seed, max_moves, progress, progress_period_seconds,
                  max_table_bytes);
  });
}

}  // namespace daqnet::analysis
