#include "evb/memory.hpp"

#include <arpa/inet.h>
#include <execinfo.h>
#include <ifaddrs.h>
#include <linux/mempolicy.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace daqnet::evb::memory {
namespace {
std::atomic<std::uint64_t> g_allocations{0};
std::atomic<bool> g_watching{false};
thread_local bool t_tracing = false;  // backtrace() may allocate: no recursion

// A sysfs value such as "0" or "-1"; -1 when the file is missing or unreadable.
int read_int(const std::string& path) {
  std::ifstream in(path);
  int v = -1;
  if (!(in >> v)) return -1;
  return v;
}
}  // namespace

std::uint64_t allocations() { return g_allocations.load(std::memory_order_relaxed); }
void count_allocation() {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (!g_watching.load(std::memory_order_relaxed) || t_tracing) return;
  t_tracing = true;
  void* frames[24];
  int n = backtrace(frames, 24);
  static const char kLine[] = "daqnet-evb: allocation after the warm-up:\n";
  (void)!write(2, kLine, sizeof kLine - 1);
  backtrace_symbols_fd(frames, n, 2);
  t_tracing = false;
}

void watch(bool on) {
  static const bool enabled = [] {
    const char* v = std::getenv("DAQNET_EVB_ALLOC_TRACE");
    return v && *v && *v != '0';
  }();
  g_watching.store(on && enabled, std::memory_order_relaxed);
}

std::uint64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

std::uint64_t huge_page_bytes() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("AnonHugePages:", 0) != 0) continue;
    std::istringstream fields(line.substr(14));
    std::uint64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

int node_of(const void* address) {
  int node = -1;
  // MPOL_F_NODE | MPOL_F_ADDR: the node of the page at `address` (faulted in already).
  if (syscall(SYS_get_mempolicy, &node, nullptr, 0, const_cast<void*>(address), MPOL_F_NODE | MPOL_F_ADDR) != 0)
    return -1;
  return node;
}

int cpu_node() {
  unsigned cpu = 0, node = 0;
  if (getcpu(&cpu, &node) != 0) return -1;
  return static_cast<int>(node);
}

std::string sysfs_root() {
  const char* fake = std::getenv("DAQNET_EVB_SYSFS");
  return fake && *fake ? fake : "/sys";
}

int nodes_online() {
  // "0" or "0-3" (or "0,2-3"): the highest node + 1 is enough for a report.
  std::ifstream in(sysfs_root() + "/devices/system/node/online");
  std::string text;
  if (!std::getline(in, text) || text.empty()) return 1;
  std::size_t cut = text.find_last_of("-,");
  return std::atoi(text.c_str() + (cut == std::string::npos ? 0 : cut + 1)) + 1;
}

int nic_node(const std::string& interface) {
  if (interface.empty() || interface.find('/') != std::string::npos) return -1;
  return read_int(sysfs_root() + "/class/net/" + interface + "/device/numa_node");
}

std::string interface_for(const std::string& interface, const std::string& address) {
  if (!interface.empty() || address.empty()) return interface;
  in_addr want{};
  if (inet_pton(AF_INET, address.c_str(), &want) != 1) return "";
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return "";
  std::string found;
  for (ifaddrs* i = all; i && found.empty(); i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
        reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr == want.s_addr)
      found = i->ifa_name;
  freeifaddrs(all);
  return found;
}

}  // namespace daqnet::evb::memory
