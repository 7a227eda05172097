"""What bench/emulate/cases.py and steps.py share: ``daqnet emulate`` of
examples/emulate-8.toml as a subprocess, one case after the other, Ctrl-C keeping the
cases measured so far."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCENARIO = Path(__file__).resolve().parent.parent.parent / "examples" / "emulate-8.toml"


def emulate(sets: list[str]) -> dict[str, Any]:
    """The --json document of one run with these --set values, or {"error": last line}."""
    args = [sys.executable, "-m", "daqnet", "emulate", str(SCENARIO), "--json"]
    for s in sets:
        args += ["--set", s]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout)


def measure(
    cases: list[tuple[Any, list[str]]], line: Callable[[Any, dict[str, Any]], str]
) -> list[tuple[Any, dict[str, Any]]]:
    """Every case (a name, its --set values) run and printed as it ends; on Ctrl-C, the
    cases measured so far."""
    done = []
    try:
        for name, sets in cases:
            r = emulate(sets)
            done.append((name, r))
            print(line(name, r), flush=True)
    except KeyboardInterrupt:
        print("interrupted: the cases measured so far follow", file=sys.stderr)
    return done
