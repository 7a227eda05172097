// daqnet — plan, simulate and benchmark event-building networks.
//
// The topology format of InfiniBand's ibnetdiscover (infiniband-diags), which ibsim also
// reads as its "net" file: one record per node (a header line, then one line per cabled
// port), records separated by blank lines.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "fabric/fabric.hpp"

namespace daqnet::fabric {

struct IbnetOptions {
  /// Rate of a cable whose lines give no width × speed (hand-written ibsim net files).
  double default_gbps = 100.0;
  double latency_seconds = 100e-9;
};

/// Read ibnetdiscover output (default or --full form) or an ibsim net file as a fabric.
///
/// Hosts are the channel adapters (Ca/Hca), named by the first word of their node
/// description ("node017 HCA-1" → node017), switches by their whole description (blanks
/// turned into '_'); SHARP aggregation nodes (is_aggregation_node) are left out with their
/// cables, and counted in the fabric's description. A node without a description, or whose
/// name another node of its kind also has, is named by its ibnetdiscover id (H-<guid>,
/// S-<guid>). GUIDs and LIDs are kept on the nodes so that forwarding tables can name them.
/// Levels are inferred (distance from the hosts); switches are ordered by level then name
/// (natural order), hosts by their leaf switch then port: the fabric's topology order.
///
/// Errors name the file, the line and the field; a node GUID or port GUID given twice, or
/// a LID beyond the unicast range (0x0001-0xBFFF), is one.
std::shared_ptr<Fabric> read_ibnetdiscover(const std::string& path, const IbnetOptions& options = {});

/// daqnet's name for an InfiniBand node description: a host's first word, a switch's
/// whole description with blanks as '_' ("" for an empty description).
std::string ib_node_name(std::string_view description, bool is_switch);

/// Whether a CA is a SHARP Aggregation Node: the in-network reduction engine of a Mellanox /
/// NVIDIA Quantum switch, which ibnetdiscover lists as a CA "Mellanox Technologies
/// Aggregation Node" (device id 0xcf09) on an extra switch port. It is not a compute host.
bool is_aggregation_node(std::string_view description);
/// Whether a vendor and device id are a SHARP Aggregation Node's (for a node whose description
/// a node-name map has changed).
bool is_aggregation_device(uint64_t vendor_id, uint64_t device_id);

/// Write `fabric` as an ibsim net file (ibnetdiscover's format without GUIDs or LIDs): node
/// ids are daqnet's names, every port line carries the link's width × speed.
void write_ibsim_net(const Fabric& fabric, const std::string& path);

/// The data rate in Gb/s of an InfiniBand width × speed as ibnetdiscover prints it ("4xEDR"
/// → 100, "4xHDR" → 200, "4xSDR" → 10, "12xQDR" → 120), nullopt if not one.
std::optional<double> ib_link_gbps(std::string_view width_speed);

/// The width × speed naming `gbps` (4x preferred), nullopt if no InfiniBand link has it.
std::optional<std::string> ib_width_speed(double gbps);

}  // namespace daqnet::fabric
