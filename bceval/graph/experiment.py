"""The experiment's part of the build graph: export, prepare each variant, record each (arm, epoch) run, answer
every (arm, epoch, case) in one task or each whole run, then report. Every creator but `experiment` is delayed, so
other commands never read the experiment file."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from itertools import zip_longest
from pathlib import Path
from typing import Any

from doit import create_after
from doit.exceptions import InvalidTask
from doit.tools import config_changed

from bceval import __version__
from bceval.agents.base import case_input
from bceval.agents.registry import capabilities
from bceval.agents.view import ViewDigests
from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.evaluators.base import CASE, RUN
from bceval.experiment.plan import ArmPlan, Plan, arm_settings, load_plan
from bceval.graph.answer import view_digest
from bceval.graph.doitlib import action, always, once
from bceval.layout import EXPORT_DONE, BuildDir, OutDir, RunDir, run_entries
from bceval.runs.identity import Asking, key_maker, question
from bceval.runs.record import fold_written
from bceval.runs.selection import shard_cases
from bceval.steps import experiment as steps
from bceval.steps.answer import Progress, RunAnswers, answer_case, write_run_record
from bceval.steps.experiment_report import completed_run, selected_cases, variant_cases
from bceval.steps.units import Unit, answer_units, missing_results


def experiment_tasks(settings: Settings, prepare: Callable[[Settings], int]) -> dict[str, Callable[[], Any]]:
    """Task creators to merge into the bceval namespace; without an experiment, `experiment` says how to name one.
    `prepare` is `bceval prepare` of a corpus variant (the loader passes its own graph's)."""
    if settings.experiment is None:
        return {"task_experiment": _no_experiment}
    graph = ExperimentGraph(settings, prepare)
    prepared = {"executed": "experiment_prepare"}
    return {
        "task_experiment_export": _delayed(graph.export_task),
        "task_experiment_prepare": _delayed(graph.prepare_task),
        "task_experiment_run": _delayed(graph.run_tasks, prepared),
        "task_unit": _delayed(graph.unit_task, prepared),
        "task_run_unit": _delayed(graph.run_unit_tasks, prepared),
        "task_experiment_report": _delayed(graph.report_task, {"executed": "unit"}),  # its result files listed
        "task_experiment": graph.verdict_task,
    }


def _delayed(method: Callable[[], Any], after: dict[str, str] | None = None) -> Callable[[], Any]:
    """A task creator doit calls only when one of its tasks is asked for (after `after`'s tasks ran)."""

    def creator() -> Any:
        return method()

    creator.__doc__ = method.__doc__  # doit's description of the task (`doit list`)
    return create_after(**(after or {}))(creator)


def _no_experiment() -> dict:
    """Run the experiment named by BCEVAL_EXPERIMENT (or [tool.bceval] experiment)."""

    def missing() -> None:
        raise BcevalError("no experiment: name its file with BCEVAL_EXPERIMENT or [tool.bceval] experiment")

    return {"actions": [action(missing)], "uptodate": [False]}


def _identity(asked: Asking) -> dict[str, Any]:
    """An arm's identity as its doit up-to-date checks have always saved it."""
    return {"bceval": __version__, **asked.fields(), "salt": asked.salt}


class ExperimentGraph:
    """What the experiment's task creators share, each read once: the plan, the cases each arm covers, the
    answering of each (arm, epoch) and one progress count over all of them."""

    def __init__(self, settings: Settings, prepare: Callable[[Settings], int]) -> None:
        self.settings = settings
        self.prepare = prepare
        self.progress = Progress()  # one count over every arm and epoch; its total: the units task_unit gives

    @once
    def plan(self) -> Plan:
        try:
            return load_plan(self.settings)
        except BcevalError as exc:
            raise InvalidTask(str(exc)) from None

    @once
    def chosen(self) -> dict[str, list[Any]]:
        """Per arm, the cases the experiment covers (read once the variants are prepared)."""
        try:
            return selected_cases(self.plan(), self.settings)
        except BcevalError as exc:
            raise InvalidTask(str(exc)) from None

    @once
    def spending(self) -> Any:
        """The experiment's one budget (maxCost), shared by every arm and epoch; None without one."""
        return steps.experiment_spending(self.plan(), self.settings)

    @once
    def answers(self, arm_name: str, epoch: int) -> RunAnswers:
        """The answering of one (arm, epoch): its agent is made once, on its first answer."""
        plan = self.plan()
        arm = plan.arm(arm_name)
        cases, _ = variant_cases(arm_settings(plan, arm, self.settings, 1))
        run = arm_settings(plan, arm, self.settings, epoch)
        return RunAnswers(run, cases, self.progress, f"arm {arm_name}, epoch {epoch}, ", self.spending())

    @once
    def view_digests(self, variant_out: str, corpus: str) -> ViewDigests:
        """Every view's digest of one prepared variant."""
        return ViewDigests(OutDir(Path(variant_out)).prepare.path, Path(corpus))

    def epochs(self) -> range:
        return range(1, self.plan().experiment.epochs + 1)

    def case_runs(self) -> list[tuple[ArmPlan, Settings]]:
        """(arm, its run's settings) of every (arm, epoch) answering case by case, epoch by epoch."""
        plan = self.plan()
        arms = [arm for arm in plan.arms if arm.evaluated_by.traits.unit == CASE]  # else see run_unit_tasks
        return [(arm, arm_settings(plan, arm, self.settings, epoch)) for epoch in self.epochs() for arm in arms]

    # --- task creators ---------------------------------------------------------------------------------------

    def export_task(self) -> dict:
        """The corpus at each commit an arm's ref names, exported once (read-only git, no checkout, no fetch)."""
        out = OutDir(self.settings.out)
        marks = [out.corpus_export(arm.commit, arm.subdir) / EXPORT_DONE for arm in self.plan().arms if arm.commit]
        return {
            "actions": [action(steps.export_corpora, self.settings, self.plan)],
            "uptodate": [lambda: all(mark.is_file() for mark in marks)],
        }

    def prepare_task(self) -> dict:
        """Prepare each variant (its own incremental `bceval prepare`, run in this process)."""
        return always(action(steps.prepare_variants, self.settings, self.plan, self.prepare), "experiment_export")

    def run_tasks(self) -> Iterator[dict]:
        """run.json of each (arm, epoch)."""
        for arm, run in self.case_runs():
            ids = [case.id for case in self.chosen()[arm.name]]
            yield {
                "name": f"{arm.name}/e{run.epoch}",
                "actions": [action(write_run_record, run, ids, True)],  # the arm's file defines its run
                "uptodate": [
                    config_changed({"ids": ids, **_identity(run.asked)}),
                    RunDir(run.run_dir).record.is_file,
                ],
            }

    def unit_task(self) -> dict:
        """Every (arm, epoch, case) answer of this shard, `--jobs` at a time; up to date while every one has a
        result and what each depends on (its view, its arm's agent settings, the answer key where the agent
        reads it, the answer it shares) is unchanged."""
        units, asked = self.units()
        runs = self.case_runs()

        def answered() -> bool:
            shard = self.settings.shard
            return not any(
                missing_results(run.results_dir, (case.modelId for case in shard_cases(self.chosen()[arm.name], shard)))
                for arm, run in runs
            )

        def answer_all() -> None:
            self.progress.total = len(units)
            try:
                answer_units(units, self.settings.jobs)
            finally:  # each run's record takes in what its answers wrote
                for _, run in runs:
                    fold_written(run.run_dir)

        return {
            "actions": [action(answer_all)],
            "task_dep": ["experiment_run"],  # each run's record first: it vouches for what its answers write
            "uptodate": [config_changed({"units": asked}), answered],
        }

    def units(self) -> tuple[list[Unit], list[Any]]:
        """Every (arm, epoch, case) answer of this shard as a unit, and what each depends on: epoch by epoch, and
        within an epoch case by case, each case for every arm in turn. So an answering stopped half way (a budget
        reached, an interrupt) leaves the arms with the same cases answered, and comparable. An answer an earlier
        arm asks under the same key is shared (that arm's unit comes first: the same one as in any other order)."""
        owners: dict[tuple[str, ...], str] = {}
        runs = self.case_runs()
        made = []
        for epoch in self.epochs():  # one unit of each arm in turn; an arm with fewer cases drops out
            turns = zip_longest(*(self.run_units(arm, run, owners) for arm, run in runs if run.epoch == epoch))
            made += [pair for turn in turns for pair in turn if pair is not None]
        return [unit for unit, _ in made], [entry for _, entry in made]

    def run_units(self, arm: ArmPlan, run: Settings, owners: dict[tuple[str, ...], str]) -> Iterator[tuple[Unit, Any]]:
        """The units of one arm's run of one epoch in its cases' order, each with what it depends on."""
        asked = run.asked
        knows_answers = capabilities(run.adapter).knows_answers
        identity = _identity(asked)
        if not asked.isolated:  # it reads the arm's whole corpus
            identity["corpus"] = str(run.corpus)
        key = key_maker(asked, __version__)
        answers = functools.partial(self.answers, arm.name, run.epoch)
        digests = self.view_digests(str(run.out), str(run.corpus))
        for case in shard_cases(self.chosen()[arm.name], self.settings.shard):
            digest = view_digest(digests, case)
            expected = case.expected if knows_answers else None
            where: tuple[str, ...] = ()
            if not asked.isolated:
                found = case_input(run.prepare_dir, run.corpus, case)
                where = question(asked, digest, found.corpus, found.request_path).where
            name = f"{arm.name}/e{run.epoch}/{case.modelId}"
            owner = owners.setdefault(key(digest, where, expected), name)
            note = {"sharedFrom": owner.split("/", 1)[0]} if owner != name else None
            answer = functools.partial(answer_case, answers, case, note)
            yield Unit(name, answer, owner if owner != name else None), [name, identity, digest, expected, note]

    def run_unit_tasks(self) -> Iterator[dict]:
        """One whole run per (arm, epoch) of an evaluator whose unit is a run, one after another (they read
        the same workspaces); up to date once a run of it finished while its fields and inputs (knowledge
        checkout, manifest, map, workspaces) stay as they were, since evidence is only ever captured afresh."""
        plan = self.plan()
        previous = None
        for arm in plan.arms:
            if arm.evaluated_by.traits.unit != RUN:
                continue
            fields = {"bceval": __version__, **{k: str(v) for k, v in arm.fields.items()}}
            fields["inputs"] = arm.evaluated_by.unit_inputs(arm)
            for epoch in self.epochs():
                folder = plan.run_folders(arm.name, epoch)
                name = f"{arm.name}/e{epoch}"
                run = arm_settings(plan, arm, self.settings, epoch)
                yield {
                    "name": name,
                    "actions": [action(arm.evaluated_by.run_unit, plan, arm, run, epoch, self.settings)],
                    "task_dep": [f"run_unit:{previous}"] if previous else [],
                    "uptodate": [
                        config_changed(fields),
                        lambda folder=folder: completed_run(folder) is not None,
                    ],
                }
                previous = name

    def report_task(self) -> dict:
        """report.json, .md and .html: per-arm numbers, paired comparisons, per-case pass counts; up to date while
        the runs' result files, the experiment file, the variants' cases, the cost ledger, the plan, the cases
        each arm covers and the settings the report reads are as they were."""
        plan = self.plan()
        report = action(steps.save_report, self.settings, self.plan, self.chosen, True)
        after = ["unit", "experiment_run", "run_unit"]
        if any(arm.evaluated_by.traits.unit == RUN for arm in plan.arms):
            return always(report, *after)  # a whole run's files are found only once it ran, after this task is made
        files = [path for path in (plan.source, plan.folder.cost_ledger) if path is not None and path.is_file()]
        runs = []
        for arm in plan.arms:
            files.append(BuildDir(arm_settings(plan, arm, self.settings, 1).build_dir).cases)
            for epoch in self.epochs():
                run = arm_settings(plan, arm, self.settings, epoch)
                results, infra = run_entries(run.results_dir) if run.results_dir.is_dir() else ([], [])
                files += results + infra
                runs.append([str(run.results_dir), str(run.corpus), run.require_read])
        chosen = {name: [case.id for case in cases] for name, cases in self.chosen().items()}
        settings = {"bceval": __version__, "runs": runs, "maxCost": plan.budget(self.settings)}
        return {
            "actions": [report],
            "task_dep": after,
            "targets": [plan.folder.report(suffix) for suffix in ("json", "md", "html")],
            "file_dep": files,
            "uptodate": [config_changed({"plan": repr(plan), "chosen": chosen, **settings})],
        }

    def verdict_task(self) -> dict:
        """Run the experiment (BCEVAL_EXPERIMENT) and write its report."""
        return always(action(steps.say_verdict, self.plan), "experiment_report")  # its report, new or up to date
