// daqnet — plan, simulate and benchmark event-building networks.
// libFuzzer harness of the LFT dump reader (routing.engine = "lft-dump": opensm-lfts.dump,
// dump_lfts / ibroute output) on the 27-host fabric of tests/data/ib/ibnetdiscover-27.out,
// whose LIDs the dumps name: any text either gives tables whose every route the reader has
// walked, or one daqnet::Error of one line naming the file.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/error.hpp"
#include "common/fuzz_input.hpp"
#include "fabric/ibnet_file.hpp"
#include "routing/lft_dump.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::shared_ptr<const daqnet::fabric::Fabric> fabric =
      daqnet::fabric::read_ibnetdiscover(DAQNET_SOURCE_DIR "/tests/data/ib/ibnetdiscover-27.out");
  const std::string path = daqnet::fuzz::write_input(data, size, "lfts.dump");
  try {
    daqnet::routing::read_lft_dump(fabric, path);
  } catch (const daqnet::Error& e) {
    daqnet::fuzz::check_message(e.what(), "lfts.dump");
  }
  return 0;
}
