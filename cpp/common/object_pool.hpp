// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace daqnet {

/// Objects kept from one call to the next, so that the buffers in them keep their memory.
/// A thread started for one call allocates from its own arena of the C library, which
/// gives the pages of freed buffers back to the system; the next call's thread then
/// faults every page in again (a fifth of a short threaded step simulation's time). An
/// object taken from the pool comes back with its buffers grown; the caller resets what
/// must not carry over.
template <class T>
class ObjectPool {
public:
  /// Keeps at most `keep` idle objects; more are freed when given back.
  // Room for every idle object from the start: give() runs in a destructor and must not throw.
  explicit ObjectPool(size_t keep) : keep_(keep) { idle_.reserve(keep); }

  /// An idle object, or a new one when none is idle.
  std::unique_ptr<T> take() {
    {
      const std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        auto object = std::move(idle_.back());
        idle_.pop_back();
        return object;
      }
    }
    return std::make_unique<T>();
  }

  void give(std::unique_ptr<T> object) {
    const std::lock_guard lock(mutex_);
    if (idle_.size() < keep_) idle_.push_back(std::move(object));
  }

  /// An object of the pool for the lifetime of the lease.
  class Lease {
  public:
    explicit Lease(ObjectPool& pool) : pool_(pool), object_(pool.take()) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_.give(std::move(object_)); }
    T& operator*() const { return *object_; }
    T* operator->() const { return object_.get(); }

  private:
    ObjectPool& pool_;
    std::unique_ptr<T> object_;
  };

private:
  size_t keep_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<T>> idle_;
};

}  // namespace daqnet
