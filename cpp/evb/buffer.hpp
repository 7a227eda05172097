// Fragment and event buffers in 2 MiB aligned memory advised as transparent huge pages, so a
// transfer that pins or walks their pages (MPI's single-copy CMA path reads the sender's
// pages with get_user_pages; RDMA registers them) handles one page per 2 MiB, not per 4 KiB.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace daqnet::evb {

class Buffer {
public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes);  // zero-filled; huge pages from 1 MiB on
  unsigned char* data() { return p_.get(); }
  const unsigned char* data() const { return p_.get(); }
  std::size_t size() const { return size_; }

private:
  struct Free {
    void operator()(unsigned char* p) const;
  };
  std::unique_ptr<unsigned char, Free> p_;
  std::size_t size_ = 0;
};

// Equal buffers of `bytes` carved from slabs of a few MiB, so small and odd sizes share huge
// pages instead of wasting most of one each. Indices stay valid for the pool's life.
class BufferPool {
public:
  explicit BufferPool(std::size_t bytes);
  struct Taken {
    std::size_t index;
    bool fresh;  // never used before (zero-filled)
  };
  Taken take();
  void reserve(std::size_t buffers) {  // room to track this many without reallocating
    pieces_.reserve(buffers);
    free_.reserve(buffers);
  }
  void give(std::size_t index) { free_.push_back(index); }
  unsigned char* at(std::size_t index) { return pieces_[index]; }
  std::size_t size() const { return pieces_.size(); }
  std::size_t bytes() const { return slabs_.size() * stride_ * per_slab_; }  // memory held
  const unsigned char* first() const { return slabs_.empty() ? nullptr : slabs_.front().data(); }

private:
  std::size_t stride_, per_slab_;
  std::vector<Buffer> slabs_;
  std::vector<unsigned char*> pieces_;
  std::vector<std::size_t> free_;
};

}  // namespace daqnet::evb
