// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <queue>
#include <stdexcept>
#include <utility>
#include <vector>

namespace daqnet::simulate {

/// What a discrete-event simulation has to do, in (time, order scheduled) order.
///
/// Most of what the protocol simulation schedules comes a fixed delay after now (a
/// command's route, a path's latency), and now never goes back: what is scheduled with the
/// same delay falls due in the order it was scheduled. Each such delay gets a FIFO, and only
/// the FIFOs' heads compete with a heap of the rest. The order is the one a single heap
/// would give, but an event manager's assignments (credits × nodes² of them at the start of
/// a PUSH run) cost a push and a pop at the end of a queue instead of two sifts through it.
/// `T` needs `time` (double) and `seq` (unique, growing with every call of at() or after()).
template <class T>
class Agenda {
public:
  bool empty() const { return size_ == 0; }

  /// Due at `item.time`, any time from now on.
  void at(const T& item) {
    heap_.push(item);
    ++size_;
  }

  /// Due `delay` after `now` (item.time == now + delay), now not smaller than at any call before.
  void after(double delay, const T& item) {
    for (auto& [d, fifo] : fifos_)
      if (d == delay) {
        fifo.push_back(item);
        ++size_;
        return;
      }
    if (fifos_.size() >= kMaxFifos) return at(item);  // delays of every kind: the heap
    fifos_.emplace_back(delay, std::deque<T>{item});
    ++size_;
  }

  /// The earliest item, ties in the order scheduled (not empty()).
  const T& top() {
    const T* best = heap_.empty() ? nullptr : &heap_.top();
    from_ = kHeap;
    for (size_t k = 0; k < fifos_.size(); ++k) {
      const auto& fifo = fifos_[k].second;
      if (!fifo.empty() && (best == nullptr || earlier(fifo.front(), *best))) {
        best = &fifo.front();
        from_ = k;
      }
    }
    if (best == nullptr) throw std::logic_error("Agenda::top() on an empty agenda");
    return *best;
  }

  /// Remove the item top() returned last.
  void pop() {
    if (from_ == kHeap)
      heap_.pop();
    else
      fifos_[from_].second.pop_front();
    --size_;
  }

private:
  static bool earlier(const T& a, const T& b) { return a.time != b.time ? a.time < b.time : a.seq < b.seq; }
  struct Later {
    bool operator()(const T& a, const T& b) const { return earlier(b, a); }
  };
  // A fat tree has a few distinct latencies (hops); arbitrary ones go to the heap past this.
  static constexpr size_t kMaxFifos = 16;
  static constexpr size_t kHeap = SIZE_MAX;

  std::priority_queue<T, std::vector<T>, Later> heap_;
  std::vector<std::pair<double, std::deque<T>>> fifos_;
  size_t size_ = 0;
  size_t from_ = kHeap;
};

}  // namespace daqnet::simulate
