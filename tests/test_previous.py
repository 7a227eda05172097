"""io.previous: an earlier complete result kept while a rerun replaces it."""

import json

from daqnet.io.previous import discard_previous, kept, set_aside


def _result(out, **extra):
    # The keys that make a document a simulation's result (io.result_files).
    doc = dict.fromkeys(("units", "timeseries", "links", "solver", "throughput_gbps", "config"))
    doc.update({"mode": "protocol", "interrupted": False, **extra})
    out.mkdir(exist_ok=True)
    (out / "result.json").write_text(json.dumps(doc))
    (out / "units.csv").write_text("unit\n")


def test_a_complete_result_is_moved_aside_and_discarded_once_replaced(tmp_path):
    _result(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    keep = set_aside(tmp_path, "simulate", ["units.csv", "links.csv"])
    assert keep == tmp_path / "previous"
    assert {p.name for p in keep.iterdir()} == {".daqnet-previous", "result.json", "units.csv"}
    assert (tmp_path / "notes.txt").exists()  # not one of the result's files
    assert kept(tmp_path) == f" (an earlier complete result is kept in {keep})"
    discard_previous(tmp_path)
    assert not keep.exists() and kept(tmp_path) == ""


def test_no_partial_or_foreign_result_is_moved(tmp_path):
    _result(tmp_path, interrupted=True)
    assert set_aside(tmp_path, "simulate", ["units.csv"]) is None
    _result(tmp_path)
    assert set_aside(tmp_path, "bench", ["units.csv"]) is None  # another command's
    assert (tmp_path / "result.json").exists()
    assert set_aside(tmp_path / "none", "simulate", []) is None


def test_a_users_own_previous_directory_is_never_touched(tmp_path):
    mine = tmp_path / "previous"
    mine.mkdir()
    (mine / "data").write_text("mine")
    _result(tmp_path)
    keep = set_aside(tmp_path, "simulate", ["units.csv"])
    assert keep == tmp_path / "previous-2"
    discard_previous(tmp_path)
    assert not keep.exists() and (mine / "data").read_text() == "mine"
    assert kept(tmp_path) == ""


def test_a_newer_complete_result_replaces_the_kept_one(tmp_path):
    _result(tmp_path, total_seconds=1)
    set_aside(tmp_path, "simulate", [])
    _result(tmp_path, total_seconds=2)
    keep = set_aside(tmp_path, "simulate", [])
    assert json.loads((keep / "result.json").read_text())["total_seconds"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["previous", "units.csv"]
