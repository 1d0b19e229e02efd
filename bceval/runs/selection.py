"""Which cases a run answers: `--case ID`, `-k PATTERN` and `--failed-from RUN|FILE`, in any combination
(their union); nothing given means every case."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

from bceval.errors import BcevalError
from bceval.review.cases import ReviewCase

SCORE_FILES = ("score.json", "scorecard.json")


def failed_case_ids(source: str, out: Path) -> set[str]:
    """Manifest ids of the cases that did not pass (model misses and unanswered cases alike) in a run of this
    output directory or in a score/scorecard file."""
    run = out / "runs" / source
    candidates = [Path(source)] if Path(source).suffix == ".json" else []
    candidates += [run / name for name in SCORE_FILES]
    path = next((path for path in candidates if path.is_file()), None)
    if path is None:
        raise BcevalError(f"--failed-from {source}: no run of that name in {out / 'runs'} and no such score file")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        rows = document["cases"]
        return {row["id"] for row in rows if not row["passed"]}
    except (OSError, ValueError, KeyError, TypeError):
        raise BcevalError(f"{path}: not a bceval score or scorecard (no cases with ids and verdicts)") from None


def select_cases(
    cases: list[ReviewCase], ids: tuple[str, ...], patterns: tuple[str, ...], failed: set[str] | None
) -> list[ReviewCase] | None:
    """The selected cases in corpus order, or None when no selector was given (every case)."""
    if not ids and not patterns and failed is None:
        return None
    chosen: set[str] = set()
    for wanted in ids:
        hits = {case.id for case in cases if wanted.lower() in (case.id.lower(), case.modelId.lower())}
        if not hits:
            raise BcevalError(f"--case {wanted}: no case has that manifest or model id")
        chosen |= hits
    for pattern in patterns:
        lowered = pattern.lower()
        hits = {
            case.id
            for case in cases
            if fnmatch.fnmatchcase(case.id.lower(), lowered) or fnmatch.fnmatchcase(case.domain.lower(), lowered)
        }
        if not hits:
            raise BcevalError(f"-k {pattern}: the pattern matches no case id or domain")
        chosen |= hits
    chosen |= {case.id for case in cases if failed and case.id in failed}
    if not chosen:
        raise BcevalError("the selection matches no case (--failed-from found no failed case)")
    return [case for case in cases if case.id in chosen]
