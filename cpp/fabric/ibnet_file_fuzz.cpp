// daqnet — plan, simulate and benchmark event-building networks.
// libFuzzer harness of the ibnetdiscover reader (fabric.kind = "ibnetdiscover"): any text
// either gives a fabric or one daqnet::Error of one line naming the file.
#include <cstddef>
#include <cstdint>

#include "common/error.hpp"
#include "common/fuzz_input.hpp"
#include "fabric/ibnet_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = daqnet::fuzz::write_input(data, size, "ibnet.out");
  try {
    daqnet::fabric::read_ibnetdiscover(path);
  } catch (const daqnet::Error& e) {
    daqnet::fuzz::check_message(e.what(), "ibnet.out");
  }
  return 0;
}
