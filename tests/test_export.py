"""daqnet export: every format is read back by the tool it is for (SimGrid, Graphviz, ibsim
via daqnet's importer, Slurm via daqnet's reader) and describes the same fabric."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import simgrid_ref
from daqnet import Scenario, fabric, routing
from daqnet.cli import main
from daqnet.simulate import simulate_steps

IB = Path(__file__).parent / "data" / "ib"


def write_scenario(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(body)
    return p


@pytest.mark.skipif(
    simgrid_ref.unavailable_reason() is not None,
    reason=f"SimGrid: {simgrid_ref.unavailable_reason()}",
)
@pytest.mark.parametrize(
    "body",
    [
        # a partial 3-level tree routed by D-mod-K, hosts named in a shuffled order
        '[fabric]\nradix = 8\nlevels = 3\nhosts = 40\nnaming = "shuffled"\nlatency_seconds = 0.0\n'
        '[placement]\norder = "hostname"\n',
        # the fabric and tables OpenSM made (committed corpus), imported
        f'[fabric]\nkind = "ibnetdiscover"\nfile = "{IB}/ibnetdiscover-27.out"\nlatency_seconds = 0.0\n'
        f'[routing]\nengine = "lft-dump"\nfile = "{IB}/opensm-lfts-27.dump"\n'
        '[placement]\norder = "random"\nseed = 3\n',
    ],
    ids=["fat-tree", "imported"],
)
def test_simgrid_platform_loads_and_times_steps_like_daqnet(tmp_path, body):
    scen = write_scenario(tmp_path, body + "[workload]\nschedule = 'random'\nseed = 2\n")
    xml = tmp_path / "platform.xml"
    assert main(["export", str(scen), "--format", "simgrid", "-o", str(xml)]) == 0
    sc = Scenario.load(scen)
    fab, _rt, pl, wl = sc.build()
    names = fab.host_names
    steps = [[(names[a], names[b]) for a, b in pl.hosts[flows]] for flows in wl.steps()]
    counts, want = simgrid_ref.platform_step_times(xml, steps, 2**20)
    assert counts["hosts"] == fab.num_hosts
    assert counts["links"] == fab.num_links
    got = [s["seconds"] for s in simulate_steps(sc).steps]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_simgrid_platform_routes_are_the_routing_paths(tmp_path):
    import xml.etree.ElementTree as ET

    from daqnet.io.simgrid_platform import link_id, write_simgrid_platform

    f = fabric.fat_tree(radix=4, hosts=8, levels=2, naming="shuffled")
    r = routing.random(f, seed=1)
    path = tmp_path / "p.xml"
    write_simgrid_platform(r, path)
    root = ET.parse(path).getroot()
    zone = root.find("zone")
    assert zone is not None and zone.get("routing") == "Full"
    names = f.node_names
    lt = f.links()
    routes = zone.findall("route")
    assert len(routes) == 8 * 7
    for rt in routes:
        s, d = f.node(rt.get("src")), f.node(rt.get("dst"))
        want = [
            link_id(names, lt["src"][i], lt["src_port"][i], lt["dst"][i], lt["dst_port"][i])
            for i in r.path(s, d)
        ]
        assert [c.get("id") for c in rt.findall("link_ctn")] == want


def test_dot_has_every_cable_and_graphviz_reads_it(tmp_path):
    scen = write_scenario(tmp_path, "[fabric]\nradix = 8\nhosts = 20\n")
    dot = tmp_path / "f.dot"
    assert main(["export", str(scen), "--format", "dot", "-o", str(dot)]) == 0
    text = dot.read_text()
    f = Scenario.load(scen).build_fabric()
    assert text.count(" -- ") == f.num_links // 2
    assert '"node01" -- "leaf0" [taillabel="1", headlabel="2"' in text
    if shutil.which("dot") is None:
        pytest.skip("Graphviz: dot is not installed (apt-get install graphviz)")
    svg = subprocess.run(["dot", "-Tsvg", str(dot)], capture_output=True, text=True, check=True)
    assert svg.stdout.count('class="edge"') == f.num_links // 2


@pytest.mark.parametrize("fmt", ["ibsim", "slurm-topology"])
def test_ibsim_and_topology_conf_round_trip(tmp_path, fmt):
    scen = write_scenario(tmp_path, '[fabric]\nradix = 8\nhosts = 28\nnaming = "shuffled"\n')
    out = tmp_path / "out"
    assert main(["export", str(scen), "--format", fmt, "-o", str(out)]) == 0
    f = Scenario.load(scen).build_fabric()
    kind = "ibnetdiscover" if fmt == "ibsim" else "slurm-topology"
    g = Scenario({"fabric": {"kind": kind, "file": str(out)}}, source="<x>").build_fabric()
    assert sorted(g.host_names) == sorted(f.host_names)
    assert g.num_switches == f.num_switches and g.num_links == f.num_links


@pytest.mark.parametrize("name", ["node03,x", "e[1]", "n=1"])
def test_a_name_a_topology_conf_cannot_hold_is_one_error(tmp_path, capsys, name):
    # Host names come from node descriptions or a naming file; a comma or bracket ended in
    # python-hostlist's traceback (BadHostlist) half-way through the file.
    names = tmp_path / "names.txt"
    names.write_text(f"node01\nnode02\n{name}\nnode04\n")
    scen = write_scenario(
        tmp_path, f'[fabric]\nradix = 8\nhosts = 4\nnaming = "file"\nnaming_file = "{names}"\n'
    )
    out = tmp_path / "topology.conf"
    assert main(["export", str(scen), "--format", "slurm-topology", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"error: {out}: the name {name!r} cannot be written in a topology.conf" in err
    assert "Traceback" not in err and not out.exists()
    # To stdout: the message named a temporary file (/tmp/daqnet-6nh91t04/out).
    assert main(["export", str(scen), "--format", "slurm-topology", "-o", "-"]) == 2
    captured = capsys.readouterr()
    assert f"error: stdout (-o -): the name {name!r} cannot be" in captured.err
    assert "daqnet-" not in captured.err and captured.out == ""
    assert main(["export", str(scen), "--format", "ibsim", "-o", str(tmp_path / "f.net")]) == 0


def test_a_failed_export_keeps_the_file_and_names_the_users_path(tmp_path, capsys):
    # ibsim has no speed for 33 Gb/s: the C++ writer stops half-way. It wrote the file in
    # place (the old content gone, a truncated one left); errors named the temporary file.
    scen = write_scenario(tmp_path, "[fabric]\nradix = 8\nhosts = 8\nlink_gbps = 33\n")
    net = tmp_path / "fabric.net"
    net.write_text("keep\n")
    assert main(["export", str(scen), "--format", "ibsim", "-o", str(net)]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {net}: no InfiniBand width x speed carries 33 Gb/s (link " in err
    assert "export --format graphviz or simgrid keeps any rate" in err
    assert (
        net.read_text() == "keep\n"
        and [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []
    )
    assert main(["export", str(scen), "--format", "dot", "-o", str(tmp_path)]) == 2
    assert f"error: {tmp_path}: is a directory (give a file name)" in capsys.readouterr().err
    missing = tmp_path / "no" / "f.dot"
    assert main(["export", str(scen), "--format", "dot", "-o", str(missing)]) == 2
    assert f"error: {missing}: cannot write here: No such file" in capsys.readouterr().err


def test_export_to_a_pipe_and_through_a_link(tmp_path, capfd):
    # Not a regular file: written as it is (a temporary file renamed over /dev/stdout would
    # replace the link). A link to a file: the file is replaced, the link stays.
    scen = write_scenario(tmp_path, "[fabric]\nradix = 8\nhosts = 8\n")
    assert main(["export", str(scen), "--format", "dot", "-o", "/dev/stdout"]) == 0
    assert "graph fabric {" in capfd.readouterr().out and Path("/dev/stdout").is_symlink()
    (tmp_path / "link.dot").symlink_to(tmp_path / "real.dot")
    assert main(["export", str(scen), "--format", "dot", "-o", str(tmp_path / "link.dot")]) == 0
    assert (tmp_path / "link.dot").is_symlink() and "graph fabric {" in (
        tmp_path / "real.dot"
    ).read_text()


def test_export_refuses_multipath_for_simgrid(tmp_path, capsys):
    from daqnet.io.simgrid_platform import write_simgrid_platform

    f = fabric.fat_tree(radix=4, hosts=4, levels=2)
    r0 = routing.dmodk(f)
    paths = {}
    for s in range(4):
        for d in range(4):
            if s != d:
                paths[(s, d)] = [(0.5, r0.path(s, d)), (0.5, r0.path(s, d))]
    r = routing.from_paths(f, paths)
    if r.single_path:
        pytest.skip("from_paths merged the equal paths")
    with pytest.raises(Exception, match="several paths"):
        write_simgrid_platform(r, tmp_path / "p.xml")


def test_simgrid_export_shows_progress_and_writes_nothing_when_interrupted(tmp_path, capsys):
    # Full routing grows with the square of the hosts: 2.7 GB and a minute at 3,000.
    scen = write_scenario(tmp_path, "[fabric]\nradix = 8\nhosts = 32\n")
    xml = tmp_path / "p.xml"
    assert main(["export", str(scen), "--format", "simgrid", "-o", str(xml), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "32/32" in err.replace("\r", "\n").splitlines()[-2]  # the bar, then the note
    assert f"wrote {xml} ({xml.stat().st_size / 1e3:.1f} kB): SimGrid platform" in err

    from daqnet.io.simgrid_platform import write_simgrid_platform

    sc = Scenario.load(scen)
    routing_ = sc.build_routing(sc.build_fabric())
    calls = []

    def stop_at_the_tenth(done, total):
        calls.append(done)
        if done == 10:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_simgrid_platform(routing_, tmp_path / "q.xml", progress=stop_at_the_tenth)
    assert calls == list(range(11)) and not (tmp_path / "q.xml").exists()
    assert not list(tmp_path.glob(".q.xml*")) and not list(tmp_path.glob("q.xml.*"))


def test_a_topology_in_pieces_is_named_as_such(tmp_path, capsys):
    # Two leaves and no spine read "black hole: switch leaf0 has no route to node05".
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=leaf0 Nodes=node[00-03]\nSwitchName=leaf1 Nodes=node[04-07]\n")
    scen = tmp_path / "s.toml"
    scen.write_text(
        f'[fabric]\nkind = "slurm-topology"\nfile = "{conf}"\n[routing]\nengine = "minhop"\n'
    )
    assert main(["conflicts", str(scen)]) == 2
    err = capsys.readouterr().err
    assert "the fabric is not connected: no cable path joins leaf1 (host node04) to leaf0" in err
