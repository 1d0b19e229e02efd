"""The answer stage's tasks: the run's record, one answer per selected case (all in one task: see
bceval.steps.units) and one line on how the run stands."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from doit import create_after
from doit.tools import config_changed

from bceval import __version__
from bceval.agents.registry import capabilities
from bceval.agents.view import ViewDigests
from bceval.errors import BcevalError
from bceval.graph.doitlib import action, always, once
from bceval.graph.inputs import GraphInputs
from bceval.layout import RunDir
from bceval.steps import answer as answering
from bceval.steps.units import Unit, answer_units, missing_results

if TYPE_CHECKING:  # annotations only: the frame reaches the review evaluator through its plugin
    from bceval.evaluators.review.cases import ReviewCase


def view_digest(digests: ViewDigests, case: ReviewCase) -> str:
    """The digest of every byte the case's agent could see; "unprepared" where there is no view (its answer
    says so in one line)."""
    try:
        return digests.digest(case.modelId)
    except BcevalError:
        return "unprepared"


def answer_tasks(inputs: GraphInputs) -> dict[str, Callable[[], Any]]:
    """Task creators of the answer stage, in their order of definition."""
    settings = inputs.settings
    # The run's identity: answers given under another one belong to another run.
    run_identity = {"bceval": __version__, "run": settings.run_name, **settings.asked.fields()}
    progress = answering.Progress()  # its total: the answers task_answer gives

    @once
    def run_answers() -> answering.RunAnswers:
        derivation = inputs.plan
        return answering.RunAnswers(settings, derivation.cases if derivation else [], progress)

    def task_run_record() -> dict:
        """out/runs/<run>/run.json: the run's agent settings and the cases it covers."""
        selected, _ = inputs.selection
        ids = [case.id for case in selected] if selected is not None else None
        return {
            "actions": [action(answering.write_run_record, settings, ids)],
            "task_dep": ["prepare"],
            "uptodate": [
                config_changed({**run_identity, "selection": ids, "shard": settings.shard}),
                RunDir(settings.run_dir).record.is_file,
            ],
        }

    @create_after(executed="prepare")
    def task_answer() -> dict:
        """Every selected case's answer, `--jobs` at a time; up to date while every one has a result and what each
        depends on (every byte its agent could see, the answer key where the agent reads it, the run's identity)
        is unchanged."""
        _, chosen = inputs.selection
        knows_answers = capabilities(settings.adapter).knows_answers
        digests = ViewDigests(inputs.prep, settings.corpus)
        asked = [
            [case.modelId, view_digest(digests, case), case.expected if knows_answers else None] for case in chosen
        ]
        units = [Unit(case.modelId, functools.partial(answering.answer_case, run_answers, case)) for case in chosen]

        def answer_all() -> None:
            progress.total = len(units)
            answer_units(units, settings.jobs)

        return {
            "actions": [action(answer_all)],
            "task_dep": ["run_record"],
            "uptodate": [
                config_changed({**run_identity, "answers": asked}),
                lambda: missing_results(settings.results_dir, (case.modelId for case in chosen)) == 0,
            ],
        }

    def task_answered() -> dict:
        """One line on how the run stands (always runs; it is cheap)."""
        return always(action(answering.report_answers, settings, run_answers), "answer")

    return {"task_run_record": task_run_record, "task_answer": task_answer, "task_answered": task_answered}
