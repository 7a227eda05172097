// daqnet — plan, simulate and benchmark event-building networks.
#include "routing/detail/fat_tree_routes.hpp"

namespace daqnet::routing {

std::shared_ptr<TableRouting> dmodk(const std::shared_ptr<const Fabric>& fabric, const Progress& progress) {
  const auto* shape = fabric->xgft() ? &*fabric->xgft() : nullptr;
  return detail::fat_tree_routes(
      fabric, "dmodk",
      [shape](NodeId, int32_t level, int32_t, NodeId d, int32_t w) {
        return static_cast<int32_t>((d / shape->parallel(level)) % w);
      },
      progress);
}

}  // namespace daqnet::routing
