"""Coverage-guided fuzzing of the Python readers with atheris (tests/fuzz_readers.py):
scenario files as text, steps files, host lists (placement.file, fabric.naming_file), Slurm
topology.conf, prices files, hostlist expressions, --set/--vary items, run.cfg as daqnet
collect reads it back against daqnet-evb's reader, and the rank files daqnet collect reads.

Each target starts from its committed corpus (tests/data/fuzz/<target>/, regressions named
regress-*) and the committed files it names below, grows a working corpus in
build/fuzz/corpus/py-<target>/, and runs DAQNET_FUZZ_SECONDS (default 10) seconds. A crash
or hang fails with the input's path (build/fuzz/crashes/); reproduce it with
`python tests/fuzz_readers.py TARGET INPUT`, fix it, commit the input as a regression.
atheris has binary wheels for CPython 3.10-3.13 on x86-64 Linux (the test extra installs
it there); elsewhere these tests skip, and tests/test_fuzz_scenario.py and
tests/test_fuzz_importers.py (hypothesis) still fuzz the same readers.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FUZZ = ROOT / "tests" / "data" / "fuzz"
BUILD = ROOT / "build" / "fuzz"
SECONDS = int(os.environ.get("DAQNET_FUZZ_SECONDS", "10"))

# target -> committed files it also starts from (beside tests/data/fuzz/<target>/)
TARGETS = {
    "scenario": sorted((ROOT / "examples").glob("*.toml")),
    "steps": [FUZZ / "steps.txt"],
    "hosts": [FUZZ / "hosts.txt"],
    "topology": [FUZZ / "topology.conf"],
    "prices": [],
    "hostlist": [],  # the lines of hostlists.txt, one seed each
    "overrides": [],
    "run_cfg": [],
    "collect": [],  # rank-0.json and rank-0.csv of collect-run/, behind a 'J' or 'C'
}


@pytest.mark.skipif(
    importlib.util.find_spec("atheris") is None,
    reason="atheris not installed (pip install atheris: wheels for CPython 3.10-3.13, x86-64 Linux)",
)
@pytest.mark.parametrize("target", list(TARGETS))
def test_fuzz_python_reader(target, tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    committed = FUZZ / target
    for f in [*(committed.iterdir() if committed.exists() else ()), *TARGETS[target]]:
        shutil.copy(f, seeds / f.name)
    if target == "hostlist":
        for n, line in enumerate((FUZZ / "hostlists.txt").read_text().splitlines()):
            (seeds / f"hostlists-{n}.txt").write_text(line)
    work = BUILD / "corpus" / f"py-{target}"
    work.mkdir(parents=True, exist_ok=True)
    crashes = BUILD / "crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "fuzz_readers.py"),
            target,
            f"-max_total_time={SECONDS}",
            "-timeout=30",  # seconds per input: a hang is a finding
            "-rss_limit_mb=3072",
            "-print_final_stats=1",
            f"-artifact_prefix={crashes}/py-{target}-",
            str(work),
            str(seeds),
        ],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=SECONDS + 300,
    )
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", p.stderr)
    print(f"{target}: {runs.group(1) if runs else '?'} inputs in {SECONDS} s")
    if p.returncode != 0:
        found = re.findall(r"Test unit written to (\S+)", p.stderr)
        tail = "\n".join(p.stderr.splitlines()[-25:])
        pytest.fail(
            f"{target}: an input crashes or hangs the reader: {found}\n{tail}\n"
            f"(reproduce: python tests/fuzz_readers.py {target} INPUT)"
        )
    assert runs and int(runs.group(1)) > 0, p.stderr[-2000:]
