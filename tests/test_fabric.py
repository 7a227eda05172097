"""Fat-tree construction against closed forms and the cabling rules."""

import math

import daqnet
import pytest
from daqnet import DaqnetError


def level_counts(fab):
    lv = fab.nodes()["level"]
    return [int((lv == i).sum()) for i in range(fab.levels + 1)]


@pytest.mark.parametrize(
    ("radix", "hosts", "levels", "taper", "expected"),
    [
        (36, 540, 2, "1:1", [540, 30, 18]),
        (36, 512, 2, "1:1", [512, 29, 18]),
        (48, 528, 2, "1:1", [528, 22, 24]),
        (36, 648, 2, "1:1", [648, 36, 18]),
        (36, 540, 2, "2:1", [540, 30, 9]),
        # 3 levels: pods of radix/2 leaves; radix/2 spines per pod; (up-links)^2 cores
        (36, 4500, 3, "1:1", [4500, 250, 14 * 18, 18 * 18]),
        (36, 4500, 3, ["2:1", "1:1"], [4500, 250, 14 * 9, 9 * 18]),
        (36, 4500, 3, ["2:1", "2:1"], [4500, 250, 14 * 9, 9 * 9]),
        (8, 20, 3, "1:1", [20, 5, 2 * 4, 16]),
    ],
)
def test_switch_counts(radix, hosts, levels, taper, expected):
    fab = daqnet.fat_tree(radix=radix, hosts=hosts, levels=levels, taper=taper)
    assert level_counts(fab) == expected
    assert fab.num_hosts == hosts


@pytest.mark.parametrize(
    ("radix", "hosts", "levels", "taper"),
    [(36, 540, 2, "1:1"), (12, 100, 3, ["2:1", "2:1"]), (36, 500, 2, "2:1"), (10, 77, 3, "1:1")],
)
def test_ports_and_cables(radix, hosts, levels, taper):
    fab = daqnet.fat_tree(radix=radix, hosts=hosts, levels=levels, taper=taper)
    nodes = fab.nodes()
    lt = fab.links()
    # every switch within its radix, every host on exactly one cable
    assert (nodes["ports"][fab.num_hosts :] <= radix).all()
    assert (nodes["ports_used"][: fab.num_hosts] == 1).all()
    # two directed links per cable, the pair reversed
    assert fab.num_links % 2 == 0
    assert (lt["src"][0::2] == lt["dst"][1::2]).all() and (lt["dst"][0::2] == lt["src"][1::2]).all()
    # cables only between adjacent levels, the first link of each going up
    lv = nodes["level"]
    assert (lv[lt["dst"][0::2]] == lv[lt["src"][0::2]] + 1).all()
    # every link's class names the levels of its ends, in the order of the old tier/up
    names = ["host", "leaf", "spine", "core"][: levels + 1]
    expected = [
        f"{names[lv[a]]}->{names[lv[b]]}" for a, b in zip(lt["src"], lt["dst"], strict=True)
    ]
    assert fab.link_classes() == expected
    order = [f"{names[t + d]}->{names[t + 1 - d]}" for t in range(levels) for d in (0, 1)]
    assert fab.link_class_names() == order
    # cabled ports agree with the link table
    assert nodes["ports_used"].sum() == fab.num_links


def test_leaf_taper_removes_uplinks():
    fab = daqnet.fat_tree(radix=36, hosts=540, taper="2:1")
    leaf = fab.node("leaf0")
    ports = fab.ports(leaf)
    up = [p for p, peer, _, _ in ports if peer >= fab.num_hosts]
    down = [p for p, peer, _, _ in ports if 0 <= peer < fab.num_hosts]
    assert len(down) == 18 and len(up) == 9


def test_two_level_wiring_is_complete_bipartite():
    fab = daqnet.fat_tree(radix=12, hosts=60, levels=2)
    leaves = [fab.node(f"leaf{i}") for i in range(10)]
    spines = {fab.node(f"spine{j}") for j in range(6)}
    for leaf in leaves:
        peers = [peer for _, peer, _, _ in fab.ports(leaf) if peer >= fab.num_hosts]
        assert set(peers) == spines and len(peers) == 6


def test_three_level_pods():
    fab = daqnet.fat_tree(radix=8, hosts=64, levels=3)
    # pod p: leaves 4p..4p+3 each connect to the pod's 4 spines only
    for leaf in range(16):
        pod = leaf // 4
        peers = {
            fab.name(peer)
            for _, peer, _, _ in fab.ports(fab.node(f"leaf{leaf}"))
            if peer >= fab.num_hosts
        }
        assert peers == {f"spine{pod * 4 + j}" for j in range(4)}
    # every core reaches every pod exactly once
    for c in range(16):
        peers = [fab.name(peer) for _, peer, _, _ in fab.ports(fab.node(f"core{c}")) if peer >= 0]
        assert sorted(int(n[5:]) // 4 for n in peers) == [0, 1, 2, 3]


def test_partial_subtrees_reported():
    fab = daqnet.fat_tree(radix=36, hosts=64)
    assert fab.partial_subtrees() == [
        {"level": "leaf", "switches": ["leaf3"], "hosts": 10, "capacity": 18}
    ]
    assert daqnet.fat_tree(radix=36, hosts=72).partial_subtrees() == []
    # 3 levels, radix 8: pods of 16 hosts served by 4 spines; 120 hosts = 7 pods + 8 hosts
    fab = daqnet.fat_tree(radix=8, hosts=120, levels=3)
    assert fab.partial_subtrees() == [
        {
            "level": "spine",
            "switches": [f"spine{i}" for i in range(28, 32)],
            "hosts": 8,
            "capacity": 16,
        }
    ]
    # each of those spines really reaches only the last pod's two leaves
    for name in ("spine28", "spine31"):
        leaves = {
            fab.name(p)
            for _, p, _, _ in fab.ports(name)
            if p >= 0 and fab.name(p).startswith("leaf")
        }
        assert leaves == {"leaf28", "leaf29"}


def test_capacity_closed_form():
    for radix in (4, 8, 36, 48):
        daqnet.fat_tree(radix=radix, hosts=radix * radix // 2)
        with pytest.raises(ValueError, match="holds at most"):
            daqnet.fat_tree(radix=radix, hosts=radix * radix // 2 + 1)
    daqnet.fat_tree(radix=8, hosts=8**3 // 4, levels=3)
    with pytest.raises(ValueError, match=f"holds at most {8**3 // 4}"):
        daqnet.fat_tree(radix=8, hosts=8**3 // 4 + 1, levels=3)


def test_spine_radix_director():
    fab = daqnet.fat_tree(radix=36, hosts=18 * 40, spine_radix=648)
    assert level_counts(fab) == [720, 40, 18]


def test_names_and_lookup():
    fab = daqnet.fat_tree(radix=8, hosts=20)
    assert fab.host_names[:3] == ["node00", "node01", "node02"]
    assert fab.node("node05") == 5
    assert fab.name(fab.node("spine1")) == "spine1"
    with pytest.raises(DaqnetError, match="no host or switch named 'nope'"):
        fab.node("nope")


def test_shuffled_naming_is_seeded_permutation():
    a = daqnet.fat_tree(radix=8, hosts=20, naming="shuffled", naming_seed=1)
    b = daqnet.fat_tree(radix=8, hosts=20, naming="shuffled", naming_seed=1)
    c = daqnet.fat_tree(radix=8, hosts=20, naming="shuffled", naming_seed=2)
    assert a.host_names == b.host_names != c.host_names
    assert sorted(a.host_names) == daqnet.fat_tree(radix=8, hosts=20).host_names


def test_naming_file(tmp_path):
    f = tmp_path / "names.txt"
    f.write_text("# rack a\n" + "\n".join(f"a{i}" for i in range(10)) + "\n")
    fab = daqnet.fat_tree(radix=8, hosts=10, naming="file", naming_file=f)
    assert fab.host_names[3] == "a3"
    f.write_text("a\nb\n")
    with pytest.raises(DaqnetError, match=r"names.txt: 2 hostnames for a fabric of 10 hosts"):
        daqnet.fat_tree(radix=8, hosts=10, naming="file", naming_file=f)
    f.write_text("a\na\n")
    with pytest.raises(DaqnetError, match=r"names.txt:2: host 'a' already listed on line 1"):
        daqnet.fat_tree(radix=8, hosts=2, naming="file", naming_file=f)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"radix": 35}, "fabric.radix = 35: must be an even number from 4 to 4096"),
        ({"radix": 2}, "fabric.radix = 2"),
        ({"levels": 4}, "fabric.levels = 4: must be 2 or 3"),
        ({"hosts": 1}, "fabric.hosts = 1"),
        ({"hosts": 649}, "fabric.hosts = 649: .* holds at most 648 hosts"),
        ({"taper": "4:1"}, 'fabric.taper = "4:1" does not divide the 18 down-ports'),
        ({"taper": "1:2"}, "a taper keeps at most as many up-links"),
        ({"taper": "two"}, "fabric.taper = 'two': expected a ratio"),
        ({"taper": ["2:1", "2:1"]}, "fabric.taper: 2 ratios given, a 2-level tree has 1"),
        ({"levels": 3, "taper": ["1:1", "5:1"]}, r'fabric.taper\[1\] = "5:1" does not divide'),
        ({"hosts_per_leaf": 24}, "needs 48 ports on a 36-port leaf"),
        ({"link_gbps": 0}, "fabric.link_gbps must be a finite number > 0"),
        ({"naming": "alphabet"}, "fabric.naming = 'alphabet': expected one of"),
    ],
)
def test_bad_fabric(kwargs, message):
    args = {"radix": 36, "hosts": 540, **kwargs}
    with pytest.raises(ValueError, match=message):
        daqnet.fat_tree(**args)


def test_describe_counts():
    fab = daqnet.fat_tree(radix=36, hosts=540)
    assert fab.describe() == "2-level fat tree, radix 36, 540 hosts, 30 leaves, 18 spines"
    assert math.isclose(fab.links()["gbps"][0], 100.0)


def test_the_core_s_errors_are_daqnet_errors():
    # errors.py promises one error type for bad input: the core's was a ValueError of its own,
    # and `except daqnet.DaqnetError` missed daqnet.fat_tree(radix=7)'s.
    with pytest.raises(DaqnetError, match=r"fabric.radix = 7: must be an even number"):
        daqnet.fat_tree(radix=7, hosts=10)
    assert issubclass(daqnet.errors.CoreError, DaqnetError) and issubclass(DaqnetError, ValueError)
