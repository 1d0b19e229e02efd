"""The answer stage's tasks: the run's record and one answer per selected case.

run_record           out/runs/<run>/run.json: the run's agent settings and the cases it covers
answer               every selected case's answer that is not up to date, `--jobs` at a time: up to date while
                     every byte its agent could see and the run's identity (bceval.runs.identity) are unchanged
                     (one task: see bceval.steps.units)
answered             one line on how the run stands (always runs; it is cheap)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from doit import create_after
from doit.tools import config_changed

from bceval import __version__
from bceval.agents.registry import capabilities
from bceval.errors import BcevalError
from bceval.graph.doitlib import action, once
from bceval.graph.inputs import GraphInputs
from bceval.layout import RunDir, result_name
from bceval.steps import answer as answering


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

    @once
    def view_digests() -> Any:
        from bceval.agents.view import ViewDigests
        from bceval.layout import OutDir

        return ViewDigests(prep, settings.corpus, OutDir(settings.out).build.view_digests)

    def units() -> Iterator[Any]:
        """One unit (bceval.steps.units) per selected case, made as they are asked for: it depends on every byte
        its agent could see (request, case file, leaf, candidate articles: the view's digest), the answer key
        where the agent reads it, and the run's identity."""
        from bceval.steps.units import Unit, unit_state_maker

        _, chosen = inputs.selection
        knows_answers = capabilities(settings.adapter).knows_answers
        state = unit_state_maker(run_identity)
        digests = view_digests()
        for case in chosen:
            try:
                digest = digests.digest(case.modelId)
            except BcevalError:
                digest = "unprepared"  # the answer says so in one line
            target = str(settings.results_dir / result_name(case.modelId))
            answer = functools.partial(answering.answer_case, run_answers, case)
            yield Unit(case.modelId, state(digest, case.expected if knows_answers else None), target, answer)
        digests.save()

    @once
    def journal() -> Any:
        from bceval.layout import OutDir
        from bceval.steps.units import Journal

        return Journal(OutDir(settings.out).build.answered(f"run-{settings.run_name}"))

    def to_answer() -> Iterator[Any]:
        from bceval.steps.units import counted, missing_results

        _, chosen = inputs.selection
        missing = missing_results(settings.results_dir, (case.modelId for case in chosen))
        return counted(units(), journal(), progress, missing)

    def nothing_to_answer() -> bool:
        from bceval.steps.units import up_to_date

        return up_to_date(units(), journal())

    @create_after(executed="prepare")
    def task_answer() -> dict:
        """Every selected case's answer that is not up to date (see units), `--jobs` at a time."""
        from bceval.steps.units import answer_units

        def answer_all() -> None:
            answer_units(to_answer(), settings.jobs, journal())

        return {
            "actions": [action(answer_all)],
            "task_dep": ["run_record"],
            "uptodate": [nothing_to_answer],
        }

    def task_answered() -> dict:
        """One line on how the run stands (always runs; it is cheap)."""
        return {
            "actions": [action(answering.report_answers, settings, run_answers)],
            "task_dep": ["answer"],
            "uptodate": [False],
        }

    return {"task_run_record": task_run_record, "task_answer": task_answer, "task_answered": task_answered}
