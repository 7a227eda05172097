"""daqnet report: the page from real outputs of conflicts, simulate (both modes), scan,
bench, study and repair, checked in a real headless browser (Debian's chromium driven by
Playwright)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from daqnet.io.result_files import read_results, recognise
from daqnet.report.pairing import NODES, find_pairs

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SMALL = EXAMPLES / "slurm-hostname-64.toml"
BENCH = EXAMPLES / "bench-local.toml"
TAPER = EXAMPLES / "taper-648.toml"
# One short benchmark (4 ranks on this machine), and its prediction with the same keys.
RUN = ["bench.seconds=1", "bench.warmup_seconds=0.2", "bench.report_seconds=0.2"]
CHROMIUM = os.environ.get("DAQNET_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def daqnet(*args: object, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "daqnet", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def sets(items: list[str]) -> list[str]:
    return [a for item in items for a in ("--set", item)]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every command's --out directory, written by the real commands."""
    d = tmp_path_factory.mktemp("results")
    runs = {
        "conflicts": ["conflicts", SMALL, "--out", d / "conflicts"],
        "steps": ["simulate", SMALL, "--out", d / "steps"],
        "scan": [
            "scan",
            SMALL,
            "--vary",
            "placement.order=topology,hostname",
            "--vary",
            "fabric.taper=1:1,2:1",
            "-j",
            "2",
            "--out",
            d / "scan",
        ],
        "protocol": [
            "simulate",
            BENCH,
            *sets(["simulate.mode=protocol", *RUN]),
            "--out",
            d / "protocol",
        ],
        "bench": ["bench", BENCH, *sets(RUN), "--out", d / "bench"],
        "study": ["study", "taper", TAPER, "--out", d / "study"],
        "repair": ["repair", SMALL, "--what", "rank-order", "--out", d / "repair"],
    }
    for name, args in runs.items():
        p = daqnet(*args)
        assert p.returncode == 0, f"{name}: {p.stderr}"
    return {name: d / name for name in runs}


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_results_are_recognised_by_content_and_carry_provenance(outputs, tmp_path):
    results = read_results(
        [outputs[k] for k in ("conflicts", "steps", "scan", "protocol", "bench", "study", "repair")]
    )
    assert [r.kind for r in results] == [
        "conflicts",
        "simulate-steps",
        "scan",
        "simulate-protocol",
        "bench",
        "study",
        "repair",
    ]
    # Titled with the --set items that changed the scenario file (it named the file alone).
    titles = {r.kind: r.title for r in results}
    assert titles["simulate-protocol"] == (
        "bench-local (simulate.mode=protocol, bench.seconds=1, +2 more --set) "
        "— daqnet simulate (protocol mode)"
    )
    assert "(" not in titles["conflicts"] and titles["conflicts"].endswith(" — daqnet conflicts")
    # The bench directory's rank-N.json and launch.json are JSON but no result.
    assert [r.path.name for r in results if r.kind == "bench"] == ["result.json"]
    for r in results:
        p = r.doc["provenance"]
        assert p["daqnet_version"] and p["host"] and p["date"].endswith("+00:00")
        assert p["commit"] == "unknown" or len(p["commit"]) == 40
    # Not by name: a renamed document is still what it is.
    renamed = tmp_path / "anything.json"
    shutil.copy(outputs["steps"] / "result.json", renamed)
    assert [r.kind for r in read_results([renamed])] == ["simulate-steps"]
    assert recognise({"ranks": 4}) is None
    # --json on stdout is the same document as --out's result.json.
    p = daqnet("conflicts", SMALL, "--json")
    doc = json.loads(p.stdout)
    saved = load(outputs["conflicts"] / "result.json")
    drop = {"provenance", "scenario", "config"}
    assert {k: v for k, v in doc.items() if k not in drop} == {
        k: v for k, v in saved.items() if k not in drop
    }


def test_prediction_pairs_with_the_measurement_of_the_same_scenario(outputs, tmp_path):
    results = read_results([outputs["bench"], outputs["protocol"], outputs["steps"]])
    pairs, near = find_pairs(results)
    assert len(pairs) == 1 and not near
    assert {"bench.credits", "bench.in_flight", "bench.ranks", "bench.seconds"} <= set(
        pairs[0].keys
    )
    assert not any(k.startswith(("fabric.", "simulate.")) for k in pairs[0].keys)
    # Another value of a key both read: not the same scenario, shown as a near miss.
    other = tmp_path / "other"
    other.mkdir()
    doc = load(outputs["protocol"] / "result.json")
    doc["config"]["values"]["bench"]["credits"] = 3
    (other / "result.json").write_text(json.dumps(doc))
    pairs, near = find_pairs(read_results([outputs["bench"], other]))
    assert not pairs
    assert [(k, a, b) for k, a, b in near[0].differences] == [("bench.credits", 2, 3)]
    # A key only the simulation reads does not matter.
    doc["config"]["values"]["bench"]["credits"] = 2
    doc["config"]["values"]["fabric"]["hosts"] = 36
    (other / "result.json").write_text(json.dumps(doc))
    pairs, near = find_pairs(read_results([outputs["bench"], other]))
    assert len(pairs) == 1
    # Equal keys, other node counts (the benchmark's 4 ranks, the simulation's placed
    # hosts): a near miss, not a comparison of 8-fragment events with 4-fragment ones.
    doc["nodes"] = 8
    (other / "result.json").write_text(json.dumps(doc))
    pairs, near = find_pairs(read_results([outputs["bench"], other]))
    assert not pairs
    assert [(k, a, b) for k, a, b in near[0].differences] == [(NODES, 4, 8)]
    # bench.ranks left out (the simulation's every placed host) is no difference of its
    # own: the node counts are compared ("bench.ranks (4 measured, None predicted)").
    doc["config"]["values"]["bench"]["ranks"] = None
    (other / "result.json").write_text(json.dumps(doc))
    pairs, near = find_pairs(read_results([outputs["bench"], other]))
    assert [(k, a, b) for k, a, b in near[0].differences] == [(NODES, 4, 8)]
    doc["nodes"] = 4
    (other / "result.json").write_text(json.dumps(doc))
    pairs, near = find_pairs(read_results([outputs["bench"], other]))
    assert len(pairs) == 1
    # A run of daqnet emulate is in the emulated units: never paired (0.001x).
    emulated = tmp_path / "emulated"
    emulated.mkdir()
    run = load(outputs["bench"] / "result.json")
    run["emulated"] = {"scale": 1000.0, "result": "elsewhere/emulate.json"}
    (emulated / "result.json").write_text(json.dumps(run))
    pairs, near = find_pairs(read_results([emulated, other]))
    assert not pairs and not near
    # Nor a run whose run.cfg was edited after its scenario.json (0.064x beside PUSH).
    edited = tmp_path / "edited"
    edited.mkdir()
    run = load(outputs["bench"] / "result.json")
    run["config"]["differs_from_run_cfg"] = ["bench.protocol ('pull' in run.cfg, 'push' ...)"]
    (edited / "result.json").write_text(json.dumps(run))
    pairs, near = find_pairs(read_results([edited, other]))
    assert not pairs and not near


def test_protocol_run_stopped_in_its_warm_up_says_so(tmp_path):
    # 540 nodes over a barrel build no event for the first third of the run: a Ctrl-C there
    # measured nothing, and the page must not let its 0 Gb/s pass for a measurement.
    from daqnet import Scenario
    from daqnet.io.simulation import write_simulation
    from daqnet.provenance import provenance
    from daqnet.simulate import simulate

    def ctrl_c(done, total):
        raise KeyboardInterrupt

    r = simulate(Scenario.load(EXAMPLES / "lhcb-540.toml", ["simulate.mode=protocol"]), ctrl_c)
    assert r["interrupted"] and r["events_total"] == 0
    r.provenance = provenance()
    write_simulation(r, tmp_path / "stopped")
    p = daqnet("report", tmp_path / "stopped", "-o", tmp_path / "page.html")
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "page.html").read_text()
    assert "interrupted: during the warm-up, at " in page
    assert "0 events built: nothing measured" in page
    assert "per node" not in page and "events per second" not in page
    assert "event latency percentiles" not in page  # bars of 0 ms drawn for no latency
    # Its throughput line is warm-up throughout (it was drawn as "predicted", unshaded).
    from daqnet.report.html import _series

    label, rows, warmup = _series("predicted", r.to_dict())
    assert label == "predicted: warm-up only, interrupted before the window opened"
    assert rows and warmup == max(row["time_seconds"] for row in rows)
    finished = simulate(
        Scenario.load(EXAMPLES / "lhcb-540.toml", ["fabric.hosts=36", "simulate.mode=protocol"])
    )
    assert _series("predicted", finished.to_dict())[::2] == (
        "predicted",
        finished["warmup_seconds"],
    )


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "missing: no such file or directory"),
        ("empty", "empty: no daqnet result in this directory"),
        ("corrupt", "corrupt/result.json:1:14: not valid JSON"),
        ("other.json", "other.json: not a daqnet result"),
        (
            "incomplete",
            "incomplete/result.json: not a complete daqnet simulate (steps mode) result",
        ),
        # It said "no daqnet result in this directory", not which file lacked what.
        ("no-rows", "no-rows/scan.json: not a complete daqnet scan result: no 'rows'"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(outputs, tmp_path, setup, message):
    target = tmp_path / setup
    if setup == "empty":
        target.mkdir()
        (target / "launch.json").write_text('{"ranks": 4}')
    elif setup == "corrupt":
        target.mkdir()
        (target / "result.json").write_text('{"steps": [1,')
    elif setup == "other.json":
        target.write_text("[1, 2]")
    elif setup == "incomplete":
        target.mkdir()
        doc = load(outputs["steps"] / "result.json")
        doc["link_loads"] = [{"class": "host->leaf"}]
        (target / "result.json").write_text(json.dumps(doc))
    elif setup == "no-rows":
        target.mkdir()
        doc = load(outputs["scan"] / "scan.json")
        del doc["rows"]
        (target / "scan.json").write_text(json.dumps(doc))
    p = daqnet("report", target, "-o", tmp_path / "r.html")
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert message in p.stderr
    assert not (tmp_path / "r.html").exists()


def test_direct_network_figures_reach_the_page(tmp_path):
    # The effective bisection bandwidth was in the summary but not on the page; conflicts on
    # PERCS (links of several rates) offered a slowdown from flow counts there.
    percs = ["--set", "fabric.kind=percs", "--set", "fabric.supernodes=3"]
    percs += ["--set", "routing.engine=direct", "--set", "workload.tasks_per_node=1"]
    bisection = ["--set", "workload.kind=bisection", "--set", "workload.rounds=3"]
    runs = {
        "steps": ["simulate", SMALL, *percs, *bisection],
        "conflicts": ["conflicts", SMALL, *percs, "--set", "workload.kind=all-to-all"],
    }
    for name, args in runs.items():
        p = daqnet(*args, "--out", tmp_path / name)
        assert p.returncode == 0, p.stderr
    page = tmp_path / "page.html"
    p = daqnet("report", tmp_path / "steps", tmp_path / "conflicts", "-o", page)
    assert p.returncode == 0, p.stderr
    html = page.read_text()
    steps = load(tmp_path / "steps" / "result.json")["effective_bisection"]
    assert 'data-json="effective_bisection.gbps"' in html
    assert f"{steps['gbps']:.2f}" in html
    assert "flow counts do not give step times" in html
    assert "slowdown of equal-flow steps" not in html


def test_a_best_point_that_ranks_no_time_is_said_on_the_page_and_figure(tmp_path):
    # Mappings of 32 tasks per PERCS node keep different shares on a node: the terminal said
    # gbps_per_host does not rank the points by time; the page and scan.png framed the best.
    scenario = tmp_path / "percs.toml"
    scenario.write_text(
        '[fabric]\nkind = "percs"\nsupernodes = 4\n[routing]\nengine = "direct"\n'
        '[workload]\nkind = "stencil2d"\ntasks_per_node = 32\nmessage_bytes = 2097152\n'
    )
    p = daqnet(
        "scan", scenario, "--vary", "placement.order=default,blocked-node", "--jobs", "1",
        "--out", tmp_path / "s",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    said = "gbps_per_host does not rank them by time"
    assert said in p.stdout
    page = tmp_path / "page.html"
    assert daqnet("report", tmp_path / "s", "-o", page).returncode == 0
    assert said in page.read_text()
    from daqnet.report.scan_plot import scan_figure

    title = scan_figure(load(tmp_path / "s" / "scan.json"))._suptitle.get_text()
    assert "does not rank them by" in " ".join(title.split())


def test_conflicts_on_the_hosts_own_links_are_said_on_the_page(tmp_path):
    # taper-648: 5,400 conflicts, 3,888 of them on the hosts' own links, at a slowdown of
    # 1.000 against what those links allow. The page showed "5,400" and "1.000" bare.
    p = daqnet("conflicts", EXAMPLES / "taper-648.toml", "--out", tmp_path / "c")
    assert p.returncode == 0, p.stderr
    assert "on hosts' own links" in p.stdout
    doc = load(tmp_path / "c" / "result.json")
    assert doc["host_link_conflicts"] > 0
    page = tmp_path / "page.html"
    assert daqnet("report", tmp_path / "c", "-o", page).returncode == 0
    html = page.read_text()
    assert f"({doc['host_link_conflicts']:,} on hosts&#39; own links)" in html or (
        f"({doc['host_link_conflicts']:,} on hosts' own links)" in html
    )
    assert "slowdown of equal-flow steps, against the hosts&#39; own links" in html or (
        "slowdown of equal-flow steps, against the hosts' own links" in html
    )


def test_output_file_problems(outputs, tmp_path):
    p = daqnet("report", outputs["steps"], "-o", tmp_path / "no" / "r.html")
    assert p.returncode == 2 and "does not exist" in p.stderr and p.stderr.count("\n") == 1


def _browser():
    """Playwright's chromium driver on the system's chromium, or a skip saying what is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    return sync_playwright


def _shown(text: str) -> tuple[float, float]:
    """A number as shown and half its last digit (the rounding it may carry)."""
    text = text.replace(",", "")
    decimals = len(text.split(".")[1]) if "." in text else 0
    return float(text), 0.5 * 10**-decimals


def test_page_in_a_real_browser(outputs, tmp_path):
    sync_playwright = _browser()
    page_path = tmp_path / "report.html"
    dirs = [
        outputs[k] for k in ("bench", "protocol", "conflicts", "steps", "scan", "study", "repair")
    ]
    p = daqnet("report", *dirs, "-o", page_path)
    assert p.returncode == 0, p.stderr
    html = page_path.read_text()
    assert "http://" not in html.replace("http://www.w3.org", "")  # nothing to fetch
    assert "https://" not in html

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            problems: list[str] = []
            page.on("console", lambda m: problems.append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
            page.goto(page_path.as_uri(), wait_until="load")
            figures = page.eval_on_selector_all(
                "figure img",
                """els => els.map(e => ({figure: e.closest('figure').dataset.figure,
                    complete: e.complete, natural: [e.naturalWidth, e.naturalHeight],
                    box: [e.getBoundingClientRect().width, e.getBoundingClientRect().height]}))""",
            )
            numbers = page.eval_on_selector_all(
                "[data-json]",
                """els => els.map(e => ({source: e.dataset.source, key: e.dataset.json,
                    scale: parseFloat(e.dataset.scale), text: e.textContent}))""",
            )
            ratios = page.eval_on_selector_all(
                "table.pair tr",
                "rows => rows.slice(1).map(r => Array.from(r.cells).map(c => c.textContent))",
            )
            sections = page.eval_on_selector_all(
                "section.result", "els => els.map(e => e.dataset.kind)"
            )
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
            # On a narrow window the page itself never scrolls sideways: a study's many
            # columns made it (the table now scrolls in its own box).
            page.set_viewport_size({"width": 640, "height": 900})
            sideways = page.evaluate(
                """() => [document.documentElement.scrollWidth, document.documentElement.clientWidth,
                    Math.max(...Array.from(document.querySelectorAll('.wide'),
                                           e => e.scrollWidth - e.clientWidth))]"""
            )
        finally:
            browser.close()
    print(f"\nreport screenshot: {shot}\nreport page: {page_path}")

    # Loads without a console message, every figure drawn with a size.
    assert problems == []
    page_width, window_width, widest_overflow = sideways
    assert page_width <= window_width, sideways
    assert widest_overflow > 0, "no table was wider than 640 px: the check checks nothing"
    assert sections == [
        "daqnet bench",
        "daqnet simulate (protocol mode)",
        "daqnet conflicts",
        "daqnet simulate (steps mode)",
        "daqnet scan",
        "daqnet study",
        "daqnet repair",
    ]
    names = [f["figure"] for f in figures]
    wanted_figures = (
        "conflicts",
        "step-times",
        "link-loads",
        "throughput",
        "latency",
        "scan",
        "study",
    )
    for wanted in wanted_figures:
        assert wanted in names, names
    assert names.count("link-loads") == 2  # per class: steps mode and protocol mode
    for f in figures:
        assert f["complete"] and min(f["natural"]) > 0 and min(f["box"]) > 10, f

    # Every number taken from a document shows that document's value.
    docs: dict[str, dict] = {}
    for n in numbers:
        doc = docs.setdefault(n["source"], load(Path(n["source"])))
        value = doc
        for part in n["key"].split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        shown, tolerance = _shown(n["text"])
        assert math.isclose(shown, value * n["scale"], abs_tol=tolerance * 1.0001), n
    keys = {(Path(n["source"]).parent.name, n["key"]) for n in numbers}
    for wanted in [
        ("conflicts", "total_conflicts"),
        ("conflicts", "levels.2.conflicts"),
        ("steps", "total_seconds"),
        ("steps", "gbps_per_host"),
        ("protocol", "throughput_gbps"),
        ("protocol", "latency_seconds.p99"),
        ("bench", "throughput_gbps"),
        ("bench", "latency_seconds.p50"),
        ("scan", "rows.0.gbps_per_host"),
        ("study", "rows.5.slowdown_vs_1:1"),
        ("study", "rows.0.ideal_seconds"),
        ("repair", "conflicts_after"),
        ("repair", "seconds_after"),
        ("repair", "candidates.1.conflicts"),
    ]:
        assert wanted in keys, wanted

    # Measured beside predicted: the ratio is measured / predicted of the files' values.
    bench_doc = load(outputs["bench"] / "result.json")
    sim_doc = load(outputs["protocol"] / "result.json")
    by_label = {row[0]: row for row in ratios}
    assert set(by_label) >= {"throughput", "per node (4 nodes)", "latency p50", "latency max"}
    expected = {
        "throughput": bench_doc["throughput_gbps"] / sim_doc["throughput_gbps"],
        "per node (4 nodes)": bench_doc["throughput_gbps"] / 4 / sim_doc["gbps_per_host"],
        "latency p99": bench_doc["latency_seconds"]["p99"] / sim_doc["latency_seconds"]["p99"],
    }
    for label, ratio in expected.items():
        shown, tolerance = _shown(by_label[label][3].rstrip("×"))
        assert math.isclose(shown, ratio, abs_tol=tolerance * 1.0001), (label, by_label[label])
    assert shot.stat().st_size > 10_000


def test_table_cells_drop_decimals_that_say_nothing():
    from daqnet.report.html import _digits

    # A study's bytes and prices are floats: "4,000,000.00" and "133,200.00" said nothing.
    assert _digits(4e6) == _digits(133200.0) == _digits(2000.0) == 0
    assert _digits(13.42) == _digits(1.0) == 2 and _digits(0.000107) == 7 and _digits(7) == 0


def _drawn(fig, ax, rgb) -> int:
    """Pixels of colour `rgb` (0-1) inside the axes `ax` of the rendered figure, legends
    left out (their samples are drawn whatever the data)."""
    for a in fig.axes:
        if a.get_legend() is not None:
            a.get_legend().remove()
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(float) / 255
    x0, y0, x1, y1 = ax.get_window_extent().extents
    h = img.shape[0]
    box = img[int(h - y1) : int(h - y0), int(x0) : int(x1)]
    return int((np.abs(box - np.asarray(rgb)).max(axis=-1) < 0.08).sum())


def test_a_one_step_workload_is_drawn():
    # A line of one point draws nothing: a stencil's 25,588 conflicts and its step time
    # showed as empty axes, in `conflicts --plot` and in the report.
    import matplotlib.colors as mcolors
    from daqnet.report.conflicts_plot import conflicts_figure
    from daqnet.report.html_figures import step_times_figure

    levels = [{"class": "D", "histogram": {"66": 4}, "link_steps": 4}]
    fig = conflicts_figure([1], [25588], [66], levels, "one step")
    assert _drawn(fig, fig.axes[0], mcolors.to_rgb("tab:red")) > 20
    fig = step_times_figure([{"step": 1, "seconds": 0.0134, "ideal_seconds": 0.005}])
    assert _drawn(fig, fig.axes[0], mcolors.to_rgb("tab:blue")) > 20


def test_figure_captions_say_what_is_drawn(tmp_path):
    # The throughput caption said "payload delivered" over built-event bytes (4 hosts
    # gathering all at once read 8,782 Gb/s in a bin); the latency caption said "from an
    # event's assignment" where bench.rate_hz counts from its data.
    sets = ["--set", "simulate.mode=protocol", "--set", "simulate.events=40"]
    for name, rate in (("plain", []), ("paced", ["--set", "bench.rate_hz=1000"])):
        p = daqnet("simulate", SMALL, *sets, *rate, "--out", tmp_path / name)
        assert p.returncode == 0, p.stderr
        page = tmp_path / f"{name}.html"
        assert daqnet("report", tmp_path / name, "-o", page).returncode == 0
        html = page.read_text()
        assert "Bytes of the events built in each time bin" in html
        assert "Payload delivered" not in html
        assert ("(under bench.rate_hz, from its data)" in html) == bool(rate)


def test_the_effective_scenario_shows_the_keys_its_fabric_reads():
    # A fat tree's effective scenario listed PERCS link rates (defaults), and no dragonfly key.
    from daqnet import Scenario
    from daqnet.report.html import _read

    tree = _read(Scenario({"fabric": {"hosts": 8}}).effective()["values"])
    assert "radix" in tree["fabric"] and "ll_gbps" not in tree["fabric"]
    assert "supernodes" not in tree["fabric"] and "naming" in tree["fabric"]
    percs = _read(Scenario.load(EXAMPLES / "percs-64.toml").effective()["values"])
    assert percs["fabric"]["ll_gbps"] and "radix" not in percs["fabric"]
    assert "naming" not in percs["fabric"]


def test_an_emulation_without_a_recorded_scenario_is_shown(tmp_path):
    # emulate.json written before it recorded its scenario: the page's template read a key
    # the fallback lacked and stopped with a Jinja traceback.
    from daqnet.report.html import build_page, render_page

    doc = {
        "scenario": "emu", "traffic": "steps", "scale": 1000.0, "queue": "fair",
        "hosts": ["n0", "n1"],
        "measured": {"status": "finished", "throughput_gbps": 180.0, "steps": 1},
        "predicted": {"throughput_gbps": 200.0, "model": "max-min fair rates"},
        "ratio": 0.9,
        "steps": [{"step": 1, "flows": 2, "measured_gbps": 180.0, "predicted_gbps": 200.0,
                   "ratio": 0.9}],
        "links": [{"link": "n0->s0", "measured_bytes": 1000, "predicted_bytes": 1000.0}],
        "paths_match": True,
    }  # fmt: skip
    (tmp_path / "emulate.json").write_text(json.dumps(doc))
    results = read_results([tmp_path])
    assert [r.kind for r in results] == ["emulate"]
    html = render_page(build_page(results))
    assert "daqnet emulate" in html and "plain TCP steps" in html and "0.900" in html


def test_ranking_note_compares_bytes_within_one_message_size():
    # Placement varied with simulate.message_bytes: the note read "the points send 6% to 100%
    # as many bytes ... (what stays on a node differs)", 64 KiB against 1 MiB, and advised
    # ranking them by time across sizes.
    from daqnet.report.scan_caveats import ranking_note

    vary = [
        {"key": "placement.order", "values": ["topology", "hostname"]},
        {"key": "simulate.message_bytes", "values": [65536, 1048576]},
    ]

    def row(order, size, sent):
        return {"placement.order": order, "simulate.message_bytes": size,
                "gbps_per_host": sent / 2.0, "total_seconds": 2.0}  # fmt: skip

    doc = {"vary": vary, "best": 0, "mode": "steps", "metric": "gbps_per_host",
           "rows": [row(o, m, m) for o in ("topology", "hostname") for m in (65536, 1048576)]}  # fmt: skip
    assert ranking_note(doc) is None  # equal bytes within each size
    doc["rows"][1]["gbps_per_host"] /= 2  # hostname order at 64 KiB sends half
    said = ranking_note(doc)
    assert said is not None and said.startswith("the points send 50% to 100% as many bytes")
    assert "(among points of equal simulate.message_bytes)" in said
    assert said.endswith("compares times of points with equal simulate.message_bytes")


def test_a_time_frames_run_is_described_as_one(tmp_path):
    # The page said "PUSH, barrel gathers, 2 credits, 8 in flight" of a time-frames run,
    # which has senders, receivers and a barrier, no event manager.
    out = tmp_path / "b"
    p = daqnet(
        "bench", EXAMPLES / "alice-frames.toml", "--out", out,
        "--set", "bench.seconds=0.5", "--set", "bench.warmup_seconds=0.1",
        "--set", "bench.fragment_bytes=65536",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    page = tmp_path / "page.html"
    assert daqnet("report", out, "-o", page).returncode == 0
    html = page.read_text()
    assert "time frames: 3 senders → 1 receiver in turn, a barrier between frames" in html
    assert "gathers" not in html
    # Per node is per receiver, as scan's gbps_per_host (it divided by all 4 ranks).
    doc = json.loads((out / "result.json").read_text())
    assert "Gb/s (1 receiving node)" in html and "(4 nodes)" not in html
    assert f"{doc['throughput_gbps']:.2f}" in html


def test_a_one_step_conflicts_figure_reads_right():
    # One step (a stencil): the step axis ticked 0.5, 0.6, ... 1.5, the max-load marker sat
    # on the conflicts marker, and the fraction axis ran to 10 with the smallest bar a stub.
    from daqnet.report.conflicts_plot import conflicts_figure

    levels = [{"class": "LR", "link_steps": 4, "histogram": {"0": 2, "4": 2}}]
    fig = conflicts_figure([1], [174], [8], levels, "one step")
    ax, bx = fig.axes[0], fig.axes[1]
    ticks = [t for t in ax.get_xticks() if 0.5 <= t <= 1.5]
    assert ticks == [1.0]
    ax2 = next(a for a in fig.axes if a is not ax and a is not bx)
    assert ax2.get_ylim()[1] > 8 * 1.5  # the diamond below the circle
    low, high = bx.get_ylim()
    assert high <= 1.5 and low <= 0.5 / 2


def test_the_drains_partial_period_does_not_scale_the_throughput_figure():
    # Under bench.rate_hz the drain builds the last events at once: a partial period of 16 ms
    # read 16.7 Gb/s where the run made 0.07, the axis scaled to it.
    from daqnet.report.html_figures import throughput_figure

    rows = [
        {"time_seconds": 0.5 * (i + 1), "seconds": 0.5, "throughput_gbps": 0.067} for i in range(4)
    ]
    rows.append(
        {"time_seconds": 2.016, "seconds": 0.016, "throughput_gbps": 16.69, "partial": True}
    )
    ax = throughput_figure([("measured", rows, 0.5)]).axes[0]
    assert max(ax.lines[0].get_ydata()) == 0.067
    assert ax.get_ylim()[1] < 1
