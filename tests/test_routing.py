"""Routing engines: dmodk against an independent formula, random, table files and their errors."""

import daqnet
import numpy as np
import pytest
from daqnet import routing
from reference import plain_graph, trace


def expected_dmodk_two_level(fab, m, w):
    """D-mod-K written directly for a 2-level tree: leaf L holds hosts mL..mL+m-1 on ports
    1..m and reaches spine j through port m+j+1; spine j reaches leaf L through port L+1."""
    H = fab.num_hosts
    names = fab.node_names
    t = np.zeros((fab.num_switches, H), dtype=np.uint16)
    for sw in range(fab.num_switches):
        name = names[H + sw]
        idx = int(name.removeprefix("leaf").removeprefix("spine"))
        for d in range(H):
            if name.startswith("leaf"):
                t[sw, d] = d % m + 1 if d // m == idx else m + d % w + 1
            else:
                t[sw, d] = d // m + 1
    return t


@pytest.mark.parametrize(
    ("radix", "hosts", "taper"),
    [(36, 540, "1:1"), (36, 64, "1:1"), (12, 50, "2:1"), (8, 32, "1:1")],
)
def test_dmodk_matches_formula_two_levels(radix, hosts, taper):
    fab = daqnet.fat_tree(radix=radix, hosts=hosts, taper=taper)
    m = radix // 2
    a, b = map(int, taper.split(":"))
    np.testing.assert_array_equal(
        routing.dmodk(fab).table(), expected_dmodk_two_level(fab, m, m * b // a)
    )


def test_dmodk_three_levels_formula():
    # radix 8: m1 = m2 = 4 down, w2 = w3 = 4 up; pods of 4 leaves (16 hosts)
    fab = daqnet.fat_tree(radix=8, hosts=56, levels=3)
    t = routing.dmodk(fab).table()
    H = fab.num_hosts
    for d in range(H):
        for leaf in range(14):
            want = d % 4 + 1 if d // 4 == leaf else 4 + d % 4 + 1
            assert t[fab.node(f"leaf{leaf}") - H, d] == want
        for sp in range(16):  # spine sp is in pod sp // 4
            want = (d // 4) % 4 + 1 if d // 16 == sp // 4 else 4 + (d // 4) % 4 + 1
            assert t[fab.node(f"spine{sp}") - H, d] == want
        for c in range(16):
            assert t[fab.node(f"core{c}") - H, d] == d // 16 + 1


def route_lengths_ok(rt):
    """Every route reaches its destination and goes up to the lowest common level only."""
    fab = rt.fabric
    g = plain_graph(fab)
    table = rt.table()
    lv = fab.nodes()["level"]
    m = fab.xgft["down"]
    H = fab.num_hosts
    for s in range(H):
        for d in range(H):
            p = trace(g, table, H, s, d)
            np.testing.assert_array_equal(p, rt.path(s, d))
            if s == d:
                continue
            lca = next(
                level
                for level in range(1, fab.levels + 1)
                if s // int(np.prod(m[:level])) == d // int(np.prod(m[:level]))
            )
            assert len(p) == 2 * lca
            peak = max(lv[fab.links()["dst"][x]] for x in p)
            assert peak == lca


@pytest.mark.parametrize("engine", ["dmodk", "random"])
@pytest.mark.parametrize(
    ("radix", "hosts", "levels", "taper"),
    [(8, 30, 2, "1:1"), (8, 50, 3, "1:1"), (12, 70, 3, ["2:1", "2:1"])],
)
def test_routes_minimal_and_complete(engine, radix, hosts, levels, taper):
    fab = daqnet.fat_tree(radix=radix, hosts=hosts, levels=levels, taper=taper)
    route_lengths_ok(routing.build(fab, engine, seed=5))


def test_random_is_seeded():
    fab = daqnet.fat_tree(radix=12, hosts=60)
    a, b, c = (routing.random(fab, s).table() for s in (1, 1, 2))
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()
    # up-ports spread over all choices
    up = a[: fab.num_switches - 6][a[: fab.num_switches - 6] > 6]
    assert set(np.unique(up)) == set(range(7, 13))


def test_table_file_roundtrip(tmp_path):
    fab = daqnet.fat_tree(radix=8, hosts=28, levels=3, naming="shuffled", naming_seed=4)
    rt = routing.random(fab, 9)
    path = tmp_path / "lft.txt"
    rt.write_table(path)
    back = routing.from_file(fab, path)
    np.testing.assert_array_equal(back.table(), rt.table())
    assert back.engine == f"table {path}"


def test_table_file_refuses_names_it_cannot_read_back(tmp_path):
    # A switch described as "spine#3" (ibnetdiscover keeps descriptions) was written, and
    # reading it back failed: '#' starts a comment in a table file.
    fab = daqnet.fabric.graph(
        ["a", "b"], [("spine#3", 2)], [("a", 1, "spine#3", 1), ("b", 1, "spine#3", 2)]
    )
    path = tmp_path / "t.txt"
    with pytest.raises(daqnet.DaqnetError, match="node name 'spine#3' cannot be written"):
        routing.minhop(fab).write_table(path)
    assert not path.exists()


def write_table(tmp_path, fab, rt, edit=None, extra=""):
    path = tmp_path / "t.txt"
    rt.write_table(path)
    lines = path.read_text().splitlines()
    if edit:
        lines = edit(lines)
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


@pytest.fixture
def small():
    fab = daqnet.fat_tree(radix=4, hosts=8)  # 4 leaves of 2 hosts, 2 spines
    return fab, routing.dmodk(fab)


def _set_entry(lines, switch, dst, port):
    return [f"{switch} {dst} {port}" if ln.startswith(f"{switch} {dst} ") else ln for ln in lines]


def test_table_loop(tmp_path, small):
    fab, rt = small
    # spine0 sends node7 back down to leaf0, which sends it up to spine0 again
    p = write_table(
        tmp_path,
        fab,
        rt,
        lambda ls: _set_entry(_set_entry(ls, "spine0", "node7", 1), "leaf0", "node7", 3),
    )
    with pytest.raises(
        ValueError, match=r"routing \(table .*t.txt\): loop toward node7: leaf0 -> spine0 -> leaf0"
    ):
        routing.from_file(fab, p)


def test_table_black_hole(tmp_path, small):
    fab, rt = small
    p = write_table(
        tmp_path, fab, rt, lambda ls: [ln for ln in ls if not ln.startswith("spine1 node5 ")]
    )
    with pytest.raises(
        ValueError, match=r"black hole: switch spine1 has no route to node5 \(reached from leaf"
    ):
        routing.from_file(fab, p)


def test_table_misdelivery(tmp_path, small):
    fab, rt = small
    p = write_table(tmp_path, fab, rt, lambda ls: _set_entry(ls, "leaf2", "node5", 1))
    with pytest.raises(
        ValueError, match="traffic for node5 is delivered to host node4 by switch leaf2"
    ):
        routing.from_file(fab, p)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("leafX node1 1\n", r"t.txt:\d+: unknown switch 'leafX'"),
        ("node1 node2 1\n", r"t.txt:\d+: 'node1' is a host, not a switch"),
        ("leaf0 nodeZ 1\n", r"t.txt:\d+: unknown destination host 'nodeZ'"),
        ("leaf0 spine1 1\n", r"t.txt:\d+: destination 'spine1' is a switch, not a host"),
        ("leaf0 node1 9\n", r"t.txt:\d+: switch leaf0 has no port 9 \(ports 1..4\)"),
        ("leaf0 node1 x\n", r"t.txt:\d+: output port 'x' is not a whole number"),
        (
            "leaf0 node1\n",
            r"t.txt:\d+: expected '<switch> <destination host> <output port>', got 2 fields",
        ),
        (
            "leaf0 node1 1\n",
            r"t.txt:\d+: second entry for switch leaf0 and destination node1 \(first at line \d+\)",
        ),
    ],
)
def test_table_parse_errors(tmp_path, small, extra, message):
    fab, rt = small
    with pytest.raises(ValueError, match=message):
        routing.from_file(fab, write_table(tmp_path, fab, rt, extra=extra))


def test_table_uncabled_port(tmp_path):
    fab = daqnet.fat_tree(radix=4, hosts=3)  # leaf1 has a free host port
    path = tmp_path / "t.txt"
    path.write_text("leaf1 node0 2\n")
    with pytest.raises(ValueError, match=r"t.txt:1: port 2 of switch leaf1 is not cabled"):
        routing.from_file(fab, path)


def test_table_unreadable_and_empty(tmp_path, small):
    fab, _ = small
    with pytest.raises(ValueError, match="cannot read routing table .*missing.txt"):
        routing.from_file(fab, tmp_path / "missing.txt")
    (tmp_path / "e.txt").write_text("# nothing\n\n")
    with pytest.raises(ValueError, match="no forwarding entries"):
        routing.from_file(fab, tmp_path / "e.txt")


def test_table_bom_directory_and_huge_port(tmp_path, small):
    fab, rt = small
    p = write_table(tmp_path, fab, rt)
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    np.testing.assert_array_equal(routing.from_file(fab, p).table(), rt.table())
    with pytest.raises(ValueError, match="is a directory"):
        routing.from_file(fab, tmp_path)
    with pytest.raises(ValueError, match=r"t.txt:\d+: output port '99999999999' is out of range"):
        routing.from_file(fab, write_table(tmp_path, fab, rt, extra="leaf0 node1 99999999999\n"))


def test_port_lookup_bounds(small):
    fab, rt = small
    assert rt.port("leaf0", "node7") in (3, 4)
    with pytest.raises(ValueError, match="is not a switch"):
        rt.port(0, 0)
    with pytest.raises(ValueError, match="is not a switch"):
        rt._core.port(99999, 0)
    with pytest.raises(ValueError, match="from 0 \\(no entry\\) to 65535"):
        routing.from_ports(fab, rt.table().astype(np.int64) + 65536)


def test_from_ports_checks_loops(small):
    fab, rt = small
    t = rt.table().copy()
    t[:] = 0
    with pytest.raises(ValueError, match="black hole"):
        routing.from_ports(fab, t)


def test_engine_errors(small):
    fab, _ = small
    with pytest.raises(
        ValueError,
        match="routing.engine = 'ecmp': expected one of dmodk, random, minhop, table, lft-dump",
    ):
        routing.build(fab, "ecmp")
    with pytest.raises(ValueError, match='routing.engine = "table" needs routing.file'):
        routing.build(fab, "table")


def test_a_file_name_too_long_is_one_line(tmp_path):
    # Found by the scenario fuzzer: std::filesystem::is_directory threw its own
    # filesystem_error for a name past NAME_MAX, a RuntimeError traceback from Python.
    from daqnet.errors import USER_ERRORS

    long = tmp_path / ("x" * 300)
    fab = daqnet.fat_tree(radix=8, hosts=16)
    for read in (daqnet.fabric.from_ibnetdiscover, lambda p: routing.from_file(fab, p)):
        with pytest.raises(USER_ERRORS, match="File name too long"):
            read(long)
    with pytest.raises(USER_ERRORS, match="File name too long"):
        routing.from_lft_dump(fab, long)
