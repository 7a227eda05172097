"""Importers of what InfiniBand tools print: ibnetdiscover topologies and LFT dumps.

The corpus in tests/data/ib is real output: a daqnet fat tree (radix 8, 27 hosts) loaded
into ibsim, routed by OpenSM 3.3.23's ftree engine, then read by infiniband-diags'
ibnetdiscover and dump_lfts (tests/test_opensm.py regenerates such files live).
"""

from __future__ import annotations

import re
from pathlib import Path

import daqnet
import numpy as np
import pytest
from daqnet import _core, fabric, routing
from daqnet.errors import USER_ERRORS

DATA = Path(__file__).parent / "data" / "ib"
TOPO = DATA / "ibnetdiscover-27.out"
DUMP = DATA / "opensm-lfts-27.dump"
SUBNET = DATA / "opensm-subnet-27.lst"
DIAG = DATA / "dump_lfts-27.out"


def cables(f: fabric.Fabric) -> list[tuple[str, int, str, int]]:
    links, names = f.links(), f.node_names
    return sorted(
        (names[a], int(pa), names[b], int(pb))
        for a, pa, b, pb in zip(
            links["src"], links["src_port"], links["dst"], links["dst_port"], strict=False
        )
    )


def same_tables(a: routing.Routing, b: routing.Routing) -> bool:
    """Equal forwarding entries, matched by switch and host names."""
    fa, _fb = a.fabric, b.fabric
    return all(
        a.port(s, h) == b.port(s, h) for s in fa.node_names[fa.num_hosts :] for h in fa.host_names
    )


def test_ibnetdiscover_output_gives_the_cabled_fabric():
    built = daqnet.fat_tree(radix=8, hosts=27)
    f = fabric.from_ibnetdiscover(TOPO)
    assert (f.num_hosts, f.num_switches) == (27, 11)
    assert f.host_names == built.host_names  # topology order: by leaf, then port
    assert f.node_names[27:] == built.node_names[27:]
    assert cables(f) == cables(built)
    assert set(f.links()["gbps"]) == {100.0}  # 4xEDR
    assert list(f.nodes()["level"][27:]) == [1] * 7 + [2] * 4
    lids = f.nodes()["lid"]
    assert (lids > 0).all() and len(set(lids)) == len(lids)
    guid, port_guid, lid = f.address("node00")
    assert (guid, port_guid, lid) == (0x100000, 0x100001, 2)


def test_ib_link_rates():
    rate = _core.fabric.ib_link_gbps
    assert rate("4xEDR") == 100 and rate("4xHDR") == 200 and rate("4xSDR") == 10
    assert rate("12xQDR") == 120 and rate("4xFDR10") == 40 and rate("4xNDR") == 400
    assert rate("4xFDR") == 56 and rate("1xHDR") == 50
    assert rate("3xEDR") is None and rate("4xXYZ") is None and rate("EDR") is None


@pytest.mark.parametrize("dump", [DUMP, DIAG], ids=["opensm-lfts.dump", "dump_lfts"])
def test_lft_dump_resolves_lids_through_the_imported_topology(dump):
    f = fabric.from_ibnetdiscover(TOPO)
    r = routing.from_lft_dump(f, dump)
    # OpenSM ftree on a 2-level tree is daqnet's D-mod-K, entry for entry (test_opensm.py
    # shows it live); the built tree carries the same names.
    assert same_tables(r, routing.dmodk(daqnet.fat_tree(radix=8, hosts=27)))


@pytest.mark.parametrize("subnet", [SUBNET, None], ids=["subnet-list", "names-in-dump"])
def test_lft_dump_onto_a_built_fabric(subnet):
    f = daqnet.fat_tree(radix=8, hosts=27)
    r = routing.from_lft_dump(f, DUMP, subnet)
    np.testing.assert_array_equal(r.table(), routing.dmodk(f).table())


def test_lft_dump_round_trip(tmp_path):
    f = fabric.from_ibnetdiscover(TOPO)
    r = routing.from_lft_dump(f, DUMP)
    _core.routing.write_lft_dump(r._core, str(tmp_path / "out.dump"))
    np.testing.assert_array_equal(
        routing.from_lft_dump(f, tmp_path / "out.dump").table(), r.table()
    )


def test_ibsim_net_file_round_trip(tmp_path):
    built = daqnet.fat_tree(radix=8, hosts=20, levels=3)
    built.write_ibsim_net(tmp_path / "net")
    back = fabric.from_ibnetdiscover(tmp_path / "net")
    assert cables(back) == cables(built)
    assert list(back.nodes()["level"]) == list(built.nodes()["level"])


def test_hand_written_ibsim_net_file(tmp_path):
    """ibsim's own example format: no GUIDs, no rates, remote port defaulting to 1."""
    net = tmp_path / "net"
    net.write_text(
        'Switch 8 "Switch1"\n[1] "Hca1"[1]\n[2] "Hca2"\n[3] "Switch2"[3]\n\n'
        'Switch 8 "Switch2"\n[1] "Hca3"[1]\n[3] "Switch1"[3]\n\n'
        'Hca 2 "Hca1"\n[1] "Switch1"[1]\n\nHca 2 "Hca2"\n[1] "Switch1"[2]\n\n'
        'Hca 2 "Hca3"\n[1] "Switch2"[1]\n'
    )
    f = fabric.from_ibnetdiscover(net, default_gbps=25)
    assert f.host_names == ["Hca1", "Hca2", "Hca3"]
    assert set(f.links()["gbps"]) == {25.0}
    r = routing.minhop(f)
    assert len(r.path("Hca1", "Hca3")) == 3


def _edit(tmp_path: Path, src: Path, edit) -> Path:
    out = tmp_path / src.name
    out.write_text(edit(src.read_text()))
    return out


@pytest.mark.parametrize(
    ("edit", "field", "text"),
    [
        # truncated: the last records (and the remote ends they name) are gone
        (lambda t: t[: t.index('Ca\t1 "H-0000000000100000"')], "remote node id", "has no record"),
        (
            lambda t: t.replace('[8]\t"S-000000000020000a"[7]', '[9]\t"S-000000000020000a"[7]', 1),
            "port number",
            "beyond its 8 ports",
        ),
        (lambda t: t.replace("lid 36 4xEDR", "lid 36 4xEDZ", 1), "width x speed", "4xEDZ"),
        (
            lambda t: t.replace("base port 0 lid 9 lmc 0", "base port 0 lid 10 lmc 0", 1),
            "lid",
            "also the LID",
        ),
        (
            lambda t: t.replace('[5]\t"S-0000000000200007"[6]', '[5]\t"S-0000000000200007"[5]', 1),
            "remote node id",
            "cables that port",
        ),
        (
            lambda t: t.replace("switchguid=0x200006(200006)", "switchguid=0xZZ(200006)", 1),
            "switchguid",
            "hexadecimal",
        ),
        (
            lambda t: t.replace(
                '[1]\t"H-0000000000100030"[1](100031) \t\t# "node24" lid 36 4xEDR',
                '[1]\t"H-00000000001000',
                1,
            ),
            "remote node id",
            "closing quote",
        ),
        (lambda t: "garbage line\n" + t, "line", "expected a node line"),
        # Found by the fuzzer: a carriage return after the type word ended the word but not
        # the search for the port count (std::out_of_range, a traceback from Python).
        (lambda t: t.replace("Switch\t8", "Switch\r8\x05", 1), "number of ports", "not a whole"),
    ],
    ids=[
        "truncated",
        "port-beyond",
        "speed",
        "duplicate-lid",
        "asymmetric",
        "guid",
        "cut-line",
        "garbage",
        "carriage-return",
    ],
)
def test_ibnetdiscover_errors_name_file_line_and_field(tmp_path, edit, field, text):
    bad = _edit(tmp_path, TOPO, edit)
    with pytest.raises(USER_ERRORS) as err:
        fabric.from_ibnetdiscover(bad)
    msg = str(err.value)
    assert re.match(rf"{re.escape(str(bad))}:\d+: {re.escape(field)}: ", msg), msg
    assert text in msg
    assert "\n" not in msg


def _line_of(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


@pytest.mark.parametrize(
    ("edit", "field", "text"),
    [
        # leaf0 (the first table) sends node04 (LID 0x000e) out of port 4, to node03
        (
            lambda t: t.replace("0x000e 005", "0x000e 004", 1),
            "output port",
            "delivered to host node03",
        ),
        (lambda t: t.replace("0x000e 005", "0x000e 009", 1), "output port", "has no port 9"),
        # found by tests/test_fuzz_importers.py: a negative port was read out of bounds
        (lambda t: t.replace("0x000e 005", "0x000e -1003", 1), "output port", "has no port -1003"),
        # leaf6 holds 3 hosts: its port 4 has no cable
        (
            lambda t: t.replace("0x0024 001", "0x0024 004", 1),
            "output port",
            "not cabled",
        ),
        (
            lambda t: t.replace("0x000e 005", "0x000e 005\n0x000e 006", 1),
            "destination LID",
            "second entry",
        ),
        (
            lambda t: t.replace("guid 0x0000000000200000", "guid 0x0000000000209999", 1).replace(
                "('leaf0')", "('leafX')", 1
            ),
            "switch",
            "not in the fabric",
        ),
        (lambda t: t.replace("0x0006 005", "0x00zz 005", 1), "destination LID", "hexadecimal"),
        (
            lambda t: t.replace(
                "0x000e 005 # Channel Adapter portguid 0x0000000000100009: 'node04'",
                "0x0777 005 # Channel Adapter portguid 0x0000000000999999: 'ghost'",
                1,
            ),
            "destination LID",
            "no host of the fabric",
        ),
    ],
    ids=[
        "misdelivery",
        "port-beyond",
        "port-negative",
        "uncabled",
        "duplicate",
        "unknown-switch",
        "bad-lid",
        "unknown-lid",
    ],
)
def test_lft_dump_errors_name_file_line_and_field(tmp_path, edit, field, text):
    f = fabric.from_ibnetdiscover(TOPO)
    bad = _edit(tmp_path, DUMP, edit)
    with pytest.raises(USER_ERRORS) as err:
        routing.from_lft_dump(f, bad)
    msg = str(err.value)
    assert re.match(rf"{re.escape(str(bad))}:\d+: {re.escape(field)}: ", msg), msg
    assert text in msg


def test_lft_dump_loop_and_black_hole_point_at_the_line(tmp_path):
    f = fabric.from_ibnetdiscover(TOPO)
    text = DUMP.read_text()
    # spine0 (its table starts at "('spine0')") sends node00 (LID 2) back up... to leaf1
    start = _line_of(text, "('spine0')")
    lines = text.splitlines()
    k = next(i for i in range(start, len(lines)) if lines[i].startswith("0x0002 "))
    lines[k] = "0x0002 002" + lines[k][10:]  # spine0 port 2 → leaf1
    leaf1 = _line_of(text, "('leaf1')")
    j = next(i for i in range(leaf1, len(lines)) if lines[i].startswith("0x0002 "))
    bad = tmp_path / "loop.dump"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(USER_ERRORS) as err:
        routing.from_lft_dump(f, bad)
    msg = str(err.value)
    assert "loop toward node00" in msg and msg.startswith(f"{bad}:"), msg
    assert int(msg.split(":")[1]) in (k + 1, j + 1)  # the line of one entry of the loop

    lines[k] = text.splitlines()[k]
    del lines[j]  # leaf1 has no entry for node00: a black hole
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(USER_ERRORS) as err:
        routing.from_lft_dump(f, bad)
    msg = str(err.value)
    assert "black hole" in msg and f"{bad}:{leaf1}: switch:" in msg, msg


def test_lft_dump_of_another_fabric_is_refused(tmp_path):
    other = daqnet.fat_tree(radix=8, hosts=16)
    with pytest.raises(USER_ERRORS, match="no host of the fabric|not in the fabric"):
        routing.from_lft_dump(other, DUMP)


def test_minhop_gives_shortest_balanced_routes():
    f = daqnet.fat_tree(radix=8, hosts=32, levels=3)
    r, d = routing.minhop(f), routing.dmodk(f)
    for s in range(0, 32, 5):
        for t in range(32):
            if s != t:
                assert len(r.path(s, t)) == len(d.path(s, t))
    # balanced: every leaf up-port carries the same number of destinations
    table = r.table()
    leaf0 = table[0]
    counts = np.bincount(leaf0[4:], minlength=9)[5:]
    assert counts.max() - counts.min() <= 1


def test_scenario_with_imported_fabric_and_tables(tmp_path):
    sc = tmp_path / "ib.toml"
    sc.write_text(
        f'[fabric]\nkind = "ibnetdiscover"\nfile = "{TOPO}"\n'
        f'[routing]\nengine = "lft-dump"\nfile = "{DUMP}"\n'
        '[placement]\nhosts = "node[00-15]"\norder = "hostname"\n'
    )
    scenario = daqnet.Scenario.load(sc)
    _f, r, p, _w = scenario.build()
    assert p.host_names() == [f"node{i:02d}" for i in range(16)]
    assert r.engine.startswith("lft-dump")
    with pytest.raises(USER_ERRORS, match="needs a fat tree built by daqnet"):
        daqnet.Scenario.load(sc, ["routing.engine=dmodk"]).build()
    with pytest.raises(USER_ERRORS, match="needs fabric.file"):
        daqnet.Scenario({"fabric": {"kind": "ibnetdiscover"}})
