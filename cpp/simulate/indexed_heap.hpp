// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace daqnet::simulate {

/// A binary min-heap of ids 0..n−1 keyed by a double, with the position of every id, so a
/// key can change in place (no stale entries piling up when rates change often).
class IndexedHeap {
public:
  bool empty() const { return heap_.empty(); }
  int32_t top() const { return heap_.front(); }
  double top_key() const { return key_[static_cast<size_t>(heap_.front())]; }
  bool contains(int32_t id) const {
    return static_cast<size_t>(id) < pos_.size() && pos_[static_cast<size_t>(id)] >= 0;
  }

  /// Insert id, or move it to its new key.
  void set(int32_t id, double key) {
    const auto i = static_cast<size_t>(id);
    if (i >= pos_.size()) {
      pos_.resize(i + 1, -1);
      key_.resize(i + 1);
    }
    const double old = key_[i];
    key_[i] = key;
    if (pos_[i] < 0) {
      pos_[i] = static_cast<int32_t>(heap_.size());
      heap_.push_back(id);
      up(heap_.size() - 1);
    } else if (key < old) {
      up(static_cast<size_t>(pos_[i]));
    } else {
      down(static_cast<size_t>(pos_[i]));
    }
  }

  void erase(int32_t id) {
    if (!contains(id)) return;
    const auto at = static_cast<size_t>(pos_[static_cast<size_t>(id)]);
    pos_[static_cast<size_t>(id)] = -1;
    const int32_t last = heap_.back();
    heap_.pop_back();
    if (at == heap_.size()) return;
    heap_[at] = last;
    pos_[static_cast<size_t>(last)] = static_cast<int32_t>(at);
    up(at);
    down(static_cast<size_t>(pos_[static_cast<size_t>(last)]));
  }

private:
  bool less(size_t a, size_t b) const {
    return key_[static_cast<size_t>(heap_[a])] < key_[static_cast<size_t>(heap_[b])];
  }
  void swap_at(size_t a, size_t b) {
    std::swap(heap_[a], heap_[b]);
    pos_[static_cast<size_t>(heap_[a])] = static_cast<int32_t>(a);
    pos_[static_cast<size_t>(heap_[b])] = static_cast<int32_t>(b);
  }
  void up(size_t i) {
    while (i > 0 && less(i, (i - 1) / 2)) {
      swap_at(i, (i - 1) / 2);
      i = (i - 1) / 2;
    }
  }
  void down(size_t i) {
    for (;;) {
      size_t m = i;
      const size_t l = 2 * i + 1, r = l + 1;
      if (l < heap_.size() && less(l, m)) m = l;
      if (r < heap_.size() && less(r, m)) m = r;
      if (m == i) return;
      swap_at(i, m);
      i = m;
    }
  }

  std::vector<int32_t> heap_;
  std::vector<int32_t> pos_;
  std::vector<double> key_;
};

}  // namespace daqnet::simulate
