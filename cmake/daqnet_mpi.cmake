# Finds MPI for daqnet-evb and defines the target daqnet_mpi plus DAQNET_MPI_KIND
# ("system" or "wheel") and DAQNET_MPIEXEC (the launcher that matches the library).
#
# DAQNET_MPI=auto (default) uses the system's MPI when CMake finds one (mpicxx on PATH or
# MPI_HOME), as on every cluster, and otherwise the `mpich` wheel from PyPI that pip installs
# into the build environment (and, as a run-time dependency, next to daqnet).
set(DAQNET_MPI "auto" CACHE STRING "MPI to build daqnet-evb against: auto, system or wheel")
set_property(CACHE DAQNET_MPI PROPERTY STRINGS auto system wheel)

set(_wheel_prefix "")
if(Python_EXECUTABLE OR DAQNET_PYTHON_EXECUTABLE)
  if(NOT Python_EXECUTABLE)
    set(Python_EXECUTABLE ${DAQNET_PYTHON_EXECUTABLE})
  endif()
  # Where the mpich wheel put mpi.h, found through its installed-files record: that works in
  # a venv and in pip's isolated build environment alike.
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import importlib.metadata as m, os; d = m.distribution('mpich'); f = [x for x in d.files if str(x).endswith('include/mpi.h')][0]; print(os.path.dirname(os.path.dirname(os.path.normpath(d.locate_file(f)))))"
    OUTPUT_VARIABLE _wheel_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT EXISTS "${_wheel_prefix}/include/mpi.h" OR NOT EXISTS "${_wheel_prefix}/lib/libmpi.so")
    set(_wheel_prefix "")
  endif()
endif()

set(DAQNET_MPI_KIND "")
if(NOT DAQNET_MPI STREQUAL "wheel")
  # Look for a system MPI only: the wheel's wrappers in the build environment do not count.
  if(_wheel_prefix)
    list(APPEND CMAKE_IGNORE_PATH "${_wheel_prefix}/bin" "${_wheel_prefix}/include" "${_wheel_prefix}/lib")
  endif()
  # Nor those of a wheel in the environment daqnet installs into: with that environment
  # activated its mpicxx is on PATH, and pip's isolated build finds its own copy above.
  # Taken for a system MPI, it linked daqnet-evb without the wheel's libfabric and failed
  # ("undefined reference to fi_getinfo@FABRIC_1.9").
  if(Python_EXECUTABLE)
    execute_process(COMMAND "${Python_EXECUTABLE}" -c "import sys; print(sys.prefix)"
                    OUTPUT_VARIABLE _env_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_env_prefix AND EXISTS "${_env_prefix}/include/mpi.h" AND EXISTS "${_env_prefix}/lib/mpich")
      list(APPEND CMAKE_IGNORE_PATH "${_env_prefix}/bin" "${_env_prefix}/include" "${_env_prefix}/lib")
    endif()
  endif()
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(DAQNET_MPI_KIND "system")
    add_library(daqnet_mpi INTERFACE)
    target_link_libraries(daqnet_mpi INTERFACE MPI::MPI_CXX)
    set(DAQNET_MPIEXEC "${MPIEXEC_EXECUTABLE}")
  elseif(DAQNET_MPI STREQUAL "system")
    message(FATAL_ERROR "DAQNET_MPI=system but CMake found no MPI (set MPI_HOME or put mpicxx on PATH)")
  endif()
endif()

if(NOT DAQNET_MPI_KIND)
  if(NOT _wheel_prefix)
    message(FATAL_ERROR
      "daqnet-evb needs MPI: none found on the system and no mpich wheel in ${Python_EXECUTABLE}'s "
      "prefix (pip install mpich, or configure with -DDAQNET_EVB=OFF)")
  endif()
  set(DAQNET_MPI_KIND "wheel")
  add_library(daqnet_mpi INTERFACE)
  target_include_directories(daqnet_mpi INTERFACE "${_wheel_prefix}/include")
  # Link by file name of the ABI-stable soname; at run time the wheel installed next to daqnet
  # is found through the executable's RPATH.
  target_link_libraries(daqnet_mpi INTERFACE "${_wheel_prefix}/lib/libmpi.so")
  set(CMAKE_INSTALL_RPATH "\$ORIGIN/../lib")
  set(CMAKE_BUILD_RPATH "${_wheel_prefix}/lib")
  set(DAQNET_MPIEXEC "")
endif()
message(STATUS "daqnet-evb: MPI from ${DAQNET_MPI_KIND} ${DAQNET_MPIEXEC}")
