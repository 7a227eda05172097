// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <cstdint>
#include <vector>

namespace daqnet::fabric {

/// Levels of a fabric's nodes from its cabling alone: hosts 0, and a switch its distance to
/// the nearest host (leaves 1, spines 2, ...), kNoLevel (-1) where no host reaches. `neighbours[n]`
/// lists the nodes cabled to node n; `host[n]` marks the hosts.
///
/// A switch with hosts of its own that is cabled to the same two or more switches of one
/// level as a sibling without hosts is (a spine's leaves, a core's spines) is placed at its
/// siblings' level, not among the leaves: a management or storage node on a spine or core
/// switch would otherwise make it a leaf and take that up-link from every switch below it.
/// Above the spines the siblings without hosts must be as many as those with (leaves beside
/// empty leaves share their spines too), and the switch must reach that level through the
/// switches below it. A switch with no such sibling (a direct network's router) keeps the
/// distance rule.
std::vector<int32_t> cabling_levels(const std::vector<std::vector<int32_t>>& neighbours,
                                    const std::vector<uint8_t>& host);

}  // namespace daqnet::fabric
