"""The runs of an output directory: `bceval runs` lists them, `bceval compare` compares two case by case."""

from __future__ import annotations

import sys
from pathlib import Path

from bceval.errors import BcevalError
from bceval.layout import OutDir


def print_runs(out: Path) -> int:
    """The table of the runs in `out` on stdout."""
    from bceval.runs.record import list_runs, render_runs

    sys.stdout.write(render_runs(list_runs(out), out))
    return 0


def scorecard_path(name: str, out: Path) -> Path:
    """A scorecard named by its path, or by the name of a run in the output directory."""
    path = Path(name)
    if path.is_file() or path.suffix == ".json":
        return path
    run = OutDir(out).run(name)
    if run.scorecard().is_file():
        return run.scorecard()
    if run.path.is_dir():
        raise BcevalError(f"{run.path}: the run has no scorecard yet; score it: bceval score --run {name}")
    raise BcevalError(f"{name}: no such scorecard file, and no run of that name in {OutDir(out).runs}")


def print_comparison(
    old_name: str, new_name: str, out: Path, allow_different_inputs: bool, fail_on_regression: bool
) -> int:
    """The comparison as markdown on stdout; 1 when asked to fail on a regression and a case regressed."""
    from bceval.scorecard.compare import compare, render_comparison
    from bceval.scorecard.model import read_scorecard

    old, new = read_scorecard(scorecard_path(old_name, out)), read_scorecard(scorecard_path(new_name, out))
    result = compare(old, new, allow_different_inputs=allow_different_inputs)
    sys.stdout.write(render_comparison(old, new, result))
    return 1 if fail_on_regression and result.regressed else 0
