// daqnet — plan, simulate and benchmark event-building networks.
#include "analysis/schedule_repair.hpp"

#include <chrono>

#include "analysis/detail/flow_links.hpp"
#include "common/error.hpp"
#include "common/random.hpp"

namespace daqnet::analysis {

namespace {

// Builds steps in which no link carries two flows and no rank sends or receives twice;
// "in use" is a stamp per link and per rank, so starting a new step costs nothing.
template <class FlowLinks>
class StepPacker {
public:
  StepPacker(const routing::Routing& routing, std::span<const int32_t> placement, int32_t ranks, FlowLinks& links)
      : placement_(placement),
        links_(links),
        link_stamp_(static_cast<size_t>(routing.fabric().num_links()), 0),
        send_stamp_(static_cast<size_t>(ranks), 0),
        recv_stamp_(static_cast<size_t>(ranks), 0) {}

  void new_step(int64_t key_step) {
    ++stamp_;
    key_step_ = key_step;
  }

  /// Take the flow into the current step if it fits; `ranks_once` also demands that its
  /// ranks are free.
  bool try_add(const Flow& f, bool ranks_once) {
    if (ranks_once &&
        (send_stamp_[static_cast<size_t>(f.src)] == stamp_ || recv_stamp_[static_cast<size_t>(f.dst)] == stamp_))
      return false;
    const int32_t a = placement_[static_cast<size_t>(f.src)], b = placement_[static_cast<size_t>(f.dst)];
    if (a != b) {
      bool free = true;
      links_(a, b, routing::flow_key(key_step_, f.src, f.dst),
             [&](LinkId l) { free &= link_stamp_[static_cast<size_t>(l)] != stamp_; });
      if (!free) return false;
      links_(a, b, routing::flow_key(key_step_, f.src, f.dst),
             [&](LinkId l) { link_stamp_[static_cast<size_t>(l)] = stamp_; });
    }
    send_stamp_[static_cast<size_t>(f.src)] = stamp_;
    recv_stamp_[static_cast<size_t>(f.dst)] = stamp_;
    return true;
  }

private:
  std::span<const int32_t> placement_;
  FlowLinks& links_;
  std::vector<uint32_t> link_stamp_, send_stamp_, recv_stamp_;
  uint32_t stamp_ = 0;
  int64_t key_step_ = 0;
};

void shuffle(std::vector<Flow>& v, Rng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

// Pack `pending` (consumed) into new steps appended to `out`, first fit in the given order.
template <class FlowLinks>
void pack(StepPacker<FlowLinks>& packer, std::vector<Flow>& pending, Steps& out, const Progress& progress,
          int64_t placed, int64_t total) {
  std::vector<Flow> rest;
  while (!pending.empty()) {
    packer.new_step(static_cast<int64_t>(out.size()));
    std::vector<Flow> step;
    rest.clear();
    for (const Flow& f : pending) (packer.try_add(f, true) ? step : rest).push_back(f);
    if (step.empty()) throw Error("schedule repair: a flow fits in no step (internal error)");
    placed += static_cast<int64_t>(step.size());
    out.push_back(std::move(step));
    pending.swap(rest);
    if (progress && !progress(placed, total)) return;
  }
}

}  // namespace

Steps barrel_rand(const routing::Routing& routing, std::span<const int32_t> placement,
                  const workload::Schedule& schedule, uint64_t seed) {
  check_placement(routing, placement, schedule);
  return detail::with_flow_links(routing, [&](auto& links) {
    StepPacker packer(routing, placement, schedule.ranks(), links);
    Rng rng(splitmix64(seed ^ 0xba77e1ULL));
    Steps out;
    std::vector<Flow> flows, moved;
    for (int64_t s = 0; s < schedule.num_steps(); ++s) {
      schedule.step(s, flows);
      shuffle(flows, rng);
      packer.new_step(s);
      std::vector<Flow> kept;
      for (const Flow& f : flows) (packer.try_add(f, false) ? kept : moved).push_back(f);
      out.push_back(std::move(kept));
    }
    shuffle(moved, rng);
    pack(packer, moved, out, {}, 0, 0);
    return out;
  });
}

Steps conflict_free_random_steps(const routing::Routing& routing, std::span<const int32_t> placement, int32_t ranks,
                                 uint64_t seed, const Progress& progress) {
  if (ranks < 2) throw Error("schedule repair: needs at least 2 ranks");
  const auto all = workload::all_at_once(ranks);
  check_placement(routing, placement, *all);
  return detail::with_flow_links(routing, [&](auto& links) {
    StepPacker packer(routing, placement, ranks, links);
    Rng rng(splitmix64(seed ^ 0xcf5eedULL));
    std::vector<Flow> pairs;
    all->step(0, pairs);
    shuffle(pairs, rng);
    Steps out;
    const auto total = static_cast<int64_t>(pairs.size());
    pack(packer, pairs, out, progress, 0, total);
    return out;
  });
}

}  // namespace daqnet::analysis
