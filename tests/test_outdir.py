"""The sweep for temporary files a killed run left: what it removes and what it leaves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bceval.outdir import sweep_temp_files


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def _output(tmp_path: Path) -> Path:
    """An output folder like an experiment's: results in runs and a build folder."""
    out = tmp_path / "out"
    for name in ("a", "b"):
        results = out / "runs" / name / "results"
        results.mkdir(parents=True)
        for number in range(3):
            (results / f"case-{number}.json").write_text("{}")
    (out / ".build").mkdir()
    return out


def test_a_temporary_file_a_killed_run_left_deep_in_an_own_folder_is_swept(tmp_path):
    out = _output(tmp_path)
    assert sweep_temp_files(out) == []
    left = out / "runs" / "b" / "results" / f".bceval-tmp-{dead_pid()}-k1ll3dxx"
    left.write_text("half")
    assert sweep_temp_files(out) == [left] and not left.exists()


def test_a_living_writers_file_is_kept_until_its_writer_is_gone(tmp_path):
    out = _output(tmp_path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        writing = out / "runs" / "a" / "results" / f".bceval-tmp-{sleeper.pid}-w0rk1ngx"
        writing.write_text("half")
        assert sweep_temp_files(out) == [] and writing.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sweep_temp_files(out) == [writing] and not writing.exists()


def test_the_sweep_never_leaves_the_folders_bceval_owns(tmp_path):
    out = _output(tmp_path)
    gone = dead_pid()
    elsewhere = [
        tmp_path / "elsewhere" / f".bceval-tmp-{gone}-n0tm1nex",
        out / "knowledge" / f".bceval-tmp-{gone}-c0rpusxx",
    ]
    for path in elsewhere:
        path.parent.mkdir(exist_ok=True)
        path.write_text("not bceval's to remove")
    os.symlink(tmp_path / "elsewhere", out / "runs" / "a" / "linked")  # never followed
    assert sweep_temp_files(out) == []
    assert all(path.read_text() == "not bceval's to remove" for path in elsewhere)
