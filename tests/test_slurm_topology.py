"""Slurm's topology.conf as a fabric, and hostlist expressions as Slurm reads them."""

from __future__ import annotations

import os
import shutil
import subprocess

import daqnet
import pytest
from daqnet import placement, routing
from daqnet.errors import USER_ERRORS
from daqnet.io.hostlist import collect, expand
from daqnet.io.slurm_topology import read_slurm_topology, write_slurm_topology

CONF = """# two leaves, one spine
SwitchName=leaf01 Nodes=node[001-004]
SwitchName=leaf02 Nodes=node[005-007] LinkSpeed=100
SwitchName=spine1 Switches=leaf[01-02]
"""


def test_topology_conf_is_a_fabric(tmp_path):
    conf = tmp_path / "topology.conf"
    conf.write_text(CONF)
    f = read_slurm_topology(conf, link_gbps=200)
    assert f.host_names == [f"node{i:03d}" for i in range(1, 8)]
    assert f.node_names[7:] == ["leaf01", "leaf02", "spine1"]
    assert list(f.nodes()["level"][7:]) == [1, 1, 2]
    assert set(f.links()["gbps"]) == {200.0}
    assert f.hosts_per_switch() == {"leaf01": 4, "leaf02": 3}
    r = routing.minhop(f)
    assert len(r.path("node001", "node007")) == 4


def test_topology_conf_round_trip(tmp_path):
    built = daqnet.fat_tree(radix=8, hosts=27)
    write_slurm_topology(built, tmp_path / "topology.conf")
    text = (tmp_path / "topology.conf").read_text()
    assert "SwitchName=leaf0 Nodes=node[00-03]" in text
    assert "SwitchName=spine0 Switches=leaf[0-6]" in text
    back = read_slurm_topology(tmp_path / "topology.conf")
    assert back.host_names == built.host_names
    adjacency = lambda f: sorted(  # noqa: E731
        tuple(sorted((f.name(a), f.name(b))))
        for a, b in zip(f.links()["src"], f.links()["dst"], strict=False)
    )
    assert adjacency(back) == adjacency(built)


def test_topology_conf_continued_lines(tmp_path):
    # Lines ending in a backslash go on on the next, as Slurm's parser reads them (a long
    # Nodes= list, a switch's keys on lines of their own); numbered by their first line.
    conf = tmp_path / "topology.conf"
    conf.write_text(
        "SwitchName=leaf01 Nodes=node[001-002],\\\nnode[003-004]  # four\n"
        "SwitchName=leaf02 Nodes=node[005-007]\n"
        "SwitchName=spine1 \\\n  Switches=leaf[01-02]\n"
        "SwitchName=spine1 Switches=leaf01\n"
    )
    with pytest.raises(
        USER_ERRORS, match=r"topology.conf:6: SwitchName: 'spine1' already defined on line 4"
    ):
        read_slurm_topology(conf)
    conf.write_text(conf.read_text().rsplit("SwitchName=spine1 Switches", 1)[0])
    f = read_slurm_topology(conf)
    assert f.hosts_per_switch() == {"leaf01": 4, "leaf02": 3}
    assert list(f.nodes()["level"][7:]) == [1, 1, 2]


def test_topology_conf_keeps_port_order_and_refuses_what_it_cannot_hold(tmp_path):
    # Hosts were written sorted and read back in file order: shuffled names came back on
    # other ports, and port-based routing gave other conflicts (622 for 564 on the
    # slurm-hostname-64 example). Cables between switches of one level were dropped.
    built = daqnet.fat_tree(radix=8, hosts=27, naming="shuffled")
    conf = tmp_path / "topology.conf"
    write_slurm_topology(built, conf)
    back = read_slurm_topology(conf)

    def by_port(f):
        return {
            f.name(sw): [f.name(p) for _, p, _, _ in f.ports(sw) if 0 <= p < f.num_hosts]
            for sw in range(f.num_hosts, f.num_hosts + f.num_switches)
        }

    assert by_port(back) == by_port(built)
    # Sent to ibsim once, which refuses PERCS's 1536 Gb/s host links: graphviz or simgrid.
    with pytest.raises(
        USER_ERRORS, match="joins switches of one level.*graphviz or simgrid keeps any graph"
    ):
        write_slurm_topology(daqnet.fabric.percs(supernodes=2), tmp_path / "percs.conf")
    assert not (tmp_path / "percs.conf").exists()


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (
            "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s1 Nodes=n3\n",
            ":2: SwitchName",
            "already defined on line 1",
        ),
        (
            "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n2\n",
            ":2: Nodes",
            "already below switch 's1'",
        ),
        ("SwitchName=s1 Nodes=n[1-2\n", ":1: Nodes", "not a hostlist expression"),
        (
            "SwitchName=s1 Nodes=n1\nSwitchName=s2 Switches=s[1,3]\n",
            ":2: Switches",
            "'s3' has no SwitchName line",
        ),
        ("Nodes=n1\n", ":1: SwitchName", "missing"),
        ("SwitchName=s1 Bogus=1\n", ":1: Bogus", "expected SwitchName="),
        # A trailing backslash joins the next line, as in Slurm: here into a second SwitchName
        # (hosts named 'n1\\' ... were made before).
        ("SwitchName=s1 Nodes=n[1-4]\\\nSwitchName=s2 Nodes=n5\n", ":1: Nodes", "given twice"),
        ("SwitchName=s1 Nodes=n1 Nodes=n2\n", ":1: Nodes", "given twice on one line"),
        # A cycle was read as two parallel cables (s0 and s2 each listing the other): more
        # up-link bandwidth than either line meant, 26 conflicts where the tree has 36.
        (
            "SwitchName=s0 Nodes=n[0-3] Switches=s2\nSwitchName=s1 Nodes=n[4-7]\n"
            "SwitchName=s2 Switches=s[0-1]\n",
            ":3: Switches",
            "'s0' is already above 's2' (a cycle: s0 → s2 → s0)",
        ),
        (
            "SwitchName=a Nodes=n1 Switches=b\nSwitchName=b Switches=c\nSwitchName=c Switches=a\n",
            ":3: Switches",
            "(a cycle: a → b → c → a)",
        ),
        (
            "SwitchName=a Nodes=n1\nSwitchName=b Switches=a,a\n",
            ":2: Switches",
            "switch 'a' is listed twice",
        ),
    ],
)
def test_topology_conf_errors(tmp_path, text, where, what):
    conf = tmp_path / "topology.conf"
    conf.write_text(text)
    with pytest.raises(USER_ERRORS) as err:
        read_slurm_topology(conf)
    assert f"{conf}{where}" in str(err.value) and what in str(err.value)


def test_hostlist_expressions():
    assert expand("node[001-003,070],gpu[1-2]", "x") == [
        "node001",
        "node002",
        "node003",
        "node070",
        "gpu1",
        "gpu2",
    ]
    assert collect(["node003", "node001", "node002"]) == "node[001-003]"
    with pytest.raises(USER_ERRORS, match="listed twice"):
        expand("n[1-3],n2", "placement.hosts")
    with pytest.raises(USER_ERRORS, match=r"placement.hosts = 'n\[1-': not a hostlist"):
        expand("n[1-", "placement.hosts")
    # Found by the atheris fuzzer: python-hostlist recursed without end (RecursionError) on
    # a line break inside brackets; blanks and control characters are refused first.
    with pytest.raises(USER_ERRORS, match=r"not a hostlist expression \('\\n' at position 14\)"):
        expand("node[00]x[1-7,\n0]", "--pool")
    with pytest.raises(USER_ERRORS, match=r"\(' ' at position 7\)"):
        expand("n[1-2], n5", "placement.hosts")


EXPRESSIONS = [
    "node[001-064,070]",
    "gpu[1-2]a[3-4]",
    "n[9-11],m[08-10]",
    "rack[1-2]-node[01-03]",
    "x1,y2,z[3-5]",
]


@pytest.mark.skipif(
    shutil.which("scontrol") is None,
    reason="Slurm's scontrol is not installed (apt-get install slurm-client)",
)
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_hostlist_matches_scontrol(tmp_path, expression):
    conf = tmp_path / "slurm.conf"  # scontrol show hostnames needs a configuration, no daemon
    conf.write_text(
        "ClusterName=t\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1\nPartitionName=p Nodes=localhost\n"
    )
    out = subprocess.run(
        ["scontrol", "show", "hostnames", expression],
        env=dict(os.environ, SLURM_CONF=str(conf)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert expand(expression, "x") == out


def test_placement_from_a_hostlist():
    f = daqnet.fat_tree(radix=8, hosts=32, naming="shuffled", naming_seed=1)
    p = placement.build(f, "file", hosts="node[03,01,10-12]")
    assert p.host_names() == ["node03", "node01", "node10", "node11", "node12"]
    h = placement.build(f, "hostname", hosts="node[03,01,10-12]")
    assert h.host_names() == ["node01", "node03", "node10", "node11", "node12"]
    t = placement.build(f, "topology", hosts="node[03,01,10-12]")
    assert sorted(t.hosts) == list(t.hosts) and set(t.host_names()) == set(h.host_names())
    with pytest.raises(USER_ERRORS, match="no host named 'node99'"):
        placement.build(f, "file", hosts="node[01,99]")
    with pytest.raises(USER_ERRORS, match="choose one"):
        placement.build(f, "file", file="x", hosts="node[01-02]")


def test_subnet_manager_tables_over_a_topology_conf_are_refused(tmp_path):
    # topology.conf has no port numbers: an LFT dump over it failed on ports that do not
    # exist or on misdelivery, blaming the user's (right) tables, or held by luck.
    (tmp_path / "topology.conf").write_text(CONF)
    (tmp_path / "s.toml").write_text(
        '[fabric]\nkind = "slurm-topology"\nfile = "topology.conf"\n'
        '[routing]\nengine = "lft-dump"\nfile = "dump_lfts.out"\n'
    )
    with pytest.raises(daqnet.DaqnetError, match="topology.conf .* has none: import"):
        daqnet.Scenario.load(tmp_path / "s.toml")
