"""The runs of an output directory: `bceval runs` lists them, `bceval compare` compares two case by case."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.layout import OutDir, RunDir
from bceval.runs.record import list_runs, read_record, render_runs
from bceval.scorecard.compare import compare, render_comparison
from bceval.scorecard.model import read_scorecard


def print_runs(out: Path) -> int:
    sys.stdout.write(render_runs(list_runs(out), out))
    return 0


def no_such_run(name: str, out: Path, flag: str = "--run") -> BcevalError:
    """The refusal of a run name that names no run, listing the runs there are (folders with a run record)."""
    runs = OutDir(out).runs
    names = (
        sorted((p.name for p in runs.iterdir() if RunDir(p).record.is_file()), key=str.lower) if runs.is_dir() else []
    )
    there = f"the runs there: {', '.join(names)}" if names else "there is no run yet (bceval answer makes one)"
    named = f"{flag} {name}" if flag else name
    return BcevalError(f"{named}: no run of that name in {runs}; {there}")


def recorded_run(settings: Any, adapter_flag: str | None) -> Any:
    """The settings of a run named with --run, as it was answered (its record's adapter, command, model,
    isolation, sandbox and epoch): scoring needs no agent flag. A name that is no run is refused."""
    if settings.run is None or settings.results is not None or settings.results_path is not None:
        return settings
    record = read_record(settings.run_dir)
    if record is None:
        raise no_such_run(settings.run, settings.out)
    adapter = record.get("adapter")
    if adapter_flag is not None and adapter_flag != adapter:
        raise BcevalError(
            f"--adapter {adapter_flag}: run '{settings.run}' was answered with the {adapter} adapter; "
            "leave --adapter out to score it as it was answered"
        )

    def recorded(name: str, kind: type) -> Any:
        value = record.get(name)
        return value if isinstance(value, kind) else getattr(settings, name)

    def grants(name: str) -> tuple[Path, ...]:
        paths = record.get(name) or []
        return tuple(Path(p) for p in paths if isinstance(p, str))

    return replace(
        settings,
        **{name: recorded(name, str) for name in ("adapter", "command", "model", "isolation", "sandbox")},
        sandbox_allow=grants("sandboxAllow") or settings.sandbox_allow,
        sandbox_allow_rw=grants("sandboxAllowRw") or settings.sandbox_allow_rw,
        epoch=recorded("epoch", int),
    )


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
    if path.suffix or "/" in name:
        raise BcevalError(f"{name}: no such scorecard file")
    raise no_such_run(name, out, flag="")


def print_comparison(
    old_name: str, new_name: str, out: Path, allow_different_inputs: bool, fail_on_regression: bool
) -> int:
    """The comparison as markdown on stdout; 1 when asked to fail on a regression and a case regressed."""
    old, new = read_scorecard(scorecard_path(old_name, out)), read_scorecard(scorecard_path(new_name, out))
    result = compare(old, new, allow_different_inputs=allow_different_inputs)
    sys.stdout.write(render_comparison(old, new, result))
    return 1 if fail_on_regression and result.regressed else 0
