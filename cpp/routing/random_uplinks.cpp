// daqnet — plan, simulate and benchmark event-building networks.
#include "common/random.hpp"
#include "routing/detail/fat_tree_routes.hpp"

namespace daqnet::routing {

std::shared_ptr<TableRouting> random_uplinks(const std::shared_ptr<const Fabric>& fabric, uint64_t seed,
                                             const Progress& progress) {
  const uint64_t H = static_cast<uint64_t>(fabric->num_hosts());
  return detail::fat_tree_routes(
      fabric, "random",
      [seed, H](NodeId sw, int32_t, int32_t, NodeId d, int32_t w) {
        // A hash of (seed, switch, destination): independent of evaluation order.
        const uint64_t key = splitmix64(seed ^ splitmix64(static_cast<uint64_t>(sw) * H + static_cast<uint64_t>(d)));
        return static_cast<int32_t>((static_cast<__uint128_t>(key) * static_cast<uint64_t>(w)) >> 64);
      },
      progress);
}

}  // namespace daqnet::routing
