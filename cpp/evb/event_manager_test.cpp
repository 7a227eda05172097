// daqnet — plan, simulate and benchmark event-building networks.
#include "evb/event_manager.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "evb/null_transport_test.hpp"

namespace daqnet::evb {
namespace {

Command done_at(double built_at, std::uint64_t event) {
  Command c{CommandType::done, UnitKind::em, UnitKind::bu, 0, 0, 0, event, 1000, 1000};
  c.built_at = built_at;
  return c;
}

std::string window_events(const EventManager& em) {
  JsonObject o;
  em.report(o);
  const std::string s = o.str();
  const auto at = s.find("\"window_events\":");
  return at == std::string::npos ? "" : s.substr(at, s.find(',', at) - at);
}

// The window counts the events the builders built in it, by their clock, not the DONEs this
// process read in it: with large fragments its loop reads a DONE late (seen: a 2.3 s window
// of 64 MiB fragments counted none of the 7 events built in it).
TEST(EventManager, CountsEventsByWhenTheBuilderBuiltThem) {
  Config c;
  c.mode = Mode::event_manager;
  c.protocol = Protocol::pull;  // FIN goes to the builder only
  c.warmup_seconds = 0.05;
  c.events = 2;  // the window closes at the second event built in it
  c.command_bytes = 64;
  c.seconds = 0;
  Layout l;  // rank 0: the event manager alone; rank 1: a readout and a builder unit
  l.ranks = 2;
  l.order = {0, 1};
  l.ru_rank = {1};
  l.bu_rank = {1};
  NullTransport t(2);
  Node node(c, l, t, ::testing::TempDir(), "host");
  EventManager em(node);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // now() is past the warm-up

  em.on_command(done_at(0.01, 0), 1);  // built in the warm-up, read in the window
  EXPECT_EQ(window_events(em), "\"window_events\":0");
  em.on_command(done_at(0.051, 1), 1);
  em.on_command(done_at(0.052, 2), 1);  // the second: the window closes as this is read
  EXPECT_EQ(window_events(em), "\"window_events\":2");
  EXPECT_EQ(t.sends, 1);                // FIN to the builder
  em.on_command(done_at(0.053, 3), 1);  // built before the close, read after it
  EXPECT_EQ(window_events(em), "\"window_events\":3");
  em.on_command(done_at(1e9, 4), 1);  // built after the close
  EXPECT_EQ(window_events(em), "\"window_events\":3");
}

}  // namespace
}  // namespace daqnet::evb
