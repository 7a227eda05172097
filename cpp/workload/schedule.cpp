// daqnet — plan, simulate and benchmark event-building networks.
#include "workload/schedule.hpp"

#include "common/count.hpp"
#include "common/error.hpp"
#include "common/random.hpp"

namespace daqnet::workload {

namespace {

void check_ranks(int32_t n) {
  if (n < 2) throw Error("workload: needs at least 2 ranks, got " + std::to_string(n));
}

class Barrel final : public Schedule {
public:
  explicit Barrel(int32_t n) : n_(n) {}
  int32_t ranks() const override { return n_; }
  int64_t num_steps() const override { return n_ - 1; }
  void step(int64_t s, std::vector<Flow>& out) const override {
    out.resize(static_cast<size_t>(n_));
    const int32_t k = static_cast<int32_t>(s + 1);
    for (int32_t i = 0; i < n_; ++i) {
      int32_t d = i + k;
      if (d >= n_) d -= n_;
      out[static_cast<size_t>(i)] = {i, d};
    }
  }
  std::string describe() const override {
    return "barrel shift over " + thousands(static_cast<uint64_t>(n_)) + " ranks";
  }

private:
  int32_t n_;
};

class RandomOrder final : public Schedule {
public:
  RandomOrder(int32_t n, uint64_t seed) : n_(n), seed_(seed) {
    sigma_ = random_permutation(n, splitmix64(seed ^ 0x5157a11ULL));
    auto t = random_permutation(n - 1, splitmix64(seed ^ 0x07de4ULL));
    tau_.reserve(t.size());
    for (int32_t x : t) tau_.push_back(x + 1);
  }
  int32_t ranks() const override { return n_; }
  int64_t num_steps() const override { return n_ - 1; }
  void step(int64_t s, std::vector<Flow>& out) const override {
    out.resize(static_cast<size_t>(n_));
    const int32_t k = tau_[static_cast<size_t>(s)];
    for (int32_t i = 0; i < n_; ++i) {
      int32_t d = i + k;
      if (d >= n_) d -= n_;
      out[static_cast<size_t>(i)] = {sigma_[static_cast<size_t>(i)], sigma_[static_cast<size_t>(d)]};
    }
  }
  std::string describe() const override {
    return "random order over " + thousands(static_cast<uint64_t>(n_)) + " ranks (seed " + std::to_string(seed_) + ")";
  }

private:
  int32_t n_;
  uint64_t seed_;
  std::vector<int32_t> sigma_, tau_;
};

class AllAtOnce final : public Schedule {
public:
  explicit AllAtOnce(int32_t n) : n_(n) {}
  int32_t ranks() const override { return n_; }
  int64_t num_steps() const override { return 1; }
  void step(int64_t, std::vector<Flow>& out) const override {
    out.clear();
    out.reserve(static_cast<size_t>(n_) * static_cast<size_t>(n_ - 1));
    for (int32_t k = 1; k < n_; ++k)
      for (int32_t i = 0; i < n_; ++i) out.push_back({i, (i + k) % n_});
  }
  std::string describe() const override {
    return "all pairs at once over " + thousands(static_cast<uint64_t>(n_)) + " ranks";
  }

private:
  int32_t n_;
};

class Shifts final : public Schedule {
public:
  Shifts(int32_t n, std::vector<int32_t> k) : n_(n), k_(std::move(k)) {}
  int32_t ranks() const override { return n_; }
  int64_t num_steps() const override { return static_cast<int64_t>(k_.size()); }
  void step(int64_t s, std::vector<Flow>& out) const override {
    out.resize(static_cast<size_t>(n_));
    const int32_t k = k_[static_cast<size_t>(s)];
    for (int32_t i = 0; i < n_; ++i) out[static_cast<size_t>(i)] = {i, (i + k) % n_};
  }
  std::string describe() const override {
    return std::to_string(k_.size()) + " shift permutation(s) over " + thousands(static_cast<uint64_t>(n_)) + " ranks";
  }

private:
  int32_t n_;
  std::vector<int32_t> k_;
};

class ExplicitSteps final : public Schedule {
public:
  ExplicitSteps(int32_t n, std::vector<std::vector<Flow>> steps, std::string what)
      : n_(n), steps_(std::move(steps)), what_(std::move(what)) {}
  int32_t ranks() const override { return n_; }
  int64_t num_steps() const override { return static_cast<int64_t>(steps_.size()); }
  void step(int64_t s, std::vector<Flow>& out) const override { out = steps_[static_cast<size_t>(s)]; }
  std::string describe() const override { return what_; }

private:
  int32_t n_;
  std::vector<std::vector<Flow>> steps_;
  std::string what_;
};

}  // namespace

std::unique_ptr<Schedule> barrel(int32_t ranks) {
  check_ranks(ranks);
  return std::make_unique<Barrel>(ranks);
}

std::unique_ptr<Schedule> random_order(int32_t ranks, uint64_t seed) {
  check_ranks(ranks);
  return std::make_unique<RandomOrder>(ranks, seed);
}

std::unique_ptr<Schedule> all_at_once(int32_t ranks) {
  check_ranks(ranks);
  return std::make_unique<AllAtOnce>(ranks);
}

std::unique_ptr<Schedule> shifts(int32_t ranks, const std::vector<int64_t>& shift_list) {
  check_ranks(ranks);
  if (shift_list.empty()) throw Error("workload.shifts: give at least one shift");
  std::vector<int32_t> k;
  for (int64_t s : shift_list) {
    const int64_t m = ((s % ranks) + ranks) % ranks;
    if (m == 0)
      throw Error("workload.shifts: shift " + std::to_string(s) + " is a multiple of the " + std::to_string(ranks) +
                  " ranks (every rank would send to itself)");
    k.push_back(static_cast<int32_t>(m));
  }
  return std::make_unique<Shifts>(ranks, std::move(k));
}

std::unique_ptr<Schedule> explicit_steps(int32_t ranks, std::vector<std::vector<Flow>> steps, std::string what) {
  check_ranks(ranks);
  if (steps.empty()) throw Error("workload: a schedule needs at least one step");
  for (size_t s = 0; s < steps.size(); ++s)
    for (const Flow& f : steps[s]) {
      const std::string where = "workload: step " + std::to_string(s + 1) + ": flow " + std::to_string(f.src) + " -> " +
                                std::to_string(f.dst);
      if (f.src < 0 || f.src >= ranks || f.dst < 0 || f.dst >= ranks)
        throw Error(where + " names a rank outside 0.." + std::to_string(ranks - 1));
      if (f.src == f.dst) throw Error(where + " sends a rank to itself");
    }
  return std::make_unique<ExplicitSteps>(ranks, std::move(steps), std::move(what));
}

}  // namespace daqnet::workload
