// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace daqnet::simulate {

/// A 4-ary min-heap of ids 0..n−1 keyed by a double, with the position of every id, so a
/// key can change in place (no stale entries piling up when rates change often). Keys sit
/// in the heap next to their ids (a sift compares without a look-up elsewhere), four
/// children per node halve the depth; equal keys come out in id order, so the order does
/// not depend on the heap's history.
class IndexedHeap {
public:
  bool empty() const { return heap_.empty(); }
  int32_t top() const { return heap_.front().id; }
  double top_key() const { return heap_.front().key; }
  bool contains(int32_t id) const {
    return static_cast<size_t>(id) < pos_.size() && pos_[static_cast<size_t>(id)] >= 0;
  }

  /// Insert id, or move it to its new key.
  void set(int32_t id, double key) {
    const auto i = static_cast<size_t>(id);
    if (i >= pos_.size()) pos_.resize(i + 1, -1);
    if (pos_[i] < 0) {
      heap_.push_back({key, id});
      up(heap_.size() - 1);
      return;
    }
    const auto at = static_cast<size_t>(pos_[i]);
    const Entry old = heap_[at];
    heap_[at].key = key;
    if (before(heap_[at], old))
      up(at);
    else
      down(at);
  }

  void erase(int32_t id) {
    if (!contains(id)) return;
    const auto at = static_cast<size_t>(pos_[static_cast<size_t>(id)]);
    pos_[static_cast<size_t>(id)] = -1;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (at == heap_.size()) return;
    heap_[at] = last;
    pos_[static_cast<size_t>(last.id)] = static_cast<int32_t>(at);
    if (at > 0 && before(last, heap_[(at - 1) / 4]))
      up(at);
    else
      down(at);
  }

  struct Entry {
    double key;
    int32_t id;
  };
  /// The order in which entries come out.
  static bool before(const Entry& a, const Entry& b) { return a.key < b.key || (a.key == b.key && a.id < b.id); }
  /// Every entry, in heap order.
  const std::vector<Entry>& entries() const { return heap_; }
  size_t size() const { return heap_.size(); }
  /// Remove every entry at once.
  void clear() {
    for (const Entry& e : heap_) pos_[static_cast<size_t>(e.id)] = -1;
    heap_.clear();
  }

private:
  void place(size_t i, const Entry& e) {
    heap_[i] = e;
    pos_[static_cast<size_t>(e.id)] = static_cast<int32_t>(i);
  }
  void up(size_t i) {
    const Entry e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!before(e, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, e);
  }
  void down(size_t i) {
    const Entry e = heap_[i];
    const size_t n = heap_.size();
    for (;;) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t m = first;
      const size_t end = std::min(first + 4, n);
      for (size_t c = first + 1; c < end; ++c)
        if (before(heap_[c], heap_[m])) m = c;
      if (!before(heap_[m], e)) break;
      place(i, heap_[m]);
      i = m;
    }
    place(i, e);
  }

  std::vector<Entry> heap_;
  std::vector<int32_t> pos_;
};

}  // namespace daqnet::simulate
