// daqnet — plan, simulate and benchmark event-building networks.
//
// Linear forwarding tables as InfiniBand tools print them: OpenSM's opensm-lfts.dump,
// and infiniband-diags' ibroute / dump_lfts (dump_fts) output. One block per switch:
//
//   Unicast lids [0-6] of switch Lid 1 guid 0x0000000000200000 ('Switch1'):
//   0x0002 001 # Channel Adapter portguid 0x0000000000100001: 'Hca1'
//
// LIDs are resolved to hosts through the fabric (LIDs imported from ibnetdiscover), else
// through OpenSM's opensm-subnet.lst if given, else through the names the lines carry.
#pragma once

#include <memory>
#include <string>

#include "common/progress.hpp"
#include "routing/routing.hpp"

namespace daqnet::routing {

/// Forwarding tables for `fabric` read from an LFT dump; `subnet_path` ("" for none) is an
/// opensm-subnet.lst giving each LID's node. Entries for switch LIDs, SHARP aggregation
/// nodes, and the other LIDs of a port with LMC > 0, are skipped: daqnet routes to each
/// host's base LID (the topology's, else the subnet list's, else the lowest LID the dump
/// names the host at); another LID must lie in the 128 an LMC range can hold above it.
/// Errors (unknown switch or LID, a LID outside 0x0001-0xBFFF, a port beyond the switch or
/// not cabled, a duplicate entry, a route that loops or black-holes) name the file, the
/// line and the field. `progress` follows the bytes read, then the routes walked, and may
/// stop it (daqnet::Interrupted): a 27,648-host fabric's dump runs to 5 GB.
std::shared_ptr<TableRouting> read_lft_dump(const std::shared_ptr<const Fabric>& fabric, const std::string& path,
                                            const std::string& subnet_path = "", const Progress& progress = {});

/// Write the tables as an opensm-lfts.dump (LIDs: the fabric's, or 1.. in node order).
void write_lft_dump(const TableRouting& routing, const std::string& path);

}  // namespace daqnet::routing
