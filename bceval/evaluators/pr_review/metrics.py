"""A run's numbers (docs/pr-review.md, "Metrics"): micro and macro P/R/F-beta as BC-Bench aggregates them, the
severity error, the silent-entry pass rate, labelled intervals, per-article recall and guard, and the dataset's
article coverage against a corpus."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest, bootstrap, wilcoxon

from bceval.evaluators.pr_review.entries import Entry
from bceval.evaluators.pr_review.matching import EntryScore, f_beta

BETAS = {"f1": 1.0, "f0_5": 0.5, "f2": 2.0}
SEED = 42
MIN_RANKED = 3  # an article with fewer gold comments (or guard entries) is shown, never ranked


@dataclass(frozen=True)
class Judged:
    """One entry of a run: its gold, its score and which gold comments the assignment matched."""

    entry: Entry
    score: EntryScore
    matched_gold: tuple[int, ...]


def _ratio(top: float, bottom: float) -> float:
    return top / bottom if bottom else 1.0


def _mean(values: Sequence[float], empty: float) -> float:
    return sum(values) / len(values) if values else empty


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {key: round(value, 6) for key, value in values.items()}


def _micro(scores: Sequence[EntryScore]) -> dict[str, float]:
    precision = _ratio(sum(s.matched for s in scores), sum(s.generated - s.ignored for s in scores))
    recall = _ratio(sum(s.matched for s in scores), sum(s.expected for s in scores))
    return {"precision": precision, "recall": recall, **{k: f_beta(precision, recall, b) for k, b in BETAS.items()}}


def _macro(scores: Sequence[EntryScore]) -> dict[str, float]:
    precise = [s.precision for s in scores if s.matched + s.incorrect > 0 or s.expected == 0]
    positive = [s.recall for s in scores if s.expected > 0]
    means = {key: _mean([s.f(beta) for s in scores], 0.0) for key, beta in BETAS.items()}
    return {"precision": _mean(precise, 0.0), "recall": _mean(positive, 1.0), **means}


def _interval(values: Sequence[float]) -> list[float] | None:
    """BC-Bench's: BCa bootstrap of the mean, 10,000 resamples, 95%, seed 42; none when the values do not vary."""
    if len(values) < 2 or len(set(values)) < 2:
        return None
    found = bootstrap((np.array(values),), np.mean, n_resamples=10_000, method="BCa", rng=np.random.default_rng(SEED))
    return [round(float(found.confidence_interval.low), 6), round(float(found.confidence_interval.high), 6)]


def _micro_interval(scores: Sequence[EntryScore]) -> list[float] | None:
    """Micro F1 with entries resampled (percentile, 2,000 resamples, seed 42)."""
    counts = np.array([[s.matched, s.generated - s.ignored, s.expected] for s in scores], dtype=float)
    if len(counts) < 2:
        return None
    drawn = counts[np.random.default_rng(SEED).integers(0, len(counts), (2000, len(counts)))].sum(axis=1)
    f1s = [f_beta(_ratio(m, g), _ratio(m, x), 1.0) for m, g, x in drawn]
    low, high = np.percentile(f1s, [2.5, 97.5])
    return [round(float(low), 6), round(float(high), 6)]


def _wilson(passed: int, total: int) -> list[float] | None:
    if not total:
        return None
    found = binomtest(passed, total).proportion_ci(method="wilson")
    return [round(float(found.low), 6), round(float(found.high), 6)]


def run_numbers(judged: Sequence[Judged]) -> dict[str, Any]:
    """Everything §7.1 reports of one run, intervals labelled by how they were drawn."""
    scores = [j.score for j in judged]
    matched = sum(s.matched for s in scores)
    pairs = sum(s.severity_pairs for s in scores)
    negative = [s for s in scores if s.expected == 0]
    silent = sum(s.valid and s.incorrect == 0 for s in negative)
    return {
        "entries": len(scores),
        "counts": {
            "generated": sum(s.generated for s in scores),
            "expected": sum(s.expected for s in scores),
            "matched": matched,
            "incorrect": sum(s.incorrect for s in scores),
            "missed": sum(s.missed for s in scores),
            "ignored": sum(s.ignored for s in scores),
        },
        "micro": _rounded(_micro(scores)),
        "macro": _rounded(_macro(scores)),
        "severity": {
            "mae_weighted": round(_ratio(sum(s.severity_mae * s.matched for s in scores), matched), 6)
            if matched
            else 0,
            "mae_pooled": round(sum(s.severity_mae * s.severity_pairs for s in scores) / pairs, 6) if pairs else None,
            "exact": round(sum((s.severity_exact or 0) * s.severity_pairs for s in scores) / pairs, 6)
            if pairs
            else None,
            "pairs": pairs,
        },
        "valid_rate": round(_ratio(sum(s.valid for s in scores), len(scores)), 6),
        "silent": {"passed": silent, "entries": len(negative), "rate": round(_ratio(silent, len(negative)), 6)},
        "intervals": {
            "micro_f1": _micro_interval(scores),
            "macro_f1": _interval([s.f(1.0) for s in scores]),
            "silent_rate": _wilson(silent, len(negative)),
            "how": "micro F1: percentile bootstrap over entries (2,000, seed 42); macro F1: BCa bootstrap of the "
            "per-entry mean (10,000, seed 42); silent rate: Wilson; all 95%",
        },
    }


def by_area(judged: Sequence[Judged]) -> dict[str, dict[str, Any]]:
    """Micro P/R/F1 of the entries of each `metadata.area` (no area: "none"), with their count."""
    areas: dict[str, list[EntryScore]] = defaultdict(list)
    for one in judged:
        areas[one.entry.metadata.area or "none"].append(one.score)
    return {area: {"entries": len(scores), **_rounded(_micro(scores))} for area, scores in sorted(areas.items())}


def per_article(judged: Sequence[Judged]) -> list[dict[str, Any]]:
    """Per article: recall of its gold comments and the guard of the entries listing it (share with no incorrect
    finding), each with its n; `ranked` only when both n reach MIN_RANKED."""
    tagged: dict[str, list[bool]] = defaultdict(list)
    guarded: dict[str, list[bool]] = defaultdict(list)
    for one in judged:
        for index, gold in enumerate(one.entry.expected_comments):
            for article in gold.articles:
                tagged[article].append(index in one.matched_gold)
        for article in one.entry.metadata.articles:
            guarded[article].append(one.score.valid and one.score.incorrect == 0)
    rows = []
    for article in sorted(set(tagged) | set(guarded)):
        hits, guards = tagged.get(article, []), guarded.get(article, [])
        recall = round(sum(hits) / len(hits), 6) if hits else None
        guard = round(sum(guards) / len(guards), 6) if guards else None
        ranked = all(len(n) >= MIN_RANKED for n in (hits, guards) if n)
        rows.append(
            {
                "article": article,
                "recall": recall,
                "n": len(hits),
                "recall_interval": _wilson(sum(hits), len(hits)),
                "guard": guard,
                "guard_n": len(guards),
                "ranked": ranked,
            }
        )
    return rows


def inventory(corpus: Path) -> set[str]:
    """The article ids of a BCQuality checkout's microsoft layer (`<domain>/<slug>`)."""
    knowledge = corpus / "microsoft" / "knowledge"
    return {p.relative_to(knowledge).with_suffix("").as_posix() for p in knowledge.rglob("*.md")}


def coverage(entries: Sequence[Entry], articles: set[str]) -> dict[str, Any]:
    """Which articles the entries declare, against a corpus's inventory."""
    covered: dict[str, list[str]] = defaultdict(list)
    for entry in entries:
        for article in entry.articles:
            covered[article].append(entry.instance_id)
    declared = set(covered)
    return {
        "inventory": len(articles),
        "covered": {a: sorted(ids) for a, ids in sorted(covered.items()) if a in articles},
        "zero_coverage": sorted(articles - declared),
        "unknown": sorted(declared - articles),
        "unannotated": sorted(e.instance_id for e in entries if not e.articles),
    }


def _sides(runs: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per entry (instance id), its records over the runs (epochs) of one side."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        for record in run["entries"]:
            found[record["instance_id"]].append(record)
    return found


def paired(control: Sequence[dict[str, Any]], treatment: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Two sides' score.json documents (one per epoch) compared entry by entry: the mean per-entry F1 difference
    with a bootstrap interval that resamples entries (each entry's epochs stay together), the Wilcoxon signed-rank
    p-value, and the micro F1 difference resampled the same way."""
    left, right = _sides(control), _sides(treatment)
    ids = sorted(set(left) & set(right))
    if len(ids) < 2:
        return {"entries": len(ids)}
    f1 = np.array([[_mean([r["f1"] for r in side[i]], 0.0) for i in ids] for side in (left, right)])
    counts = np.array(
        [
            [[sum(r[k] for r in side[i]) for k in ("matched", "generated", "ignored", "expected")] for i in ids]
            for side in (left, right)
        ],
        dtype=float,
    )
    draws = np.random.default_rng(SEED).integers(0, len(ids), (10_000, len(ids)))

    def micro(sums: np.ndarray) -> float:
        m, g, i, x = sums
        return f_beta(_ratio(m, g - i), _ratio(m, x), 1.0)

    deltas = f1[1] - f1[0]
    drawn_micro = [micro(counts[1][d].sum(axis=0)) - micro(counts[0][d].sum(axis=0)) for d in draws[:2000]]
    p = float(wilcoxon(deltas).pvalue) if np.any(deltas) else 1.0
    return {
        "entries": len(ids),
        "control_f1": round(float(f1[0].mean()), 6),
        "treatment_f1": round(float(f1[1].mean()), 6),
        "difference": round(float(deltas.mean()), 6),
        "interval": [round(float(v), 6) for v in np.percentile(deltas[draws].mean(axis=1), [2.5, 97.5])],
        "wilcoxon_p": float(f"{p:.6g}"),
        "micro_difference": round(micro(counts[1].sum(axis=0)) - micro(counts[0].sum(axis=0)), 6),
        "micro_interval": [round(float(v), 6) for v in np.percentile(drawn_micro, [2.5, 97.5])],
        "how": "percentile bootstrap over entries (10,000 for the mean, 2,000 for micro F1, seed 42), 95%",
    }
