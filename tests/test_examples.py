"""Every scenario in examples/ runs, and its totals match the golden file beside it.

Golden files are regression anchors (correctness is checked against brute force in
test_analysis.py); regenerate them after an intended change with
``python tests/test_examples.py --update``.
"""

import json
import sys
from pathlib import Path

import pytest
from daqnet.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
KEYS = (
    "hosts",
    "ranks",
    "switches",
    "links",
    "total_flows",
    "total_conflicts",
    "max_link_load",
    "steps_total",
    "steps_with_conflicts",
)


def totals(path, capsys):
    assert main(["conflicts", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return {k: out[k] for k in KEYS}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example(path, capsys):
    golden = ROOT / "examples" / "expected" / f"{path.stem}.json"
    assert golden.exists(), f"no golden file {golden}; run python tests/test_examples.py --update"
    assert totals(path, capsys) == json.loads(golden.read_text())


def test_lhcb_example_is_conflict_free_only_in_topology_order(capsys):
    path = ROOT / "examples" / "lhcb-540.toml"
    assert main(["conflicts", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_conflicts"] == 0
    assert main(["conflicts", str(path), "--json", "--set", "placement.order=hostname"]) == 0
    assert json.loads(capsys.readouterr().out)["total_conflicts"] > 0


if __name__ == "__main__" and "--update" in sys.argv:
    import contextlib
    import io

    for p in EXAMPLES:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main(["conflicts", str(p), "--json"])
        out = json.loads(buf.getvalue())
        (ROOT / "examples" / "expected" / f"{p.stem}.json").write_text(
            json.dumps({k: out[k] for k in KEYS}, indent=2) + "\n"
        )
        print("updated", p.stem)
