"""`daqnet scan`: rows against independent simulate() runs, --jobs and MPI ranks giving the
same rows, bad input stopping before anything runs, files and figures, Ctrl-C."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from conftest import small_scenario
from daqnet import DaqnetError, Scenario
from daqnet.cli import main
from daqnet.report.scan_plot import scan_figure
from daqnet.scan import METRICS, make_plan, parse_vary, run_scan
from daqnet.scan.mpi import launched_ranks
from daqnet.simulate import simulate

SCENARIO = small_scenario("small", 32, "[simulate]\nevents = 120\n")
STEPS_VARY = [
    "--vary",
    "simulate.message_bytes=1048576,65536,262144",  # unsorted on purpose
    "--vary",
    "placement.order=random,topology,hostname",
]
PROTOCOL = ["--set", "simulate.mode=protocol"]
PROTOCOL_VARY = ["--vary", "bench.credits=1,2,4", "--vary", "bench.in_flight=1,8"]


@pytest.fixture
def scenario(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SCENARIO)
    return p


def daqnet(*args, cwd=None, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "daqnet", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def expected_row(path, sets: list[str]) -> dict:
    """The metrics of one point from simulate() itself, flattened as a row has them."""
    r = simulate(Scenario.load(path, sets))
    lat = r.get("latency_seconds") or {}
    flat = {**r, **{f"latency_{k}_seconds": v for k, v in lat.items()}}
    flat["warning"] = "; ".join(r.get("warnings", []))
    return {m: flat[m] for m in METRICS[r["mode"]]}


def read_csv(path: Path) -> list[dict]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("daqnet: error: "), stderr
    return lines[0]


# -- rows ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mode_args", "vary", "keys"),
    [
        ([], STEPS_VARY, ["simulate.message_bytes", "placement.order"]),
        (PROTOCOL, PROTOCOL_VARY, ["bench.credits", "bench.in_flight"]),
    ],
)
def test_rows_equal_individual_simulations(scenario, tmp_path, mode_args, vary, keys):
    out = tmp_path / "out"
    p = daqnet("scan", scenario, *mode_args, *vary, "--out", out, "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc == json.loads((out / "scan.json").read_text())
    mode = "protocol" if mode_args else "steps"
    assert doc["mode"] == mode and doc["status"] == "finished" and not doc["interrupted"]
    assert [v["key"] for v in doc["vary"]] == keys
    values = [parse_vary(v).values for v in vary[1::2]]
    assert [v["values"] for v in doc["vary"]] == [list(v) for v in values]
    assert doc["columns"] == ["point", *keys, *METRICS[mode]]
    # Cartesian product, the first --vary outermost, one row per point.
    combos = [(a, b) for a in values[0] for b in values[1]]
    assert len(doc["rows"]) == doc["points_done"] == doc["points_total"] == len(combos)
    sets = [s for i, s in enumerate(mode_args) if i % 2]
    for i, (row, (a, b)) in enumerate(zip(doc["rows"], combos, strict=True)):
        assert row["point"] == i and (row[keys[0]], row[keys[1]]) == (a, b)
        want = expected_row(scenario, [*sets, f"{keys[0]}={a}", f"{keys[1]}={b}"])
        assert {m: row[m] for m in METRICS[mode]} == want, (i, a, b)
    # The points differ: a scan that ignored its overrides would give one repeated row.
    assert len({row["gbps_per_host"] for row in doc["rows"]}) > 1
    # The CSV holds the same table, floats to the last digit.
    table = read_csv(out / "scan.csv")
    assert list(table[0]) == doc["columns"] and len(table) == len(doc["rows"])
    for row, line in zip(doc["rows"], table, strict=True):
        for m in METRICS[mode]:
            if m == "warning":  # text
                assert line[m] == row[m]
            else:
                assert (float(line[m]) if line[m] else None) == row[m]
        assert line[keys[1]] == str(row[keys[1]])
    # The best point is the best row.
    best = max(doc["rows"], key=lambda r: r["gbps_per_host"])
    assert doc["best"]["gbps_per_host"] == best["gbps_per_host"]
    assert (out / "scan.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_jobs_do_not_change_rows(scenario, tmp_path):
    docs = []
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        p = daqnet("scan", scenario, *PROTOCOL, *PROTOCOL_VARY, "--jobs", jobs, "--out", out)
        assert p.returncode == 0, p.stderr
        docs.append(json.loads((out / "scan.json").read_text()))
        assert docs[-1]["jobs"] == jobs
    assert docs[0]["rows"] == docs[1]["rows"]
    assert (tmp_path / "j1" / "scan.csv").read_text() == (tmp_path / "j2" / "scan.csv").read_text()


def test_jobs_recorded_are_the_jobs_at_work(scenario, tmp_path):
    # -j 3 over 2 points said "(3 jobs)": two workers ran.
    doc = run_scan(scenario, ["simulate.message_bytes=1000,2000"], out=str(tmp_path), jobs=3)
    assert doc["jobs"] == 2 and doc["points_done"] == 2


def test_list_values_and_summary(scenario, tmp_path):
    p = daqnet(
        "scan",
        scenario,
        "--set",
        "workload.kind=shift",
        "--vary",
        "workload.shifts=[1],[1, 2, 3],[4,5]",
        "--out",
        tmp_path / "o",
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "o" / "scan.json").read_text())
    assert [r["workload.shifts"] for r in doc["rows"]] == [[1], [1, 2, 3], [4, 5]]
    assert [r["steps_total"] for r in doc["rows"]] == [1, 3, 2]
    assert [r["workload.shifts"] for r in read_csv(tmp_path / "o" / "scan.csv")] == [
        "[1]",
        "[1, 2, 3]",
        "[4, 5]",
    ]
    # Summary: a header, one line per point, the best point, where the files are.
    out = p.stdout
    assert "3 points over workload.shifts (3)" in out
    assert sum(line.split()[:1] in (["0"], ["1"], ["2"]) for line in out.splitlines()) == 3
    best = doc["best"]
    assert f"(point {best['point']})" in out and "best       gbps_per_host" in out
    assert str(tmp_path / "o" / "scan.csv") in out


def test_summary_warnings_give_each_point_its_own_figures(scenario, tmp_path):
    # 40 events: too few for one round of 2 credits (32 x 2 = 64) and of 4 (128). The
    # summary once gave the first warned point's figures for all of them.
    p = daqnet(
        "scan",
        scenario,
        *PROTOCOL,
        "--set",
        "simulate.events=40",
        *PROTOCOL_VARY,
        "--out",
        tmp_path / "o",
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "o" / "scan.json").read_text())
    # Point 1 (one credit: 40 events are a round) is warned of barrels in step.
    short = "fewer than one round"
    warned = {r["point"]: r["warning"] for r in doc["rows"] if short in (r["warning"] or "")}
    assert warned.keys() == {2, 3, 4, 5}
    assert (
        "(32 nodes × 2 credits = 64)" in warned[2] and "(32 nodes × 4 credits = 128)" in warned[4]
    )
    (line,) = [line for line in p.stdout.splitlines() if short in line]
    assert "point 2, 3, 4, 5: the measurement window holds 40 events" in line
    assert "(32 nodes × 2–4 credits = 64–128)" in line


def test_summary_warning_numbers_end_at_their_last_digit():
    from daqnet.report.scan import _warning_lines

    rows = [
        {"point": 0, "warning": "ranks 3, 4 and 1,024 of 2,048 idle"},
        {"point": 1, "warning": "ranks 5, 4 and 1,536 of 2,048 idle"},
    ]
    # A comma after a number is the sentence's ("3," to "5," once), a comma inside one groups digits.
    assert _warning_lines(rows) == [
        "point 0, 1: ranks 3–5, 4 and 1,024–1,536 of 2,048 idle (column 'warning')"
    ]


def test_rows_finished_as_ctrl_c_comes_are_written(scenario, tmp_path, monkeypatch):
    # Ctrl-C while the parent waits: the points the workers finished meanwhile are rows.
    from daqnet.scan.local import LocalRunner

    def interrupted(self, timeout):
        deadline = time.monotonic() + 60
        while not all(f.done() for f in self.pending) and time.monotonic() < deadline:
            time.sleep(0.05)
        raise KeyboardInterrupt

    monkeypatch.setattr(LocalRunner, "poll", interrupted)
    doc = run_scan(scenario, ["simulate.message_bytes=1000,2000,3000"], out=str(tmp_path), jobs=2)
    assert doc["status"] == "interrupted" and doc["points_done"] == 3
    assert [r["point"] for r in doc["rows"]] == [0, 1, 2]


def _wait_for_points(p: subprocess.Popen, out: Path, points: int) -> None:
    """Until the scan running as `p` has written `points` finished rows (or ended)."""
    deadline = time.monotonic() + 60
    done = 0
    while done < points and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.1)
        with contextlib.suppress(OSError, ValueError):  # not written yet
            done = json.loads((out / "scan.json").read_text())["points_done"]


def test_nohup_keeps_a_scan_running(scenario, tmp_path):
    # nohup ignores SIGHUP so that a run outlives its terminal: daqnet must not undo that.
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "daqnet", "scan", str(scenario), *PROTOCOL]
    cmd += ["--set", "simulate.events=800", "--vary", "bench.credits=1,2,3,4", "--out", str(out)]
    p = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    _wait_for_points(p, out, 1)
    assert p.poll() is None, "the scan finished before the signal"
    p.send_signal(signal.SIGHUP)  # the pool is up: its start ignores signals for a moment
    _, stderr = p.communicate(timeout=120)
    assert p.returncode == 0, stderr
    assert json.loads((out / "scan.json").read_text())["status"] == "finished"


def test_workers_die_with_a_scan_killed_outright(scenario, tmp_path):
    # The workers ignore SIGINT/SIGTERM/SIGHUP (the scan stops them): kill -9 or the OOM
    # killer on the scan must still not leave them running its points.
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "daqnet", "scan", str(scenario), *PROTOCOL]
    cmd += ["--set", "simulate.events=800", *PROTOCOL_VARY, "--out", str(out), "-j", "2"]
    p = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        _wait_for_points(p, out, 1)
        assert p.poll() is None, "the scan finished before it could be killed"
        p.kill()
        p.wait()
        deadline = time.monotonic() + 10
        left = True
        while left and time.monotonic() < deadline:
            try:
                os.killpg(p.pid, 0)  # anyone left in the scan's session?
                time.sleep(0.1)
            except ProcessLookupError:
                left = False
        assert not left, "worker processes outlived the scan"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)


@pytest.mark.parametrize("jobs", [1, 2])
def test_rows_polled_as_a_ctrl_c_comes_are_kept(scenario, jobs):
    # A Ctrl-C while the caller stores the rows of a poll (between two of them): salvage()
    # gives them again, where they were lost with the poll's list.
    from daqnet.scan.local import LocalRunner

    plan = make_plan(str(scenario), ["simulate.message_bytes=1000,2000"], [], "gbps_per_host")
    runner = LocalRunner(plan.points, jobs)
    try:
        deadline = time.monotonic() + 60
        while runner.finished.qsize() < len(runner.pending) and time.monotonic() < deadline:
            time.sleep(0.05)  # every point done, so that one poll gives them all
        polled = runner.poll(0.5)
        rows = runner.salvage()  # the Ctrl-C came before any was stored
    finally:
        runner.close()
    # Two workers finish in either order; one worker has one point in flight.
    assert sorted(i for i, _ in polled) == ([0, 1] if jobs == 2 else [0])
    assert sorted(i for i, _ in rows) == sorted(i for i, _ in polled)
    assert all(r["gbps_per_host"] > 0 for _, r in rows)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_as_the_pool_starts_is_not_lost(scenario, tmp_path, monkeypatch, sig):
    # The pool starts with the stop signals ignored (its workers inherit that): one that came
    # meanwhile was dropped, and the scan ran to its end. Now it waits and stops the scan as
    # the pool is up; the pool goes with it.
    import concurrent.futures

    import daqnet.scan.local as local
    from daqnet.stops import Stops

    started = []

    class Signalled(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)
            os.kill(os.getpid(), sig)  # Ctrl-C, or scancel, just then

    monkeypatch.setattr(local, "ProcessPoolExecutor", Signalled)
    vary = ["simulate.message_bytes=1000,2000,3000"]
    plan = make_plan(str(scenario), vary, [], "gbps_per_host")
    with Stops(), pytest.raises(KeyboardInterrupt):
        local.LocalRunner(plan.points, 2)
    assert started and started[0]._shutdown_thread  # closed, not left running
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # A whole scan so interrupted writes its (empty) results as such.
    with Stops():
        doc = run_scan(str(scenario), vary, out=str(tmp_path / "o"), jobs=2)
    assert doc["status"] == "interrupted" and doc["points_done"] == 0
    assert json.loads((tmp_path / "o" / "scan.json").read_text())["status"] == "interrupted"


def test_parse_vary_syntax():
    assert parse_vary("fabric.taper=1:1,2:1").values == ("1:1", "2:1")
    assert parse_vary('fabric.taper=["2:1", "1:1"],"3:1"').values == (["2:1", "1:1"], "3:1")
    assert parse_vary('fabric.host_prefix="a,b",c').values == ("a,b", "c")
    assert parse_vary("simulate.message_bytes=65536, 1e6").values == (65536, 1e6)
    assert parse_vary("bench.checksum=true,false").values == (True, False)


def test_default_out_never_overwrites(scenario, tmp_path):
    for _ in range(2):
        p = daqnet("scan", scenario, "--vary", "simulate.message_bytes=65536", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
    assert (tmp_path / "scan-small" / "scan.csv").exists()
    assert (tmp_path / "scan-small-2" / "scan.csv").exists()
    assert "scan-small-2/scan.csv" in p.stdout


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vary", "fabric.radx=8,16"], "unknown key 'fabric.radx'"),
        (["--vary", "fabrik.radix=8"], "unknown section 'fabrik'"),
        (["--vary", "fabric.radix="], "fabric.radix=: no values"),
        (["--vary", "fabric.radix=8,,16"], "value 2 is empty"),
        (["--vary", "fabric.hosts=16,16"], "value 16 is given twice"),
        (["--vary", "fabric.hosts=8", "--vary", "fabric.hosts=16"], "fabric.hosts is given twice"),
        (["--vary", "fabric.hosts=8", "--set", "fabric.hosts=16"], "fabric.hosts is also varied"),
        (["--vary", "workload.shifts=[1,2"], "unclosed"),
        (["--vary", "simulate.mode=steps,protocol"], "one scan per mode"),
        (
            ["--vary", "fabric.hosts=8,16", "--vary", "placement.order=topology,hostnam"],
            r"point 1 \(fabric.hosts=8, placement.order=hostnam\): .*placement.order = 'hostnam'",
        ),
        # Only the last point is bad, and only once built: nothing may run before the check.
        (
            ["--vary", "fabric.radix=16,8", "--vary", "fabric.hosts=16,40"],
            r"point 3 \(fabric.radix=8, fabric.hosts=40\): .*at most 32 hosts",
        ),
        # Loads, but the fabric cannot be built: found before running too.
        (["--vary", "fabric.radix=8,7"], r"point 1 \(fabric.radix=7\): .*fabric.radix = 7"),
        (
            # bench.seconds = 0 hands the run length to the file's simulate.events; 0.01 clashes.
            ["--set", "simulate.mode=protocol", "--vary", "bench.seconds=0,0.01"],
            r"point 1 \(bench.seconds=0.01\): .*bench.seconds and simulate.events both set",
        ),
        # Keys the mode does not read would give identical rows and a meaningless best point.
        (
            ["--vary", "bench.fragment_bytes=65536,1048576"],
            "steps mode does not read bench.fragment_bytes .*every point would give the same row",
        ),
        (
            ["--set", "simulate.mode=protocol", "--vary", "simulate.message_bytes=1e5,1e6"],
            "protocol mode does not read simulate.message_bytes",
        ),
        (
            ["--vary", "routing.seed=1,2"],
            "ignores routing.seed: it is read only when routing.engine is 'random'",
        ),
        # Host names pick no host under topology order: identical rows were run.
        (
            ["--vary", "fabric.naming_seed=1,2"],
            "ignores fabric.naming_seed: host names change no figure under placement.order = 'topology'",
        ),
        (["--vary", "fabric.hosts=8", "--metric", "latency_p50_seconds"], "not a metric"),
        (
            [*(a for k in "abcde" for a in ("--vary", f"bench.{k}=1"))],
            "unknown key 'bench.a'",
        ),
    ],
)
def test_bad_input_stops_before_running(scenario, tmp_path, capsys, args, message):
    out = tmp_path / "never"
    assert main(["scan", str(scenario), *args, "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert re.search(message, line), line
    assert not out.exists()


def test_too_many_keys_for_a_figure(scenario, tmp_path, capsys):
    five = [
        "--vary",
        "fabric.hosts=8",
        "--vary",
        "routing.seed=1",
        "--vary",
        "placement.seed=1",
        "--vary",
        "workload.seed=1",
        "--vary",
        "bench.seed=1",
    ]
    # An explicit --plot that cannot be drawn is an error before running ...
    assert main(["scan", str(scenario), *five, "--plot", str(tmp_path / "f.png")]) == 2
    assert "at most 4 varied keys" in one_error_line(capsys.readouterr().err)
    # ... the default figure is skipped with a note, the table is still written.
    assert main(["scan", str(scenario), *five, "--out", str(tmp_path / "o"), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert "no figure" in err and "at most 4 varied keys" in err
    assert len(read_csv(tmp_path / "o" / "scan.csv")) == 1
    assert not (tmp_path / "o" / "scan.png").exists()


def test_point_failing_at_run_time_keeps_rows(scenario, tmp_path, monkeypatch):
    import daqnet.scan.local as scan

    real = scan.run_point

    def flaky(point, threads=0):
        if point.index == 2:
            raise DaqnetError(f"point {point.index} ({point.label}): broken")
        return real(point, threads)

    monkeypatch.setattr(scan, "run_point", flaky)
    with pytest.raises(DaqnetError, match=r"point 2 \(simulate.message_bytes=3000\): broken"):
        run_scan(
            scenario,
            ["simulate.message_bytes=1000,2000,3000,4000"],
            out=str(tmp_path / "o"),
            jobs=1,
        )
    doc = json.loads((tmp_path / "o" / "scan.json").read_text())
    assert doc["status"] == "failed" and "broken" in doc["error"]
    assert [r["point"] for r in doc["rows"]] == [0, 1]


# -- figures ---------------------------------------------------------------------------------
def scanned(scenario, tmp_path, vary: list[str], sets=()) -> dict:
    return run_scan(scenario, vary, list(sets), out=str(tmp_path / "fig"), jobs=1)


def test_line_figure_one_key(scenario, tmp_path):
    doc = scanned(scenario, tmp_path, ["simulate.message_bytes=1048576,4096,65536"])
    fig = scan_figure(doc)
    (ax,) = [a for a in fig.axes if a.get_lines()]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert set(lines) == {"Gb/s per host", "contention-free fabric", "best"}
    got = lines["Gb/s per host"]
    assert list(got.get_xdata()) == [4096, 65536, 1048576]  # numbers sorted
    by_size = {r["simulate.message_bytes"]: r for r in doc["rows"]}
    assert list(got.get_ydata()) == [by_size[x]["gbps_per_host"] for x in (4096, 65536, 1048576)]
    assert list(lines["contention-free fabric"].get_ydata()) == [
        by_size[x]["ideal_gbps_per_host"] for x in (4096, 65536, 1048576)
    ]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4 KiB", "64 KiB", "1 MiB"]
    best = lines["best"]
    assert (best.get_xdata()[0], best.get_ydata()[0]) == (
        doc["best"]["simulate.message_bytes"],
        doc["best"]["gbps_per_host"],
    )
    assert (tmp_path / "fig" / "scan.json").exists()


def test_without_the_contention_free_run(scenario, tmp_path):
    doc = scanned(
        scenario, tmp_path, ["placement.order=topology,hostname"], ["simulate.ideal=false"]
    )
    assert [r["ideal_gbps_per_host"] for r in doc["rows"]] == [None, None]
    assert [r["slowdown"] for r in doc["rows"]] == [None, None]
    assert doc["best"]["placement.order"] == "topology"
    assert [r["ideal_gbps_per_host"] for r in read_csv(tmp_path / "fig" / "scan.csv")] == ["", ""]
    labels = [ln.get_label() for a in scan_figure(doc).axes for ln in a.get_lines()]
    assert labels == ["Gb/s per host", "best"]


def test_heat_map_two_keys(scenario, tmp_path):
    doc = scanned(
        scenario,
        tmp_path,
        ["simulate.message_bytes=1048576,65536", "placement.order=random,topology,hostname"],
    )
    fig = scan_figure(doc)
    (ax,) = [a for a in fig.axes if a.get_images()]
    grid = ax.get_images()[0].get_array()
    rows = {(r["simulate.message_bytes"], r["placement.order"]): r for r in doc["rows"]}
    orders = ["random", "topology", "hostname"]  # strings keep the given order
    sizes = [65536, 1048576]
    for yi, order in enumerate(orders):
        for xi, size in enumerate(sizes):
            assert grid[yi, xi] == rows[(size, order)]["gbps_per_host"]
    assert [t.get_text() for t in ax.get_yticklabels()] == orders
    assert [t.get_text() for t in ax.get_xticklabels()] == ["64 KiB", "1 MiB"]
    # Every cell is annotated, and the best cell is framed.
    assert len(ax.texts) == 6
    (frame,) = ax.patches
    best = doc["best"]
    assert frame.get_xy() == (
        sizes.index(best["simulate.message_bytes"]) - 0.5,
        orders.index(best["placement.order"]) - 0.5,
    )
    assert best["placement.order"] == "topology"  # D-mod-K's conflict-free order wins


def test_many_values_get_a_few_labelled_ticks(scenario, tmp_path):
    # A label per value of 8,000 took matplotlib's layout 35 s (and could not be read): at
    # most 40 are labelled, the first and the last among them.
    scanned(
        scenario, tmp_path, ["simulate.message_bytes=65536,1048576", "placement.order=topology"]
    )
    doc = json.loads((tmp_path / "fig" / "scan.json").read_text())
    many = [65536, 1048576, *range(1, 3000)]
    doc["vary"][0]["values"] = many
    doc["vary"][1]["values"] = [f"order{i}" for i in range(100)] + ["topology"]
    (ax,) = [a for a in scan_figure(doc).axes if a.get_images()]
    xs = [t.get_text() for t in ax.get_xticklabels()]
    ys = [t.get_text() for t in ax.get_yticklabels()]
    assert len(xs) == len(ys) == 40
    assert (xs[0], xs[-1]) == ("1", "1 MiB") and (ys[0], ys[-1]) == ("order0", "topology")
    assert list(ax.get_xticks()) == sorted(ax.get_xticks()) and ax.get_xticks()[-1] == 3000


def test_facets_over_a_third_key(scenario, tmp_path):
    doc3 = scanned(
        scenario,
        tmp_path,
        [
            "simulate.message_bytes=65536,1048576",
            "placement.order=topology,hostname",
            "fabric.taper=1:1,2:1",
        ],
    )
    assert len(doc3["rows"]) == 8
    fig = scan_figure(doc3)
    panels = [a for a in fig.axes if a.get_images()]
    assert [a.get_title() for a in panels] == ["fabric.taper=1:1", "fabric.taper=2:1"]
    assert sum(len(a.patches) for a in panels) == 1  # one best point in the figure
    # Tapering the leaves cannot make the best point faster.
    assert doc3["best"]["fabric.taper"] == "1:1"


# -- Ctrl-C ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("jobs", "stop"),
    [(1, "ctrl-c"), (2, "ctrl-c"), (2, "ctrl-c-twice"), (2, "ctrl-c-then-another"), (2, "scancel")],
    ids=["one-job", "two-jobs", "two-signals", "two-signals-apart", "sigterm-to-every-process"],
)
def test_ctrl_c_writes_finished_rows(scenario, tmp_path, jobs, stop):
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "daqnet", "scan", str(scenario), *PROTOCOL]
    cmd += ["--set", "simulate.events=800", "--vary", "bench.credits=1,2,3,4,5,6,7,8"]
    cmd += ["--vary", "bench.in_flight=1,2,4,8", "--out", str(out), "--jobs", str(jobs)]
    # scancel (or kill of a process group) sends SIGTERM to the workers too: SIGTERM once
    # ended daqnet at once, leaving its workers running and scan.json at "running".
    p = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=stop == "scancel",
    )
    _wait_for_points(p, out, 2)
    assert p.poll() is None, "the scan finished before it could be interrupted"
    try:
        if stop == "scancel":
            os.killpg(p.pid, signal.SIGTERM)
        else:
            p.send_signal(signal.SIGINT)
        if stop.startswith("ctrl-c-t"):
            # An impatient user, or `timeout -s INT`, which signals the command and then its
            # process group: the second came as the rows were written and lost them (2 of 3
            # runs back to back). Also a moment apart: Python may take two at once for one.
            if stop == "ctrl-c-then-another":
                time.sleep(0.002)
            p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=60)  # a worker left running holds the pipes
    finally:
        if stop == "scancel":  # its workers ignore SIGTERM: leave none behind on a failure
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 130, stderr
    assert "interrupted after" in stderr and "Traceback" not in stderr
    assert "INTERRUPTED" in stdout
    doc = json.loads((out / "scan.json").read_text())
    assert doc["status"] == "interrupted" and doc["interrupted"]
    assert 2 <= doc["points_done"] < doc["points_total"] == 32
    assert len(read_csv(out / "scan.csv")) == doc["points_done"]
    # A finished row is a whole simulation, not a cut-short one.
    row = doc["rows"][1]
    assert {m: row[m] for m in METRICS["protocol"]} == expected_row(
        scenario,
        [
            "simulate.mode=protocol",
            "simulate.events=800",
            f"bench.credits={row['bench.credits']}",
            f"bench.in_flight={row['bench.in_flight']}",
        ],
    )


def test_ctrl_c_while_the_figure_is_drawn_keeps_the_summary(
    scenario, tmp_path, monkeypatch, capsys
):
    # The figure comes last and takes seconds (matplotlib loads): a Ctrl-C there once ended
    # daqnet with a bare "interrupted", no summary and no word of the files written.
    import daqnet.report.scan as report

    def stopped(doc, path):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "figure", stopped)
    out = tmp_path / "o"
    assert main(["scan", str(scenario), *STEPS_VARY[:2], "--out", str(out), "--jobs", "1"]) == 130
    std = capsys.readouterr()
    assert "interrupted while the figure was drawn: no figure" in std.err
    assert "best       gbps_per_host" in std.out and f"results    {out / 'scan.csv'}" in std.out
    assert "scan.png" not in std.out and not (out / "scan.png").exists()
    doc = json.loads((out / "scan.json").read_text())
    assert (
        doc["status"] == "finished" and len(read_csv(out / "scan.csv")) == doc["points_total"] == 3
    )


# -- MPI -------------------------------------------------------------------------------------
def mpiexec() -> str:
    pytest.importorskip("mpi4py", reason="mpi4py is in daqnet's test extra")
    from daqnet.bench import mpiexec

    return mpiexec()


# MPICH ranks waiting in MPI spin; daqnet scan only probes and sleeps, and this throttle
# keeps MPICH's own progress polling from taking a core from the other rank.
MPI_ENV = {"MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1"}


def test_mpi_ranks_give_the_serial_rows(scenario, tmp_path):
    launcher = mpiexec()
    serial = daqnet("scan", scenario, *STEPS_VARY, "--out", tmp_path / "serial", "--jobs", "1")
    assert serial.returncode == 0, serial.stderr
    daq = str(Path(sysconfig.get_path("scripts")) / "daqnet")
    p = subprocess.run(
        [launcher, "-n", "2", daq, "scan", str(scenario), *STEPS_VARY, "--out", tmp_path / "mpi"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **MPI_ENV},
    )
    assert p.returncode == 0, p.stdout + p.stderr
    a = json.loads((tmp_path / "serial" / "scan.json").read_text())
    b = json.loads((tmp_path / "mpi" / "scan.json").read_text())
    assert b["ranks"] == 2 and a["ranks"] == 1
    assert a["rows"] == b["rows"]
    assert (tmp_path / "serial" / "scan.csv").read_text() == (
        tmp_path / "mpi" / "scan.csv"
    ).read_text()
    # Only rank 0 speaks: one summary.
    assert p.stdout.count("daqnet scan —") == 1 and "1 job × 2 ranks" in p.stdout
    assert p.stderr == ""


def test_mpi_bad_input_one_line(scenario, tmp_path):
    launcher = mpiexec()
    daq = str(Path(sysconfig.get_path("scripts")) / "daqnet")
    p = subprocess.run(
        [launcher, "-n", "2", daq, "scan", str(scenario), "--vary", "fabric.radix=8,7"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **MPI_ENV},
        cwd=tmp_path,
    )
    assert p.returncode == 2
    assert "point 1 (fabric.radix=7)" in one_error_line(p.stderr)
    assert not list(tmp_path.glob("scan-*"))


def _rank_pid(marker: str, rank: int) -> int | None:
    """The process of MPI rank `rank` whose environment holds `marker`."""
    for env in Path("/proc").glob("[0-9]*/environ"):
        with contextlib.suppress(OSError):
            items = env.read_bytes().split(b"\0")
            if marker.encode() in items and f"PMI_RANK={rank}".encode() in items:
                return int(env.parent.name)
    return None


def test_mpi_one_rank_interrupted_ends_the_scan(scenario, tmp_path):
    # scancel of one task, or a rank's node going down with SIGTERM: the other ranks went on
    # and rank 0 waited for that rank's rows for ever, scan.json at "running". Now the scan
    # ends interrupted, with the rows every rank finished.
    launcher = mpiexec()
    daq = str(Path(sysconfig.get_path("scripts")) / "daqnet")
    out, marker = tmp_path / "o", f"DAQNET_TEST_MARK={tmp_path}"
    cmd = [launcher, "-n", "2", daq, "scan", str(scenario), *PROTOCOL, "--jobs", "1"]
    cmd += ["--set", "simulate.events=1500", "--vary", "bench.credits=1,2,3,4,5,6,7,8,9,10,11,12"]
    p = subprocess.Popen(
        [*cmd, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **MPI_ENV, marker.split("=")[0]: str(tmp_path)},
    )
    try:
        _wait_for_points(p, out, 2)
        pid = _rank_pid(marker, 1)
        assert pid is not None and p.poll() is None, "the scan finished before the signal"
        os.kill(pid, signal.SIGTERM)
        _, stderr = p.communicate(timeout=120)
    finally:
        p.kill()
    doc = json.loads((out / "scan.json").read_text())
    assert doc["status"] == "interrupted", stderr
    assert 2 <= doc["points_done"] < 12
    assert p.returncode == 130


def _catches(pid: int, sig: int) -> bool:
    """Whether process `pid` has a handler for `sig` (its SigCgt mask in /proc)."""
    with contextlib.suppress(OSError, StopIteration, ValueError):
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        mask = int(next(line for line in status if line.startswith("SigCgt:")).split()[1], 16)
        return bool(mask >> (sig - 1) & 1)
    return False


@pytest.mark.parametrize("rank", [1, 0])
def test_mpi_rank_interrupted_while_planning_ends_the_scan(scenario, tmp_path, rank):
    # A rank interrupted before its main loop (planning, waiting for rank 0's go, starting its
    # pool) left without a word, and rank 0 waited for its plan's verdict for ever; rank 0
    # interrupted so left the others waiting for its go. Each rank plans all 16,000 points
    # here (6-7 s on the 2-core VM): the signal comes 1 s in.
    launcher = mpiexec()
    daq = str(Path(sysconfig.get_path("scripts")) / "daqnet")
    out, marker = tmp_path / "o", f"DAQNET_TEST_MARK={tmp_path}"
    events = ",".join(str(e) for e in range(100, 16100))
    cmd = [launcher, "-n", "2", daq, "scan", str(scenario), *PROTOCOL, "--jobs", "1"]
    p = subprocess.Popen(
        [*cmd, "--vary", f"simulate.events={events}", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **MPI_ENV, marker.split("=")[0]: str(tmp_path)},
    )
    try:
        deadline = time.monotonic() + 60
        pid = None
        while time.monotonic() < deadline and p.poll() is None:
            pid = _rank_pid(marker, rank)
            if pid is not None and _catches(pid, signal.SIGTERM):
                break  # daqnet's handlers are in: it is starting MPI or planning
            time.sleep(0.05)
        time.sleep(1.0)  # MPI's start is over
        assert pid is not None and p.poll() is None and not out.exists(), "planning was over"
        os.kill(pid, signal.SIGTERM)
        _, stderr = p.communicate(timeout=120)
    finally:
        p.kill()
    assert p.returncode == 130, stderr
    if rank == 0:  # it had not planned: nothing was written
        assert not out.exists() and "interrupted" in stderr, stderr
        return
    doc = json.loads((out / "scan.json").read_text())
    assert doc["status"] == "interrupted" and doc["points_done"] < 16000, stderr


def test_mpi_launch_without_mpi4py(scenario, tmp_path):
    # A stand-in package that fails to import, as if mpi4py were not installed.
    (tmp_path / "mpi4py").mkdir()
    (tmp_path / "mpi4py" / "__init__.py").write_text("raise ImportError('no mpi4py')\n")
    p = daqnet(
        "scan",
        scenario,
        "--vary",
        "simulate.message_bytes=65536",
        env={"PMI_SIZE": "2", "PMI_RANK": "0", "PYTHONPATH": str(tmp_path)},
        cwd=tmp_path,
    )
    assert p.returncode == 2
    assert "mpi4py is not installed" in one_error_line(p.stderr)
    assert "PMI_SIZE=2" in p.stderr


def test_launch_detection(monkeypatch):
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"):
        monkeypatch.delenv(var, raising=False)
    # A batch script with --ntasks=4 is not a launch of 4 ranks ...
    monkeypatch.setenv("SLURM_NTASKS", "4")
    monkeypatch.setenv("SLURM_PROCID", "0")
    assert launched_ranks() == 1
    # ... srun inside it is.
    monkeypatch.setenv("SLURM_STEP_NUM_TASKS", "4")
    assert launched_ranks() == 4
    # mpiexec -n 1 inside a step: the launcher closest to us decides.
    monkeypatch.setenv("PMI_SIZE", "1")
    assert launched_ranks() == 1
    monkeypatch.setenv("PMI_SIZE", "3")
    assert launched_ranks() == 3


def test_plan_is_stable(scenario):
    plan = make_plan(str(scenario), ["fabric.hosts=8,16", "placement.order=topology,random"], [])
    assert [p.label for p in plan.points] == [
        "fabric.hosts=8, placement.order=topology",
        "fabric.hosts=8, placement.order=random",
        "fabric.hosts=16, placement.order=topology",
        "fabric.hosts=16, placement.order=random",
    ]
    assert [p.scenario["fabric"]["hosts"] for p in plan.points] == [8, 8, 16, 16]


@pytest.mark.parametrize("guarded", [False, True])
def test_run_scan_from_a_script(scenario, tmp_path, guarded):
    # Worker processes re-import the main script; an unguarded top-level run_scan crashed
    # the pool with "a worker process died". Now it is named, with the fix, before any start.
    call = (
        f"doc = run_scan({str(scenario)!r}, ['placement.order=topology,hostname'], "
        f"out={str(tmp_path / 'o')!r}, jobs=2)\nprint(doc['status'])\n"
    )
    if guarded:
        call = "if __name__ == '__main__':\n" + "".join(f"    {ln}\n" for ln in call.splitlines())
    script = tmp_path / "my_scan.py"
    script.write_text("from daqnet.scan import run_scan\n" + call)
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    if guarded:
        assert r.returncode == 0 and r.stdout.strip() == "finished", r.stderr
    else:
        assert r.returncode == 1 and "worker process died" not in r.stderr
        assert f"{script}:2: run_scan with jobs > 1 starts worker processes" in r.stderr
        assert 'if __name__ == "__main__":' in r.stderr
        assert not (tmp_path / "o").exists()


def test_mappings_that_keep_bytes_on_a_node_are_not_ranked_by_rate(tmp_path):
    # Blocked mappings keep neighbours on a node: the same time with fewer bytes in the
    # network reads as a lower rate, and "best gbps_per_host" went to the mapping that
    # sends the most. The summary says so; a scan whose points send alike does not.
    from daqnet.report.scan import scan_summary

    s = tmp_path / "p.toml"
    s.write_text(
        '[fabric]\nkind = "percs"\nsupernodes = 2\n[routing]\nengine = "direct"\n'
        '[workload]\nkind = "stencil2d"\n'
    )
    doc = run_scan(
        str(s), ["placement.order=default,blocked-node"], out=str(tmp_path / "m"), jobs=1
    )
    sent = [r["gbps_per_host"] * r["total_seconds"] for r in doc["rows"]]
    assert min(sent) < max(sent)
    assert "--metric total_seconds compares times" in scan_summary(doc, [])
    # Not a mapping: link rates, and message sizes (whose rates are what a size scan compares).
    for vary in ("fabric.d_gbps=80,40", "simulate.message_bytes=1000,2000"):
        other = run_scan(str(s), [vary], out=str(tmp_path / vary[:5]), jobs=1)
        assert "compares times" not in scan_summary(other, []), vary


def test_the_best_point_of_a_measured_scan_built_its_fragments_intact():
    # A run with corrupt fragments is a row (docs/scan.md), but was picked as the best.
    from daqnet.scan.metrics import best_row

    rows = [
        {"point": 0, "gbps_per_host": 9.0, "corrupt_fragments": 3},
        {"point": 1, "gbps_per_host": 8.0, "corrupt_fragments": 0},
    ]
    assert best_row(rows, "gbps_per_host")["point"] == 1
    rows[1]["duplicate_fragments"] = 1  # none intact: the best of them all
    assert best_row(rows, "gbps_per_host")["point"] == 0
    # Simulated scans count no fragments.
    assert best_row([{"point": 0, "gbps_per_host": 1.0}], "gbps_per_host")["point"] == 0


def test_an_interrupted_rerun_keeps_the_earlier_complete_scan(scenario, tmp_path):
    # A rerun into the same --out removed the finished scan's files as it started.
    out = tmp_path / "o"
    base = [sys.executable, "-m", "daqnet", "scan", str(scenario), *PROTOCOL, "--out", str(out)]
    r = subprocess.run([*base, "--vary", "bench.credits=1,2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    complete = (out / "scan.json").read_text()
    cmd = [*base, "--set", "simulate.events=800", "--vary", "bench.credits=1,2,3,4,5,6,7,8"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 30
    while not (out / "previous").exists() and time.monotonic() < end:
        time.sleep(0.05)  # the finished scan is set aside as the rerun starts
    _wait_for_points(p, out, 1)
    assert p.poll() is None, "the scan finished before it could be interrupted"
    p.send_signal(signal.SIGINT)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert f"(an earlier complete result is kept in {out / 'previous'})" in stderr, stderr
    assert (out / "previous" / "scan.json").read_text() == complete
    assert (out / "previous" / "scan.csv").exists()
    r = subprocess.run([*base, "--vary", "bench.credits=1,2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not (out / "previous").exists()
