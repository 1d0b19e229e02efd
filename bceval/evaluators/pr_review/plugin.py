"""The pr-review evaluator: BC-Bench's code-review entries as whole changes to review (docs/pr-review.md). A case
is an entry, its question a git working tree with the patch as uncommitted changes, its answer `review.json`; a
run is scored by the #872 matcher under a verdict provider (`articles` unless `bceval pr-review score --verdicts`
says otherwise)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.evaluators.base import CaseMeasures, Command
from bceval.evaluators.pr_review import commands, report
from bceval.evaluators.pr_review.answers import Review, parse_review
from bceval.evaluators.pr_review.commands import NAME
from bceval.evaluators.pr_review.entries import Dataset, Entry, read_dataset
from bceval.evaluators.pr_review.matching import MATCHER, score_entry
from bceval.evaluators.pr_review.metrics import Judged, by_area, coverage, inventory, per_article, run_numbers
from bceval.evaluators.pr_review.providers import DEFAULT, TOLERANCE, Verdicts, verdicts
from bceval.evaluators.pr_review.views import BASE_FILES, CHECKOUT_ENV, MINIMAL, base_files, build_view
from bceval.jsonio import dumps, dumps_compact, read_json_or_none, read_regular_text, write_atomic
from bceval.layout import RunDir
from bceval.runs.record import run_record, write_record
from bceval.steps.casework import QUESTION, CaseEvaluator, Question, read_answers

ANSWER = "review.json"
PROMPT_VERSION = "pr-review-1"
PROMPT = """You are reviewing a change to a Business Central AL repository, checked out in the current directory.

Review only the uncommitted changes of the working tree: run `git diff HEAD` to see them, and do not diff other
commits. Do not modify any file. The only file you may write is `review.json` in the current directory, and you
must write it before you finish.

`review.json` holds one JSON array of findings, or `[]` when you find nothing to report. Each finding is an object:
  "file": the repository-relative path of the changed file,
  "line_start": the line of the file as changed (1-based), and "line_end" when the finding spans lines,
  "severity": "critical", "high", "medium" or "low",
  "domain": the area of the concern (security, performance, style, ...),
  "body": what is wrong and how to fix it,
  "articles": optionally, the ids (<domain>/<slug>) of the BCQuality knowledge articles the finding rests on.
Write no wrapping object, no code fence and no prose: the array alone.
"""


@dataclass(frozen=True)
class Case:
    id: str  # the task id: a hash of the dataset and the instance id, the only name the agent sees
    entry: Entry
    view: str  # MINIMAL or BASE_FILES
    base: dict[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class Loaded:
    dataset: Dataset
    corpus: Path
    cases: list[Case]
    skipped: list[tuple[str, str]]  # (instance id, why no view could be built)


class PrReviewEvaluator(CaseEvaluator):
    name = NAME
    description = "reviews of whole changes: BC-Bench's code-review entries, scored by its one-to-one matcher"

    def load(self, root: Path, manifest: Path | None) -> Loaded:
        if manifest is None:
            raise BcevalError(f"{NAME} reads a BC-Bench code-review file: give it with --manifest")
        dataset = read_dataset(manifest)
        checkout = Path(os.environ[CHECKOUT_ENV]) if os.environ.get(CHECKOUT_ENV) else None
        cases, skipped = [], []
        for entry in dataset.entries:
            try:
                base = base_files(entry, checkout)
            except BcevalError as exc:
                skipped.append((entry.instance_id, str(exc)))
                continue
            cases.append(Case(dataset.task_id(entry), entry, BASE_FILES if base else MINIMAL, base))
        return Loaded(dataset, Path(root), cases, skipped)

    def cases(self, loaded: Loaded) -> list[Case]:
        return loaded.cases

    def case_kind(self, case: Case) -> str:
        return "positive" if case.entry.expected_comments else "clean"

    def question_for(self, loaded: Loaded, case: Case) -> Question:
        return Question(PROMPT, case.base)

    def known_answer(self, loaded: Loaded, case: Case) -> dict[str, bytes]:
        gold = [c.model_dump(exclude_none=True) for c in case.entry.expected_comments]
        return {ANSWER: dumps(gold).encode("utf-8")}

    def prepare(self, loaded: Loaded, prepared: Path) -> None:
        super().prepare(loaded, prepared)
        for case in loaded.cases:
            build_view(prepared / case.id, case.entry, (QUESTION, ANSWER))
        if loaded.skipped:
            listed = "; ".join(f"{instance} ({why})" for instance, why in loaded.skipped)
            print(f"{NAME}: {len(loaded.skipped)} entries skipped, no view can be built: {listed}")

    def score_run(
        self, loaded: Loaded, run_dir: Path, run: str, adapter: str, provider: Verdicts | None = None, **more: Any
    ) -> int:
        """Score every answered entry under the provider (default: articles): score.json (numbers, per-entry
        pairs), the scorecard, bcbench.jsonl (BC-Bench's per-entry result fields), run.json, and a judge's
        verdicts.jsonl (what `--verdicts replay:FILE` replays); `more` joins score.json's header."""
        adapter, failures = read_answers(run_dir, adapter)
        provider = provider or verdicts(DEFAULT)
        judged, records, located = [], [], []
        proxy = verdicts(f"location@{TOLERANCE}")  # a judge's sensitivity: the same answers by location alone
        for case in loaded.cases:
            failure = failures.get(case.id, "not answered in this run")
            review = parse_review(None) if failure else _review(run_dir / "work" / case.id, run_dir, case.id)
            found = review.findings if review.valid else None
            gold, ignored = case.entry.expected_comments, case.entry.ignored_comments
            scored = score_entry(gold, ignored, found, provider)
            matched = tuple(p.gold for p in scored.chosen if not p.ignored)
            judged.append(Judged(case.entry, scored.score, matched))
            records.append(report.entry_record(case, review, scored, failure))
            if provider.comparable:
                located.append(Judged(case.entry, score_entry(gold, ignored, found, proxy).score, ()))
        if located:
            more["sensitivity"] = {"provider": proxy.label, "micro": run_numbers(located)["micro"]}
        document = {
            "kind": "bceval-pr-review-score",
            "version": 1,
            "evaluator": NAME,
            "run": run,
            "adapter": adapter,
            "dataset": {"path": str(loaded.dataset.path), "sha256": loaded.dataset.sha256},
            "skipped": [{"instance_id": i, "why": w} for i, w in loaded.skipped],
            "matcher": MATCHER,
            "verdicts": {
                "provider": provider.label,
                "comparable_with_bcbench": provider.comparable,
                "by_article": provider.by_article,
                "by_location": provider.by_location,
                "unjudged": provider.unjudged,
            },
            "prompt_version": PROMPT_VERSION,
            "numbers": run_numbers(judged),
            "by_area": by_area(judged),
            "articles": per_article(judged),
            "coverage": coverage(loaded.dataset.entries, inventory(loaded.corpus)),
            **more,
            "entries": records,
        }
        write_atomic(run_dir / "score.json", dumps(document))
        write_atomic(run_dir / "scorecard.md", report.scorecard(document))
        write_atomic(run_dir / "bcbench.jsonl", report.bcbench_export(document))
        if provider.stored:
            write_atomic(run_dir / "verdicts.jsonl", "".join(dumps_compact(line) for line in provider.stored))
        problems = [f"{r['task']}: {r['why']}" for r in records if not r["clean"]]
        verdict_lines = [{"case": r["task"], "verdict": "passed" if r["clean"] else "failed"} for r in records]
        members = {"evaluator": NAME, "adapter": adapter, "passed": not problems, "problems": problems}
        write_record(run_dir, run_record("bceval-pr-review-run", {**members, "cases": verdict_lines}))
        micro = document["numbers"]["micro"]
        unreadable = sum(not r["valid"] for r in records)  # all zeros: P 1.000 alone would hide them
        hidden = f" ({unreadable} without a readable review)" if unreadable else ""
        print(
            f"{NAME} run {run} ({provider.label}): micro F1 {micro['f1']:.3f}, P {micro['precision']:.3f}, "
            f"R {micro['recall']:.3f} over {len(records)} entries{hidden}; scorecard: {run_dir / 'scorecard.md'}"
        )
        return 0

    def measures(self, loaded: Loaded, results_dir: Path | None) -> dict[str, CaseMeasures] | None:
        """Per entry, the recall and precision of its findings (from the run's score.json)."""
        document = read_json_or_none(results_dir.parent / "score.json") if results_dir else None
        entries = document.get("entries", []) if isinstance(document, dict) else []
        return {e["task"]: CaseMeasures(None, e["recall"], e["precision"]) for e in entries}

    def write_view(self, out: Path) -> int:
        index, runs = report.write_pages(out, NAME)
        print(f"View: {index} ({runs} run(s))")
        return 0

    def check_arms(self, arms: list[Any], settings: Any) -> tuple[int, str] | None:
        """Its arms read one dataset: scores from different dataset pins do not compare."""
        pins: dict[str, str] = {}
        for index, arm in enumerate(arms):
            if arm.evaluator != NAME:
                continue
            if arm.manifest is None:
                return index, f"a {NAME} arm names its BC-Bench code-review file as its manifest"
            pins.setdefault(read_dataset(Path(arm.manifest)).sha256, arm.name)
            if len(pins) > 1:
                return index, f"arm '{arm.name}' reads another dataset than arm '{next(iter(pins.values()))}'"
        return None

    def commands(self) -> tuple[Command, ...]:
        return (
            Command(NAME, commands.add_pr_review, partial(commands.run_pr_review, self)),
            Command("judge", commands.add_judge, commands.run_judge),
        )

    def schemas(self) -> dict[str, Any]:
        return {}


def _review(folder: Path, run_dir: Path, task: str) -> Review:
    """The review.json an answer left in its folder, else what the agent printed (its transcript's last attempt,
    when kept whole)."""
    try:
        return parse_review(read_regular_text(folder / ANSWER, errors="replace"))
    except (FileNotFoundError, IsADirectoryError):
        pass
    except OSError as exc:
        return Review(False, problem=f"{ANSWER} cannot be read ({exc.strerror or exc})")
    transcript = read_json_or_none(RunDir(run_dir).transcript(task))
    attempts = transcript.get("attempts") if isinstance(transcript, dict) else None
    last = attempts[-1] if isinstance(attempts, list) and attempts and isinstance(attempts[-1], dict) else {}
    printed = last.get("stdout")
    if isinstance(printed, str) and printed.strip() and len(printed.encode("utf-8")) == last.get("stdoutBytes"):
        return parse_review(printed)
    return parse_review(None)


PR_REVIEW_EVALUATOR = PrReviewEvaluator()
