"""The experiment's part of the build graph (`doit experiment`, `bceval experiment run`).

    experiment_export   each commit a ref names, exported once
    experiment_prepare  `bceval prepare` of each variant (arms reading the same corpus and manifest share one)
    experiment_run      run.json of each (arm, epoch)
    unit                every (arm, epoch, case) answer not up to date, `--jobs` at a time (one task: see
                        bceval.steps.units); an answer another arm already asked (identical view and settings)
                        is shared
    experiment_report   report.{json,md,html}; the verdict lines on stdout

Task creators only read the small experiment file and, once the variants are prepared, their recorded cases
and view inputs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from doit import create_after
from doit.exceptions import InvalidTask
from doit.tools import config_changed

from bceval import __version__
from bceval.agents.registry import capabilities
from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.evaluators.registry import CASE, RUN
from bceval.graph.doitlib import action, once
from bceval.layout import OutDir, RunDir, result_name
from bceval.runs.identity import Asking, key_maker, question
from bceval.runs.selection import shard_cases

# Every creator below is delayed: doit calls it only when an experiment task is asked for, so other commands
# never read the experiment file (or load what reading it needs).


def _in_turn(iterators: list[Iterator[Any]]) -> Iterator[Any]:
    """One item of each iterator in turn, until every one is exhausted (a shorter one drops out)."""
    live = list(iterators)
    while live:
        still = []
        for items in live:
            item = next(items, _DONE)
            if item is not _DONE:
                still.append(items)
                yield item
        live = still


_DONE = object()


def experiment_tasks(settings: Settings, prepare: Callable[[Settings], int]) -> dict[str, Callable[[], Any]]:
    """Task creators to merge into the bceval namespace; without an experiment, `experiment` says how to name one.
    `prepare` is `bceval prepare` of a corpus variant (the loader passes its own graph's)."""
    if settings.experiment is None:

        def task_experiment() -> dict:
            """Run the experiment named by BCEVAL_EXPERIMENT (or [tool.bceval] experiment)."""

            def missing() -> None:
                raise BcevalError("no experiment: name its file with BCEVAL_EXPERIMENT or [tool.bceval] experiment")

            return {"actions": [action(missing)], "uptodate": [False]}

        return {"task_experiment": task_experiment}

    @once
    def plan() -> Any:
        from bceval.experiment.model import load_experiment
        from bceval.experiment.plan import resolve

        assert settings.experiment is not None
        try:
            experiment, positions = load_experiment(settings.experiment)
            return resolve(experiment, settings, settings.experiment, positions)
        except BcevalError as exc:
            raise InvalidTask(str(exc)) from None

    @once
    def chosen() -> dict[str, list[Any]]:
        """Per arm, the cases the experiment covers (read once the variants are prepared)."""
        from bceval.steps.experiment_report import selected_cases

        try:
            return selected_cases(plan(), settings)
        except BcevalError as exc:
            raise InvalidTask(str(exc)) from None

    @once
    def all_cases(arm_name: str) -> list[Any]:
        from bceval.experiment.plan import arm_settings
        from bceval.steps.experiment_report import variant_cases

        current = plan()
        return variant_cases(arm_settings(current, current.arm(arm_name), settings, 1))[0]

    def selected() -> dict[str, list[str]]:
        return {arm: [case.id for case in cases] for arm, cases in chosen().items()}

    from bceval.steps.answer import Progress

    progress = Progress()  # one count over every arm and epoch; its total: the units task_unit plans

    @once
    def spending() -> Any:
        """The experiment's one budget (maxCost), shared by every arm and epoch; None without one."""
        from bceval.steps.experiment import experiment_spending

        return experiment_spending(plan(), settings)

    @once
    def answers(arm_name: str, epoch: int) -> Any:
        from bceval.experiment.plan import arm_settings
        from bceval.steps.answer import RunAnswers

        current = plan()
        run = arm_settings(current, current.arm(arm_name), settings, epoch)
        return RunAnswers(run, all_cases(arm_name), progress, f"arm {arm_name}, epoch {epoch}, ", spending())

    @once
    def view_digests(variant_out: str, corpus: str) -> Any:
        """Every view's digest of one prepared variant (kept beside its build: see ViewDigests)."""
        from bceval.agents.view import ViewDigests

        out = OutDir(Path(variant_out))
        return ViewDigests(out.prepare.path, Path(corpus), out.build.view_digests)

    @create_after()
    def task_experiment_export() -> dict:
        """The corpus at each commit an arm's ref names, exported once (read-only git, no checkout, no fetch)."""
        from bceval.layout import EXPORT_DONE
        from bceval.steps import experiment as experiment_steps

        current = plan()
        marks = [
            OutDir(settings.out).corpus_export(arm.commit, arm.subdir) / EXPORT_DONE
            for arm in current.arms
            if arm.commit is not None
        ]
        return {
            "actions": [action(experiment_steps.export_corpora, settings, plan)],
            "uptodate": [lambda: all(mark.is_file() for mark in marks)],
        }

    @create_after()
    def task_experiment_prepare() -> dict:
        """Prepare each variant (its own incremental `bceval prepare`, run in this process)."""
        from bceval.steps import experiment as experiment_steps

        return {
            "actions": [action(experiment_steps.prepare_variants, settings, plan, prepare)],
            "task_dep": ["experiment_export"],
            "uptodate": [False],
        }

    @create_after(executed="experiment_prepare")
    def task_experiment_run() -> Any:
        """run.json of each (arm, epoch)."""
        from bceval.experiment.plan import arm_settings
        from bceval.steps import experiment as experiment_steps

        current = plan()
        for arm in current.arms:
            if arm.evaluated_by.traits.unit != CASE:
                continue  # a whole run keeps its own record
            ids = [case.id for case in chosen()[arm.name]]
            for epoch in range(1, current.experiment.epochs + 1):
                run = arm_settings(current, arm, settings, epoch)
                yield {
                    "name": f"{arm.name}/e{epoch}",
                    "actions": [action(experiment_steps.write_run_record, run, ids)],
                    "uptodate": [
                        config_changed({"ids": ids, **_identity(run.asked)}),
                        RunDir(run.run_dir).record.is_file,
                    ],
                }

    def case_runs() -> Iterator[tuple[Any, int, Settings]]:
        """(arm, epoch, its run's settings) of every arm answering case by case, in the order they answer."""
        from bceval.experiment.plan import arm_settings

        current = plan()
        for arm in current.arms:
            if arm.evaluated_by.traits.unit == CASE:  # else see task_guidance_unit
                for epoch in range(1, current.experiment.epochs + 1):
                    yield arm, epoch, arm_settings(current, arm, settings, epoch)

    def units() -> Iterator[Any]:
        """Every (arm, epoch, case) answer of this shard as a unit (bceval.steps.units), made as they are asked
        for (so the first agent need not wait for the last unit): epoch by epoch, and within an epoch case by
        case, each case for every arm in turn. So an answering stopped half way (a budget reached, an interrupt)
        leaves the arms with the same cases answered, and comparable. An answer an earlier arm asks under the
        same key is shared (that arm's unit comes first: the same one as in any other order)."""
        owners: dict[tuple[str, ...], str] = {}
        runs = list(case_runs())
        for epoch in range(1, plan().experiment.epochs + 1):
            yield from _in_turn([run_units(arm, run, owners) for arm, at, run in runs if at == epoch])

    def run_units(arm: Any, run: Settings, owners: dict[tuple[str, ...], str]) -> Iterator[Any]:
        """The units of one arm's run of one epoch, in its cases' order."""
        from bceval.agents.base import case_input
        from bceval.steps import experiment as experiment_steps
        from bceval.steps.units import Unit, unit_state_maker

        epoch = run.epoch
        asked = run.asked
        knows_answers = capabilities(run.adapter).knows_answers
        identity = _identity(asked)
        if not asked.isolated:  # it reads the arm's whole corpus
            identity["corpus"] = str(run.corpus)
        key, state = key_maker(asked, __version__), unit_state_maker(identity)
        unit_action = _bound(answers, arm.name, epoch)
        results = str(run.results_dir)
        digests = view_digests(str(run.out), str(run.corpus))
        for case in shard_cases(chosen()[arm.name], settings.shard):
            # The view's digest covers every byte of every file the view is made of (known from an earlier
            # command while those files are as they were), so nothing is read per answer.
            try:
                digest = digests.digest(case.modelId)
            except BcevalError:
                digest = "unprepared"  # the answer says so in one line
            expected = case.expected if knows_answers else None
            if asked.isolated:
                where: tuple[str, ...] = ()
            else:
                found = case_input(run.prepare_dir, run.corpus, case)
                where = question(asked, digest, found.corpus, found.request_path).where
            name = f"{arm.name}/e{epoch}/{case.modelId}"
            owner = owners.setdefault(key(digest, where, expected), name)
            note = {"sharedFrom": owner.split("/", 1)[0]} if owner != name else None
            answer = functools.partial(experiment_steps.answer_unit, unit_action, case, note)
            target = os.path.join(results, result_name(case.modelId))
            shares = owner if owner != name else None
            yield Unit(name, state(digest, expected, note), target, answer, shares)
        digests.save()

    @once
    def journal() -> Any:
        from bceval.steps.units import Journal

        return Journal(OutDir(settings.out).build.answered(f"experiment-{plan().experiment.name}"))

    def to_answer() -> Iterator[Any]:
        from bceval.steps.units import counted, missing_results

        missing = sum(
            missing_results(run.results_dir, (case.modelId for case in shard_cases(chosen()[arm.name], settings.shard)))
            for arm, _, run in case_runs()
        )
        return counted(units(), journal(), progress, missing)

    def nothing_to_answer() -> bool:
        from bceval.steps.units import up_to_date

        return up_to_date(units(), journal())

    @create_after(executed="experiment_prepare")
    def task_unit() -> dict:
        """Every (arm, epoch, case) answer not up to date: its view or its arm's agent settings changed, or it has
        no result (see bceval.steps.units); `--jobs` of them at a time."""
        from bceval.steps import experiment as experiment_steps

        def run_dirs() -> list[Path]:
            return [run.run_dir for _, _, run in case_runs()]

        return {
            "actions": [action(experiment_steps.answer_units, to_answer, settings.jobs, journal, run_dirs)],
            "task_dep": ["experiment_run"],  # each run's record first: it vouches for what its answers write
            "uptodate": [nothing_to_answer],
        }

    @create_after(executed="experiment_prepare")
    def task_guidance_unit() -> Any:
        """One whole guidance run per (arm, epoch) of an evaluator whose unit is a run, one after another (they read
        the same workspaces); up to date once a run of it finished while its fields and inputs (knowledge
        checkout, manifest, map, workspaces) stay as they were, since evidence is only ever captured afresh."""
        from bceval.steps import experiment as experiment_steps

        current = plan()
        previous = None
        for arm in current.arms:
            if arm.evaluated_by.traits.unit != RUN:
                continue
            inputs = experiment_steps.guidance_inputs(arm)
            for epoch in range(1, current.experiment.epochs + 1):
                folder = current.run_folders(arm.name, epoch)
                name = f"{arm.name}/e{epoch}"
                yield {
                    "name": name,
                    "actions": [action(experiment_steps.guidance_unit, settings, plan, arm.name, epoch)],
                    "task_dep": [f"guidance_unit:{previous}"] if previous else [],
                    "uptodate": [
                        config_changed(
                            {"bceval": __version__, **{k: str(v) for k, v in arm.fields.items()}, "inputs": inputs}
                        ),
                        lambda folder=folder: experiment_steps.completed_run(folder) is not None,
                    ],
                }
                previous = name

    @create_after()
    def task_experiment_report() -> dict:
        """report.json, .md and .html: per-arm numbers, paired comparisons, per-case pass counts."""
        from bceval.steps import experiment as experiment_steps

        return {
            "actions": [action(experiment_steps.write_report, settings, plan, selected, True)],
            "task_dep": ["unit", "experiment_run", "guidance_unit"],
            "uptodate": [False],
        }

    def task_experiment() -> dict:
        """Run the experiment (BCEVAL_EXPERIMENT) and write its report."""
        return {"actions": None, "task_dep": ["experiment_report"]}

    return {
        "task_experiment_export": task_experiment_export,
        "task_experiment_prepare": task_experiment_prepare,
        "task_experiment_run": task_experiment_run,
        "task_unit": task_unit,
        "task_guidance_unit": task_guidance_unit,
        "task_experiment_report": task_experiment_report,
        "task_experiment": task_experiment,
    }


def _identity(asked: Asking) -> dict[str, Any]:
    """An arm's identity as its doit up-to-date checks have always saved it."""
    return {"bceval": __version__, **asked.fields(), "salt": asked.salt}


def _bound(answers: Callable[[str, int], Any], arm: str, epoch: int) -> Callable[[], Any]:
    return lambda: answers(arm, epoch)
