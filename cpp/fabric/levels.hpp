// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <vector>

namespace daqnet::fabric {

/// Levels of a fabric's nodes from its cabling alone: hosts 0, and a switch its distance to
/// the nearest host (leaves 1, spines 2, ...), kNoLevel (-1) where no host reaches. `neighbours[n]`
/// lists the nodes cabled to node n; `host[n]` marks the hosts.
///
/// A switch with hosts of its own that is cabled to two or more leaves, as a spine sibling
/// without hosts is (the same leaves), is a spine that also holds a host (a management or
/// storage node): it is placed at its siblings' level, not among the leaves, which would
/// leave every leaf without that up-link. A host on a switch with no such sibling (a core
/// switch of a three-level tree, a direct network's router) keeps the distance rule.
std::vector<int32_t> cabling_levels(const std::vector<std::vector<int32_t>>& neighbours,
                                    const std::vector<uint8_t>& host);

}  // namespace daqnet::fabric
