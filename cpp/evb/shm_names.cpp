// daqnet — plan, simulate and benchmark event-building networks.
#include "evb/shm_names.hpp"

#include <unistd.h>

#include <array>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

namespace daqnet::evb {

namespace {

// The segment names the MPI libraries daqnet-evb is built with create in /dev/shm.
constexpr std::array<std::string_view, 3> kPrefixes = {"mpich_", "vader_segment.", "sm_segment."};

bool mpi_segment(const std::string& path) {
  constexpr std::string_view kDir = "/dev/shm/";
  if (path.compare(0, kDir.size(), kDir) != 0) return false;
  const std::string_view name = std::string_view(path).substr(kDir.size());
  if (name.find('/') != std::string_view::npos) return false;
  for (std::string_view p : kPrefixes)
    if (name.substr(0, p.size()) == p) return true;
  return false;
}

}  // namespace

void unlink_mpi_shm_segments() {
  // /proc/self/maps: address perms offset dev inode [path]; a path may hold spaces, and a
  // removed one ends in " (deleted)" (not ours to remove any more).
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> paths;
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string field;
    for (int i = 0; i < 5 && in >> field; ++i) {
    }
    std::string path;
    std::getline(in >> std::ws, path);
    if (mpi_segment(path)) paths.insert(path);
  }
  for (const std::string& p : paths) ::unlink(p.c_str());
}

}  // namespace daqnet::evb
