"""The command line as a user runs it: summaries, JSON, CSV, figures, --set, errors, Ctrl-C."""

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import lhcb72_protocol, small_scenario
from daqnet import DaqnetError
from daqnet.cli import main
from daqnet.scenario import Scenario, parse_set

SCENARIO = small_scenario("t", 30)


@pytest.fixture
def scenario(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(SCENARIO)
    return p


def read_csv(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def run_cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "daqnet", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_json_schema(scenario, capsys):
    assert main(["conflicts", str(scenario), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("hosts", "total_flows", "total_conflicts", "max_link_load", "steps"):
        assert key in out
    assert out["hosts"] == 30 and out["total_flows"] == 30 * 29
    assert len(out["steps"]) == 29
    assert set(out["steps"][0]) >= {"step", "flows", "conflicts", "max_link_load"}
    assert sum(s["conflicts"] for s in out["steps"]) == out["total_conflicts"]
    assert max(s["max_link_load"] for s in out["steps"]) == out["max_link_load"]
    assert not out["interrupted"]


def test_set_overrides(scenario, capsys):
    def total(*sets):
        argv = ["conflicts", str(scenario), "--json"]
        for s in sets:
            argv += ["--set", s]
        assert main(argv) == 0
        return json.loads(capsys.readouterr().out)

    base = total("fabric.hosts=32")
    assert base["hosts"] == 32 and base["total_conflicts"] == 0
    hostname = total("fabric.hosts=32", "placement.order=hostname")
    assert hostname["total_conflicts"] > 0
    tapered = total("fabric.hosts=32", 'fabric.taper="2:1"')
    assert tapered["total_conflicts"] > 0 and "2-level" in tapered["fabric"]
    assert (
        total("fabric.hosts=32", "fabric.taper=2:1")["total_conflicts"]
        == tapered["total_conflicts"]
    )


def test_parse_set_values():
    assert parse_set("fabric.hosts=64") == ("fabric", "hosts", 64)
    assert parse_set("placement.order=random") == ("placement", "order", "random")
    assert parse_set('fabric.taper="2:1"') == ("fabric", "taper", "2:1")
    assert parse_set("fabric.taper=2:1") == ("fabric", "taper", "2:1")
    assert parse_set("workload.shifts=[1, 2]") == ("workload", "shifts", [1, 2])
    assert parse_set("fabric.link_gbps=200.5") == ("fabric", "link_gbps", 200.5)


def test_plot_into_the_out_directory_it_makes(scenario, tmp_path, capsys):
    # README's `--out hostname-64/ --plot hostname-64/conflicts.png` on a fresh directory: the figure's
    # directory was checked before --out made it, and the command refused to run.
    out = tmp_path / "out"
    assert main(["conflicts", str(scenario), "--out", str(out), "--plot", str(out / "c.png")]) == 0
    assert (out / "c.png").stat().st_size > 0 and (out / "steps.csv").exists()
    # A directory neither there nor made: still refused, before the analysis.
    assert main(["conflicts", str(scenario), "--plot", str(tmp_path / "nowhere" / "c.png")]) == 2
    assert "directory" in capsys.readouterr().err


def test_summary_and_csv_and_plot(scenario, tmp_path, capsys):
    out_dir = tmp_path / "csv"
    fig = tmp_path / "c.png"
    assert (
        main(
            [
                "conflicts",
                str(scenario),
                "--set",
                "placement.order=hostname",
                "--csv",
                str(out_dir),
                "--plot",
                str(fig),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "conflicts in" in text and "leaf->spine" in text and "most conflicting links" in text
    steps = read_csv(out_dir / "steps.csv")
    assert len(steps) == 29 and set(steps[0]) >= {"step", "flows", "conflicts", "max_link_load"}
    links = read_csv(out_dir / "links.csv")
    assert {"from", "from_port", "to", "to_port", "class", "flows", "conflicts"} <= set(links[0])
    assert sum(int(r["conflicts"]) for r in links) == sum(int(r["conflicts"]) for r in steps)
    levels = read_csv(out_dir / "levels.csv")
    assert {r["class"] for r in levels} == {
        "host->leaf",
        "leaf->host",
        "leaf->spine",
        "spine->leaf",
    }
    rows = read_csv(out_dir / "conflicts.csv")
    assert rows and all(int(r["load"]) >= 2 for r in rows)
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tables_command_roundtrip(scenario, tmp_path, capsys):
    table = tmp_path / "lft.txt"
    assert main(["tables", str(scenario), "-o", str(table)]) == 0
    assert main(["conflicts", str(scenario), "--json", "--set", "placement.order=random"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert (
        main(
            [
                "conflicts",
                str(scenario),
                "--json",
                "--set",
                "placement.order=random",
                "--set",
                "routing.engine=table",
                "--set",
                f'routing.file="{table}"',
            ]
        )
        == 0
    )
    b = json.loads(capsys.readouterr().out)
    assert a["steps"] == b["steps"] and a["total_conflicts"] == b["total_conflicts"]


BAD = [
    (["--set", "fabric.radix=35"], "fabric.radix = 35: must be an even number from 4 to 4096"),
    (["--set", "fabric.radix=3"], "fabric.radix = 3"),
    (
        ["--set", "fabric.hosts=1000"],
        "fabric.hosts = 1000: a 2-level fat tree of 8-port switches with these settings holds at most 32 hosts "
        r"\(fabric.levels = 3 holds more\)",
    ),
    (["--set", "fabric.taper=3:1"], 'fabric.taper = "3:1" does not divide the 4 down-ports'),
    # Named the file, where the value came from --set.
    (
        ["--set", 'fabric.taper=["1:1","1:1"]'],
        r"set fabric.taper=\[\"1:1\",\"1:1\"\]: fabric.taper: 2 ratios given",
    ),
    (
        ["--set", "fabric.spine_radix=3"],
        r"a 2-level fat tree of 8-port switches \(3-port spines\) with these settings holds at most",
    ),
    (
        ["--set", "routing.engine=ospf"],
        "routing.engine = 'ospf': expected one of dmodk, random, minhop, table, lft-dump",
    ),
    (["--set", "fabric.colour=red"], "unknown key 'fabric.colour'"),
    (["--set", "network.x=1"], "unknown section 'network'"),
    (["--set", "fabric.hosts=many"], "fabric.hosts = 'many': expected a whole number"),
    # Simulated with 1.5 bytes, printed as "2-byte messages"; bench.fragment_bytes refused it.
    (
        ["--set", "simulate.message_bytes=1.5"],
        "simulate.message_bytes = 1.5: expected a whole number of bytes",
    ),
    # Taken, and written to run.cfg as 65.5, where bench.fragment_bytes = 1e3.5 is refused.
    (
        ["--set", "bench.fragment_bytes_per_ru=[65536,1000000.7]"],
        r"bench.fragment_bytes_per_ru = \[65536, 1000000.7\]: every value must be a whole number of bytes",
    ),
    (
        ["--set", "routing.engine=table", "--set", "routing.file=nope.txt"],
        "cannot read routing table .*nope.txt",
    ),
    (["--set", "placement.order=file"], 'placement.order = "file" needs placement.file'),
    (["--set", "fabric.levels=4"], "fabric.levels = 4: must be 2 or 3"),
    # In range for a double, not for the figures derived from it: inf Gb/s, NaN seconds.
    (["--set", "fabric.link_gbps=1e308"], "fabric.link_gbps = 1e[+]308: must be at most 1e[+]09"),
    (
        ["--set", "simulate.message_bytes=1e308"],
        "simulate.message_bytes = 1e[+]308: must be at most 9.0072e[+]15",
    ),
    (
        ["--set", "simulate.injection_gbps=5e-324"],
        "simulate.injection_gbps = 5e-324: must be at least 1e-06",
    ),
    # 30 hosts x 2^31-1 tasks: an array of 64 billion ranks was a MemoryError traceback.
    (
        ["--set", "workload.tasks_per_node=2147483647"],
        "workload.tasks_per_node = 2147483647 on 30 hosts makes 64,424,509,410 tasks, more than 2,147,483,647",
    ),
    (["--set", "workload.kind=broadcast"], "workload.kind = 'broadcast': expected one of"),
    (["--set", "hosts=3"], "set hosts=3: expected section.key=value"),
    (
        ["--set", "routing.engine=random", "--set", "routing.seed=-1"],
        "routing.seed = -1: a seed must be from 0 to 2",
    ),
    (
        ["--set", "routing.seed=99999999999999999999999"],
        "routing.seed = .*: a seed must be from 0 to 2",
    ),
    (["--set", "placement.seed=-5"], "placement.seed = -5: a seed must be"),
    (["--set", "fabric.naming_seed=-1"], "fabric.naming_seed = -1: a seed must be"),
    (["--set", "fabric.hosts=99999999999"], "fabric.hosts = 99999999999: must be from"),
    (["--set", "fabric.taper=99999999999:1"], "ratio terms must be at most 65535"),
    (
        ["--set", "workload.kind=shift", "--set", "workload.shifts=[99999999999999999999]"],
        "workload.shifts = .*: expected a list of whole numbers up to",
    ),
    (
        ["--set", "fabric.radix=100000", "--set", "fabric.hosts=2"],
        "fabric.radix = 100000: must be an even number from 4 to 4096",
    ),
    (["--set", "fabric.spine_radix=5000"], "fabric.spine_radix = 5000: must be from 2 to 4096"),
    (
        ["--set", "fabric.radix=4096", "--set", "fabric.levels=3"],
        "switch ports .* is more than daqnet builds",
    ),
    (
        ["--set", "fabric.latency_seconds=-1e-6"],
        "fabric.latency_seconds must be a finite number >= 0",
    ),
    (["--set", "fabric.link_gbps=inf"], "fabric.link_gbps = inf: must be a finite number"),
    (["--set", "fabric.hosts_per_leaf=0"], "fabric.hosts_per_leaf = 0: must be from 1 to"),
    (["--set", 'fabric.host_prefix="a b"'], "fabric.host_prefix = 'a b': use letters, digits"),
    (["--set", "fabric.host_prefix=leaf"], "fabric.host_prefix = 'leaf': .*not a switch prefix"),
    (["--set", "placement.ranks=1"], "placement.ranks = 1: must be between 2 and the 30 hosts"),
    (["--plot", "out.foo"], "figure out.foo: unknown figure format 'foo'"),
    (
        ["--plot", "/nonexistent/dir/c.png"],
        "figure /nonexistent/dir/c.png: directory /nonexistent/dir does not exist",
    ),
    (["--csv", ""], "--csv: empty directory name"),
]


@pytest.mark.parametrize(("extra", "message"), BAD)
def test_bad_input_one_line(scenario, extra, message):
    r = run_cli("conflicts", scenario, *extra)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert re.search(message, lines[0]), lines[0]
    assert lines[0].startswith("daqnet: error: ")


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("fabric.nami\nled", r"set 'fabric.nami\\nled': expected section.key=value"),
        ("fab\nric.hosts=4", r"set 'fab\\nric.hosts=4': unknown section 'fab\\nric'"),
        ("fabric.ho\tsts=4", r"unknown key 'fabric.ho\\tsts'"),
    ],
)
def test_set_items_with_line_breaks_stay_on_one_line(scenario, item, message):
    # Found by the atheris fuzzer: the item was echoed as typed, line break included.
    r = run_cli("conflicts", scenario, "--set", item)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert re.search(message, r.stderr), r.stderr


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("fabric.hosts=", r"^daqnet: error: set fabric.hosts = '': expected a whole number$"),
        ("fabric.hosts=true", r"^daqnet: error: set fabric.hosts = true: expected a whole number$"),
        ("fabric.hosts=24.5", r"^daqnet: error: set fabric.hosts = 24.5: expected a whole number$"),
        (
            "fabric.link_gbps=-5",
            r"^daqnet: error: set fabric.link_gbps=-5: fabric.link_gbps must be a finite number > 0$",
        ),
    ],
)
def test_a_bad_set_value_is_the_options_error_not_the_files(scenario, item, message):
    # It read "small.toml: fabric.hosts = '': ..." (the file has no such line), with
    # Python's True for TOML's true, and the builder's errors named the file, not the value.
    r = run_cli("conflicts", scenario, "--set", item)
    assert r.returncode == 2 and re.search(message, r.stderr.strip()), r.stderr


def test_toml_nested_too_deeply_is_one_line(tmp_path):
    # tomllib recurses per level: 2,000 nested arrays were a RecursionError traceback, in a
    # scenario, a --set value and a prices file alike.
    deep = "[" * 2000 + "1" + "]" * 2000
    p = tmp_path / "deep.toml"
    p.write_text(f"[fabric]\nradix = 8\nhosts = 16\n[workload]\nshifts = {deep}\n")
    ok = tmp_path / "ok.toml"
    ok.write_text(SCENARIO)
    for args in (
        ("conflicts", p),
        ("conflicts", ok, "--set", f"workload.shifts={deep}"),
        ("plan", "--hosts", "64", "--prices", p),
    ):
        r = run_cli(*args)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-500:]
        assert len(r.stderr.strip().splitlines()) == 1
        assert "nested too deeply" in r.stderr


def test_bad_scenario_files(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("[fabric\nradix = 8\n")
    r = run_cli("conflicts", p)
    assert r.returncode == 2 and "bad.toml: not valid TOML" in r.stderr and "line 1" in r.stderr
    p.write_text("[fabric]\nradix = 8\n")
    r = run_cli("conflicts", p)
    assert r.returncode == 2 and "missing required key 'fabric.hosts'" in r.stderr
    r = run_cli("conflicts", tmp_path / "absent.toml")
    assert r.returncode == 2 and "cannot read scenario" in r.stderr and "absent.toml" in r.stderr
    p.write_text('[fabric]\nhosts = 8\nradix = 8\n[routing]\nengine = "table"\nfile = "t.txt"\n')
    (tmp_path / "t.txt").write_text("leaf0 node1 1\nleaf0 node1 2 3\n")
    r = run_cli("conflicts", p)
    assert (
        r.returncode == 2
        and "t.txt:2: expected '<switch> <destination host> <output port>'" in r.stderr
    )
    assert len(r.stderr.strip().splitlines()) == 1


def test_set_on_a_section_that_is_not_a_table(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text("fabric = 5\n")
    r = run_cli("conflicts", p, "--set", "fabric.hosts=8")
    assert (
        r.returncode == 2 and "'fabric' must be a table" in r.stderr and "Traceback" not in r.stderr
    )


def test_set_path_is_relative_to_working_directory(scenario, tmp_path, capsys, monkeypatch):
    # scenario lives in tmp_path; the table is written into a sub-directory of the cwd
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["tables", str(scenario), "-o", "lft.txt"]) == 0
    assert (
        main(
            [
                "conflicts",
                str(scenario),
                "--json",
                "--set",
                "routing.engine=table",
                "--set",
                "routing.file=lft.txt",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["routing"] == f"table {work / 'lft.txt'}"


def test_broken_pipe_is_quiet(scenario):
    r = subprocess.run(
        f"{sys.executable} -m daqnet conflicts {scenario} --set placement.order=hostname | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.stdout.startswith("daqnet conflicts") and r.stderr == ""


def test_all_to_all_details_stay_small(capsys):
    # one step with every pair of 540 ranks: the summary shows a few links and flows only
    from pathlib import Path

    lhcb = Path(__file__).resolve().parents[1] / "examples" / "lhcb-540.toml"
    assert main(["conflicts", str(lhcb), "--set", "workload.kind=all-to-all"]) == 0
    text = capsys.readouterr().out
    assert "most loaded first" in text and "more" in text
    assert len(text.splitlines()) < 60


def test_table_relative_to_scenario(tmp_path, capsys):
    sub = tmp_path / "cluster"
    sub.mkdir()
    (sub / "s.toml").write_text(
        '[fabric]\nhosts = 8\nradix = 4\n[routing]\nengine = "table"\nfile = "lft.txt"\n'
    )
    assert (
        main(
            [
                "tables",
                str(sub / "s.toml"),
                "--set",
                "routing.engine=dmodk",
                "-o",
                str(sub / "lft.txt"),
            ]
        )
        == 0
    )
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert main(["conflicts", "cluster/s.toml", "--json"]) == 0
    finally:
        os.chdir(cwd)
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["routing"].endswith("lft.txt")


def test_scenario_api(scenario):
    sc = Scenario.load(scenario, ["fabric.hosts=16"])
    fabric, rt, pl, wl = sc.build()
    assert rt.engine == "dmodk"
    assert fabric.num_hosts == 16 and pl.ranks == 16 and wl.num_steps == 15
    assert sc["routing"]["engine"] == "dmodk" and sc.name == "t"


def test_ctrl_c_keeps_partial_results(tmp_path):
    s = tmp_path / "big.toml"
    # ~11,600 hosts: the analysis runs for several seconds on one core
    s.write_text('[fabric]\nradix = 36\nhosts = 11000\nlevels = 3\n[placement]\norder = "random"\n')
    out = tmp_path / "out"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "daqnet",
            "conflicts",
            str(s),
            "--json",
            "--progress",
            "--csv",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, stdout, stderr = _interrupt_once_shown(p, "step")
    assert p.returncode == 130, stderr
    result = json.loads(stdout)
    assert result["interrupted"] is True
    assert 0 < result["steps_done"] < result["steps_total"] == 10999
    assert len(result["steps"]) == result["steps_done"]
    assert "interrupted after" in stderr and "Traceback" not in stderr
    assert len(read_csv(out / "steps.csv")) == result["steps_done"]


def _interrupt_once_shown(p: subprocess.Popen, marker: str) -> tuple[str, str, str]:
    """Ctrl-C once `marker` shows on the run's stderr (or after 60 s): what stderr showed
    before, then the run's stdout and the rest of its stderr."""
    deadline = time.monotonic() + 60
    buf = ""
    while marker not in buf and time.monotonic() < deadline:
        buf += p.stderr.read(1)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    return buf, stdout, stderr


def _big_tree_interrupted(tmp_path: Path, hosts: int, command: list, marker: str):
    """`daqnet COMMAND big.toml ... --progress` over a radix-48 3-level tree of `hosts`,
    Ctrl-C once `marker` shows: exit status, stdout, all of stderr."""
    s = tmp_path / "big.toml"
    s.write_text(f"[fabric]\nradix = 48\nhosts = {hosts}\nlevels = 3\n")
    p = subprocess.Popen(
        [sys.executable, "-m", "daqnet", command[0], str(s), *map(str, command[1:]), "--progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    buf, stdout, stderr = _interrupt_once_shown(p, marker)
    return p.returncode, stdout, buf + stderr


def test_ctrl_c_while_routes_are_built(tmp_path):
    """Route building of the largest radix-48 tree (27,648 hosts, ~3 s) shows progress and
    stops at Ctrl-C: exit 130, one line, before the routes are done and the analysis starts."""
    code, stdout, stderr = _big_tree_interrupted(tmp_path, 27648, ["conflicts"], "routes:")
    assert code == 130, stderr
    assert "daqnet: interrupted" in stderr and "Traceback" not in stderr
    assert "routes: 100%" not in stderr and "conflicts:" not in stderr, stderr
    assert stdout == ""


def _tree_with_a_dump(tmp_path: Path) -> tuple[Path, Path]:
    """A 3,456-host radix-24 3-level tree and its D-mod-K tables as an opensm-lfts.dump
    (170 MB): a scenario that reads them back, and the dump."""
    from daqnet import _core, fat_tree
    from daqnet import routing as routings

    dump = tmp_path / "opensm-lfts.dump"
    _core.routing.write_lft_dump(
        routings.dmodk(fat_tree(radix=24, hosts=3456, levels=3))._core, str(dump)
    )
    s = tmp_path / "dump.toml"
    s.write_text(
        "[fabric]\nradix = 24\nhosts = 3456\nlevels = 3\n"
        f'[routing]\nengine = "lft-dump"\nfile = "{dump.name}"\n'
    )
    return s, dump


def test_reading_a_dump_reports_its_bytes_then_its_routes(tmp_path):
    from daqnet import fat_tree
    from daqnet import routing as routings

    _, dump = _tree_with_a_dump(tmp_path)
    calls: list[tuple[int, int]] = []
    routings.from_lft_dump(
        fat_tree(radix=24, hosts=3456, levels=3), dump, progress=lambda d, t: calls.append((d, t))
    )
    done, total = zip(*calls, strict=True)
    assert len(set(total)) == 1 and total[0] > dump.stat().st_size  # the bytes, then the routes
    assert list(done) == sorted(done) and done[-1] == total[0]


def test_ctrl_c_while_a_dump_is_read(tmp_path):
    """A subnet manager's dump of a large fabric runs to gigabytes (5.6 GB at 27,648 hosts,
    a minute to read) and was read with no progress and deaf to Ctrl-C: the bar shows
    bytes, and Ctrl-C stops the read at once."""
    s, _ = _tree_with_a_dump(tmp_path)
    p = subprocess.Popen(
        [sys.executable, "-m", "daqnet", "conflicts", str(s), "--progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    buf, stdout, stderr = _interrupt_once_shown(p, "tables:")
    stderr = buf + stderr
    assert p.returncode == 130, stderr
    assert "daqnet: interrupted" in stderr and "Traceback" not in stderr and stdout == ""
    assert "tables: 100%" not in stderr and "conflicts:" not in stderr, stderr


def test_ctrl_c_while_tables_are_written(tmp_path):
    """daqnet tables wrote its file whole before a Ctrl-C was seen (1.7 GB, 7 s late at
    27,648 hosts): the write shows progress and stops at once, leaving no file."""
    out = tmp_path / "lft.txt"  # 13,824 hosts: 20 M entries, 0.4 GB
    code, stdout, stderr = _big_tree_interrupted(tmp_path, 13824, ["tables", "-o", out], "writing:")
    assert code == 130, stderr
    assert "daqnet: interrupted" in stderr and "Traceback" not in stderr and stdout == ""
    assert "writing: 100%" not in stderr and "wrote" not in stderr, stderr
    assert [p.name for p in tmp_path.iterdir()] == ["big.toml"]  # no file, no temporary


def test_ctrl_c_in_the_last_report_of_a_write_counts(scenario, tmp_path):
    # A Ctrl-C seen only by the write's last progress report (its end, which a meter does not
    # stop at) was dropped: the file was renamed into place and the command said it wrote it.
    from daqnet import routing as routings

    sc = Scenario.load(str(scenario))
    routing = sc.build_routing(sc.build_fabric())
    seen = []

    def at_the_end(done: int, total: int) -> None:
        seen.append(done)
        if done == total:
            raise KeyboardInterrupt

    (tmp_path / "o").mkdir()
    out = tmp_path / "o" / "lft.txt"
    with pytest.raises(KeyboardInterrupt):
        routing.write_table(out, at_the_end)
    assert seen and seen[-1] > 0 and list(out.parent.iterdir()) == []  # nor a temporary
    routing.write_table(out)  # and without one, whole
    assert (routings.from_file(routing.fabric, out).table() == routing.table()).all()


def test_threads_option(scenario):
    one = run_cli("conflicts", scenario, "--json", "--threads", "1")
    two = run_cli("conflicts", scenario, "--json", "--threads", "2")
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    # provenance carries the wall-clock date, which may tick between the two runs
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert a.pop("provenance")["host"] == b.pop("provenance")["host"]
    assert a == b
    bad = run_cli("simulate", scenario, "--threads", "-1")
    assert bad.returncode == 2 and "--threads" in bad.stderr


@pytest.mark.parametrize("timeout", ["0", "-5", "nan", "inf"])
def test_opensm_time_out_must_be_a_time(scenario, tmp_path, timeout):
    # 0 and -5 failed every tool run at once, nan and inf waited for ever: refused up front.
    bad = run_cli("opensm", scenario, "--out", tmp_path / "o", "--timeout", timeout)
    assert bad.returncode == 2, bad.stderr
    assert "--timeout: must be a finite number of seconds > 0" in bad.stderr
    assert not (tmp_path / "o").exists()
    from daqnet.subnet_manager import run_opensm  # the API says so too, before any tool runs

    sc = Scenario.load(str(scenario))
    with pytest.raises(DaqnetError, match="must be a finite number of seconds > 0"):
        run_opensm(sc.build_fabric(), "ftree", tmp_path / "o", timeout=float(timeout))
    assert not (tmp_path / "o").exists()


def test_simulate_refuses_an_unusable_out_before_the_run(scenario, tmp_path, capsys):
    # --out naming a file: the whole run went by, its summary printed, and then nothing was
    # written. Now it stops at once, as conflicts and bench do.
    taken = tmp_path / "taken"
    taken.write_text("")
    assert main(["simulate", str(scenario), "--out", str(taken)]) == 2
    std = capsys.readouterr()
    assert std.out == "" and f"--out {taken}: is a file, not a directory" in std.err


@pytest.mark.parametrize(
    "command",
    [
        ["simulate"],
        ["conflicts"],
        ["conflicts", "--csv"],
        ["repair", "--what", "rank-order"],
        ["bench", "--prepare"],
    ],
)
def test_a_bad_scenario_leaves_no_output_directory(scenario, tmp_path, capsys, command):
    # The directory was made before the scenario was read: a typo left an empty one behind.
    out = tmp_path / "o" / "deeper"
    where = "--csv" if "--csv" in command else "--out"
    args = [command[0], str(scenario), *command[1:]]
    if "--csv" in args:
        args.remove("--csv")
    bad = "bench.meta_bytes=10" if command[0] == "bench" else "fabric.radix=7"
    assert main([*args, where, str(out), "--set", bad]) == 2
    assert bad.replace("=", " = ") in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# -- issue 9: inputs, outputs, numbering, configuration ------------------------------------
def test_scenario_encodings(tmp_path):
    p = tmp_path / "bom.toml"
    p.write_bytes(b"\xef\xbb\xbf" + SCENARIO.encode())  # as some Windows editors save it
    r = run_cli("conflicts", p, "--json")
    assert r.returncode == 0, r.stderr
    p = tmp_path / "latin1.toml"
    p.write_bytes(SCENARIO.replace('name = "t"', 'name = "caf\xe9"').encode("latin-1"))
    r = run_cli("conflicts", p)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert f"{p}:2:12: scenario is not UTF-8 text (byte 0xe9)" in r.stderr


def test_a_device_or_a_pipe_as_the_scenario(tmp_path):
    # /dev/zero grew to 24 GB before the kernel killed the reader; a pipe (<(...)) is read.
    r = run_cli("conflicts", "/dev/zero")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "cannot read scenario /dev/zero: not a regular file (a device or socket)" in r.stderr
    fifo = tmp_path / "scenario.fifo"
    os.mkfifo(fifo)
    feed = subprocess.Popen(["sh", "-c", f'cat > "{fifo}"'], stdin=subprocess.PIPE)
    r = subprocess.Popen(
        [sys.executable, "-m", "daqnet", "conflicts", str(fifo), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    feed.communicate(SCENARIO.encode(), timeout=60)
    stdout, stderr = r.communicate(timeout=60)
    assert r.returncode == 0, stderr
    assert json.loads(stdout)["steps_done"] > 0


def test_host_file_encodings(tmp_path, scenario):
    hosts = tmp_path / "hosts.txt"
    hosts.write_bytes(b"\xef\xbb\xbf" + "\n".join(f"node{i:02d}" for i in range(30)).encode())
    base = ["conflicts", scenario, "--set", "fabric.naming=cabling", "--set"]
    r = run_cli(*base, "placement.order=file", "--set", f"placement.file={hosts}")
    assert r.returncode == 0, r.stderr
    hosts.write_bytes(b"node00\nnode\xff01\n")
    r = run_cli(*base, "placement.order=file", "--set", f"placement.file={hosts}")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert f"{hosts}:2:5: placement.file host list is not UTF-8 text (byte 0xff)" in r.stderr


def test_sum_of_max_loads_against_brute_force(scenario, capsys):
    import reference
    from daqnet.analysis import conflicts

    s = Scenario.load(scenario, ["placement.order=hostname"])
    _, rt, pl, wl = s.build()
    rep = conflicts(rt, pl, wl)
    per_step, *_ = reference.conflicts(rt, pl.hosts, wl.steps())
    expected = sum(m for _, m, _ in per_step)
    assert expected > len(per_step)  # there is contention to see
    assert rep.sum_max_link_load == expected
    assert main(["conflicts", str(scenario), "--set", "placement.order=hostname", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["sum_max_link_load"] == expected
    assert doc["steps_with_conflicts"] == sum(c > 0 for c, _, _ in per_step)
    assert main(["conflicts", str(scenario), "--set", "placement.order=hostname"]) == 0
    text = capsys.readouterr().out
    assert f"Σ over steps of the max link load {expected:,} against {len(per_step)}" in text


@pytest.mark.parametrize(
    ("schedule", "bound"), [("barrel", 1), ("all-at-once", 7)], ids=["barrel", "all-at-once"]
)
def test_the_hosts_own_links_bound_a_step(tmp_path, capsys, schedule, bound):
    # All pairs at once: each host sends 7 flows and receives 7, so its own links carry 7 in
    # any fabric. The summary read "144 conflicts ... x7.000 as long" against 1 per step, on
    # a full tree that runs it at the NICs' rate. The bound per step is now the most flows
    # one host sends or receives (counted here from the flows, not the links), and the
    # conflicts on host links are named.
    import reference
    from daqnet.analysis import conflicts

    sc = tmp_path / "t8.toml"
    sc.write_text(f'[fabric]\nradix = 8\nhosts = 8\n[workload]\nschedule = "{schedule}"\n')
    _, rt, pl, wl = Scenario.load(sc).build()
    rep = conflicts(rt, pl, wl)
    _, _, link_conflicts, _ = reference.conflicts(rt, pl.hosts, wl.steps())
    own = []
    for flows in wl.steps():
        pairs = [
            (int(pl.hosts[a]), int(pl.hosts[b])) for a, b in flows if pl.hosts[a] != pl.hosts[b]
        ]
        sends = np.bincount([a for a, _ in pairs], minlength=8)
        receives = np.bincount([b for _, b in pairs], minlength=8)
        own.append(int(max(sends.max(), receives.max())))
    assert rep.steps()["max_host_link_load"].tolist() == own and set(own) == {bound}
    lt = rt.fabric.links()
    host = {i for i in range(len(lt["src"])) if min(lt["src"][i], lt["dst"][i]) < 8}
    assert rep.host_link_conflicts == sum(v for k, v in link_conflicts.items() if k in host)
    assert main(["conflicts", str(sc)]) == 0
    text = capsys.readouterr().out
    if schedule == "all-at-once":
        assert "144 conflicts (96 on hosts' own links)" in text
        assert "against 7 on the hosts' own links" in text and "×1.000 as long" in text
    else:
        assert "against 7 without conflicts: steps of equal flows take ×1.000" in text


def test_one_step_numbering_everywhere(scenario, tmp_path, capsys):
    sets = ["--set", "placement.order=hostname"]
    assert main(["conflicts", str(scenario), *sets, "--json"]) == 0
    conf = json.loads(capsys.readouterr().out)["steps"]
    out = tmp_path / "sim"
    assert main(["simulate", str(scenario), *sets, "--json", "--out", str(out)]) == 0
    sim = json.loads(capsys.readouterr().out)["steps"]
    assert [s["step"] for s in conf] == [s["step"] for s in sim] == list(range(1, 30))
    assert [int(r["step"]) for r in read_csv(out / "steps.csv")] == list(range(1, 30))
    # Bytes per link class, as docs/tables.md lists it (it was only in result.json).
    loads = json.loads((out / "result.json").read_text())["link_loads"]
    assert [r["class"] for r in read_csv(out / "link_loads.csv")] == [c["class"] for c in loads]
    # The same step number means the same step: a conflict-free step has no slowdown.
    for c, m in zip(conf, sim, strict=True):
        if c["max_link_load"] == 1:
            assert m["slowdown"] == pytest.approx(1.0)
    assert main(["simulate", str(scenario), *sets]) == 0
    worst = max(sim, key=lambda s: s["slowdown"])
    assert f"step {worst['step']}: ×{worst['slowdown']:.2f}" in capsys.readouterr().out


def test_set_of_an_ignored_key_warns(scenario):
    r = run_cli("conflicts", scenario, "--set", "bench.credits=4", "--set", "placement.seed=3")
    assert r.returncode == 0
    assert "warning: set bench.credits: daqnet conflicts does not read bench.credits" in r.stderr
    assert "placement.seed: it is read only when placement.order is 'random'" in r.stderr
    r = run_cli("simulate", scenario, "--set", "simulate.events=10")
    assert "daqnet simulate in steps mode does not read simulate.events" in r.stderr


@pytest.mark.parametrize("command", ["simulate", "conflicts"])
def test_a_reader_gone_loses_the_summary_not_the_files(scenario, tmp_path, command):
    # `daqnet simulate --out d | true` left d empty: the summary's broken pipe ended the
    # command before it wrote its files (and --plot's figure).
    out, plot = tmp_path / "d", tmp_path / "p.png"
    extra = ["--plot", str(plot)] if command == "conflicts" else []
    p = subprocess.Popen(
        [sys.executable, "-m", "daqnet", command, str(scenario), "--out", str(out), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    p.stdout.close()  # the reader is gone before a byte is written
    _, err = p.communicate(timeout=120)
    assert p.returncode == 141, err
    assert json.loads((out / "result.json").read_text())["hosts"] == 30
    assert (out / "steps.csv").stat().st_size > 0
    assert not extra or plot.stat().st_size > 0


def test_fabric_keys_an_imported_or_percs_fabric_ignores_warn(tmp_path):
    # --set fabric.link_gbps=200 on a capture of EDR links read as at 100, unsaid; so did the
    # host naming keys, which only a built fat tree reads.
    from daqnet.scenario import unused

    topo = Path(__file__).parent / "data" / "ib" / "ibnetdiscover-27.out"
    imported = Scenario({"fabric": {"kind": "ibnetdiscover", "file": str(topo)}})
    why = unused(imported, "conflicts", "fabric.link_gbps")
    assert why and "gives no width × speed" in why
    # An ibsim net file by hand (ibsim's own example format) carries no rates:
    # fabric.link_gbps is every cable's there.
    import daqnet

    net = tmp_path / "fabric.net"
    net.write_text(
        'Switch 8 "Switch1"\n[1] "Hca1"[1]\n[2] "Hca2"\n\n'
        'Hca 2 "Hca1"\n[1] "Switch1"[1]\n\nHca 2 "Hca2"\n[1] "Switch1"[2]\n'
    )
    assert daqnet.fabric.from_ibnetdiscover(net).default_rate_cables == 2
    assert daqnet.fabric.from_ibnetdiscover(topo).default_rate_cables == 0
    plain = Scenario({"fabric": {"kind": "ibnetdiscover", "file": str(net)}})
    assert unused(plain, "conflicts", "fabric.link_gbps") is None
    for key in ("naming", "naming_seed", "naming_file", "host_prefix"):
        why = unused(imported, "conflicts", f"fabric.{key}")
        assert why and "read only when fabric.kind is 'fat-tree' (here 'ibnetdiscover')" in why
    percs = Scenario.load(Path(__file__).resolve().parents[1] / "examples" / "percs-64.toml")
    assert "here 'percs'" in (unused(percs, "conflicts", "fabric.link_gbps") or "")
    # Read where they are: the naming seed still only under shuffled names.
    tree = Scenario({"fabric": {"hosts": 8, "naming": "shuffled"}})
    for key in ("link_gbps", "naming", "naming_seed", "host_prefix"):
        assert unused(tree, "conflicts", f"fabric.{key}") is None, key
    assert "fabric.naming is 'shuffled'" in (
        unused(Scenario({"fabric": {"hosts": 8}}), "conflicts", "fabric.naming_seed") or ""
    )
    slurm = Scenario({"fabric": {"kind": "slurm-topology", "file": str(topo)}})
    assert unused(slurm, "conflicts", "fabric.link_gbps") is None
    # workload.message_bytes sets every message's size before simulate.message_bytes (a scan
    # over the latter on examples/percs-64.toml gave identical rows).
    sized = Scenario({"fabric": {"hosts": 8}, "workload": {"message_bytes": 2097152}})
    why = unused(sized, "simulate", "simulate.message_bytes")
    assert why and "workload.message_bytes = 2,097,152 is given" in why
    assert unused(tree, "simulate", "simulate.message_bytes") is None


@pytest.mark.parametrize(
    "args", [("tables",), ("export", "--format", "slurm-topology"), ("export", "--format", "dot")]
)
def test_output_dash_is_stdout(scenario, tmp_path, args):
    # -o - wrote a file named "-" in the current directory.
    command, *rest = args
    r = subprocess.run(
        [sys.executable, "-m", "daqnet", command, str(scenario), *rest, "-o", "-"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "-").exists()
    assert "wrote stdout" in r.stderr
    assert run_cli(command, scenario, *rest, "-o", tmp_path / "file").returncode == 0
    assert r.stdout == (tmp_path / "file").read_text()


def test_out_holding_another_commands_result_is_refused(scenario, tmp_path):
    # simulate --out over a benchmark's directory replaced its result.json and left its
    # memory.csv and rank files beside the simulation's, without a word.
    out = tmp_path / "d"
    assert run_cli("conflicts", scenario, "--out", out).returncode == 0
    before = (out / "result.json").read_text()
    r = run_cli("simulate", scenario, "--out", out)
    assert r.returncode == 2
    assert f"--out {out} holds a daqnet conflicts result (result.json)" in r.stderr
    assert (out / "result.json").read_text() == before
    assert run_cli("conflicts", scenario, "--out", out).returncode == 0  # its own: rewritten


@pytest.mark.parametrize("command", ["simulate", "conflicts"])
def test_parquet_without_a_directory_is_refused(scenario, command):
    # It was taken and nothing written: the tables only ever go into --out.
    r = run_cli(command, scenario, "--format", "parquet")
    assert r.returncode == 2
    assert "--format parquet: the tables go into --out DIR, which is not given" in r.stderr


def test_who_reads_an_ignored_key_never_names_the_command_ignoring_it(scenario):
    # It read "daqnet bench does not read workload.message_bytes (read by daqnet conflicts,
    # daqnet simulate, daqnet bench)", and protocol mode took the key in silence.
    from daqnet.scenario import unused

    sc = Scenario.load(scenario, ["workload.message_bytes=100"])
    assert unused(sc, "bench", "workload.message_bytes") == (
        "daqnet bench does not read workload.message_bytes (read by daqnet simulate in steps mode)"
    )
    # Conflicts count flows, not bytes: --set workload.message_bytes changed no figure, unsaid.
    assert unused(sc, "conflicts", "workload.message_bytes") == (
        "daqnet conflicts does not read workload.message_bytes "
        "(read by daqnet simulate in steps mode)"
    )
    protocol = Scenario.load(scenario, ["simulate.mode=protocol"])
    for key in ("message_bytes", "shifts", "file"):
        why = unused(protocol, "simulate", f"workload.{key}")
        assert why and why.startswith("daqnet simulate in protocol mode does not read"), key
        assert "protocol mode)" not in why and "protocol mode," not in why
    for key in ("schedule", "kind"):
        assert unused(protocol, "simulate", f"workload.{key}") is None
    for key in ("placement.ranks", "workload.tasks_per_node", "fabric.hosts"):
        why = unused(sc, "bench", key)
        assert why and "daqnet bench)" not in why and "daqnet bench," not in why, why


def test_emulate_reads_the_simulate_keys_of_its_prediction():
    # The event builder's prediction is the protocol simulation with the scenario's NIC and
    # local limits, run for the benchmark's seconds; steps traffic shares only the NIC limits.
    from daqnet.scenario import unused

    example = Path(__file__).resolve().parents[1] / "examples" / "emulate-8.toml"
    evb = Scenario.load(example, ["bench.transport=tcp", "bench.seconds=2"])
    assert evb["emulate"]["traffic"] == "event-builder"
    for key in ("injection_gbps", "ejection_gbps", "local_gbps"):
        assert unused(evb, "emulate", f"simulate.{key}") is None, key
    for key in ("events", "warmup_events", "mode", "message_bytes"):
        assert "daqnet emulate does not read" in unused(evb, "emulate", f"simulate.{key}"), key
    steps = Scenario.load(example, ["emulate.traffic=steps"])
    assert unused(steps, "emulate", "simulate.injection_gbps") is None
    assert unused(steps, "emulate", "simulate.local_gbps") is not None


def test_results_carry_their_configuration(scenario, capsys, tmp_path):
    assert main(["conflicts", str(scenario), "--json", "--set", "fabric.hosts=24"]) == 0
    cfg = json.loads(capsys.readouterr().out)["config"]
    assert cfg["file"] == str(scenario) and cfg["set"] == ["fabric.hosts=24"]
    assert cfg["values"]["fabric"]["hosts"] == 24 and cfg["values"]["routing"]["engine"] == "dmodk"
    sets = ["--set", "simulate.mode=protocol", "--set", "bench.protocol=pull"]
    assert main(["simulate", str(scenario), *sets, "--json", "--set", "simulate.events=30"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["protocol"], doc["credits"], doc["fragment_bytes"]) == ("pull", 2, 1048576)
    assert doc["config"]["values"]["bench"]["in_flight"] == 8
    # The keys given, so that the page's scenario runs as it is: the effective values, every
    # default written out, held bench.events = 0 with bench.seconds = 0, refused when given.
    assert (
        "simulate.events" in doc["config"]["given"] and "bench.events" not in doc["config"]["given"]
    )
    from daqnet.io.files import read_toml
    from daqnet.report.html import _scenario

    shown = _scenario(type("R", (), {"doc": doc, "kind": "simulate-protocol"})())
    assert shown["what"].startswith("the scenario as given") and shown["effective"]
    again = tmp_path / "again.toml"
    again.write_text(shown["toml"])
    given = read_toml(again, "scenario")
    assert given["bench"] == {"protocol": "pull"} and given["simulate"]["events"] == 30
    assert Scenario.load(again)["simulate"]["mode"] == "protocol"
    assert main(["simulate", str(again), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["events_built"] == 30


def test_a_result_records_files_as_absolute_paths(tmp_path, monkeypatch, capsys):
    # A scenario loaded as sub/s.toml recorded placement.file as "sub/hosts.txt": the
    # report's scenario, saved anywhere else, named another file.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "hosts.txt").write_text("".join(f"node{i}\n" for i in range(8)))
    (tmp_path / "sub" / "s.toml").write_text(
        '[fabric]\nradix = 8\nhosts = 8\n[placement]\norder = "file"\nfile = "hosts.txt"\n'
    )
    assert main(["conflicts", "sub/s.toml", "--json"]) == 0
    cfg = json.loads(capsys.readouterr().out)["config"]
    assert cfg["values"]["placement"]["file"] == str(tmp_path / "sub" / "hosts.txt")


def test_interrupted_figure_says_so(scenario, monkeypatch, tmp_path):
    from daqnet import _core
    from daqnet.analysis import ConflictReport
    from daqnet.report import conflicts_plot as plot

    _, rt, pl, wl = Scenario.load(scenario).build()
    core, stopped = _core.analysis.analyze_conflicts(
        rt._core, pl.hosts, wl._core, lambda done, total: False, 0.0
    )
    rep = ConflictReport(rt, pl, wl, core, stopped)
    assert rep.interrupted and rep.steps_done < rep.steps_total
    seen = {}
    monkeypatch.setattr(plot, "save_figure", lambda fig, path, dpi: seen.update(fig=fig))
    plot.plot_conflicts(rep, tmp_path / "f.png", title="t: barrel shift over 30 ranks, 29 steps")
    title = seen["fig"].axes[0].get_title()
    assert f"INTERRUPTED: steps 1–{rep.steps_done} of 29 only" in title


def test_outputs_are_replaced_whole(scenario, tmp_path, monkeypatch):
    # A second Ctrl-C while tables are written must not leave a short file that looks whole.
    from daqnet.analysis import conflicts
    from daqnet.io import conflicts_csv as output

    _, rt, pl, wl = Scenario.load(scenario).build()
    rep = conflicts(rt, pl, wl)
    out = tmp_path / "csv"
    output.write_conflict_csv(rep, out)
    before = (out / "links.csv").read_text()

    real = output._columns

    def interrupted(table):
        header, rows = real(table)

        def some_rows():
            for i, row in enumerate(rows):
                if i == 5:
                    raise KeyboardInterrupt
                yield row

        return header, some_rows()

    monkeypatch.setattr(output, "_columns", interrupted)
    with pytest.raises(KeyboardInterrupt):
        output.write_conflict_csv(rep, out)
    assert (out / "steps.csv").exists() and (out / "links.csv").read_text() == before
    assert sorted(p.name for p in out.iterdir()) == [
        "conflicts.csv",
        "levels.csv",
        "links.csv",
        "steps.csv",
    ]


def test_simulation_interrupted_in_its_warm_up_says_so_and_shows_no_rate(tmp_path):
    # 540 nodes over a barrel: no event is built for many seconds, but progress shows at once.
    code, stdout, stderr = _protocol_interrupted_once_shown("fabric.hosts=540", out=tmp_path / "o")
    assert code == 130, stderr
    assert "INTERRUPTED: during the warm-up" in stdout
    assert "0 events built: nothing measured" in stdout
    assert "throughput" not in stdout
    # Nor in result.json: a rate of 0 there read as one measured.
    doc = json.loads((tmp_path / "o" / "result.json").read_text())
    assert doc["status"] == "interrupted" and doc["window_seconds"] == 0
    for key in (
        "throughput_gbps",
        "bytes_per_second",
        "gbps_per_host",
        "network_gbps_per_host",
        "events_per_second",
        "warmup_seconds",
    ):
        assert doc[key] is None, key


def test_finished_simulation_leaves_its_progress_bar_full():
    # Long enough (4 s here) for the core's first report, which comes after 0.25 s; it ended
    # at 50 % when its last report came a moment before the end.
    r = subprocess.run(
        [*lhcb72_protocol("fabric.hosts=144"), "--progress"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    lines = r.stderr.replace("\r", "\n").strip().splitlines()
    last = [ln for ln in lines if not ln.startswith("daqnet: warning")][-1]
    assert "100%" in last and "864/864" in last, last


def _protocol_interrupted_once_shown(*sets: str, out: Path | None = None) -> tuple[int, str, str]:
    """A protocol simulation (72 nodes, then `sets`) with --progress, Ctrl-C once its bar
    shows: its exit status, stdout and stderr after the bar."""
    p = subprocess.Popen(
        [*lhcb72_protocol(*sets), "--progress", *(["--out", str(out)] if out else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, stdout, stderr = _interrupt_once_shown(p, "event")
    return p.returncode, stdout, stderr


def test_interrupted_simulation_without_out_says_where_results_are():
    code, stdout, stderr = _protocol_interrupted_once_shown("simulate.events=10000000")
    assert code == 130
    assert "INTERRUPTED" in stdout
    assert "printed above" in stderr and "written to" not in stderr


def test_an_earlier_runs_tables_left_in_out_are_named(scenario, tmp_path):
    # Steps then protocol mode into one --out: the directory mixed two runs' tables unsaid.
    # (Another command's result there is refused: see above.)
    out = tmp_path / "o"
    assert run_cli("simulate", scenario, "--out", out).returncode == 0
    protocol = ["--set", "simulate.mode=protocol", "--set", "simulate.events=20"]
    r = run_cli("simulate", scenario, *protocol, "--out", out)
    assert r.returncode == 0, r.stderr
    assert f"{out} also holds steps.csv, link_loads.csv of an earlier run" in r.stderr, r.stderr
    r = run_cli("simulate", scenario, *protocol, "--out", out)  # its own tables again
    assert "also holds steps.csv, link_loads.csv" in r.stderr and "units.csv" not in r.stderr


def test_ctrl_c_while_the_command_loads_its_modules_is_no_traceback():
    # numpy and the core take 0.2-0.9 s to import, before main() handles signals: a Ctrl-C
    # then printed the traceback of the import it cut, and the process died of SIGINT.
    code = (
        "import sys; sys.argv[0] = '/usr/bin/daqnet'; import daqnet, os, signal, time; "
        "os.kill(os.getpid(), signal.SIGINT); time.sleep(30)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and r.stderr == "daqnet: interrupted\n", r.stderr
    # Imported as a library, daqnet changes no handler.
    code = "import signal, daqnet; assert signal.getsignal(signal.SIGINT) is signal.default_int_handler"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_mode_keys_are_ignored_in_the_other_mode_not_refused_after_a_warning():
    # Time frames have one unit per rank: processes_per_node and local_path ran unnoticed.
    # Event-manager mode warned that it ignores bench.senders, then refused it.
    from daqnet.bench.config import run_config
    from daqnet.scenario import unused

    root = Path(__file__).resolve().parents[1] / "examples"
    frames = Scenario.load(root / "alice-frames.toml")
    for key in ("processes_per_node", "local_path"):
        assert "read only when bench.mode is 'event-manager'" in unused(
            frames, "bench", f"bench.{key}"
        ), key
    evb = Scenario.load(root / "bench-local.toml", ["bench.senders=2", "bench.barrier=true"])
    assert "read only when bench.mode is 'time-frames'" in unused(evb, "bench", "bench.senders")
    assert run_config(evb)["mode"] == "event-manager"  # no error


def test_a_step_beyond_memory_is_refused_before_it_is_built(monkeypatch, capsys):
    # 65,536 PERCS tasks all-to-all: 4.3 G flows in one step. The analysis ended in a
    # traceback (std::bad_alloc), the simulation grew to 24 GB deaf to Ctrl-C.
    from daqnet import memory_budget

    percs = Path(__file__).resolve().parents[1] / "examples" / "percs-64.toml"
    sets = ["--set", "workload.kind=all-to-all", "--threads", "1"]
    monkeypatch.setattr(memory_budget, "available_bytes", lambda: 24 * 2**30)  # this machine's
    assert main(["conflicts", str(percs), *sets]) == 2
    err = capsys.readouterr().err
    assert "one step holds 4,294,901,760 flows (every ordered pair of 65,536 ranks)" in err
    assert "34.4 GB (8 B a flow)" in err and "Traceback" not in err
    # repair judges orders with the same analysis and simulation: the same refusal.
    assert (
        main(["repair", str(percs), "--what", "rank-order", "--set", "workload.kind=all-to-all"])
        == 2
    )
    assert "the repair's conflict analysis of all pairs at once" in capsys.readouterr().err
    # Measured, not guessed: within the machine's memory, the same step is built.
    small = ["--set", "fabric.supernodes=2", "--set", "workload.tasks_per_node=1"]
    monkeypatch.setattr(memory_budget, "available_bytes", lambda: 64 * 63 * 1000 - 1)
    assert main(["simulate", str(percs), *sets, *small]) == 2
    assert "4,032 flows" in capsys.readouterr().err
    monkeypatch.setattr(memory_budget, "available_bytes", lambda: 64 * 63 * 1000)
    assert main(["simulate", str(percs), *sets, *small]) == 0


def test_a_whole_number_written_as_a_float_is_that_number(scenario):
    # 1e6 is a float to TOML: taken for simulate.message_bytes, refused for bench keys.
    r = run_cli("conflicts", scenario, "--set", "fabric.hosts=2.4e1")
    assert r.returncode == 0, r.stderr
    assert "24 hosts" in r.stdout


def test_options_that_contradict_each_other_are_said(scenario, tmp_path):
    # --csv (--out's older name) beside --out: one of them was silently ignored.
    r = run_cli("conflicts", scenario, "--out", tmp_path / "a", "--csv", tmp_path / "b")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "give one (--csv is --out's older name)" in r.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    # One key set twice: the last wins (scripts layer --set items; docs/scenario.md).
    r = run_cli("conflicts", scenario, "--set", "fabric.hosts=20", "--set", "fabric.hosts=24")
    assert r.returncode == 0, r.stderr
    assert "24 hosts" in r.stdout


@pytest.mark.parametrize("mode", ["steps", "protocol"])
def test_slow_links_read_with_significant_digits(scenario, mode):
    # At link_gbps = 1e-6 the summary read "per host 0.00 Gb/s": a rate shown as none.
    sets = ["fabric.link_gbps=1e-6", f"simulate.mode={mode}", "simulate.events=4"]
    r = run_cli("simulate", scenario, *(a for s in sets for a in ("--set", s)))
    assert r.returncode == 0, r.stderr
    assert " 0.00 Gb/s" not in r.stdout and "0.00000" in r.stdout, r.stdout
    assert " 0 events/s" not in r.stdout


@pytest.mark.parametrize("command", ["conflicts", "simulate"])
def test_ctrl_c_as_the_files_are_written_keeps_them_whole(scenario, tmp_path, monkeypatch, command):
    # A Ctrl-C as the summary appeared (a large tree's files take a second) left --out empty,
    # or some files beside an earlier run's: the finished run's files are written whole.
    import signal

    from daqnet.cli import main

    module = "daqnet.io.conflicts_csv" if command == "conflicts" else "daqnet.io.simulation"
    name = "write_conflict_files" if command == "conflicts" else "write_simulation"
    import importlib

    mod = importlib.import_module(module)
    write = getattr(mod, name)

    def interrupted(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        return write(*args, **kwargs)

    monkeypatch.setattr(mod, name, interrupted)
    out = tmp_path / "out"
    assert main([command, str(scenario), "--out", str(out)]) == 0
    doc = json.loads((out / "result.json").read_text())
    assert doc["interrupted"] is False
    tables = {
        "conflicts": ["steps", "links", "levels", "conflicts"],
        "simulate": ["steps", "link_loads"],
    }
    for table in tables[command]:
        assert (out / f"{table}.csv").stat().st_size > 0, table


@pytest.mark.parametrize("command", ["conflicts", "simulate", "study"])
def test_an_out_that_takes_no_file_fails_before_the_run(scenario, command):
    # /proc is a directory that takes no file: the whole run went by before it failed, and
    # the message blamed result.json ("No such file or directory").
    args = ["study", "taper"] if command == "study" else [command]
    r = run_cli(*args, scenario, "--out", "/proc")
    assert r.returncode == 2
    assert (
        r.stderr.strip()
        == "daqnet: error: --out /proc: cannot write into it: No such file or directory"
    )


def test_an_opensm_engine_as_routing_engine_points_to_daqnet_opensm(scenario):
    r = run_cli("conflicts", scenario, "--set", "routing.engine=ftree")
    assert r.returncode == 2
    assert (
        "(OpenSM's ftree: `daqnet opensm SCENARIO --engine ftree` computes its tables" in r.stderr
    )


def test_an_interrupted_rerun_keeps_the_earlier_complete_result(tmp_path):
    # A Ctrl-C two seconds into a rerun into the same --out replaced a complete simulation
    # by a partial one, with no way back.
    out = tmp_path / "o"
    r = subprocess.run([*lhcb72_protocol(), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    complete = (out / "result.json").read_text()
    code, _, stderr = _protocol_interrupted_once_shown("simulate.events=10000000", out=out)
    assert code == 130
    assert f"written to {out} (an earlier complete result is kept in {out / 'previous'})" in stderr
    assert (out / "previous" / "result.json").read_text() == complete
    assert {p.name for p in (out / "previous").iterdir()} >= {"units.csv", "timeseries.csv"}
    assert json.loads((out / "result.json").read_text())["interrupted"]
    # Interrupted again: the complete one stays (the partial one is not kept over it).
    code, _, stderr = _protocol_interrupted_once_shown("simulate.events=10000000", out=out)
    assert code == 130 and "is kept in" in stderr
    assert (out / "previous" / "result.json").read_text() == complete
    # A complete rerun replaces it, as ever.
    r = subprocess.run([*lhcb72_protocol(), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not (out / "previous").exists()
