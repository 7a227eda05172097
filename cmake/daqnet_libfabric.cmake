# Finds libfabric for daqnet-evb's optional libfabric transport and defines the target
# daqnet_libfabric and DAQNET_HAVE_LIBFABRIC (0 or 1).
#
# DAQNET_LIBFABRIC=auto (default) builds the transport when pkg-config finds libfabric
# (Debian: libfabric-dev), ON requires it, OFF leaves it out.
#
# The mpich wheel brings its own, newer libfabric, and its libmpi needs that one's symbol
# versions, while a process can load only one libfabric.so.1. So with the wheel, daqnet-evb
# finds the wheel's copy first (RPATH) and MPI and the transport share it. It is still
# compiled and linked against the system's: libfabric keeps every older symbol version, so a
# binary linked to 1.x runs on 2.x unchanged. Only the linker's check of libmpi's own
# references (versions newer than the system's libfabric knows) is relaxed for that.
set(DAQNET_LIBFABRIC "auto" CACHE STRING "Build daqnet-evb's libfabric transport: auto, ON or OFF")
set(DAQNET_HAVE_LIBFABRIC 0)
if(NOT DAQNET_LIBFABRIC STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(LIBFABRIC QUIET IMPORTED_TARGET libfabric)
  endif()
  if(LIBFABRIC_FOUND)
    set(DAQNET_HAVE_LIBFABRIC 1)
    add_library(daqnet_libfabric INTERFACE)
    target_link_libraries(daqnet_libfabric INTERFACE PkgConfig::LIBFABRIC)
    target_compile_definitions(daqnet_libfabric INTERFACE DAQNET_HAVE_LIBFABRIC=1)
    if(DAQNET_MPI_KIND STREQUAL "wheel" AND EXISTS "${_wheel_prefix}/lib/mpich/libfabric.so.1")
      set(CMAKE_INSTALL_RPATH "\$ORIGIN/../lib/mpich;\$ORIGIN/../lib")
      set(CMAKE_BUILD_RPATH "${_wheel_prefix}/lib/mpich;${_wheel_prefix}/lib")
      target_link_options(daqnet_libfabric INTERFACE "LINKER:--allow-shlib-undefined")
    endif()
    message(STATUS "daqnet-evb: libfabric transport (libfabric ${LIBFABRIC_VERSION})")
  elseif(DAQNET_LIBFABRIC STREQUAL "ON")
    message(FATAL_ERROR "DAQNET_LIBFABRIC=ON but pkg-config found no libfabric (Debian: apt install libfabric-dev)")
  else()
    message(STATUS "daqnet-evb: no libfabric transport (pkg-config found no libfabric; Debian: libfabric-dev)")
  endif()
endif()
if(NOT DAQNET_HAVE_LIBFABRIC)
  add_library(daqnet_libfabric INTERFACE)
endif()
