"""The deterministic scoring core of one entry and one answer, as BC-Bench 0.12 (#872) scores it: same-file
candidate pairs, one verdict per pair from a provider, the lexicographic one-to-one assignment (most expected
matches, then most ignored matches, then least distance), then P/R/F-beta and the severity error."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from bceval.evaluators.pr_review.entries import LEVELS, Comment

MATCHER = "bcbench-0.12"


@dataclass(frozen=True)
class Pair:
    gold: int  # index in the expected (or, when ignored, the ignored) comments
    found: int  # index in the findings
    ignored: bool
    distance: int


Provider = Callable[[Sequence[Comment], Sequence[Comment], Sequence[Comment], list[Pair]], list[bool]]


def normalized(path: str) -> str:
    """The path used for pairing: backslashes as `/`, then leading `.` and `/` characters stripped (a set of
    characters, not a prefix: `../a.al` is `a.al`)."""
    return path.replace("\\", "/").lstrip("./")


def distance(line: int, start: int, end: int | None) -> int:
    """How far a found line lies outside a gold range (0 inside it)."""
    end = start if end is None else end
    return start - line if line < start else line - end if line > end else 0


def candidates(expected: Sequence[Comment], ignored: Sequence[Comment], found: Sequence[Comment]) -> list[Pair]:
    """Every same-file (gold, finding) pair, expected before ignored, in gold order then finding order."""
    pairs = []
    for is_ignored, golds in ((False, expected), (True, ignored)):
        for g, gold in enumerate(golds):
            for f, finding in enumerate(found):
                if normalized(gold.file) == normalized(finding.file):
                    far = distance(finding.line_start, gold.line_start, gold.line_end)
                    pairs.append(Pair(g, f, is_ignored, far))
    return pairs


def assign(pairs: list[Pair], confirmed: list[bool]) -> list[Pair]:
    """The chosen cells of the joint assignment of the confirmed pairs (#872): rows are the gold comments in a
    confirmed pair (expected first), columns the findings in one plus a dummy column per row."""
    edges = [pair for pair, ok in zip(pairs, confirmed, strict=True) if ok]
    if not edges:
        return []
    rows = list(dict.fromkeys((pair.ignored, pair.gold) for pair in edges))
    columns = list(dict.fromkeys(pair.found for pair in edges))
    n, m = len(rows), len(columns)
    reward_ignored = max(pair.distance for pair in edges) * min(n, m) + 1
    reward_expected = (n + 1) * reward_ignored
    cost = np.full((n, m + n), np.inf)
    cost[:, m:] = 0.0
    cells = {}
    for pair in edges:
        cell = (rows.index((pair.ignored, pair.gold)), columns.index(pair.found))
        cost[cell] = pair.distance - (reward_ignored if pair.ignored else reward_expected)
        cells[cell] = pair
    chosen = linear_sum_assignment(cost)
    return [cells[(r, c)] for r, c in zip(*chosen, strict=True) if c < m]


def f_beta(precision: float, recall: float, beta: float) -> float:
    if precision + recall == 0:
        return 0.0
    return (1 + beta**2) * precision * recall / (beta**2 * precision + recall)


@dataclass(frozen=True)
class EntryScore:
    valid: bool
    generated: int
    expected: int
    matched: int
    ignored: int
    precision: float
    recall: float
    severity_mae: float
    severity_pairs: int
    severity_exact: float | None

    @property
    def incorrect(self) -> int:
        return self.generated - self.ignored - self.matched if self.valid else 0

    @property
    def missed(self) -> int:
        return self.expected - self.matched

    def f(self, beta: float) -> float:
        return f_beta(self.precision, self.recall, beta)


def invalid_score(expected: int) -> EntryScore:
    """An answer that could not be read: all zeros, its gold still counted."""
    return EntryScore(False, 0, expected, 0, 0, 0.0, 0.0, 0.0, 0, None)


def entry_score(expected: Sequence[Comment], found: Sequence[Comment], chosen: list[Pair]) -> EntryScore:
    """The numbers of one valid answer from the chosen cells."""
    matched = [pair for pair in chosen if not pair.ignored]
    ignored = len(chosen) - len(matched)
    scored = len(found) - ignored
    precision = len(matched) / scored if scored else 1.0
    recall = len(matched) / len(expected) if expected else 1.0
    gaps = [
        abs(LEVELS[expected[p.gold].severity] - LEVELS[found[p.found].severity])  # type: ignore[index]
        for p in matched
        if expected[p.gold].severity and found[p.found].severity
    ]
    mae = sum(gaps) / len(gaps) if gaps else 0.0
    exact = sum(gap == 0 for gap in gaps) / len(gaps) if gaps else None
    return EntryScore(True, len(found), len(expected), len(matched), ignored, precision, recall, mae, len(gaps), exact)


@dataclass(frozen=True)
class Scored:
    """One entry's score with what produced it: the candidate pairs, their verdicts and the chosen cells."""

    score: EntryScore
    pairs: list[Pair]
    verdicts: list[bool]
    chosen: list[Pair]


def score_entry(
    expected: Sequence[Comment], ignored: Sequence[Comment], found: Sequence[Comment] | None, provider: Provider
) -> Scored:
    """Score one answer (None: invalid) under a verdict provider, asked once for every candidate pair."""
    if found is None:
        return Scored(invalid_score(len(expected)), [], [], [])
    pairs = candidates(expected, ignored, found)
    verdicts = provider(expected, ignored, found, pairs) if pairs else []
    chosen = assign(pairs, verdicts)
    return Scored(entry_score(expected, found, chosen), pairs, verdicts, chosen)
