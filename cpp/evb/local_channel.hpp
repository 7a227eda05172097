// Messages between units of one process (a readout unit and the builder unit beside it),
// matched as the transport matches them (per tag, oldest first) but never through it: a
// message sent with `lend` is not copied, the receiver reads it in the sender's buffer and
// gives the buffer back (Node::give_back) once done with it. This is the zero-copy local
// path of the event builder; everything else is copied into the posted buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory_resource>
#include <unordered_map>
#include <vector>

#include "evb/transport.hpp"

namespace daqnet::evb {

class LocalChannel {
public:
  explicit LocalChannel(int rank) : rank_(rank) {}
  void send(Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie, bool lend);
  void recv(Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie);
  bool ready() const { return !ready_.empty(); }
  // Appends the completions of matched messages (each send before its receive).
  void take(std::vector<Completion>& out);
  std::size_t pending() const { return pending_; }  // operations not yet returned by take()
  void cancel_receives();

private:
  struct Message {
    const void* buf;
    std::size_t bytes;
    std::uint64_t cookie;
    bool lend;
  };
  struct Receive {
    void* buf;
    std::size_t capacity;
    std::uint64_t cookie;
  };
  struct Queues {
    std::pmr::deque<Message> sends;  // pmr: see main.cpp
    std::pmr::deque<Receive> recvs;
  };
  void match(Tag tag, Queues& q);

  int rank_;
  std::unordered_map<Tag, Queues> queues_;
  std::vector<Completion> ready_;
  std::size_t pending_ = 0;
};

}  // namespace daqnet::evb
