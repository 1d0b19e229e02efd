"""The verdict of a whole run again, from its run.json: `bceval score --evaluator NAME` of an evaluator whose runs
are scored where they ran (their evidence lives only in that process)."""

from __future__ import annotations

from pathlib import Path

from bceval.errors import EXIT_FAILED, BcevalError
from bceval.layout import RunDir
from bceval.runs.record import read_record


def print_newest_verdict(runs: Path, title: str, evaluator: str) -> int:
    """The newest run-NNNN of `runs`: "<title> PASSED: <run>" (0), or FAILED with one line per problem (1)."""
    found = sorted(runs.glob("run-*")) if runs.is_dir() else []
    if not found:
        raise BcevalError(f"{runs}: no {evaluator} run yet; run bceval answer --evaluator {evaluator} first")
    record = read_record(found[-1])
    if record is None or "problems" not in record:
        raise BcevalError(f"{RunDir(found[-1]).record}: not a readable run record")
    problems = record["problems"]
    if not problems:
        print(f"{title} PASSED: {found[-1]}")
        return 0
    print(f"{title} FAILED with {len(problems)} problem(s): {found[-1]}")
    for problem in problems:
        print(f"  {problem}")
    return EXIT_FAILED
