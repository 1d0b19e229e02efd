"""The verdict of a whole run again, from its run.json: `bceval score --evaluator NAME` of an evaluator whose runs
are scored where they ran (their evidence lives only in that process)."""

from __future__ import annotations

import json
from pathlib import Path

from bceval.errors import EXIT_FAILED, BcevalError
from bceval.jsonio import read_regular_text
from bceval.layout import GuidanceRunDir


def print_newest_verdict(runs: Path, title: str, evaluator: str) -> int:
    """The newest run-NNNN of `runs`: "<title> PASSED: <run>" (0), or FAILED with one line per problem (1)."""
    found = sorted(runs.glob("run-*")) if runs.is_dir() else []
    if not found:
        raise BcevalError(f"{runs}: no {evaluator} run yet; run bceval answer --evaluator {evaluator} first")
    record = GuidanceRunDir(found[-1]).record
    try:
        problems = json.loads(read_regular_text(record, "utf-8"))["problems"]
    except (OSError, ValueError, KeyError, TypeError):
        raise BcevalError(f"{record}: not a readable run record") from None
    if not problems:
        print(f"{title} PASSED: {found[-1]}")
        return 0
    print(f"{title} FAILED with {len(problems)} problem(s): {found[-1]}")
    for problem in problems:
        print(f"  {problem}")
    return EXIT_FAILED
