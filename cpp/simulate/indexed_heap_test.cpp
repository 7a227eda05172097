// daqnet — plan, simulate and benchmark event-building networks.
#include "simulate/indexed_heap.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace daqnet::simulate {
namespace {

// The reference: an ordered set of (key, id) and each present id's key.
class Reference {
public:
  bool empty() const { return order_.empty(); }
  double min_key() const { return order_.begin()->first; }
  bool contains(int32_t id) const { return key_.contains(id); }
  double key(int32_t id) const { return key_.at(id); }
  void set(int32_t id, double key) {
    erase(id);
    key_[id] = key;
    order_.insert({key, id});
  }
  void erase(int32_t id) {
    const auto it = key_.find(id);
    if (it == key_.end()) return;
    order_.erase({it->second, id});
    key_.erase(it);
  }
  std::vector<double> sorted_keys() const {
    std::vector<double> out;
    for (const auto& [k, id] : order_) out.push_back(k);
    return out;
  }

private:
  std::set<std::pair<double, int32_t>> order_;
  std::map<int32_t, double> key_;
};

// Compares everything observable; ids with equal keys may come out in any order.
void expect_same(const IndexedHeap& heap, const Reference& ref, int32_t ids) {
  ASSERT_EQ(heap.empty(), ref.empty());
  for (int32_t id = 0; id < ids + 2; ++id) ASSERT_EQ(heap.contains(id), ref.contains(id)) << "id " << id;
  if (ref.empty()) return;
  ASSERT_EQ(heap.top_key(), ref.min_key());
  ASSERT_TRUE(ref.contains(heap.top()));
  ASSERT_EQ(ref.key(heap.top()), ref.min_key());
}

// Random set (insert, move up or down), erase (present or absent) and pop sequences.
// few_keys draws keys from a handful of values, so that ties are common.
void run_random(uint32_t seed, int32_t ids, bool few_keys, int32_t ops) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> pick_id(0, ids - 1);
  std::uniform_int_distribution<int32_t> pick_op(0, 9);
  std::uniform_int_distribution<int32_t> small_key(0, 4);
  std::uniform_real_distribution<double> real_key(0.0, 1000.0);
  auto draw_key = [&] { return few_keys ? static_cast<double>(small_key(rng)) : real_key(rng); };

  IndexedHeap heap;
  Reference ref;
  for (int32_t step = 0; step < ops; ++step) {
    const int32_t op = pick_op(rng);
    if (op < 6) {  // set: insert, or change the key of a present id
      const int32_t id = pick_id(rng);
      const double key = draw_key();
      heap.set(id, key);
      ref.set(id, key);
    } else if (op < 8) {  // erase, possibly an id that is not there
      const int32_t id = pick_id(rng);
      heap.erase(id);
      ref.erase(id);
    } else if (!ref.empty()) {  // pop the minimum
      const int32_t id = heap.top();
      heap.erase(id);
      ref.erase(id);
    }
    ASSERT_NO_FATAL_FAILURE(expect_same(heap, ref, ids)) << "seed " << seed << ", after operation " << step;
  }

  // Draining gives the reference's keys in order.
  const std::vector<double> expected = ref.sorted_keys();
  std::vector<double> drained;
  while (!heap.empty()) {
    drained.push_back(heap.top_key());
    heap.erase(heap.top());
  }
  EXPECT_EQ(drained, expected) << "seed " << seed;
}

TEST(IndexedHeap, EmptyHeap) {
  IndexedHeap heap;
  EXPECT_TRUE(heap.empty());
  EXPECT_FALSE(heap.contains(0));
  EXPECT_FALSE(heap.contains(1000));
  heap.erase(3);  // erasing an id never inserted is a no-op
  EXPECT_TRUE(heap.empty());
}

TEST(IndexedHeap, KeysChangeInPlace) {
  IndexedHeap heap;
  heap.set(0, 5.0);
  heap.set(1, 3.0);
  heap.set(2, 4.0);
  EXPECT_EQ(heap.top(), 1);
  heap.set(0, 1.0);  // decrease below the top
  EXPECT_EQ(heap.top(), 0);
  EXPECT_EQ(heap.top_key(), 1.0);
  heap.set(0, 10.0);  // increase back below everything
  EXPECT_EQ(heap.top(), 1);
  heap.erase(1);
  EXPECT_EQ(heap.top(), 2);
  heap.erase(2);
  EXPECT_EQ(heap.top(), 0);
  EXPECT_EQ(heap.top_key(), 10.0);
  heap.erase(0);
  EXPECT_TRUE(heap.empty());
  heap.set(1, 2.0);  // an erased id can come back
  EXPECT_TRUE(heap.contains(1));
  EXPECT_EQ(heap.top(), 1);
}

TEST(IndexedHeap, MatchesReferenceDistinctKeys) {
  for (uint32_t seed = 1; seed <= 20; ++seed) run_random(seed, 50, false, 2000);
}

TEST(IndexedHeap, MatchesReferenceManyTies) {
  for (uint32_t seed = 101; seed <= 120; ++seed) run_random(seed, 30, true, 2000);
}

TEST(IndexedHeap, MatchesReferenceFewIds) {
  // Two or three ids: the heap keeps emptying and refilling, erasing its last element.
  for (uint32_t seed = 201; seed <= 220; ++seed) run_random(seed, 3, false, 500);
}

}  // namespace
}  // namespace daqnet::simulate
