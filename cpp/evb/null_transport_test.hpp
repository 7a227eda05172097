// daqnet — plan, simulate and benchmark event-building networks.
// For the units' tests: a transport that takes every send and completes nothing, so what a
// unit sent stays under way and the test drives the unit by its commands alone.
#pragma once

#include <cstdint>
#include <vector>

#include "evb/transport.hpp"

namespace daqnet::evb {

class NullTransport final : public Transport {
public:
  explicit NullTransport(int size) : size_(size) {}
  const char* name() const override { return "null"; }
  int rank() const override { return 0; }
  int size() const override { return size_; }
  void send(int, Tag, const void*, std::size_t, std::uint64_t) override { ++sends; }
  void recv(int, Tag, void*, std::size_t, std::uint64_t) override {}
  void progress(std::vector<Completion>&, double) override {}
  std::size_t pending() const override { return 0; }
  void cancel_receives() override {}
  int sends = 0;

private:
  int size_;
};

}  // namespace daqnet::evb
