"""The sweep for temporary files a killed run left: what it removes, and the folders it need not list again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bceval import outdir
from bceval.layout import OutDir
from bceval.outdir import sweep_temp_files

HOUR = 3600


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def _output(tmp_path: Path) -> Path:
    """An output folder like an experiment's: results in runs, a build folder, all of it an hour old."""
    out = tmp_path / "out"
    for name in ("a", "b"):
        results = out / "runs" / name / "results"
        results.mkdir(parents=True)
        for number in range(3):
            (results / f"case-{number}.json").write_text("{}")
    (out / ".build").mkdir()
    _age(out)
    return out


def _age(out: Path) -> None:
    """Every folder under `out` last changed an hour ago (a sweep remembers only folders left quiet a while)."""
    then = time.time() - HOUR
    for folder in [out, *(path for path in out.rglob("*") if path.is_dir())]:
        os.utime(folder, (then, then))


@pytest.fixture
def listings(monkeypatch):
    """The folders os.scandir lists, as the sweep calls it."""
    listed: list[str] = []
    real = os.scandir

    def counting(path: str = ".") -> object:
        listed.append(str(path))
        return real(path)

    monkeypatch.setattr(outdir.os, "scandir", counting)
    return listed


def test_a_folder_unchanged_since_a_sweep_listed_it_is_not_listed_again(tmp_path, listings):
    out = _output(tmp_path)
    results = str(out / "runs" / "a" / "results")
    assert sweep_temp_files(out) == [] and results in listings
    record = json.loads(OutDir(out).swept_folders.read_text())
    assert record["runs/a/results"][2] == [] and sorted(record["runs"][2]) == ["a", "b"]
    listings.clear()
    assert sweep_temp_files(out) == []
    # only the output's top level (always listed) and the build folder, which holds the record just written
    assert listings == [str(out), str(out / ".build")]


def test_a_temporary_file_left_in_a_remembered_folder_is_swept_all_the_same(tmp_path):
    out = _output(tmp_path)
    sweep_temp_files(out)
    left = out / "runs" / "b" / "results" / f".bceval-tmp-{dead_pid()}-k1ll3dxx"
    left.write_text("half")  # the folder's modification time moves: the sweep lists it again
    assert sweep_temp_files(out) == [left] and not left.exists()


def test_a_living_writer_keeps_its_folder_listed_until_its_file_can_be_swept(tmp_path):
    out = _output(tmp_path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        writing = out / "runs" / "a" / "results" / f".bceval-tmp-{sleeper.pid}-w0rk1ngx"
        writing.write_text("half")
        _age(out)  # the writer went quiet an hour ago, then was killed: its folder does not change when it dies
        assert sweep_temp_files(out) == [] and writing.exists()
        assert "runs/a/results" not in json.loads(OutDir(out).swept_folders.read_text())
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sweep_temp_files(out) == [writing] and not writing.exists()


def test_a_folder_changed_moments_ago_is_listed_next_time_too(tmp_path, listings):
    out = _output(tmp_path)
    fresh = out / "runs" / "a" / "results"
    (fresh / "case-9.json").write_text("{}")  # its clock may tick coarsely: a change this recent is not trusted
    sweep_temp_files(out)
    assert "runs/a/results" not in json.loads(OutDir(out).swept_folders.read_text())
    listings.clear()
    sweep_temp_files(out)
    assert str(fresh) in listings


@pytest.mark.parametrize("record", ["not json{", "[]", '{"runs": "x"}', '{"runs": [1, 2, [3]]}'])
def test_an_unreadable_or_odd_record_is_an_empty_one(tmp_path, listings, record):
    out = _output(tmp_path)
    OutDir(out).swept_folders.write_text(record)
    left = out / "runs" / "a" / "results" / f".bceval-tmp-{dead_pid()}-k1ll3dxx"
    left.write_text("half")
    os.utime(left.parent, (time.time() - HOUR, time.time() - HOUR))
    assert sweep_temp_files(out) == [left]
    assert str(out / "runs") in listings
    assert isinstance(json.loads(OutDir(out).swept_folders.read_text())["runs"], list)  # written anew


@pytest.mark.parametrize("name", ["..", ".", "../../elsewhere", "", "a/../../../elsewhere"])
def test_a_record_never_leads_the_sweep_out_of_the_folders_bceval_owns(tmp_path, name):
    out = _output(tmp_path)
    gone = dead_pid()
    elsewhere = [
        tmp_path / "elsewhere" / f".bceval-tmp-{gone}-n0tm1nex",
        out / "knowledge" / f".bceval-tmp-{gone}-c0rpusxx",
    ]
    for path in elsewhere:
        path.parent.mkdir(exist_ok=True)
        path.write_text("not bceval's to remove")
    runs = os.stat(out / "runs")
    OutDir(out).swept_folders.write_text(json.dumps({"runs": [runs.st_ino, runs.st_mtime_ns, ["a", name]]}))
    assert sweep_temp_files(out) == []
    assert all(path.read_text() == "not bceval's to remove" for path in elsewhere)
