"""`daqnet scan --bench`: measured sweeps of the real event builder (2 ranks on loopback,
half-second runs), --repeat statistics against the runs they summarise, prediction beside
measurement, Ctrl-C, bad input; every table as a DataFrame and as Parquet (daqnet.tables).

Timing never decides a test: only counts, orderings and agreement between files do.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import small_scenario
from daqnet import DaqnetError, Scenario
from daqnet.cli import main
from daqnet.scan import METRICS
from daqnet.scan.metrics import BENCH_STATS, PREDICTED, RATIOS, RUN_COLUMNS
from daqnet.simulate import simulate

pd = pytest.importorskip("pandas", reason="pandas is in daqnet's test extra")
pytest.importorskip("pyarrow", reason="pyarrow is in daqnet's test extra")

from daqnet.tables import dataframes, read_tables, to_dataframe  # noqa: E402

EXAMPLE = Path(__file__).parent.parent / "examples" / "bench-local.toml"
# Two ranks (one node each), half a second measured: a point takes about a second.
QUICK = [
    "bench.ranks=2",
    "bench.seconds=0.5",
    "bench.warmup_seconds=0.1",
    "bench.report_seconds=0.2",
    "bench.meta_bytes=0",
]
SIZES = [65536, 262144]
# MPICH's own progress polling would take a core from the other rank (as in test_scan.py).
MPI_ENV = {"MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1"}


def daqnet(*args, env=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "daqnet", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **MPI_ENV, **(env or {})},
    )


def sets(items) -> list[str]:
    return [a for item in items for a in ("--set", item)]


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("daqnet: error: "), stderr
    return lines[0]


def measured_scan(out: Path, *extra, transport="tcp", repeat=2, predict=False):
    args = ["scan", EXAMPLE, "--bench", "--repeat", repeat, "--out", out, "--json"]
    args += ["--vary", "bench.fragment_bytes=" + ",".join(map(str, SIZES))]
    args += sets([*QUICK, f"bench.transport={transport}"]) + list(extra)
    if predict:
        args.append("--predict")
    p = daqnet(*args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def compared(tmp_path_factory) -> tuple[Path, dict]:
    """One measured scan with its prediction, 2 sizes × 2 runs over TCP, shared by the
    tests that read it."""
    out = tmp_path_factory.mktemp("compare") / "scan"
    return out, measured_scan(out, predict=True)


# -- rows and runs ---------------------------------------------------------------------------
def check_measured(out: Path, doc: dict, repeat: int) -> None:
    assert doc["status"] == "finished" and doc["repeat"] == repeat
    assert [r["bench.fragment_bytes"] for r in doc["rows"]] == SIZES
    assert doc["points_done"] == doc["points_total"] == len(SIZES)
    assert doc["columns"] == ["point", "bench.fragment_bytes", *METRICS[doc["mode"]]]
    assert doc["run_columns"] == ["point", "repeat", "bench.fragment_bytes", *RUN_COLUMNS]
    assert len(doc["runs"]) == repeat * len(SIZES)
    for row in doc["rows"]:
        runs = [r for r in doc["runs"] if r["point"] == row["point"]]
        assert [r["repeat"] for r in runs] == list(range(1, repeat + 1))
        assert row["repeats"] == repeat
        for r in runs:
            assert r["bench.fragment_bytes"] == row["bench.fragment_bytes"]
            assert r["status"] == "finished" and r["events_built"] > 0
            assert r["ranks"] == r["nodes"] == 2
            # The run's own bench result says the same (the row is read from it).
            result = json.loads((out / r["dir"] / "result.json").read_text())
            assert result["fragment_bytes"] == row["bench.fragment_bytes"]
            assert result["throughput_gbps"] == r["throughput_gbps"]
            assert result["events_built"] == r["events_built"]
            assert r["gbps_per_host"] == pytest.approx(r["throughput_gbps"] / 2, rel=1e-12)
            assert result["latency_seconds"]["p99"] == r["latency_p99_seconds"]
        for m in BENCH_STATS:
            values = [r[m] for r in runs]
            lo, mid, hi = (row[f"{m}_{s}"] for s in ("min", "median", "max"))
            assert lo <= mid <= hi
            assert (lo, mid, hi) == (min(values), statistics.median(values), max(values))
        assert row["events_built_median"] == statistics.median(r["events_built"] for r in runs)
        for k in ("lost_fragments", "duplicate_fragments", "corrupt_fragments"):
            assert row[k] == 0 == sum(r[k] for r in runs)
        assert row["warning"] == ""
    # The table on disk is the document's.
    assert doc == {**json.loads((out / "scan.json").read_text())}
    csv = pd.read_csv(out / "scan.csv")
    assert list(csv.columns) == doc["columns"] and len(csv) == len(doc["rows"])
    runs_csv = pd.read_csv(out / "runs.csv")
    assert list(runs_csv.columns) == doc["run_columns"] and len(runs_csv) == len(doc["runs"])
    assert (out / "scan.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("transport", ["tcp", "mpi"])
def test_repeated_sweep_summarises_its_runs(tmp_path, transport):
    out = tmp_path / "scan"
    doc = measured_scan(out, transport=transport)
    assert doc["mode"] == "bench" and doc["jobs"] == 1
    check_measured(out, doc, 2)
    assert {r["transport"] for r in doc["runs"]} == {transport}
    assert not any(c.startswith("predicted_") for c in doc["columns"])


def test_prediction_beside_measurement(compared):
    out, doc = compared
    assert doc["mode"] == "compare"
    check_measured(out, doc, 2)
    for row in doc["rows"]:
        # The prediction is the protocol simulation of the same point, on bench's 2 ranks.
        scenario = Scenario.load(
            EXAMPLE,
            [
                *QUICK,
                "bench.transport=tcp",
                f"bench.fragment_bytes={row['bench.fragment_bytes']}",
                "simulate.mode=protocol",
            ],
        )
        r = simulate(scenario)
        assert r["nodes"] == 2
        want = {**r, **{f"latency_{k}_seconds": v for k, v in r["latency_seconds"].items()}}
        for m in PREDICTED:
            assert row[f"predicted_{m}"] == want[m], m
        for m in RATIOS:
            assert row[f"ratio_{m}"] == row[f"{m}_median"] / row[f"predicted_{m}"]
    # The sizes differ in prediction: a scan that ignored its values gives equal rows.
    assert len({row["predicted_events_per_second"] for row in doc["rows"]}) == 2


def test_summary_reads_like_a_benchmark_table(tmp_path, compared):
    out, doc = compared
    from daqnet.report.scan import scan_summary

    text = scan_summary(doc, [str(out / "scan.csv")])
    header = next(line for line in text.splitlines() if line.lstrip().startswith("point"))
    for col in ("gbps_per_host_median", "predicted_gbps_per_host", "ratio_gbps_per_host"):
        assert col in header
    assert "compare mode, 2 runs per point" in text
    assert "best       gbps_per_host_median" in text


# -- DataFrames and Parquet ------------------------------------------------------------------
def test_dataframes_equal_the_json_and_csv(compared):
    out, doc = compared
    frames = read_tables(out)
    assert set(frames) == {"scan", "runs"}
    for name, rows, cols in (
        ("scan", doc["rows"], doc["columns"]),
        ("runs", doc["runs"], doc["run_columns"]),
    ):
        frame = frames[name]
        assert list(frame.columns) == cols
        assert frame.to_dict("records") == [{c: r[c] for c in cols} for r in rows]
        csv = pd.read_csv(out / f"{name}.csv", keep_default_na=False)
        assert list(csv.columns) == cols
        for c in cols:
            for got, want in zip(csv[c].tolist(), frame[c].tolist(), strict=True):
                if isinstance(want, float):
                    assert float(got) == want, c
                else:
                    assert str(got) == str(want), c


def test_scan_parquet_equals_csv(tmp_path):
    scenario = tmp_path / "small.toml"
    scenario.write_text(small_scenario("small", 32, "[simulate]\nevents = 120\n"))
    vary = ["--vary", "placement.order=topology,random", "--vary", "workload.shifts=[1],[1, 2]"]
    common = ["scan", scenario, *vary, "--set", "workload.kind=shift", "--jobs", "1"]
    a = daqnet(*common, "--out", tmp_path / "csv")
    b = daqnet(*common, "--out", tmp_path / "pq", "--format", "parquet")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert not (tmp_path / "pq" / "scan.csv").exists()
    assert "pq/scan.parquet" in b.stdout
    csv = pd.read_csv(tmp_path / "csv" / "scan.csv")
    parquet = pd.read_parquet(tmp_path / "pq" / "scan.parquet")
    pd.testing.assert_frame_equal(parquet, csv, check_dtype=False)
    # Lists are JSON text in both files, Python lists in the DataFrame of the document.
    assert parquet["workload.shifts"].tolist() == ["[1]", "[1, 2]"] * 2
    doc = json.loads((tmp_path / "pq" / "scan.json").read_text())
    assert to_dataframe(doc)["workload.shifts"].tolist() == [[1], [1, 2]] * 2


def test_measured_scan_and_bench_as_parquet(tmp_path, compared):
    _, reference = compared
    out = tmp_path / "scan"
    doc = measured_scan(out, "--format", "parquet", repeat=1)
    assert not (out / "scan.csv").exists() and not (out / "runs.csv").exists()
    for name, frame in dataframes(doc).items():
        back = pd.read_parquet(out / f"{name}.parquet")
        pd.testing.assert_frame_equal(back, frame, check_dtype=False)
    # Every run keeps its bench tables, here in Parquet too.
    run = out / doc["runs"][0]["dir"]
    units = pd.read_parquet(run / "units.parquet")
    result = json.loads((run / "result.json").read_text())
    assert not (run / "units.csv").exists()
    pd.testing.assert_frame_equal(
        units, to_dataframe(result, "units"), check_dtype=False, check_like=False
    )
    assert len(pd.read_parquet(run / "timeseries.parquet")) == len(result["timeseries"])
    assert list(doc["rows"][0]) == [
        c for c in reference["columns"] if "predicted" not in c and "ratio" not in c
    ]


def test_other_results_as_dataframes(tmp_path):
    from daqnet import conflicts

    scenario = tmp_path / "small.toml"
    scenario.write_text(small_scenario("small", 32))
    p = daqnet("simulate", scenario, "--out", tmp_path / "sim")
    assert p.returncode == 0, p.stderr
    frames = read_tables(tmp_path / "sim")
    assert set(frames) == {"steps", "link_loads"}
    steps = pd.read_csv(tmp_path / "sim" / "steps.csv")
    pd.testing.assert_frame_equal(frames["steps"], steps, check_dtype=False)
    # A result object gives the same tables as its document.
    r = simulate(Scenario.load(scenario))
    pd.testing.assert_frame_equal(r.to_dataframe(), frames["steps"], check_dtype=False)
    with pytest.raises(DaqnetError, match="table 'units': this result has steps, link_loads"):
        r.to_dataframe("units")
    # conflicts: the CSV files' tables from the report object.
    s = Scenario.load(scenario)
    report = conflicts(*s.build()[1:])
    assert main(["conflicts", str(scenario), "--out", str(tmp_path / "c")]) == 0
    frames = dataframes(report)
    for name in ("steps", "links", "levels"):
        csv = pd.read_csv(tmp_path / "c" / f"{name}.csv")
        pd.testing.assert_frame_equal(frames[name], csv, check_dtype=False)


def test_missing_pandas_or_pyarrow_is_one_line(tmp_path):
    # Stand-in packages that fail to import, as if the tables extra were not installed.
    for name in ("pyarrow", "pandas"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('no {name}')\n")
    scenario = tmp_path / "small.toml"
    scenario.write_text(small_scenario("small", 32))
    for command in (
        ["scan", scenario, "--vary", "placement.order=topology,random"],
        ["simulate", scenario],
        ["conflicts", scenario],
        ["bench", EXAMPLE],
    ):
        p = daqnet(
            *command,
            "--format",
            "parquet",
            "--out",
            tmp_path / "o",
            env={"PYTHONPATH": str(tmp_path)},
        )
        assert p.returncode == 2, p.stderr
        line = one_error_line(p.stderr)
        assert "format parquet needs pandas and pyarrow" in line, line
        assert "pip install 'daqnet[tables]'" in line
        assert not (tmp_path / "o").exists()
    code = "import daqnet.tables as t; t.to_dataframe({'rows': []})"
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert "DataFrames need pandas" in p.stderr


# -- report ----------------------------------------------------------------------------------
def test_report_shows_a_measured_scan(tmp_path, compared):
    out, doc = compared
    html = tmp_path / "r.html"
    assert main(["report", str(out), "-o", str(html)]) == 0
    page = html.read_text()
    for text in ("compare", "gbps_per_host_median", "predicted_gbps_per_host", "data:image/svg"):
        assert text in page, text
    assert "runs per point" in page and "bench.fragment_bytes" in page
    assert doc["repeat"] == 2


# -- Ctrl-C ----------------------------------------------------------------------------------
def test_ctrl_c_keeps_finished_points_only(tmp_path):
    out = tmp_path / "scan"
    cmd = [sys.executable, "-m", "daqnet", "scan", str(EXAMPLE), "--bench", "--repeat", "2"]
    cmd += ["--vary", "bench.credits=1,2,3,4", "--out", str(out)]
    cmd += sets([*QUICK, "bench.transport=tcp", "bench.fragment_bytes=65536"])
    p = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **MPI_ENV},
    )
    deadline = time.monotonic() + 120
    done = 0
    # Interrupt once a point is finished and the next one's second run is measuring.
    while time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.1)
        with contextlib.suppress(OSError, ValueError, KeyError):  # not written yet
            done = json.loads((out / "scan.json").read_text())["points_done"]
        if done and (out / "runs" / f"point-{done:04d}-run-2" / "rank-0.json").exists():
            break
    assert p.poll() is None, "the scan finished before it could be interrupted"
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert "interrupted after" in stderr and "Traceback" not in stderr
    assert "INTERRUPTED" in stdout
    doc = json.loads((out / "scan.json").read_text())
    assert doc["status"] == "interrupted"
    assert 1 <= doc["points_done"] < doc["points_total"] == 4
    # Only whole points: every row has both its runs, the cut point has no row and no runs.
    assert [r["point"] for r in doc["rows"]] == list(range(doc["points_done"]))
    assert [(r["point"], r["repeat"]) for r in doc["runs"]] == [
        (i, k) for i in range(doc["points_done"]) for k in (1, 2)
    ]
    assert all(r["repeats"] == 2 and r["gbps_per_host_median"] > 0 for r in doc["rows"])
    assert len(pd.read_csv(out / "scan.csv")) == doc["points_done"]
    assert len(pd.read_csv(out / "runs.csv")) == 2 * doc["points_done"]
    # The cut run was interrupted, not left running: its bench result says so.
    cut = json.loads(
        (out / "runs" / f"point-{doc['points_done']:04d}-run-2" / "result.json").read_text()
    )
    assert cut["interrupted"]


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bench", "--vary", "bench.fragmnt_bytes=65536"], "unknown key 'bench.fragmnt_bytes'"),
        (
            ["--bench", "--vary", "simulate.events=100,200"],
            "vary simulate.events: .*daqnet bench.*every point would give the same row",
        ),
        (
            ["--bench", "--vary", "bench.fragment_bytes=65536,32"],
            r"point 1 \(bench.fragment_bytes=32\): .*bench.fragment_bytes = 32: must be from 64",
        ),
        (
            ["--bench", "--vary", "bench.credits=1,2", "--metric", "slowdown"],
            "not a metric of a bench scan",
        ),
        (["--predict", "--vary", "bench.credits=1,2"], "give bench as well"),
        (["--repeat", "3", "--vary", "fabric.hosts=8,16"], "repeat is for bench"),
        (
            [
                "--bench",
                "--predict",
                "--vary",
                "bench.credits=1,2",
                "--set",
                "bench.mode=time-frames",
                "--set",
                "bench.senders=1",
                "--set",
                "bench.receivers=1",
            ],
            "the protocol simulation covers 'event-manager' mode",
        ),
    ],
)
def test_bad_input_stops_before_any_run(tmp_path, capsys, args, message):
    import re

    out = tmp_path / "never"
    code = main(["scan", str(EXAMPLE), *sets(QUICK), *args, "--out", str(out)])
    assert code == 2
    line = one_error_line(capsys.readouterr().err)
    assert re.search(message, line), line
    assert not out.exists()


def test_bench_scan_is_refused_under_mpiexec(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setenv("PMI_RANK", "0")
    code = main(
        [
            "scan",
            str(EXAMPLE),
            "--bench",
            "--vary",
            "bench.credits=1,2",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    assert "benchmarks run one at a time" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


def test_nan_free_json(compared):
    out, _ = compared
    text = (out / "scan.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert all(
        not (isinstance(v, float) and math.isnan(v))
        for r in json.loads(text)["rows"]
        for v in r.values()
    )


def test_corrupt_fragments_are_a_row_not_the_end_of_the_scan(tmp_path):
    # docs/scan.md: damaged fragments do not stop a measured scan, the row counts them and
    # the scan ends with status 1. Once a run with them said "failed", the scan stopped.
    args = ["scan", EXAMPLE, "--bench", "--repeat", 1, "--out", tmp_path / "s", "--json"]
    args += ["--vary", "bench.fragment_bytes=" + ",".join(map(str, SIZES))]
    p = daqnet(*args, *sets(QUICK), env={"DAQNET_EVB_FAULTS": "fault_corrupt_every=7"})
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert doc["points_done"] == len(SIZES)
    assert all(r["corrupt_fragments"] > 0 and "corrupt" in r["warning"] for r in doc["rows"])


def test_a_conflicts_result_reads_as_its_csv(tmp_path):
    # read_tables(DIR)["steps"] lacked steps.csv's links_used; ConflictReport had no
    # to_dataframe() as every other result has.
    from daqnet.analysis import conflicts

    out = tmp_path / "c"
    done = subprocess.run(
        [sys.executable, "-m", "daqnet", "conflicts", str(EXAMPLE.parent / "lhcb-540.toml"),
         "--set", "fabric.hosts=36", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    steps = read_tables(out)["steps"]
    csv = pd.read_csv(out / "steps.csv")
    assert list(steps.columns) == list(csv.columns)
    assert steps.to_dict("records") == csv.to_dict("records")
    _, rt, pl, wl = Scenario.load(EXAMPLE.parent / "lhcb-540.toml", ["fabric.hosts=36"]).build()
    report = conflicts(rt, pl, wl)
    assert report.to_dataframe().to_dict("records") == csv.to_dict("records")
