#include "evb/local_channel.hpp"

#include <cstring>
#include <string>

namespace daqnet::evb {

void LocalChannel::send(Tag tag, const void* buf, std::size_t bytes, std::uint64_t cookie, bool lend) {
  Queues& q = queues_[tag];
  q.sends.push_back({buf, bytes, cookie, lend});
  ++pending_;
  match(tag, q);
}

void LocalChannel::recv(Tag tag, void* buf, std::size_t capacity, std::uint64_t cookie) {
  Queues& q = queues_[tag];
  q.recvs.push_back({buf, capacity, cookie});
  ++pending_;
  match(tag, q);
}

void LocalChannel::match(Tag tag, Queues& q) {
  while (!q.sends.empty() && !q.recvs.empty()) {
    Message m = q.sends.front();
    Receive r = q.recvs.front();
    q.sends.pop_front();
    q.recvs.pop_front();
    if (m.bytes > r.capacity)
      throw TransportError("local: a message of " + std::to_string(m.bytes) + " bytes for a receive of " +
                           std::to_string(r.capacity) + " on rank " + std::to_string(rank_));
    Completion s{Completion::Kind::send, m.cookie, rank_, tag, m.bytes};
    Completion c{Completion::Kind::recv, r.cookie, rank_, tag, m.bytes};
    if (m.lend) {
      s.lent = true;
      c.data = static_cast<const unsigned char*>(m.buf);
      c.loan = m.cookie;
    } else if (m.bytes) {
      std::memcpy(r.buf, m.buf, m.bytes);
    }
    ready_.push_back(s);
    ready_.push_back(c);
  }
}

void LocalChannel::take(std::vector<Completion>& out) {
  out.insert(out.end(), ready_.begin(), ready_.end());
  pending_ -= ready_.size();
  ready_.clear();
}

void LocalChannel::cancel_receives() {
  for (auto& [tag, q] : queues_) {
    pending_ -= q.recvs.size();
    q.recvs.clear();
  }
}

}  // namespace daqnet::evb
