"""Coverage-guided fuzzing of the C++ readers with libFuzzer (Clang, ASan + UBSan): run.cfg
(daqnet-evb's run description), ibnetdiscover output, routing table files and LFT dumps.

The harnesses are cpp/**/*_fuzz.cpp (built by CMake with -DDAQNET_FUZZ=ON into build/fuzz);
each starts from its committed corpus in tests/data/fuzz/<reader>/ (real files and every
input that once crashed, as regressions) and grows a working corpus in build/fuzz/corpus/.
Every run here lasts DAQNET_FUZZ_SECONDS per harness (default 15); docs/fuzzing.md gives the
command of a long run. A crash leaves its input in build/fuzz/crashes/, to be fixed and then
committed to the corpus as regress-*.

    python tests/test_fuzz_cpp.py --update-seeds    # rewrite the run.cfg seeds (daqnet bench)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
BUILD = ROOT / "build" / "fuzz"
SECONDS = int(os.environ.get("DAQNET_FUZZ_SECONDS", "15"))

# harness -> its corpus directory and the committed files it also starts from
FUZZERS = {
    "fuzz_run_config": ("run_cfg", []),
    "fuzz_ibnetdiscover": ("ibnetdiscover", [DATA / "ib" / "ibnetdiscover-27.out"]),
    "fuzz_table_file": ("table_file", []),
    "fuzz_lft_dump": (
        "lft_dump",
        [DATA / "ib" / "opensm-lfts-27.dump", DATA / "ib" / "dump_lfts-27.out"],
    ),
}

# The run.cfg seeds: what `daqnet bench --prepare` writes for these scenarios and settings.
RUN_CFG_SEEDS = {
    "seed-bench-local.cfg": ("examples/bench-local.toml", []),
    "seed-alice-frames.cfg": ("examples/alice-frames.toml", []),
    "seed-lhcb-defaults.cfg": ("examples/lhcb-540.toml", []),
    "seed-pull-tcp-lognormal.cfg": (
        "examples/bench-local.toml",
        [
            "bench.protocol=pull",
            "bench.transport=tcp",
            "bench.tcp_address=127.0.0.1",
            "bench.tcp_socket_buffer_bytes=4194304",
            "bench.fragment_distribution=lognormal",
            "bench.fragment_sigma=0.5",
            "bench.events=1000",
            "bench.seconds=0",
            "bench.baseline=p2p",
        ],
    ),
    "seed-per-ru-two-processes.cfg": (
        "examples/bench-local.toml",
        [
            "bench.processes_per_node=2",
            "bench.ranks=8",
            "bench.fragment_bytes_per_ru=[65536, 131072, 1000]",
            "bench.meta_bytes=0",
            "bench.max_in_flight=3",
            "bench.rate_hz=1000",
            "bench.local_path=transport",
            "bench.progress=busy",
            "workload.schedule=random",
            "workload.seed=18446744073709551615",
            "placement.order=random",
            "placement.seed=7",
            "bench.checksum=false",
        ],
    ),
    "seed-placement-file.cfg": (
        "examples/bench-local.toml",
        ["placement.order=file", "placement.file=tests/data/fuzz/hosts.txt", "bench.ranks=4"],
    ),
}


def _seed_text(scenario: str, sets: list[str], tmp: Path) -> str:
    out = tmp / "seed"
    args = [sys.executable, "-m", "daqnet", "bench", scenario, "--prepare", "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # The token is drawn afresh for every run: the seeds carry a fixed one of the same form.
    text = (out / "run.cfg").read_text()
    return re.sub(r"(?m)^tcp_token = [0-9a-f]{32}$", "tcp_token = " + "0123456789abcdef" * 2, text)


def test_run_cfg_seeds_are_what_daqnet_bench_writes(tmp_path):
    """The seed corpus stays real: each seed is today's `daqnet bench --prepare` output."""
    for name, (scenario, sets) in RUN_CFG_SEEDS.items():
        got = _seed_text(scenario, sets, tmp_path)
        assert (DATA / "fuzz" / "run_cfg" / name).read_text() == got, (
            f"{name} is out of date: run python tests/test_fuzz_cpp.py --update-seeds"
        )


def _dictionary(path: Path) -> Path:
    """libFuzzer's dictionary for run.cfg: every key and choice of the core's table, and
    numbers at the edges of the types."""
    from daqnet._core import evb

    words = {"=", "#", ",", "\n", " = "}
    for k in evb.config_keys():
        words.add(k["name"])
        words.update(k["choices"])
    words.update(
        [
            "2147483647",
            "2147483648",
            "-2147483648",
            "9223372036854775807",
            "18446744073709551615",
            "-1",
            "1e308",
            "4.9e-324",
            "nan",
            "inf",
            "0x10",
            "\x0b",
            "\x00",
        ]
    )

    def quoted(w: str) -> str:
        return (
            '"'
            + "".join(c if c.isalnum() or c in "-_.=#, " else f"\\x{ord(c):02x}" for c in w)
            + '"'
        )

    path.write_text("".join(quoted(w) + "\n" for w in sorted(words)))
    return path


@pytest.fixture(scope="module")
def harnesses() -> Path:
    """build/fuzz with every harness, or a skip saying what is missing."""
    if shutil.which("cmake") is None:
        pytest.skip("cmake not found")
    clang = shutil.which("clang++")
    if clang is None:
        pytest.skip("clang++ not found: libFuzzer needs Clang (apt-get install clang)")
    configure = subprocess.run(
        [
            "cmake",
            "-S",
            str(ROOT),
            "-B",
            str(BUILD),
            "-DDAQNET_FUZZ=ON",
            "-DDAQNET_EVB=OFF",
            f"-DCMAKE_CXX_COMPILER={clang}",
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
        ],
        capture_output=True,
        text=True,
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    jobs = str(os.cpu_count() or 2)
    build = subprocess.run(
        ["cmake", "--build", str(BUILD), "--parallel", jobs, "--target", *FUZZERS],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0 and "libclang_rt.fuzzer" in build.stdout + build.stderr:
        pytest.skip("Clang without its libFuzzer runtime (apt-get install libclang-rt-dev)")
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    return BUILD


@pytest.mark.parametrize("name", list(FUZZERS))
def test_fuzz_cpp_reader(harnesses, name, tmp_path):
    directory, extra = FUZZERS[name]
    committed = DATA / "fuzz" / directory
    seeds = tmp_path / "seeds"  # the committed corpus and files, read only
    seeds.mkdir()
    for f in [*(committed.iterdir() if committed.exists() else ()), *extra]:
        shutil.copy(f, seeds / f.name)
    work = harnesses / "corpus" / directory  # grows from run to run (git-ignored)
    work.mkdir(parents=True, exist_ok=True)
    crashes = harnesses / "crashes"
    crashes.mkdir(exist_ok=True)
    args = [
        str(harnesses / name),
        f"-max_total_time={SECONDS}",
        "-timeout=10",  # seconds per input: a hang is a finding
        "-rss_limit_mb=2048",
        "-print_final_stats=1",
        f"-artifact_prefix={crashes}/{name}-",
    ]
    if name == "fuzz_run_config":
        args.append(f"-dict={_dictionary(tmp_path / 'run_cfg.dict')}")
    p = subprocess.run(
        [*args, str(work), str(seeds)],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=SECONDS + 300,
    )
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", p.stderr)
    print(f"{name}: {runs.group(1) if runs else '?'} inputs in {SECONDS} s")
    if p.returncode != 0:
        found = re.findall(r"Test unit written to (\S+)", p.stderr)
        cause = [
            ln
            for ln in p.stderr.splitlines()
            if "ERROR" in ln or "harness" in ln or "runtime error" in ln or "what()" in ln
        ]
        pytest.fail(
            f"{name} found an input that crashes or hangs the reader: {found}\n"
            + "\n".join(cause[:10])
            + f"\n(reproduce: {harnesses / name} INPUT)"
        )
    assert runs and int(runs.group(1)) > 0, p.stderr[-2000:]


if __name__ == "__main__" and "--update-seeds" in sys.argv:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for seed_name, (scenario_path, overrides) in RUN_CFG_SEEDS.items():
            text = _seed_text(scenario_path, overrides, Path(tmp))
            (DATA / "fuzz" / "run_cfg" / seed_name).write_text(text)
            print(f"wrote tests/data/fuzz/run_cfg/{seed_name}")
