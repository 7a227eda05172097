// daqnet — plan, simulate and benchmark event-building networks.
#include "routing/routing.hpp"

#include "common/error.hpp"

namespace daqnet::routing {

Routing::Routing(std::shared_ptr<const Fabric> fabric, std::string engine)
    : fabric_(std::move(fabric)), engine_(std::move(engine)) {
  if (!fabric_) throw Error("routing: no fabric");
  if (fabric_->num_hosts() < 1 || fabric_->num_switches() < 1)
    throw Error("routing: the fabric has no hosts or no switches");
}

void Routing::path(NodeId src, NodeId dst, std::vector<LinkId>& out) const {
  out.clear();
  const int32_t H = fabric_->num_hosts();
  if (src < 0 || src >= H || dst < 0 || dst >= H) throw Error("routing: path endpoints must be hosts");
  if (src == dst) return;
  PathSet set;
  paths(src, dst, 0, set);
  auto p = set.path(0);
  out.assign(p.begin(), p.end());
}

}  // namespace daqnet::routing
