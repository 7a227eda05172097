"""Documentation generated from the code stays in step with it.

python tests/test_docs.py --update    # rewrite the generated parts of docs/
"""

import re
import sys
from pathlib import Path

from daqnet.scenario.schema import markdown_table

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"(<!-- bench-keys:[^\n]*-->\n)(.*?)(\n<!-- /bench-keys -->)", re.S)


def test_bench_keys_table_is_generated_from_the_core():
    text = (DOCS / "bench.md").read_text()
    found = BLOCK.search(text)
    assert found, "docs/bench.md lost its generated [bench] keys table"
    assert found.group(2) == markdown_table("bench"), (
        "docs/bench.md's [bench] table is out of date: run python tests/test_docs.py --update"
    )


def test_the_table_knows_every_run_cfg_key_a_scenario_gives():
    from daqnet.scenario import SCHEMA
    from daqnet.scenario.schema import LAUNCH_KEYS, run_config_keys

    table = {k["name"]: k for k in run_config_keys()}
    for name, key in SCHEMA["bench"].items():
        if name in LAUNCH_KEYS and name != "ranks":
            assert name not in table  # only launch keys are Python's own
            continue
        core = table[name]
        assert core["scenario"] == f"bench.{name}"
        if name != "ranks":  # the scenario's ranks has a default rule of its own
            assert key.doc == core["doc"]


if __name__ == "__main__" and "--update" in sys.argv:
    path = DOCS / "bench.md"
    text = path.read_text()
    path.write_text(BLOCK.sub(lambda m: m.group(1) + markdown_table("bench") + m.group(3), text))
    print(f"updated {path}")
