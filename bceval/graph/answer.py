"""The answer stage's tasks: the run's record and one answer per selected case.

run_record           out/runs/<run>/run.json: the run's agent settings and the cases it covers
answer:<run>/<case>  one answer: up to date while every byte its agent could see and the run's identity
                     (bceval.runs.identity) are unchanged
answered             one line on how the run stands (always runs; it is cheap)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from doit import create_after
from doit.tools import config_changed

from bceval import __version__
from bceval.agents.registry import capabilities
from bceval.agents.view import view_inputs
from bceval.errors import BcevalError
from bceval.graph.doitlib import action, once
from bceval.graph.inputs import GraphInputs
from bceval.layout import RunDir, result_name
from bceval.steps import answer as answering
from bceval.steps import prepare as steps


def answer_tasks(inputs: GraphInputs) -> dict[str, Callable[[], Any]]:
    """Task creators of the answer stage, in their order of definition."""
    settings, prep = inputs.settings, inputs.prep
    # The run's identity: answers given under another one belong to another run.
    run_identity = {"bceval": __version__, "run": settings.run_name, **settings.asked.fields()}

    progress = answering.Progress()  # its total: the answers task_answer plans (those without a result yet)

    @once
    def run_answers() -> Any:
        from bceval.steps.answer import RunAnswers

        derivation = inputs.plan
        return RunAnswers(settings, derivation.cases if derivation else [], progress)

    def task_run_record() -> dict:
        """out/runs/<run>/run.json: the run's agent settings and the cases it covers."""
        selected, _ = inputs.selection
        ids = [case.id for case in selected] if selected is not None else None
        record = RunDir(settings.run_dir).record
        return {
            "actions": [action(answering.write_run_record, settings, ids)],
            "task_dep": ["prepare"],
            "uptodate": [
                config_changed({**run_identity, "selection": ids, "shard": settings.shard}),
                record.is_file,
            ],
        }

    @create_after(executed="prepare")
    def task_answer() -> Iterator[dict]:
        """One answer per selected case: up to date while every byte its agent could see (request, case file,
        leaf, candidate articles) and the run's agent settings are unchanged."""
        _, chosen = inputs.selection
        for case in chosen:
            try:
                _, files = view_inputs(prep, settings.corpus, case.modelId)
            except BcevalError:
                files = []  # not prepared: the action says so in one line
            target = settings.results_dir / result_name(case.modelId)
            progress.total += not target.is_file()
            yield {
                "name": f"{settings.run_name}/{case.modelId}",
                "actions": [action(answering.answer_case, run_answers, case)],
                "file_dep": [str(path) for path in files]
                + ([str(steps.cases_file(settings))] if capabilities(settings.adapter).knows_answers else []),
                "targets": [str(target)],
                "task_dep": ["run_record"],
                "uptodate": [config_changed(run_identity), target.is_file],
            }

    def task_answered() -> dict:
        """One line on how the run stands (always runs; it is cheap)."""
        return {
            "actions": [action(answering.report_answers, settings, run_answers)],
            "task_dep": ["answer"],
            "uptodate": [False],
        }

    return {"task_run_record": task_run_record, "task_answer": task_answer, "task_answered": task_answered}
