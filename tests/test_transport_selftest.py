"""The C++ transport self-test (matching, any-source, unexpected messages, ordering, tags,
large and zero-byte messages, self-sends, cancel) for each transport and wait mode, and for
libfabric with each provider that runs on one host."""

import os
import shutil
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


def test_mpi_selftest_with_every_peer_on_another_node():
    # MPICH then goes through UCX, not shared memory, as for ranks on several nodes or under
    # srun --distribution=arbitrary (Slurm's PMI-2 then says every task has a node of its
    # own). A receive from MPI_ANY_SOURCE posted after its message came never completed
    # there: a rank lost the event manager's first commands and the run its fragments.
    p = subprocess.run(
        [mpiexec(), "-n", "3", str(SELFTEST), "mpi", "yield"],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "MPIR_CVAR_NOLOCAL": "1"},
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ok  unexpected messages received from kAnySource" in p.stdout


@pytest.fixture
def two_namespaces():
    """Two network namespaces joined by a veth pair (10.77.0.1 and .2), removed after."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("network namespaces need root and iproute2 (ip)")
    names = [f"dqlf{os.getpid()}{side}" for side in "ab"]
    commands = [
        *(["netns", "add", n] for n in names),
        ["link", "add", names[0], "type", "veth", "peer", "name", names[1]],
    ]
    for i, n in enumerate(names):
        commands += [
            ["link", "set", n, "netns", n],
            ["-n", n, "addr", "add", f"10.77.0.{i + 1}/24", "dev", n],
            ["-n", n, "link", "set", n, "up"],
            ["-n", n, "link", "set", "lo", "up"],
        ]
    try:
        for command in commands:
            subprocess.run(["ip", *command], check=True, capture_output=True)
        yield names
    finally:
        for n in names:
            subprocess.run(["ip", "netns", "del", n], capture_output=True)


def _received_bytes(namespace: str) -> int:
    """What the namespace's veth end (named as the namespace) has received."""
    counter = f"/sys/class/net/{namespace}/statistics/rx_bytes"  # sysfs as seen inside it
    cmd = ["ip", "netns", "exec", namespace, "cat", counter]
    return int(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


@pytest.mark.skipif(not libfabric_build.built(), reason=libfabric_build.MISSING)
def test_libfabric_ranks_in_two_network_namespaces(two_namespaces):
    # One rank per namespace, as on two hosts: with no domain given libfabric's tcp provider
    # takes each namespace's own interface (not loopback) and the data crosses the veth.
    before = _received_bytes(two_namespaces[1])
    spec = []
    for n in two_namespaces:
        spec += [
            ":",
            "-n",
            "1",
            "ip",
            "netns",
            "exec",
            n,
            str(SELFTEST),
            "libfabric",
            "sleep",
            "--provider=tcp",
        ]
    p = subprocess.run([mpiexec(), *spec[1:]], capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "selftest OK" in p.stdout
    assert f"libfabric (tcp, 10.77.0.0/24, {two_namespaces[0]}, libfabric " in p.stdout
    # The bandwidth phase alone moves ≥ 1 GiB each way (1 MiB messages for about a second).
    assert _received_bytes(two_namespaces[1]) - before > 2**30
