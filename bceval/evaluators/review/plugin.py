"""The review evaluator: layered review leaves, cases by convention, one request per case, the strict gate."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bceval.agents.base import Answer, CaseInput
from bceval.cli.parser import settings_flags
from bceval.config import check_inputs, load_settings
from bceval.corpus.layers import scan_corpus
from bceval.corpus.models import SkillIndex
from bceval.errors import BcevalError
from bceval.evaluators.base import REVIEW, CaseOutcome, Command, Evaluator, TaskGenerators, Traits
from bceval.evaluators.review.baseline import BaselineAdapter
from bceval.evaluators.review.cases import Derivation, ReviewCase, derive_cases
from bceval.evaluators.review.documents import LeafRequest, ResultDocument, ReviewManifest, ReviewRequest
from bceval.evaluators.review.health.model import HealthReport
from bceval.evaluators.review.manifest import STARTER_MANIFEST, read_manifest
from bceval.evaluators.review.question import ReviewShape, review_prompt
from bceval.evaluators.review.scoring import ResultEntry, ScoreReport, judge, score_files, verdict_problems
from bceval.evaluators.review.steps import check_coverage_target, derive, gate_changes, planned_cases, recorded_plan
from bceval.evaluators.review.tasks import prepare_tasks, score_tasks
from bceval.graph.loader import run_graph
from bceval.layout import INFRA_PATTERN, result_files
from bceval.ordering import sort_key
from bceval.steps.answer import warn_preflight


def review_verb(verb: str, args: argparse.Namespace) -> int:
    """Run one review command; a BcevalError from here becomes one line on stderr in bceval.cli.main."""
    if verb == "view":
        from bceval.steps.view import report_view  # not at the top: start-up time (the viewer takes 80 ms)

        return report_view(args)
    settings = load_settings(**settings_flags(args))
    if verb in ("score", "publish", "prompt"):  # a named run is scored (and shown) as it was answered
        from bceval.steps.runs import recorded_run  # not at the top: start-up time (the scorecard takes 75 ms)

        settings = recorded_run(settings, args.adapter)
    check_inputs(settings, leaves=True)
    verbose = getattr(args, "verbose", False)
    if verb in ("score", "publish"):
        if settings.results is not None:  # results the user named must exist before any work is done
            result_files(settings.results)
        if settings.results_path is not None and not settings.results_path.is_file():
            raise BcevalError(f"{settings.results_path}: results file not found")
    if verb in ("validate", "prepare"):
        gate_changes(settings)  # an unreadable changed-paths file or unusable REF: exit 2 before any work
        check_coverage_target(settings.coverage_report)
    if verb == "prepare":
        return run_graph(settings, ["prepare"], force=args.force, verbose=verbose)
    if verb == "prompt":
        from bceval.steps.prompt import print_prompt  # not at the top: start-up time (as recorded_run)

        with redirect_stdout(sys.stderr):  # stdout holds the prompt alone: the preparation reports on stderr
            code = run_graph(settings, ["prepare"], verbose=verbose)
        return code or print_prompt(settings, args.case)
    if verb == "answer":
        listing = scan_corpus(settings.corpus)  # once: the checks and the graph read the same listing
        warn_preflight(settings, listing)  # nothing is written unless the whole command line makes sense
        return run_graph(settings, ["answered"], verbose=verbose, listing=listing)
    if verb == "score":
        from bceval.steps.ci import score_outputs  # not at the top: start-up time (the viewer's records take 60 ms)

        code = run_graph(settings, ["summary" if args.no_gate else "score"], verbose=verbose)
        return score_outputs(settings, code, Path(args.junit) if args.junit else None)
    return run_graph(settings, [verb], verbose=verbose)


@dataclass(frozen=True)
class ReviewEvaluator(Evaluator):  # the protocol's defaults: outcomes from problems, no measures, no arm rules
    # (run_unit and unit_inputs are only asked of an evaluator whose unit is a whole run)
    name: str = REVIEW
    description: str = "AI code review of AL samples, guided by review leaves and knowledge articles"
    question: str = REVIEW
    # one answer per case, by bceval's --adapter, shared between arms asking the same; its corpus holds leaves
    traits: Traits = Traits(needs_leaves=True)

    def load(self, root: Path, manifest: Path | None) -> Derivation:
        """The corpus's cases under the manifest (the conventions alone without one), with every problem."""
        return derive_cases(scan_corpus(root), read_manifest(manifest))

    def cases(self, loaded: Derivation) -> list[ReviewCase]:
        return list(loaded.cases)

    def model_id(self, case: ReviewCase) -> str:
        return case.modelId

    def case_kind(self, case: ReviewCase) -> str:
        return "positive" if case.expected else "clean"

    def oracle_answer(self, case: ReviewCase) -> list[Any]:
        """Exactly the manifest's expectations, under the only id the model sees (a scoring ResultEntry)."""
        return [ResultEntry(id=case.modelId, findings=list(case.expected))]

    def starter_manifest(self) -> dict[str, Any]:
        """The manifest `bceval init` writes into a corpus of one's own."""
        return STARTER_MANIFEST

    question_shape = staticmethod(ReviewShape)  # (cache_dir, hidden): how the live kinds are asked
    prompt = staticmethod(review_prompt)  # what a live agent gets on its standard input (`bceval prompt` shows it)
    baseline_agent = staticmethod(BaselineAdapter)  # (corpus): a lexical reviewer with no model, the floor

    def oracle_reply(self, cases: list[ReviewCase], question: CaseInput) -> Answer:
        """The oracle agent's answer to a review question of the run whose cases are `cases`."""
        return Answer(self.oracle_answer(next(case for case in cases if case.modelId == question.model_id)))

    def score(self, cases: list[ReviewCase], findings: Mapping[str, list[str] | None]) -> list[CaseOutcome]:
        """Each case through the strict gate; `findings` by model id (None or absent: unanswered)."""
        outcomes = []
        for case in cases:
            verdict = judge(case, findings.get(case.modelId))
            outcomes.append(CaseOutcome(case.id, verdict.passed, tuple(verdict_problems(verdict))))
        return outcomes

    def judged(self, recorded: dict[str, Any], results: Path) -> list[dict[str, Any]]:
        """The verdicts of the answered cases of a run without a score.json (an experiment arm's), judged from its
        results as scoring does; `recorded`: the prepared cases.json."""
        cases = [ReviewCase(**case) for case in recorded.get("cases", [])]
        files = sorted(results.glob("result-*.json"), key=lambda p: sort_key(p.name)) if results.is_dir() else []
        infra = sorted(results.glob(INFRA_PATTERN)) if results.is_dir() else []
        report = score_files(cases, recorded.get("thresholds", {}), files, infra)
        return [v.model_dump() for v in report.cases if v.answered or v.infrastructureFailure]

    score_files = staticmethod(score_files)  # a run's result and infra files, judged as the score stage does
    # the frame's own pipeline: its prepare and score stages (the answer stage comes between them), the cases as
    # validation derives them, as the graph plans them and as the last validation recorded them
    prepare_tasks = staticmethod(prepare_tasks)
    score_tasks = staticmethod(score_tasks)
    derive = staticmethod(derive)
    planned_cases = staticmethod(planned_cases)
    recorded_plan = staticmethod(recorded_plan)

    def commands(self) -> tuple[Command, ...]:
        # not at the top: start-up time (25 ms); a command that runs neither needs only their names (the registry's)
        from bceval.evaluators.review.health.tasks import HEALTH_COMMAND
        from bceval.evaluators.review.skills import SKILLS_COMMAND

        return (HEALTH_COMMAND, SKILLS_COMMAND)

    def tasks(self, inputs: Any) -> TaskGenerators:
        from bceval.evaluators.review.health.tasks import health_tasks  # not at the top: start-up time (25 ms)

        return health_tasks(inputs)

    def schemas(self) -> dict[str, type[BaseModel]]:
        return {
            "review-manifest": ReviewManifest,
            "review-request": ReviewRequest,
            "leaf-request": LeafRequest,
            "review-result": ResultDocument,
            "score": ScoreReport,
            "health": HealthReport,
            "skill-index": SkillIndex,
        }

    verb = staticmethod(review_verb)


REVIEW_EVALUATOR = ReviewEvaluator()
