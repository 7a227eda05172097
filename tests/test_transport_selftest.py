"""The C++ transport self-test (matching, any-source, unexpected messages, ordering, tags,
large and zero-byte messages, self-sends, cancel) for each transport and wait mode, and for
libfabric with each provider that runs on one host."""

import subprocess
import sysconfig
from pathlib import Path

import libfabric_build
import pytest
from daqnet.bench import mpiexec

SELFTEST = Path(sysconfig.get_path("scripts")) / "daqnet-transport-selftest"


@pytest.mark.parametrize(
    ("transport", "wait", "ranks", "options"),
    [
        ("mpi", "sleep", 3, []),
        ("tcp", "sleep", 3, []),
        ("tcp", "busy", 2, []),
        ("tcp", "yield", 4, []),
        ("mpi", "yield", 4, []),
        # Two connections per peer, tags from 30 on the bulk one: the checks' tags fall on
        # both sides (a large unexpected message on 33 next to small ones on 3, ...).
        ("tcp", "sleep", 3, ["--control-lane=30"]),
        # libfabric: its native RDM tcp provider, tcp under the ofi_rxm utility (the layering
        # verbs uses on InfiniBand), and shared memory; on loopback so no interface matters.
        ("libfabric", "sleep", 3, ["--provider=tcp", "--domain=lo"]),
        ("libfabric", "yield", 4, ["--provider=tcp;ofi_rxm", "--domain=lo"]),
        ("libfabric", "busy", 2, ["--provider=shm"]),
    ],
)
def test_transport_selftest(transport, wait, ranks, options):
    assert SELFTEST.exists(), "daqnet-transport-selftest is installed with daqnet"
    if transport == "libfabric" and not libfabric_build.built():
        pytest.skip(libfabric_build.MISSING)
    p = subprocess.run(
        [mpiexec(), "-n", str(ranks), str(SELFTEST), transport, wait, *options],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "selftest OK" in p.stdout
    if transport == "libfabric":  # the provider asked for is the one used
        provider = options[0].removeprefix("--provider=")
        assert f"transport selftest: libfabric ({provider}, " in p.stdout, p.stdout
