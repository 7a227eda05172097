"""Whether daqnet-evb has its libfabric transport (built when CMake finds libfabric)."""

from daqnet import _evb_build

MISSING = "daqnet-evb was built without libfabric (apt install libfabric-dev pkg-config, then reinstall daqnet)"


def built() -> bool:
    return bool(getattr(_evb_build, "LIBFABRIC", False))
