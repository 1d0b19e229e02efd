"""The model judge (`--verdicts judge:MODEL`) through bceval's api agent, and its calibration (`bceval judge
calibrate`): for numbered pairs of gold and candidate comments, does each pair name the same concern? The judge
sees comment text only (severity, file, first line, body), never the code. A pair with no verdict is not
confirmed; an unreadable answer or a failed call stops the scoring (no silent fallback)."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.agents.api import Endpoint
from bceval.agents.api_tools import ToolBox
from bceval.agents.settings import EndpointSettings
from bceval.errors import BcevalError
from bceval.evaluators.pr_review.answers import json_text
from bceval.evaluators.pr_review.entries import Comment
from bceval.evaluators.pr_review.matching import Pair
from bceval.evaluators.pr_review.providers import Verdicts, pair_key, rendered
from bceval.jsonio import parse_json, read_regular_bytes

JUDGE_PROMPT_VERSION = "pr-review-judge-1"
TIMEOUT = 300.0
SYSTEM = (
    "You judge code-review comments. For each numbered pair, decide whether the Expected comment and the "
    "Candidate comment name the same underlying bug or concern. Different wording, severity or a nearby line still "
    "match; a different concern at the same line does not. Answer with one JSON array and nothing else: "
    '[{"pair": <number>, "match": true|false, "reasoning": "<one sentence>"}], one object per pair.'
)


@dataclass(frozen=True)
class Judge:
    model: str
    endpoint: Endpoint

    def ask(self, pairs: Sequence[tuple[Comment, Comment]]) -> list[bool]:
        """One verdict per pair, in one call."""
        lines = [f"Pair {n}:\nExpected: {rendered(g)}\nCandidate: {rendered(c)}" for n, (g, c) in enumerate(pairs, 1)]
        talk = self.endpoint.converse(SYSTEM, "\n\n".join(lines), ToolBox(Path("."), tools=[]), None, TIMEOUT, None)
        if talk.failure is not None:
            raise BcevalError(f"judge {self.model}: {talk.failure[0]}: {talk.failure[1]}")
        try:
            answer = json.loads(json_text(talk.text or ""))
        except ValueError:
            raise BcevalError(f"judge {self.model}: its answer is not a JSON array of verdicts") from None
        if not isinstance(answer, list) or not all(isinstance(item, dict) for item in answer):
            raise BcevalError(f"judge {self.model}: its answer is not a JSON array of verdicts")
        given: dict[int, bool] = {}
        for item in answer:
            number, match = item.get("pair"), item.get("match")
            if type(number) is int and type(match) is bool:
                if given.get(number, match) != match:
                    raise BcevalError(f"judge {self.model}: two conflicting verdicts for pair {number}")
                given[number] = match
        return [given.get(n, False) for n in range(1, len(pairs) + 1)]


def judge_for(model: str, base_url: str | None, key_env: str) -> Judge:
    """A judge over the endpoint, opt-in like every live model (BCEVAL_LIVE=1)."""
    if os.environ.get("BCEVAL_LIVE") != "1":
        raise BcevalError("the judge calls a live model and is opt-in: set BCEVAL_LIVE=1 to allow it")
    settings = EndpointSettings(base_url=base_url, api_key_env=key_env, temperature=0.0, max_turns=1)
    return Judge(model, Endpoint(settings, model, os.environ, time.sleep, random.Random(0), 1.0))


def judge_verdicts(judge: Judge) -> Verdicts:
    """The provider asking the judge, once per entry; `stored` keeps every verdict for a later replay."""
    made = Verdicts(f"judge:{judge.model}/{JUDGE_PROMPT_VERSION}", lambda *_: [], comparable=True)

    def confirm(expected, ignored, found, pairs: list[Pair]) -> list[bool]:  # noqa: ANN001 - a Provider
        shown = [((ignored if p.ignored else expected)[p.gold], found[p.found]) for p in pairs]
        verdicts = judge.ask(shown)
        for (gold, candidate), match in zip(shown, verdicts, strict=True):
            made.stored.append(
                {
                    "pair": pair_key(gold, candidate),
                    "match": match,
                    "judge_model": judge.model,
                    "judge_prompt_version": JUDGE_PROMPT_VERSION,
                }
            )
        return verdicts

    made.provider = confirm
    return made


def _kappa(observed: float, expected: float) -> float | None:
    return None if expected == 1 else round((observed - expected) / (1 - expected), 6)


def calibration_numbers(labels: Sequence[bool], runs: Sequence[Sequence[bool]]) -> dict[str, Any]:
    """Accuracy, precision, recall and Cohen's kappa of the first run against the labels; over the runs (r >= 2)
    the flip rate (pairs whose verdict changed) and Fleiss' kappa."""
    first = runs[0]
    tp = sum(v and t for v, t in zip(first, labels, strict=True))
    fp = sum(v and not t for v, t in zip(first, labels, strict=True))
    fn = sum(t and not v for v, t in zip(first, labels, strict=True))
    tn = len(labels) - tp - fp - fn
    n = len(labels)
    chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    numbers: dict[str, Any] = {
        "pairs": n,
        "tp": tp,
        "fp": fp,
        "tn": tn,
        "fn": fn,
        "accuracy": round((tp + tn) / n, 6),
        "precision": round(tp / (tp + fp), 6) if tp + fp else None,
        "recall": round(tp / (tp + fn), 6) if tp + fn else None,
        "cohen_kappa": _kappa((tp + tn) / n, chance),
        "repeats": len(runs),
    }
    if len(runs) >= 2:
        yes = [sum(run[i] for run in runs) for i in range(n)]
        r = len(runs)
        agreement = sum((y * (y - 1) + (r - y) * (r - y - 1)) / (r * (r - 1)) for y in yes) / n
        share = sum(yes) / (n * r)
        numbers["flip_rate"] = round(sum(0 < y < r for y in yes) / n, 6)
        numbers["fleiss_kappa"] = _kappa(agreement, share**2 + (1 - share) ** 2)
    return numbers


def read_calibration(path: Path) -> list[tuple[Comment, Comment, bool]]:
    """BC-Bench's judge_calibration.jsonl: {expected, candidate, should_match, note} a line."""
    try:
        lines = read_regular_bytes(path).splitlines()
    except OSError as exc:
        raise BcevalError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    pairs = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        item = parse_json(line, f"{path}: line {number}")
        try:
            pairs.append((Comment(**item["expected"]), Comment(**item["candidate"]), bool(item["should_match"])))
        except (KeyError, TypeError, ValueError) as exc:
            raise BcevalError(f"{path}: line {number}: not a calibration pair ({str(exc).splitlines()[0]})") from None
    return pairs
