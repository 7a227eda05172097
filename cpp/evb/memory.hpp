// What the event builder's memory does (the questions MALT and NUMAPROF answered for the
// LHCb nodes): how many allocations the steady state makes (target 0), how much the fragment
// and event buffers hold, the peak resident size, huge pages, and on which NUMA node the
// buffers, the CPU and the NIC sit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace daqnet::evb::memory {

// Allocations of this process so far: every operator new (counted by daqnet-evb's
// replacement, alloc_count.cpp) and every buffer slab. Allocations inside the MPI library
// (malloc) are not counted.
std::uint64_t allocations();
void count_allocation();
// With DAQNET_EVB_ALLOC_TRACE=1, the stack of every allocation counted while watching is
// printed on stderr (backtrace_symbols_fd): where the steady state still allocates.
void watch(bool on);

std::uint64_t peak_rss_bytes();   // getrusage
std::uint64_t huge_page_bytes();  // AnonHugePages of /proc/self/smaps_rollup, 0 if unknown

// NUMA nodes: -1 when unknown (no NUMA support, or no device behind the interface).
int node_of(const void* address);  // the node of the page holding `address` (get_mempolicy)
int cpu_node();                    // the node of the CPU this process runs on now (getcpu)
int nodes_online();                // from sysfs; 1 without NUMA
int nic_node(const std::string& interface);
// The interface a TCP transport uses: `interface` if given, else the one holding the IPv4
// `address`, else "" (unknown).
std::string interface_for(const std::string& interface, const std::string& address);
// The sysfs tree read for nodes and NICs: $DAQNET_EVB_SYSFS (a fake topology in tests), else /sys.
std::string sysfs_root();

}  // namespace daqnet::evb::memory
