// daqnet — plan, simulate and benchmark event-building networks.
// libFuzzer harness of the routing table reader (routing.engine = "table",
// docs/routing-table.md) on a 27-host fat tree of 8-port switches: any text either gives
// tables whose every route the reader has walked, or one daqnet::Error of one line naming
// the file.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/error.hpp"
#include "common/fuzz_input.hpp"
#include "fabric/fat_tree.hpp"
#include "routing/routing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto fabric = [] {
    daqnet::fabric::FatTreeSpec spec;
    spec.radix = 8;
    spec.hosts = 27;
    return std::make_shared<const daqnet::fabric::Fabric>(daqnet::fabric::build_fat_tree(spec));
  }();
  const std::string path = daqnet::fuzz::write_input(data, size, "tables.txt");
  try {
    daqnet::routing::read_table_file(fabric, path);
  } catch (const daqnet::Error& e) {
    daqnet::fuzz::check_message(e.what(), "tables.txt");
  }
  return 0;
}
