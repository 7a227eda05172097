"""Memory accounting of `daqnet bench` (docs/bench.md "Memory"): buffer bytes by role, peak
RSS, allocations after warm-up (the steady state must make none) and NUMA nodes, with a fake
sysfs topology for the two-node code path on this one-node machine."""

from __future__ import annotations

import json
from pathlib import Path

import libfabric_build
import pytest
from test_bench import bench
from test_integrity_faults import ru0

# Long enough a warm-up for every pool and queue to reach its working size.
STEADY = ("bench.seconds=0.8", "bench.warmup_seconds=0.4")


@pytest.mark.parametrize(
    "transport",
    [
        "mpi",
        "tcp",
        pytest.param(
            "libfabric",
            marks=pytest.mark.skipif(not libfabric_build.built(), reason=libfabric_build.MISSING),
        ),
    ],
)
@pytest.mark.parametrize("protocol", ["push", "pull"])
def test_steady_state_allocates_nothing(tmp_path, protocol, transport):
    p, r = bench(tmp_path, *STEADY, f"bench.protocol={protocol}", f"bench.transport={transport}")
    assert p.returncode == 0, p.stderr
    assert len(r["memory"]) == r["ranks"] == 4
    cfg = r["run_config"]
    frag, meta, credits = cfg["fragment_bytes"], cfg["meta_bytes"], cfg["credits"]
    for m in r["memory"]:
        if transport in ("mpi", "libfabric"):
            # libfabric: operation slots and completion lists are made before the warm-up
            # ends (the provider's own malloc is not counted, as MPI's is not).
            assert m["allocations_after_warmup"] == 0, m
        else:
            # TCP's queues of posted receives and early messages come from pools made at the
            # start; a new high of them after the warm-up may still take a chunk or two
            # (DAQNET_EVB_ALLOC_TRACE=1 shows where). Never one per event.
            assert m["allocations_after_warmup"] <= 4, m
        assert m["allocations"] > 0  # the counter counts: start-up allocates plenty
        # A builder holds credits slots of one fragment and one meta-data block per RU.
        assert m["bu_buffer_bytes"] == credits * 4 * (frag + meta)
        assert m["ru_buffer_bytes"] >= frag + meta  # at least one of each in its pools
        assert m["buffer_bytes"] == m["ru_buffer_bytes"] + m["bu_buffer_bytes"]
        # Buffers are written when made (pages faulted in): the process holds them.
        assert m["peak_rss_bytes"] > m["buffer_bytes"]
        assert 0 <= m["numa_node"] < m["numa_nodes"]
        # The rank first touches its buffers: their pages are on the node it runs on. On a
        # machine of several nodes an unbound rank may have moved since, leaving some behind.
        if m["numa_nodes"] == 1:
            assert m["buffer_numa_nodes"] == "0"
        else:
            assert str(m["numa_node"]) in m["buffer_numa_nodes"].split(","), m
    # memory.csv holds the same rows.
    text = (tmp_path / "out" / "memory.csv").read_text().splitlines()
    assert len(text) == 5 and text[0].startswith("rank,host,peak_rss_bytes")


def test_allocation_counter_sees_an_allocation(tmp_path):
    """The counter is not a constant zero: RU 0's hook allocates once per 10 fragments."""
    p, r = bench(tmp_path, *STEADY, env={"DAQNET_EVB_FAULTS": "fault_allocate_every=10"})
    assert p.returncode == 0, p.stderr
    assert ru0(tmp_path / "out")["fault_allocations"] > 0
    rank_of_ru0 = next(u["rank"] for u in r["units"] if u["unit"] == "ru" and u["index"] == 0)
    for m in r["memory"]:
        if m["rank"] == rank_of_ru0:
            assert m["allocations_after_warmup"] > 0
        else:
            assert m["allocations_after_warmup"] == 0


def _fake_sysfs(root: Path, nic_node: int) -> Path:
    (root / "devices/system/node").mkdir(parents=True)
    (root / "devices/system/node/online").write_text("0-1\n")
    (root / "class/net/lo/device").mkdir(parents=True)
    (root / "class/net/lo/device/numa_node").write_text(f"{nic_node}\n")
    return root


@pytest.mark.parametrize("nic_node", [0, 1])
def test_numa_nodes_of_buffers_and_nic_with_a_fake_topology(tmp_path, nic_node):
    sysfs = _fake_sysfs(tmp_path / "sys", nic_node)
    p, r = bench(
        tmp_path,
        *STEADY,
        "bench.transport=tcp",
        "bench.tcp_address=127.0.0.1",
        env={"DAQNET_EVB_SYSFS": str(sysfs)},
    )
    assert p.returncode == 0, p.stderr
    for m in r["memory"]:
        assert m["numa_nodes"] == 2
        assert m["nic"] == "lo" and m["nic_numa_node"] == nic_node
        # The buffers are really on node 0 (this machine has one): on the NIC's node or not.
        assert m["buffers_on_nic_node"] is (nic_node == 0)
    doc = json.loads((tmp_path / "out" / "result.json").read_text())
    assert doc["memory"] == r["memory"]


def test_summary_reports_memory(tmp_path):
    from daqnet.report.bench import summary
    from test_bench import EXAMPLE, QUICK, daqnet

    args = ["bench", str(EXAMPLE), "--out", str(tmp_path / "out")]
    for s in [*QUICK, *STEADY]:
        args += ["--set", s]
    p = daqnet(*args)
    assert p.returncode == 0, p.stderr
    text = p.stdout
    r = json.loads((tmp_path / "out" / "result.json").read_text())
    assert "0 allocations after warm-up" in text
    assert "peak RSS up to" in text and "the NIC's node is unknown" in text
    fake = [{**m, "nic_numa_node": 1, "buffers_on_nic_node": False} for m in r["memory"]]
    assert "NOT on the NIC's node for rank(s) 0, 1, 2, 3" in summary({**r, "memory": fake})
