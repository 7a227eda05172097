"""Importers of what InfiniBand tools print: ibnetdiscover topologies and LFT dumps.

The corpus in tests/data/ib is real output: a daqnet fat tree (radix 8, 27 hosts) loaded
into ibsim, routed by OpenSM 3.3.23's ftree engine, then read by infiniband-diags'
ibnetdiscover and dump_lfts (tests/test_opensm.py regenerates such files live); and the
same tools on a 6-host tree (lmc_tree()) routed with LMC 2 (`opensm -o -l 2`, its default
minhop engine), where each host has 4 LIDs and its other 3 LIDs leave by other up-ports;
and a 49-host tree of radix 12 (ftree; `daqnet opensm` of fabric.radix = 12, hosts = 49,
naming "shuffled", seed 1), whose top LID, 64, dump_lfts leaves out.
"""

from __future__ import annotations

import re
from pathlib import Path

import daqnet
import numpy as np
import pytest
from daqnet import _core, fabric, routing
from daqnet.analysis import conflicts
from daqnet.errors import USER_ERRORS

DATA = Path(__file__).parent / "data" / "ib"
TOPO = DATA / "ibnetdiscover-27.out"
DUMP = DATA / "opensm-lfts-27.dump"
SUBNET = DATA / "opensm-subnet-27.lst"
DIAG = DATA / "dump_lfts-27.out"
LMC_TOPO = DATA / "ibnetdiscover-lmc2.out"
LMC_DUMP = DATA / "opensm-lfts-lmc2.dump"
LMC_SUBNET = DATA / "opensm-subnet-lmc2.lst"
LMC_DIAG = DATA / "dump_lfts-lmc2.out"
TOPO64 = DATA / "ibnetdiscover-64.out"  # 49 hosts, 15 switches: LIDs 1-64 (see below)
DIAG64 = DATA / "dump_lfts-64.out"
DUMP64 = DATA / "opensm-lfts-64.dump"
LMC_TREE = '[fabric]\nradix = 8\nhosts = 6\nnaming = "shuffled"\nnaming_seed = 3\n'


def lmc_tree() -> fabric.Fabric:
    """The tree daqnet wrote as the ibsim net file of the LMC-2 corpus."""
    return daqnet.fat_tree(radix=8, hosts=6, naming="shuffled", naming_seed=3)


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


def test_a_description_that_is_another_nodes_id(tmp_path):
    """Two switches described "spine" keep their ids; a third described as one of those ids
    keeps its own too (found by the fuzzer: "duplicate node name", naming no file)."""

    def edit(t: str) -> str:
        t = t.replace('# "spine0" base', '# "spine" base', 1).replace(
            '# "spine1" base', '# "spine" base', 1
        )
        return t.replace('# "leaf0" base', '# "S-0000000000200007" base', 1)

    f = fabric.from_ibnetdiscover(_edit(tmp_path, TOPO, edit))
    names = f.node_names[27:]
    assert {"S-0000000000200000", "S-0000000000200007", "S-0000000000200008"} <= set(names)
    assert len(set(names)) == len(names) == 11


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
        (
            lambda t: t.replace("base port 0 lid 9 lmc 0", "base port 0 lid 65538 lmc 0", 1),
            "lid",
            "outside the unicast range",
        ),
        # spine1 given spine0's GUIDs: imported, it failed later in the LFT dump
        (
            lambda t: t.replace("switchguid=0x200008(200008)", "switchguid=0x200007(200007)", 1),
            "switchguid",
            "also the node GUID",
        ),
        # node26's port given node25's port GUID
        (
            lambda t: t.replace('[1](100035) \t"S-', '[1](100033) \t"S-', 1),
            "port guid",
            "also the port GUID",
        ),
        # A leaf's line for node24 gone, node24's own record still cabled to it: read as a
        # fabric without a word (ibnetdiscover prints every cable from both ends).
        (
            lambda t: t.replace(
                '[1]\t"H-0000000000100030"[1](100031) \t\t# "node24" lid 36 4xEDR\n', "", 1
            ),
            "remote node id",
            "whose record lists no such port: ibnetdiscover lists every cable from both ends",
        ),
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
        "lid-beyond-unicast",
        "duplicate-node-guid",
        "duplicate-port-guid",
        "one-sided-cable",
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


def test_text_that_is_not_utf8_names_its_line(tmp_path):
    # A node description in Latin-1 (or any stray byte) became a UnicodeDecodeError when the
    # names reached Python: "'utf-8' codec can't decode byte 0xff", no file, no line.
    text = TOPO.read_bytes()
    bad = tmp_path / "latin1.out"
    bad.write_bytes(text.replace(b'"leaf5"', b'"leaf\xe95"', 1))  # é in Latin-1
    line = _line_of(text.decode(), '"leaf5"')
    with pytest.raises(
        USER_ERRORS, match=rf"latin1.out:{line}: text: not UTF-8: byte 0xE9 at column \d+"
    ):
        fabric.from_ibnetdiscover(bad)
    good = tmp_path / "utf8.out"  # the same name in UTF-8 is a name like any other
    good.write_bytes(text.replace(b'"leaf5"', '"leaf\u00e95"'.encode(), 1))
    assert "leaf\u00e95" in fabric.from_ibnetdiscover(good).node_names
    f = fabric.from_ibnetdiscover(TOPO)
    dump = tmp_path / "dump.out"
    dump.write_bytes(DIAG.read_bytes().replace(b"'leaf0'", b"'leaf\xff0'", 1))
    line = _line_of(DIAG.read_text(), "'leaf0'")
    with pytest.raises(USER_ERRORS, match=rf"dump.out:{line}: text: not UTF-8: byte 0xFF"):
        routing.from_lft_dump(f, dump)


def test_duplicate_guid_names_both_lines(tmp_path):
    text = TOPO.read_text()
    spine0, spine1 = "switchguid=0x200007(200007)", "switchguid=0x200008(200008)"
    first, second = sorted((_line_of(text, spine0), _line_of(text, spine1)))
    bad = _edit(tmp_path, TOPO, lambda t: t.replace(spine1, spine0, 1))
    with pytest.raises(USER_ERRORS) as err:
        fabric.from_ibnetdiscover(bad)
    msg = str(err.value)
    assert msg.startswith(f"{bad}:{second}: switchguid: node GUID 0x200007 "), msg
    assert msg.endswith(f"(line {first})"), msg


def test_a_node_list_is_told_from_a_topology(tmp_path):
    # ibnetdiscover -l read "number of ports: ':' is not a whole number".
    bad = tmp_path / "list.out"
    bad.write_text('Ca\t : 0x000000000010001e ports 1 devid 0x0 vendid 0x0 "node15"\n')
    with pytest.raises(USER_ERRORS, match=r"list.out:1: node line: this is ibnetdiscover -l"):
        fabric.from_ibnetdiscover(bad)


def test_duplicate_ca_lid_names_the_nodes_and_their_port_lines(tmp_path):
    # It named the GUID ids ("H-0000000000100032") at the Ca line, not the port line that
    # holds a CA's LID.
    text = TOPO.read_text()
    node25 = _line_of(text, '"S-0000000000200006"[2]\t\t# lid 37')
    node26 = _line_of(text, '"S-0000000000200006"[3]\t\t# lid 38')
    bad = _edit(tmp_path, TOPO, lambda t: t.replace("# lid 38 lmc 0", "# lid 37 lmc 0", 1))
    with pytest.raises(USER_ERRORS) as err:
        fabric.from_ibnetdiscover(bad)
    msg = str(err.value)
    assert (
        msg
        == f'{bad}:{node25}: lid: LID 37 of "node25" is also the LID of "node26" (line {node26})'
    )


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
        # port 0 is the switch itself: once dropped, and reported at the table's header as
        # "no entry"
        (
            lambda t: t.replace("0x000e 005", "0x000e 000", 1),
            "output port",
            "port 0 is switch leaf0 itself (its management port), not a way to host node04",
        ),
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
        # was cut to 16 bits: LID 0x000e, accepted
        (
            lambda t: t.replace("0x000e 005", "0x10000000e 005", 1),
            "destination LID",
            "'0x10000000e' is not a unicast LID (0x0001-0xBFFF)",
        ),
        # multicast LIDs are in no LFT (dump_mfts prints them)
        (
            lambda t: t.replace("0x000e 005", "0xc00e 005", 1),
            "destination LID",
            "not a unicast LID",
        ),
        (
            lambda t: t.replace(
                "0x000e 005 # Channel Adapter portguid 0x0000000000100009: 'node04'",
                "0x0777 005 # Channel Adapter portguid 0x0000000000999999: 'ghost'",
                1,
            ),
            "destination LID",
            "no host of the fabric",
        ),
        # a CA's entry at a switch's GUID (found by the fuzzer: taken for a host, it was
        # indexed as one, out of bounds)
        (
            lambda t: t.replace(
                "0x000e 005",
                "0x0350 005 # Channel Adapter portguid 0x0000000000200001: 'leaf1'\n0x000e 005",
                1,
            ),
            "destination LID",
            "LID 848 ('leaf1') is no host of the fabric",
        ),
    ],
    ids=[
        "misdelivery",
        "port-beyond",
        "port-negative",
        "port-zero",
        "uncabled",
        "duplicate",
        "unknown-switch",
        "bad-lid",
        "lid-beyond-16-bits",
        "multicast-lid",
        "unknown-lid",
        "ca-at-switch-guid",
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


def test_subnet_list_lid_beyond_16_bits_is_refused(tmp_path):
    bad = _edit(
        tmp_path, SUBNET, lambda t: t.replace("{node00} LID:0002", "{node00} LID:100000002", 1)
    )
    with pytest.raises(USER_ERRORS) as err:
        routing.from_lft_dump(daqnet.fat_tree(radix=8, hosts=27), DUMP, bad)
    msg = str(err.value)
    assert msg.startswith(f"{bad}:1: LID: '100000002' is not a unicast LID"), msg


def _lmc0_scenario(tmp_path: Path) -> Path:
    """The LMC-2 dump cut to the hosts' base LIDs (their lids in the topology): what
    daqnet routes by, read as LMC 0 was read before LMC > 0 was."""
    f = fabric.from_ibnetdiscover(LMC_TOPO)
    other = {int(b) + k for b in f.nodes()["lid"][: f.num_hosts] for k in (1, 2, 3)}
    lines = LMC_DUMP.read_text().splitlines(keepends=True)
    kept = [ln for ln in lines if not (ln.startswith("0x") and int(ln.split()[0], 16) in other)]
    assert len(lines) - len(kept) == 6 * 3 * f.num_switches  # 3 more LIDs per host, per table
    dump = tmp_path / "lmc0.dump"
    dump.write_text("".join(kept))
    sc = tmp_path / "lmc0.toml"
    sc.write_text(
        f'[fabric]\nkind = "ibnetdiscover"\nfile = "{LMC_TOPO}"\n'
        f'[routing]\nengine = "lft-dump"\nfile = "{dump}"\n[placement]\norder = "hostname"\n'
    )
    return sc


@pytest.mark.parametrize(
    ("topology", "dump", "subnet"),
    [
        ("ibnetdiscover", LMC_DUMP, None),
        ("ibnetdiscover", LMC_DIAG, None),
        ("tree", LMC_DUMP, LMC_SUBNET),
        ("tree", LMC_DUMP, None),
        ("tree", LMC_DIAG, LMC_SUBNET),
        ("tree", LMC_DIAG, None),
    ],
    ids=[
        "ibnetdiscover-opensm",
        "ibnetdiscover-dump_lfts",
        "tree-opensm-subnet",
        "tree-opensm-names",
        "tree-dump_lfts-subnet",
        "tree-dump_lfts-names",
    ],
)
def test_lmc_dumps_route_to_base_lids(tmp_path, topology, dump, subnet):
    """LMC 2: every import routes to each host's base LID, as the LMC-0 view of the dump."""
    fabric_keys = (
        f'[fabric]\nkind = "ibnetdiscover"\nfile = "{LMC_TOPO}"\n'
        if topology == "ibnetdiscover"
        else LMC_TREE
    )
    routing_keys = f'[routing]\nengine = "lft-dump"\nfile = "{dump}"\n'
    if subnet:
        routing_keys += f'subnet_file = "{subnet}"\n'
    sc = tmp_path / "lmc.toml"
    sc.write_text(fabric_keys + routing_keys + '[placement]\norder = "hostname"\n')
    _f, r, p, w = daqnet.Scenario.load(sc).build()
    _f0, r0, p0, w0 = daqnet.Scenario.load(_lmc0_scenario(tmp_path)).build()
    assert same_tables(r, r0)
    assert p.host_names() == p0.host_names()
    assert conflicts(r, p, w).total_conflicts == conflicts(r0, p0, w0).total_conflicts


@pytest.mark.parametrize("topology", ["ibnetdiscover", "tree"])
def test_lmc_lid_naming_another_host_is_refused(tmp_path, topology):
    # leaf0's entry for node0's second LID (5) names node2 (LIDs 36-39) instead
    bad = _edit(
        tmp_path,
        LMC_DUMP,
        lambda t: t.replace(
            "0x0005 001 # Channel Adapter portguid 0x0000000000100001: 'node0'",
            "0x0005 001 # Channel Adapter portguid 0x000000000010000b: 'node2'",
            1,
        ),
    )
    f = fabric.from_ibnetdiscover(LMC_TOPO) if topology == "ibnetdiscover" else lmc_tree()
    with pytest.raises(USER_ERRORS) as err:
        routing.from_lft_dump(f, bad)
    msg = str(err.value)
    assert re.match(
        rf"{re.escape(str(bad))}:\d+: destination LID: LID \d+ names host node2, ", msg
    ), msg
    assert "\n" not in msg


def _reversed_tables(text: str) -> str:
    """Each switch's entries in descending LID order: a host's alias LIDs come before its
    base LID, which only the end of the table tells when nothing else gives LIDs."""
    out, entries = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("0x"):
            entries.append(line)
            continue
        out += entries[::-1]
        entries = []
        out.append(line)
    return "".join(out + entries[::-1])


def test_lmc_dump_in_descending_lid_order_onto_a_built_tree(tmp_path):
    """With no LIDs but the dump's, entries are taken as read at each host's lowest LID so
    far: a lower one coming later replaces them, at every switch, and a switch whose table
    has only the alias LIDs is left with no route (not the alias's port)."""
    tree = lmc_tree()
    upside_down = _edit(tmp_path, LMC_DUMP, _reversed_tables)
    r = routing.from_lft_dump(tree, upside_down)
    assert same_tables(r, routing.from_lft_dump(tree, LMC_DUMP))
    assert r.port("leaf1", "node0") == 5  # the base LID's up-port, not LID 7's (8)

    # leaf0, the first table, without its entry for node0's base LID (4): the entries at LIDs
    # 7, 6, 5 taken as read there must go when leaf1's table shows LID 4, not stand in.
    def cut(text: str) -> str:
        at = text.index("0x0004 001 # Channel Adapter portguid 0x0000000000100001: 'node0'")
        return text[:at] + text[text.index("\n", at) + 1 :]

    holed = _edit(tmp_path, LMC_DUMP, lambda t: _reversed_tables(cut(t)))
    with pytest.raises(USER_ERRORS) as err:
        routing.from_lft_dump(tree, holed)
    assert "black hole: switch leaf0 has no route to node0" in str(err.value), str(err.value)


AN = "Mellanox Technologies Aggregation Node"
# (switch, its aggregation node, switch name, LIDs); the node GUID is the switch's + 8, as in
# real Quantum output
AGGREGATION_NODES = [(0x200006, 0x20000E, "leaf6", 10, 39), (0x200007, 0x20000F, "spine0", 12, 40)]


def _with_aggregation_nodes(text: str) -> str:
    """TOPO with a SHARP Aggregation Node on leaf6 and on spine0 as ibnetdiscover prints
    one on a Quantum switch: a CA (vendid 0x2c9, devid 0xcf09) on the port after the
    switch's front ports (41 of 40 there, 9 of 8 here)."""
    for sw, an, name, sw_lid, an_lid in AGGREGATION_NODES:
        header = f'Switch\t8 "S-{sw:016x}"'
        start = text.index(header)
        end = text.index("\n\n", start)
        port = f'\n[9]\t"H-{an:016x}"[1]({an:x}) \t\t# "{AN}" lid {an_lid} 4xEDR'
        text = text[:start] + "Switch\t9" + text[start + 8 : end] + port + text[end:]
        text += (
            f"\nvendid=0x2c9\ndevid=0xcf09\nsysimgguid={sw:#x}\ncaguid={an:#x}\n"
            f'Ca\t1 "H-{an:016x}"\t\t# "{AN}"\n'
            f'[1]({an:x}) \t"S-{sw:016x}"[9]\t\t# lid {an_lid} lmc 0 "{name}" lid {sw_lid} 4xEDR\n'
        )
    return text


def test_sharp_aggregation_nodes_are_not_hosts(tmp_path):
    plain = fabric.from_ibnetdiscover(TOPO)
    f = fabric.from_ibnetdiscover(_edit(tmp_path, TOPO, _with_aggregation_nodes))
    assert (f.num_hosts, f.num_switches) == (27, 11)
    assert f.host_names == plain.host_names
    assert cables(f) == cables(plain)  # the aggregation nodes' ports stay free
    assert list(f.nodes()["level"]) == list(plain.nodes()["level"])  # no spine became a leaf
    assert f.describe().endswith(", 2 SHARP aggregation nodes left out")


def _dump_with_aggregation_nodes(text: str) -> str:
    """OpenSM routes to an aggregation node's LID as to any CA's: each table gets an entry
    for leaf6's (LID 39), out of the port toward it (node26's, LID 38, on leaf6's side)."""
    out, switch = [], ""
    for ln in text.splitlines(keepends=True):
        out.append(ln)
        if ln.startswith("Unicast lids"):
            switch = ln.split("('")[1].split("')")[0]
        if ln.startswith("0x0026 "):
            port = "009" if switch == "leaf6" else ln.split()[1]
            out.append(f"0x0027 {port} # Channel Adapter portguid 0x000000000020000e: '{AN}'\n")
    return "".join(out)


def _subnet_with_aggregation_node(tmp_path: Path, description: str) -> Path:
    """SUBNET with leaf6's aggregation node (LID 39) as OpenSM lists it, under `description`."""
    return _edit(
        tmp_path,
        SUBNET,
        lambda t: (
            t + "{ SW Ports:09 SystemGUID:0000000000200006 NodeGUID:0000000000200006"
            " PortGUID:0000000000200006 VenID:000000 DevID:0000 Rev:000000A1 {leaf6} LID:000A PN:09 }"
            " { CA Ports:01 SystemGUID:0000000000200006 NodeGUID:000000000020000E"
            " PortGUID:000000000020000E VenID:000002C9 DevID:CF09 Rev:000000A1"
            f" {{{description}}} LID:0027 PN:01 }} PHY=4x LOG=ACT SPD=25\n"
        ),
    )


@pytest.mark.parametrize("how", ["topology", "subnet-list", "names-in-dump"])
def test_lft_dump_entries_for_aggregation_nodes_are_ignored(tmp_path, how):
    dump = _edit(tmp_path, DUMP, _dump_with_aggregation_nodes)
    subnet = None
    if how == "topology":
        f = fabric.from_ibnetdiscover(_edit(tmp_path, TOPO, _with_aggregation_nodes))
    else:
        f = daqnet.fat_tree(radix=8, hosts=27)
    if how == "subnet-list":
        subnet = _subnet_with_aggregation_node(tmp_path, AN)
    r = routing.from_lft_dump(f, dump, subnet)
    assert f.num_hosts == 27
    assert same_tables(r, routing.from_lft_dump(fabric.from_ibnetdiscover(TOPO), DUMP))


def test_aggregation_nodes_renamed_by_a_node_name_map(tmp_path):
    # ibnetdiscover and dump_lfts with --node-name-map print the map's names: the topology
    # still knows an aggregation node by its device id and leaves it out, but the dump's
    # entries toward it named a node the fabric lacked ("LID 39 ('sharp-leaf6') is no host").
    renamed = "sharp-{}"

    def rename(text: str) -> str:
        for _, _, name, _, _ in AGGREGATION_NODES:
            text = text.replace(f'"{AN}" lid', f'"{renamed.format(name)}" lid', 1)
            text = text.replace(f'# "{AN}"\n', f'# "{renamed.format(name)}"\n', 1)
        return text

    topo = _edit(tmp_path, TOPO, lambda t: rename(_with_aggregation_nodes(t)))
    assert AN not in topo.read_text()
    f = fabric.from_ibnetdiscover(topo)
    assert f.num_hosts == 27 and f.describe().endswith("2 SHARP aggregation nodes left out")
    dump = _edit(
        tmp_path, DUMP, lambda t: _dump_with_aggregation_nodes(t).replace(AN, "sharp-leaf6")
    )
    assert AN not in dump.read_text()
    r = routing.from_lft_dump(f, dump)
    want = routing.from_lft_dump(fabric.from_ibnetdiscover(TOPO), DUMP)
    assert same_tables(r, want)
    # A built fabric and OpenSM's subnet list: the list gives the node's vendor and device ids.
    subnet = _subnet_with_aggregation_node(tmp_path, "sharp-leaf6")
    built = daqnet.fat_tree(radix=8, hosts=27)
    assert same_tables(routing.from_lft_dump(built, dump, subnet), want)


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
    # One entry of the loop at the front, the other named after it (the edited one was not).
    first, other = (k + 1, j + 1) if int(msg.split(":")[1]) == k + 1 else (j + 1, k + 1)
    assert msg.startswith(f"{bad}:{first}:") and msg.endswith(
        f"(the loop's other entries: line {other})"
    )

    lines[k] = text.splitlines()[k]
    del lines[j]  # leaf1 has no entry for node00: a black hole
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(USER_ERRORS) as err:
        routing.from_lft_dump(f, bad)
    msg = str(err.value)
    assert "black hole" in msg and f"{bad}:{leaf1}: switch:" in msg, msg


def test_ibnetdiscover_s_and_p_output(tmp_path):
    # ibnetdiscover -s prints its discovery steps before the topology (lines as it printed
    # them under ibsim): they were "expected a node line"; -p lists ports, and got no hint.
    steps = (
        'DR path slid 0; dlid 0; 0 -> new Switch {0000000000200000} portnum 0 lid 0-0 ""\n'
        'DR path slid 0; dlid 0; 0,1 -> new Channel Adapter {0000000000100000} portnum 1 lid 0-0 ""\n'
    )
    with_steps = tmp_path / "s.out"
    with_steps.write_text(steps + TOPO.read_text())
    a, b = fabric.from_ibnetdiscover(with_steps), fabric.from_ibnetdiscover(TOPO)
    assert a.num_hosts == b.num_hosts and a.num_links == b.num_links
    ports = tmp_path / "p.out"
    ports.write_text(
        "CA     8  1 0x0000000000100007 4x EDR - SW     3  2 0x0000000000200001 ( 'node3' - 'leaf1' )\n"
    )
    with pytest.raises(USER_ERRORS, match=r"p.out:1: line: this is ibnetdiscover -p output"):
        fabric.from_ibnetdiscover(ports)


def test_capture_of_switches_only_is_refused_naming_the_file(tmp_path):
    # A capture cut short after its first switch's line: export wrote a net file of 0
    # hosts, and every other command stopped at "the fabric has no hosts", no file named.
    text = TOPO.read_text()
    first = text.index("\nSwitch")
    bad = tmp_path / "switches.out"
    bad.write_text(text[: text.index("\n", first + 1)] + "\n")
    assert "Ca\t" not in bad.read_text() and "Switch\t" in bad.read_text()
    with pytest.raises(USER_ERRORS) as err:
        fabric.from_ibnetdiscover(bad)
    assert (
        str(err.value)
        == f"{bad}: no Ca records: switches only, no host (a capture cut short, or one of switches only?)"
    )


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


def _with_a_management_node_on_spine0(text: str) -> str:
    """A CA cabled to spine0's free port 8, as a management or storage node on a spine."""
    leaf6 = '[7]\t"S-0000000000200006"[5]\t\t# "leaf6" lid 10 4xEDR\n'
    at = text.index(leaf6, text.index('# "spine0" base port')) + len(leaf6)
    text = (
        text[:at] + '[8]\t"H-00000000001000f0"[1](1000f1) \t\t# "mgmt0" lid 60 4xEDR\n' + text[at:]
    )
    return text + (
        "\nvendid=0x0\ndevid=0x0\nsysimgguid=0x1000f0\ncaguid=0x1000f0\n"
        'Ca\t1 "H-00000000001000f0"\t\t# "mgmt0"\n'
        '[1](1000f1) \t"S-0000000000200007"[8]\t\t# lid 60 lmc 0 "spine0" lid 12 4xEDR\n'
    )


def test_a_host_on_a_spine_leaves_the_spine_a_spine(tmp_path):
    # One management node on spine0 made it a leaf by distance to a host: every leaf lost
    # that up-link in the per-level views, leaf0 -> spine0 read as "leaf->leaf", the summary
    # counted 8 leaves and `daqnet uplinks` listed spine0 as a leaf with no up-port.
    import subprocess
    import sys

    plain = fabric.from_ibnetdiscover(TOPO)
    f = fabric.from_ibnetdiscover(_edit(tmp_path, TOPO, _with_a_management_node_on_spine0))
    level = dict(zip(f.node_names, f.nodes()["level"].tolist(), strict=True))
    before = dict(zip(plain.node_names, plain.nodes()["level"].tolist(), strict=True))
    assert level["spine0"] == before["spine0"] == 2
    assert all(level[n] == before[n] for n in plain.node_names)  # every node as without it
    assert "leaf->leaf" not in f.link_class_names()
    sc = tmp_path / "spine-host.toml"
    sc.write_text(
        f'[fabric]\nkind = "ibnetdiscover"\nfile = "{tmp_path / TOPO.name}"\n'
        '[routing]\nengine = "minhop"\n'
    )

    def cli(*args: str) -> str:
        p = subprocess.run(
            [sys.executable, "-m", "daqnet", *args, str(sc)], capture_output=True, text=True
        )
        assert p.returncode == 0, p.stderr
        return p.stdout

    assert "(7 leaves with 3-4 hosts each, 1 host on spine0 above the leaves)" in cli("conflicts")
    rows = [ln.split()[0] for ln in cli("uplinks").splitlines() if ln.startswith("  leaf")]
    assert rows[1:] == [f"leaf{i}" for i in range(7)]  # the header, then the leaves only


def test_hosts_named_by_id_are_told(tmp_path):
    # Two HCAs of one server ("node24", "node24 HCA-2") share the description's first word:
    # both keep their ibnetdiscover ids, and placement by the hostname node24 then finds
    # neither. The fabric's description (the summaries' first line) says so.
    def second_hca(text: str) -> str:
        return text.replace('# "node25"\n', '# "node24 HCA-2"\n').replace(
            '"node25" lid 37', '"node24 HCA-2" lid 37'
        )

    f = fabric.from_ibnetdiscover(_edit(tmp_path, TOPO, second_hca))
    assert {"H-0000000000100030", "H-0000000000100032"} <= set(f.host_names)
    assert f.describe().endswith(
        ", 2 hosts named by their ibnetdiscover id: their descriptions' first word is another "
        "node's too (node24)"
    )
    assert "named by" not in fabric.from_ibnetdiscover(TOPO).describe()


def test_a_dump_lfts_without_its_top_lid_names_the_tool_and_the_way_out(tmp_path):
    # Real output: ibroute reads tables in blocks of 64 LIDs and rounds the last one down,
    # so LID 0x40 (a host) is in no table though every header announces [0x0-0x40]. The
    # import said "black hole ... (no entry in this table)", blaming the routing.
    from daqnet.subnet_manager import dump_lfts_gap

    seen = fabric.from_ibnetdiscover(TOPO64)
    top = int(np.flatnonzero(seen.nodes()["lid"] == 64)[0])
    assert top < seen.num_hosts  # LID 64 is a host's
    with pytest.raises(USER_ERRORS) as err:
        routing.from_lft_dump(seen, DIAG64)
    message = str(err.value)
    assert f"no route to {seen.host_names[top]}" in message
    assert "stops below LID 0x40, the top its header announces" in message
    assert "read OpenSM's opensm-lfts.dump instead" in message
    assert dump_lfts_gap(DIAG64) == 64 and dump_lfts_gap(DIAG) is None
    # OpenSM's own dump of the same run holds it.
    full = routing.from_lft_dump(seen, DUMP64)
    assert full.port(seen.node_names[seen.num_hosts], seen.host_names[top]) > 0
    # A table that stops early for another reason keeps the plain message.
    cut = tmp_path / "cut.out"
    cut.write_text(re.sub(r"^0x0002 .*\n", "", DIAG.read_text(), count=1, flags=re.M))
    with pytest.raises(USER_ERRORS, match=r"\(no entry in this table\)"):
        routing.from_lft_dump(fabric.from_ibnetdiscover(TOPO), cut)
