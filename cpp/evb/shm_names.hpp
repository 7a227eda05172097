// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

namespace daqnet::evb {

/// Remove the names of the shared-memory segments the MPI library mapped into this process
/// (MPICH's /dev/shm/mpich_*, Open MPI's vader_segment.* and sm_segment.*). For a rank that
/// leaves without MPI_Finalize, which would remove them: under bench.recover the survivors
/// of a dead peer cannot finalize, and each such run left a 4 MiB segment in /dev/shm (RAM)
/// for good. The memory stays mapped until the last process using it exits; no one opens a
/// segment by name after MPI_Init, so survivors still running lose nothing. Best effort.
void unlink_mpi_shm_segments();

}  // namespace daqnet::evb
