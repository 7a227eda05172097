"""`daqnet bench` over the libfabric transport: whole runs with libfabric's tcp and shm
providers on one host, the provider named in the result, and one clear error for a
provider the host lacks or a daqnet-evb built without libfabric."""

from __future__ import annotations

import libfabric_build
import pytest
from daqnet import _evb_build
from daqnet.bench import check_transport_built
from daqnet.errors import DaqnetError
from daqnet.report.bench import summary
from daqnet.scenario import Scenario
from test_bench import EXAMPLE, bench

pytestmark = pytest.mark.skipif(not libfabric_build.built(), reason=libfabric_build.MISSING)
EVENTS = 300


@pytest.mark.parametrize(
    ("provider", "sets"),
    [
        ("tcp", ("bench.libfabric_domain=lo",)),
        ("tcp", ("bench.libfabric_domain=lo", "bench.protocol=pull")),
        ("tcp;ofi_rxm", ("bench.libfabric_domain=lo", "workload.schedule=random")),
        ("shm", ("bench.processes_per_node=2", "bench.protocol=pull")),
    ],
    ids=["tcp-push", "tcp-pull", "rxm-random", "shm-ppn2-pull"],
)
def test_runs_are_complete_over_each_provider(tmp_path, provider, sets):
    p, r = bench(
        tmp_path,
        "bench.transport=libfabric",
        f"bench.libfabric_provider={provider}",
        "bench.seconds=0",
        f"bench.events={EVENTS}",
        *sets,
    )
    assert p.returncode == 0, p.stderr
    assert r["status"] == "finished" and r["transport"] == "libfabric"
    # The window closes as the EM reads the EVENTS-th DONE; a few built before it may follow.
    assert EVENTS <= r["events_built"] <= EVENTS + 8
    assert r["lost_fragments"] == r["duplicate_fragments"] == r["corrupt_fragments"] == 0
    # The provider asked for is the one used, and the summary and result say so.
    assert r["fabric_endpoint"].startswith(f"{provider}, ")
    if "bench.libfabric_domain=lo" in sets:
        assert ", lo, libfabric " in r["fabric_endpoint"]
    assert f"transport libfabric ({r['fabric_endpoint']})" in summary(r)


def test_p2p_baseline_runs_over_libfabric(tmp_path):
    p, r = bench(
        tmp_path,
        "bench.transport=libfabric",
        "bench.libfabric_domain=lo",
        "bench.baseline_seconds=0.3",
        extra=("--baseline", "p2p"),
    )
    assert p.returncode == 0, p.stderr
    b = r["baseline"]
    assert b["name"] == "p2p" and b["pairs"] == 2 and b["throughput_gbps"] > 0
    # Per receiving node: 4 builders, 2 p2p receivers.
    assert b["ratio"] == pytest.approx(r["throughput_gbps"] / b["throughput_gbps"] / 2)


def test_a_provider_the_host_lacks_is_one_clear_error(tmp_path):
    p, r = bench(tmp_path, "bench.transport=libfabric", "bench.libfabric_provider=nosuch")
    assert p.returncode == 2 and not r  # no rank started its run
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "libfabric: no provider 'nosuch' offers reliable tagged messages" in lines[0]
    assert "fi_info" in lines[0]  # says how to list what the host has


def test_a_build_without_libfabric_is_refused_before_launch(monkeypatch):
    scenario = Scenario.load(EXAMPLE, ["bench.transport=libfabric"])
    check_transport_built(scenario)  # this build has it
    monkeypatch.setattr(_evb_build, "LIBFABRIC", False)
    with pytest.raises(DaqnetError, match=r"bench.transport = 'libfabric'.*libfabric-dev"):
        check_transport_built(scenario)
    check_transport_built(Scenario.load(EXAMPLE, ["bench.transport=tcp"]))  # others are not
