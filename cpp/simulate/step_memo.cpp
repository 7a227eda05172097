// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/step_memo.hpp"

#include <bit>

namespace daqnet::simulate {

StepMemo::StepMemo(size_t num_resources, size_t max_words, int probation) {
  reset(num_resources, max_words, probation);
}

void StepMemo::reset(size_t num_resources, size_t max_words, int probation, Probation* shared) {
  // Marks kept from earlier steps are older than the next step's stamp: still unseen.
  label_.resize(num_resources, 0);
  seen_.resize(num_resources, 0);
  known_.clear();
  words_ = 0;
  max_words_ = max_words;
  probation_ = probation;
  looked_ = 0;
  hits_ = 0;
  active_ = probation > 0;
  shared_ = shared;
}

void StepMemo::begin() {
  shape_.clear();
  next_label_ = 0;
  hash_ = 0;
  if (++stamp_ == 0) {  // wrapped: forget every mark
    std::fill(seen_.begin(), seen_.end(), 0);
    stamp_ = 1;
  }
}

void StepMemo::add(double latency, double bytes, int32_t flow, std::span<const int32_t> resources,
                   std::span<const double> capacity) {
  auto put = [&](uint64_t w) {
    shape_.push_back(w);
    hash_ = (hash_ ^ w) * 0x100000001b3ULL + (hash_ >> 29);
  };
  put(std::bit_cast<uint64_t>(latency));
  put(std::bit_cast<uint64_t>(bytes));
  put((static_cast<uint64_t>(static_cast<uint32_t>(flow)) << 8) | resources.size());
  for (int32_t r : resources) {
    const auto ru = static_cast<size_t>(r);
    if (seen_[ru] != stamp_) {  // a new resource: its number and its capacity
      seen_[ru] = stamp_;
      label_[ru] = next_label_++;
      put((uint64_t{1} << 63) | static_cast<uint64_t>(label_[ru]));
      put(std::bit_cast<uint64_t>(capacity[ru]));
    } else {
      put(static_cast<uint64_t>(label_[ru]));
    }
  }
}

const std::pair<double, double>* StepMemo::find() {
  if (!active()) {
    if (active_) stop();  // another thread's memo ended the shared probation
    return nullptr;
  }
  const auto [first, last] = known_.equal_range(hash_);
  for (auto it = first; it != last; ++it)
    if (it->second.first == shape_) {
      ++hits_;
      if (shared_ != nullptr) shared_->hits.fetch_add(1, std::memory_order_relaxed);
      return &it->second.second;
    }
  // Its own probation, as if alone; and the shared one, over every thread's steps.
  if (++looked_ >= probation_ && hits_ == 0) {
    stop();
  } else if (shared_ != nullptr && shared_->looked.fetch_add(1, std::memory_order_relaxed) + 1 >= probation_ &&
             shared_->hits.load(std::memory_order_relaxed) == 0) {
    shared_->over.store(true, std::memory_order_relaxed);
    stop();
  }
  return nullptr;
}

void StepMemo::store(std::pair<double, double> outcome) {
  if (!active() || words_ + shape_.size() > max_words_) return;
  words_ += shape_.size();
  known_.emplace(hash_, std::make_pair(shape_, outcome));
}

}  // namespace daqnet::simulate
