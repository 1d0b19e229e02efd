"""Verdict providers (`--verdicts`): each says, for every candidate pair of an entry, whether the finding names the
gold comment's concern. `articles` (default) and `location@T` are bceval's deterministic proxies, not comparable
with BC-Bench's judge; `replay` replays the verdicts a judge gave earlier."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.evaluators.pr_review.entries import Comment
from bceval.evaluators.pr_review.matching import Pair, Provider
from bceval.jsonio import parse_json, read_regular_bytes

DEFAULT = "articles"
TOLERANCE = 5  # lines: BC-Bench's per-entry default before #681 removed it
SPEC = re.compile(r"(articles|location)(?:@(\d{1,4}))?|replay:(.+)")


def rendered(comment: Comment) -> str:
    """A comment as the judge sees it: severity, file, first line and body."""
    return f"[{comment.severity or 'unspecified'}] {comment.file}:{comment.line_start}: {comment.body}"


def pair_key(gold: Comment, found: Comment) -> str:
    return hashlib.sha256(f"{rendered(gold)}\0{rendered(found)}".encode()).hexdigest()


def _gold(expected: Sequence[Comment], ignored: Sequence[Comment], pair: Pair) -> Comment:
    return (ignored if pair.ignored else expected)[pair.gold]


@dataclass
class Verdicts:
    """A provider with its label (recorded on every result) and what it confirmed, by way."""

    label: str
    provider: Provider
    comparable: bool  # whether BC-Bench's judge-based scores compare with these
    by_article: int = 0  # pairs confirmed by a shared article
    by_location: int = 0  # pairs confirmed by file and tolerance alone (the gold names no article, or location@T)
    unjudged: int = 0  # replay: candidate pairs no stored verdict covers (not confirmed)
    stored: list[dict[str, Any]] = field(default_factory=list)  # judge: every verdict, for a later replay

    def __call__(
        self, expected: Sequence[Comment], ignored: Sequence[Comment], found: Sequence[Comment], pairs: list[Pair]
    ) -> list[bool]:
        return self.provider(expected, ignored, found, pairs)


def _location(tolerance: int, articles: bool, counts: Verdicts) -> Provider:
    def confirm(expected: Sequence[Comment], ignored: Sequence[Comment], found: Sequence[Comment], pairs: list[Pair]):
        verdicts = []
        for pair in pairs:
            gold, finding = _gold(expected, ignored, pair), found[pair.found]
            ok = pair.distance <= tolerance
            if ok and articles and gold.articles:
                ok = bool(set(gold.articles) & set(finding.articles))
                counts.by_article += ok
            else:
                counts.by_location += ok
            verdicts.append(ok)
        return verdicts

    return confirm


def _replay(path: Path, counts: Verdicts) -> Provider:
    """Stored verdicts, one JSON object a line: {"pair": pair_key, "match": bool, "judge_model": ...,
    "judge_prompt_version": ...}; one judge pin per file."""
    try:
        lines = read_regular_bytes(path).splitlines()
    except OSError as exc:
        raise BcevalError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    stored: dict[str, bool] = {}
    pins = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        item = parse_json(line, f"{path}: line {number}")
        if not isinstance(item, dict) or not isinstance(item.get("pair"), str) or type(item.get("match")) is not bool:
            raise BcevalError(f"{path}: line {number}: not a stored verdict (pair, match, judge_model)")
        stored[item["pair"]] = item["match"]
        pins.add((str(item.get("judge_model")), str(item.get("judge_prompt_version"))))
    if len(pins) > 1:
        raise BcevalError(f"{path}: verdicts of {len(pins)} judge pins; replay one judge's at a time")
    counts.label = f"replay:{'/'.join(next(iter(pins)))}" if pins else "replay"

    def confirm(expected: Sequence[Comment], ignored: Sequence[Comment], found: Sequence[Comment], pairs: list[Pair]):
        keys = [pair_key(_gold(expected, ignored, pair), found[pair.found]) for pair in pairs]
        counts.unjudged += sum(key not in stored for key in keys)
        return [stored.get(key, False) for key in keys]

    return confirm


def verdicts(spec: str) -> Verdicts:
    """The provider a `--verdicts` value names (one line naming the value when it names none)."""
    match = SPEC.fullmatch(spec.strip())
    if match is None:
        raise BcevalError(f"--verdicts {spec}: expected articles[@T], location[@T] or replay:FILE")
    kind, tolerance, replayed = match.groups()
    if replayed:
        made = Verdicts("replay", lambda *_: [], comparable=True)
        made.provider = _replay(Path(replayed), made)
        return made
    tolerance = int(tolerance) if tolerance is not None else TOLERANCE
    made = Verdicts(f"{kind}@{tolerance}", lambda *_: [], comparable=False)
    made.provider = _location(tolerance, kind == "articles", made)
    return made
