// daqnet-evb: the real event builder. Launched by mpiexec or srun:
//   mpiexec -n 4 daqnet-evb RUN.cfg --out DIR
// RUN.cfg is written by `daqnet bench` from a scenario (see docs/bench.md). Every rank
// writes DIR/rank-N.json (a snapshot, replaced every report period) and appends to
// DIR/rank-N.csv, so a crash or Ctrl-C keeps what was measured; `daqnet bench` gathers them.
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include "evb/baselines.hpp"
#include "evb/buffer_budget.hpp"
#include "evb/config.hpp"
#include "evb/flow_control.hpp"
#include "evb/fragments.hpp"
#include "evb/interrupt.hpp"
#include "evb/layout.hpp"
#include "evb/memory.hpp"
#include "evb/messages.hpp"
#include "evb/mpi_transport.hpp"
#include "evb/node.hpp"
#include "evb/shm_names.hpp"
#include "evb/stats.hpp"
#include "evb/tcp_transport.hpp"
#ifdef DAQNET_HAVE_LIBFABRIC
#include "evb/libfabric_transport.hpp"
#endif
#include "evb/wait_mode.hpp"

using namespace daqnet::evb;

namespace {

std::vector<std::string> gather_hostnames(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) out.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return out;
}

// Why MPI's world differs from the prepared rank count, and how to fix it.
std::string rank_mismatch(int wanted, int rank, int size) {
  std::string msg = "run.cfg was prepared for " + std::to_string(wanted) +
                    " ranks but MPI started this process as rank " + std::to_string(rank) + " of " +
                    std::to_string(size);
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  // srun started as many tasks as MPI's world holds: the interface worked, the count is
  // what differs (it was blamed on the interface).
  if (tasks && std::string(tasks) == std::to_string(size)) {
    msg += std::string(" (srun started ") + tasks + " tasks): start it with srun --ntasks=" + std::to_string(wanted) +
           " (within an allocation of as many), or prepare it for " + std::to_string(size) + " ranks";
  } else if (tasks) {
    msg += std::string(" (srun started ") + tasks + " tasks)";
    const char* type = std::getenv("SLURM_MPI_TYPE");
    msg += ": srun did not give MPI a process manager interface it speaks";
    if (type) msg += std::string(" (SLURM_MPI_TYPE=") + type + ")";
    msg +=
        "; run srun --mpi=pmi2 (or export SLURM_MPI_TYPE=pmi2; srun --mpi=list shows what this Slurm has), "
        "or set bench.launcher = \"mpiexec\"";
  } else {
    msg += ": start it with mpiexec -n " + std::to_string(wanted) +
           " (or srun --mpi=pmi2 --ntasks=" + std::to_string(wanted) + ")";
  }
  return msg;
}

// A rank's own failure, said on stderr and kept in DIR/rank-N.error before MPI_Abort: the
// launcher may end every process before their stderr is forwarded, the file stays.
[[noreturn]] void abort_with(const std::string& out_dir, int rank, const std::string& what, int code) {
  const std::string line = "daqnet-evb rank " + std::to_string(rank) + ": " + what;
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  try {
    write_atomically(out_dir + "/rank-" + std::to_string(rank) + ".error", line + "\n");
  } catch (const std::exception&) {  // the directory may be what failed: stderr has it
  }
  unlink_mpi_shm_segments();  // MPI_Abort ends every rank before MPI_Finalize could
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return
}

// Why this rank's host cannot hold the buffers its units make ("" when it can), by the rule
// daqnet bench also checks (buffer_budget.hpp); over half the host's memory is refused. A
// run.cfg written by hand skipped that check, and Linux's overcommit let the ranks touch
// their buffers into the kernel's OOM killer.
std::string buffers_beyond_memory(const Config& c, const Layout& layout, const std::vector<std::string>& hosts,
                                  int rank) {
  const BufferBudget budget = buffer_budget(c, layout.readout_units(), layout.builder_units());
  const double builder = budget.builder_bytes;
  const double readout = budget.readout_bytes;
  const std::string& here = hosts[static_cast<std::size_t>(rank)];
  double total = 0;
  for (int r : layout.bu_rank)
    if (hosts[static_cast<std::size_t>(r)] == here) total += builder;
  for (int r : layout.ru_rank)
    if (hosts[static_cast<std::size_t>(r)] == here) total += readout;
  const double memory = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (!(memory > 0) || total <= memory / 2) return "";
  char text[256];
  std::snprintf(text, sizeof text,
                "the units on %s would need %.1f GiB of buffers (credits x readout units x largest fragment per "
                "builder, fragments made up front per readout unit), more than half of its %.0f GiB: lower credits, "
                "fragment_bytes or max_in_flight in run.cfg",
                here.c_str(), total / 1073741824.0, memory / 1073741824.0);
  return text;
}

// How long a stopping rank waits for the others to agree on the stop.
constexpr double kStopAgreeSeconds = 10;

// Whether every rank stops (any_stop: the largest `stop`), agreed among all ranks: true
// once they all took part. A rank that stops (stop = 1) waits at most kStopAgreeSeconds
// (every rank got the signal; a dead one never answers); one that finished waits as long
// as the slowest takes to finish its run.
bool agree_within(int stop, int& any_stop) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Iallreduce(&stop, &any_stop, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request);
  const double deadline = MPI_Wtime() + kStopAgreeSeconds;
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker): MPI_Test completed it
    if (done) return true;
    // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker): left pending: the caller ends the process
    if (stop && MPI_Wtime() > deadline) return false;
    usleep(1000);
  }
}

int usage() {
  std::fprintf(stderr, "usage: daqnet-evb RUN.cfg --out DIR   (under mpiexec or srun)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // The queues, sets and lists of the event path are std::pmr containers: from this pool,
  // which keeps the nodes they free, so once warm they allocate nothing per event
  // (memory::allocations; docs/bench.md "Memory").
  static std::pmr::unsynchronized_pool_resource container_pool;
  std::pmr::set_default_resource(&container_pool);
  catch_interrupts();  // before MPI starts, which can take seconds (see interrupt.hpp)
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string cfg_path, out_dir = ".";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc)
      out_dir = argv[++i];
    else if (cfg_path.empty() && a[0] != '-')
      cfg_path = a;
    else {
      if (!rank) usage();
      MPI_Finalize();
      return 2;
    }
  }
  if (cfg_path.empty()) {
    if (!rank) usage();
    MPI_Finalize();
    return 2;
  }
  // Relaunched into the same directory (srun by hand, then daqnet collect): this rank's
  // files of the earlier run go first. A relaunch that failed on a typo left them, and
  // collect took them for this run: "finished", under the new run.cfg's settings. A rank
  // ended by MPI_Abort while writing one leaves its .tmp: that goes too.
  for (const char* ext : {".json", ".csv", ".error", ".exit", ".json.tmp", ".csv.tmp", ".error.tmp"})
    std::remove((out_dir + "/rank-" + std::to_string(rank) + ext).c_str());
  if (rank == 0) std::remove((out_dir + "/launch.json").c_str());

  Config config;
  Layout layout;
  std::vector<std::string> hosts;
  try {
    config = Config::read(cfg_path);
    if (config.ranks > 0 && size != config.ranks) {
      // Typically srun without PMI: every task starts as rank 0 of 1. Say so before
      // any rank writes a file that would look like a (smaller) run.
      // One line per job step, not per task: srun and hydra say which task this is.
      const char* task = std::getenv("SLURM_PROCID");
      for (const char* var : {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"})
        if (!task) task = std::getenv(var);
      if (!task || std::string(task) == "0")
        std::fprintf(stderr, "daqnet-evb: %s\n", rank_mismatch(config.ranks, rank, size).c_str());
      MPI_Finalize();
      return 3;
    }
    hosts = gather_hostnames(MPI_COMM_WORLD);
    layout = make_layout(config, rank, hosts);
    parse_wait_mode(config.progress);
  } catch (const std::exception& e) {
    if (!rank) std::fprintf(stderr, "daqnet-evb: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  {
    const std::string beyond = buffers_beyond_memory(config, layout, hosts, rank);
    int over = beyond.empty() ? 0 : 1, any = 0;
    MPI_Allreduce(&over, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
      // Said once per host: by its first rank.
      const auto first = std::find(hosts.begin(), hosts.end(), hosts[static_cast<std::size_t>(rank)]);
      if (over && first - hosts.begin() == rank) std::fprintf(stderr, "daqnet-evb: %s\n", beyond.c_str());
      MPI_Finalize();
      return 2;
    }
  }
  mkdir(out_dir.c_str(), 0777);
  // Recovery: MPICH's hydra 5 (-disable-auto-cleanup) keeps the survivors of a rank's death
  // running but exits as soon as one of them writes to its forwarded stdout or stderr after
  // the death, orphaning them. So their stderr goes to DIR/rank-N.log (daqnet bench copies it
  // into launcher.log), and a closed pipe cannot end them either.
  if (config.recover && config.transport == "tcp") {
    std::signal(SIGPIPE, SIG_IGN);
    const std::string log = out_dir + "/rank-" + std::to_string(rank) + ".log";
    if (std::FILE* f = std::fopen(log.c_str(), "w")) {
      std::fflush(stderr);
      dup2(fileno(f), 2);
      std::fclose(f);
    }
  }

  std::unique_ptr<Transport> transport;
  std::string fabric_endpoint;  // libfabric: provider, fabric, domain
  try {
    WaitMode wait = parse_wait_mode(config.progress);
    if (config.transport == "tcp") {
      TcpOptions tcp{config.tcp_address, config.tcp_interface, config.tcp_socket_buffer_bytes, config.tcp_token};
      tcp.recover = config.recover;
      tcp.heartbeat_seconds = config.heartbeat_seconds;
      tcp.control_lane = config.tcp_control_connection;
      tcp.bulk_tag_from = meta_tag(0);  // fragments and their meta-data; commands take the control lane
      tcp.control_dscp = config.tcp_control_dscp;
      // The longest message of this run: a fragment, its meta-data, a command or the
      // baseline's message. A peer's length field is held to it.
      const auto baseline_bytes = static_cast<std::size_t>(config.fragment_bytes + 7) / 8 * 8;
      tcp.max_message_bytes = std::max(
          {FragmentSizes(config, layout.readout_units()).max_bytes(), static_cast<std::size_t>(config.meta_bytes),
           static_cast<std::size_t>(config.command_bytes), baseline_bytes, std::size_t{4096}});
      // Unexpected data a builder may legitimately hold from one peer: every slot of that
      // peer's readout units (credits x units per process), and never less than 64 MiB.
      tcp.max_unexpected_bytes = std::max(
          std::size_t{64} << 20, 2 * tcp.max_message_bytes * static_cast<std::size_t>(std::max(1, config.credits)) *
                                     static_cast<std::size_t>(std::max(1, config.processes_per_node)));
      transport = std::make_unique<TcpTransport>(MPI_COMM_WORLD, wait, tcp);
    } else if (config.transport == "libfabric") {
#ifdef DAQNET_HAVE_LIBFABRIC
      auto fabric = std::make_unique<LibfabricTransport>(
          MPI_COMM_WORLD, wait, LibfabricOptions{config.libfabric_provider, config.libfabric_domain});
      fabric_endpoint = fabric->endpoint_description();
      transport = std::move(fabric);
#else
      throw TransportError(
          "transport = libfabric, but this daqnet-evb was built without libfabric (install libfabric-dev, then "
          "reinstall daqnet)");
#endif
    } else {
      transport = std::make_unique<MpiTransport>(MPI_COMM_WORLD, wait);
    }
  } catch (const std::exception& e) {
    abort_with(out_dir, rank, e.what(), 1);
  }
  if (!rank) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string first(version, strcspn(version, "\n"));
    write_atomically(out_dir + "/launch.json", JsonObject()
                                                   .add("ranks", size)
                                                   .add("em_rank", layout.em_rank)
                                                   .add("mpi_library", first)
                                                   .add("transport", transport->name())
                                                   .add("fabric_endpoint", fabric_endpoint)
                                                   .add("srun", std::getenv("SLURM_STEP_NUM_TASKS") != nullptr)
                                                   .str());
  }

  int status = 0;
  // An interrupted run leaves receives posted into the units' buffers, and MPI goes on
  // moving data into them until MPI_Finalize: the buffers (the node) must outlive it. Freed
  // before the barrier below, they were written to after free (a rank died of heap
  // corruption on about one Ctrl-C in twelve). Withdrawing the receives instead makes MPICH
  // abort on the messages left unmatched when the communicator is freed.
  std::unique_ptr<Node> node;
  try {
    node = std::make_unique<Node>(config, layout, *transport, out_dir, hosts[rank]);
    if (config.transport == "tcp") node->set_nic(memory::interface_for(config.tcp_interface, config.tcp_address));
    // Every rank's buffers are made, which takes long for large fragments and longer on some
    // ranks (rank 0 holds the EM, an RU and a BU): the common start of every rank's clock
    // (Node::run) comes after, so that the builders' times, which the EM counts its window by,
    // and the periods of the time series agree across ranks. A rank that failed to make its
    // buffers ends them all with MPI_Abort below instead of reaching the barrier.
    MPI_Barrier(MPI_COMM_WORLD);
    // One epoch for every rank's clock: rank 0's wall-clock time now. Ranks sharing cores
    // leave the barrier milliseconds apart, and under bench.rate_hz an RU makes event n at
    // n / rate on its clock while a BU times it from n / rate on its own: each rank's own
    // start read the skew as latency (5.75 ms on one builder, 12 us on the other). On one
    // machine the epoch is exact; across nodes it is as good as their clocks' sync (NTP, PTP).
    double epoch = 0;
    if (rank == 0) epoch = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    MPI_Bcast(&epoch, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const auto wall = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    // A host's clock far off rank 0's (no NTP, a VM resumed) would move its windows and its
    // events' data by as much: beyond what leaving the barrier takes, the rank keeps its own
    // start and says so.
    constexpr double kMaxSkew = 0.5;
    if (std::abs(wall - epoch) <= kMaxSkew) {
      node->set_epoch(std::chrono::steady_clock::now() -
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(std::max(0.0, wall - epoch))));
    } else {
      std::fprintf(stderr,
                   "daqnet-evb rank %d: this host's clock is %.3f s off rank 0's: its times count from its own start "
                   "(synchronise the nodes' clocks: NTP or PTP)\n",
                   rank, wall - epoch);
    }
    // Recovery: from here a silent peer is dead, even one that died before it was heard of.
    if (config.recover) transport->start_timing();
    status = node->run();
  } catch (const std::exception& e) {  // e.g. buffers that do not fit in memory
    std::fprintf(stderr, "daqnet-evb rank %d: %s\n", rank, e.what());
    status = 1;
  }
  if (status != 130) node.reset();  // a finished run withdrew its receives: memory back now
  // Recovery: peers died. MPI cannot be used any more (a barrier would wait for the dead, and
  // MPI_Abort would end the survivors): every survivor leaves on its own, results written.
  if (config.recover && transport->lost_peers() > 0) {
    if (status != 0 && status != 130)
      std::fprintf(stderr, "daqnet-evb rank %d: run failed (see %s/rank-%d.json)\n", rank, out_dir.c_str(), rank);
    std::fflush(stdout);
    std::fflush(stderr);
    unlink_mpi_shm_segments();  // MPI_Finalize would have
    std::_Exit(status);
  }
  if (status != 0 && status != 130) {
    std::fprintf(stderr, "daqnet-evb rank %d: run failed (see %s/rank-%d.json)\n", rank, out_dir.c_str(), rank);
    std::fflush(stderr);
    // Peers may be waiting for this rank: end them all now rather than let them time out.
    unlink_mpi_shm_segments();
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  // Interrupted (Ctrl-C reaches every rank): no MPI_Abort, which would kill the others before
  // they write their own last results; everyone meets here and leaves with 130. All alike: a
  // signal as the run ended found some ranks finished and others not, and the finished ones
  // went on to the baseline's collectives, waiting for ranks that had left.
  int stop = status == 130 || interrupted() ? 1 : 0;
  int any_stop = 0;
  if (!agree_within(stop, any_stop)) {
    // Stopped with a peer that never comes (srun ends a step with SIGTERM when a task dies,
    // where hydra kills them all): this rank's last results are written; it leaves alone
    // instead of waiting for the SIGKILL 30 s on.
    std::fprintf(stderr,
                 "daqnet-evb rank %d: stopped, and not every rank came to the end within %.0f s (one died?): "
                 "leaving without them\n",
                 rank, kStopAgreeSeconds);
    std::fflush(stderr);
    unlink_mpi_shm_segments();  // MPI_Finalize would have
    std::_Exit(130);
  }
  if (any_stop) {
    transport.reset();
    MPI_Finalize();
    node.reset();  // only now: see above
    return 130;
  }

  try {
    if (config.baseline != "none") {
      auto bytes = static_cast<std::size_t>(config.fragment_bytes + 7) / 8 * 8;
      BaselineResult r =
          config.baseline == "alltoall"
              ? alltoall_baseline(MPI_COMM_WORLD, bytes, config.baseline_seconds, config.baseline_cold)
          : config.baseline == "isend"
              ? isend_alltoall_baseline(MPI_COMM_WORLD, bytes, config.baseline_seconds, config.baseline_cold)
              : p2p_baseline(MPI_COMM_WORLD, *transport, layout,
                             config.mode == Mode::event_manager ? config.processes_per_node : 1, bytes,
                             static_cast<int>(p2p_window(config)), config.baseline_seconds);
      if (!rank) write_atomically(out_dir + "/baseline.json", r.json());
    }
  } catch (const std::exception& e) {
    abort_with(out_dir, rank, std::string("baseline failed: ") + e.what(), 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  transport.reset();
  MPI_Finalize();
  return interrupted() ? 130 : 0;
}
