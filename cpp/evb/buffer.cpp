#include "evb/buffer.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "evb/memory.hpp"

namespace daqnet::evb {
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kSlab = std::size_t{8} << 20;  // target slab size of a BufferPool
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

Buffer::Buffer(std::size_t bytes) : size_(bytes) {
  // Small buffers stay on ordinary pages: a huge page each would waste memory.
  std::size_t align = bytes >= kHugePage / 2 ? kHugePage : 64;
  std::size_t rounded = round_up(std::max<std::size_t>(bytes, 1), align);
  auto* p = static_cast<unsigned char*>(std::aligned_alloc(align, rounded));
  if (!p) throw std::bad_alloc();
  memory::count_allocation();
  if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);  // a hint: ignored where THP is off
  std::memset(p, 0, rounded);                                  // also faults the pages in now
  p_.reset(p);
}

void Buffer::Free::operator()(unsigned char* p) const { std::free(p); }

BufferPool::BufferPool(std::size_t bytes)
    : stride_(round_up(std::max<std::size_t>(bytes, 1), 64)), per_slab_(std::max<std::size_t>(1, kSlab / stride_)) {}

BufferPool::Taken BufferPool::take() {
  if (!free_.empty()) {
    std::size_t i = free_.back();
    free_.pop_back();
    return {i, false};
  }
  if (pieces_.size() % per_slab_ == 0) slabs_.emplace_back(stride_ * per_slab_);
  pieces_.push_back(slabs_.back().data() + stride_ * (pieces_.size() % per_slab_));
  return {pieces_.size() - 1, true};
}

}  // namespace daqnet::evb
