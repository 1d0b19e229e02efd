"""Which cases a run answers: `--case ID`, `-k PATTERN` and `--failed-from RUN|FILE`, in any combination
(their union); nothing given means every case."""

from __future__ import annotations

import fnmatch
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from bceval.errors import BcevalError, did_you_mean
from bceval.jsonio import read_regular_text
from bceval.layout import OutDir

if TYPE_CHECKING:
    from bceval.evaluators.review.cases import ReviewCase


def failed_case_ids(source: str, out: Path) -> set[str]:
    """Manifest ids of the cases that did not pass in a run of this output directory or a score/scorecard file."""
    run = OutDir(out).run(source)
    candidates = [Path(source)] if Path(source).suffix == ".json" else []
    candidates += [run.score, run.scorecard()]
    path = next((path for path in candidates if path.is_file()), None)
    if path is None:
        raise BcevalError(f"--failed-from {source}: no run of that name in {OutDir(out).runs} and no such score file")
    try:
        return {row["id"] for row in json.loads(read_regular_text(path, "utf-8"))["cases"] if not row["passed"]}
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
            guess = did_you_mean(wanted, (case.id for case in cases))
            raise BcevalError(f"--case {wanted}: no case has that manifest or model id{guess}")
        chosen |= hits
    for pattern in patterns:
        lowered = pattern.lower()
        hits = {
            case.id
            for case in cases
            if fnmatch.fnmatchcase(case.id.lower(), lowered) or fnmatch.fnmatchcase(case.domain.lower(), lowered)
        }
        if not hits:
            guess = did_you_mean(pattern, {name for case in cases for name in (case.id, case.domain)})
            raise BcevalError(f"-k {pattern}: the pattern matches no case id or domain{guess}")
        chosen |= hits
    chosen |= {case.id for case in cases if failed and case.id in failed}
    if not chosen:
        raise BcevalError("the selection matches no case (--failed-from found no failed case)")
    return [case for case in cases if case.id in chosen]


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise BcevalError(f"--shard must look like K/N (e.g. 1/4), got '{text}'") from None
    if not 1 <= index <= count:
        raise BcevalError(f"--shard K/N needs 1 <= K <= N, got '{text}'")
    return index, count


def shard_of(model_id: str, count: int) -> int:
    """The shard (1..count) of a case: a hash of its id alone, so other cases never move it."""
    return int.from_bytes(hashlib.sha256(model_id.encode("utf-8")).digest()[:8], "big") % count + 1


def shard_cases(cases: list[ReviewCase], shard: str | None) -> list[ReviewCase]:
    """Shard K of N: the cases whose id hashes to K, in model-id order. Shards never overlap."""
    if not shard:
        return list(cases)
    index, count = parse_shard(shard)
    ordered = sorted(cases, key=lambda case: case.modelId)
    return [case for case in ordered if shard_of(case.modelId, count) == index]
