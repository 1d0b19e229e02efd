"""The build graph: DOIT_CONFIG and every stage's task generators in one namespace, and running it. Generators run
on every doit command, so they only walk the corpus directory and read the small manifest; articles, samples and
leaves are read inside actions."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from doit import get_initial_workdir
from doit.exceptions import InvalidDodoFile

from bceval.config import Settings, check_inputs, context_line, load_settings
from bceval.corpus.layers import Listing
from bceval.errors import BcevalError
from bceval.evaluators.registry import DEFAULT, all_tasks, evaluator
from bceval.graph.answer import answer_tasks
from bceval.graph.doitlib import BcevalReporter, run_namespace, uncaptured
from bceval.graph.inputs import GraphInputs
from bceval.outdir import ensure_output_dir, repair_doit_state


def doit_config(settings: Settings) -> dict[str, Any]:
    reporter = type("Reporter", (BcevalReporter,), {"context": context_line(settings), "out": settings.out})
    return {
        "dep_file": str(settings.doit_db),
        "backend": "sqlite3",  # saved in one transaction: a killed run or a full disk leaves the last whole state
        "default_tasks": ["prepare", "answered", "summary"] if settings.answers_in_graph else ["prepare", "summary"],
        "reporter": reporter,
        "verbosity": 1,
        # A live agent waits on its model: cases run side by side, in threads of this process.
        **({"num_process": settings.jobs, "par_type": "thread"} if settings.jobs > 1 else {}),
    }


# The stages a task needs, where that is fewer than all of them: doit makes every task of its namespace on every
# command, and `bceval answer` needs none of scoring's (one per case), health's or an experiment's; the default
# evaluator's commands load no other evaluator; an experiment (whose variants are prepared by graphs of their own)
# needs only its own. `doit` in a checkout lists every task, so it builds them all.
SCORED = ("prepare", "answer", "score")
STAGES_OF = {
    "prepare": ("prepare",),
    "validate": ("prepare",),
    "answered": ("prepare", "answer"),
    "score": SCORED,
    "summary": SCORED,
    "publish": SCORED,
    "health_files": ("prepare", "own"),
    "experiment": ("experiment",),
    "experiment_prepare": ("experiment",),
}


def build_namespace(
    settings: Settings, inputs: GraphInputs | None = None, tasks: list[str] | None = None
) -> dict[str, Any]:
    """DOIT_CONFIG and the task generators for one set of settings (the CLI and `doit` share it); `inputs`: this
    graph's, when the caller read them already; `tasks`: the tasks the run asks for, when it is one of STAGES_OF
    only their stages are in it. The tasks are defined in the order of this namespace (see doitlib.uncaptured)."""
    inputs = inputs or GraphInputs(settings)
    wanted = STAGES_OF.get(tasks[0]) if tasks and len(tasks) == 1 else None
    made: dict[str, Any] = {}
    pipeline = evaluator(DEFAULT)  # the default evaluator's stages are the frame's pipeline
    stages: dict[str, Callable[[], dict[str, Any]]] = {
        "prepare": lambda: pipeline.prepare_tasks(inputs),
        "answer": lambda: answer_tasks(inputs),
        "score": lambda: pipeline.score_tasks(inputs),
        "bench": lambda: _bench_tasks(settings),
        "own": lambda: pipeline.tasks(inputs),  # the default evaluator's own (health)
        "evaluators": lambda: all_tasks(inputs),  # every evaluator's own (guidance, development, a plugin's, ...)
        "experiment": lambda: _experiment_tasks(settings),
        "view": lambda: _view_tasks(settings),
    }
    for stage, make in stages.items():
        if wanted is None or stage in wanted:
            made.update(make())
    if "task_summary" in made:  # scoring's summary is the namespace's last task
        made["task_summary"] = made.pop("task_summary")
    return {"DOIT_CONFIG": doit_config(settings), **{name: uncaptured(value) for name, value in made.items()}}


def _bench_tasks(settings: Settings) -> dict[str, Any]:
    from bceval.graph.bench import bench_tasks  # not at the top: start-up time (the bench's modules take 40 ms)

    return bench_tasks(settings)


def _view_tasks(settings: Settings) -> dict[str, Any]:
    from bceval.graph.view import view_tasks  # not at the top: start-up time (the viewer's modules take 80 ms)

    return view_tasks(settings)


def _experiment_tasks(settings: Settings) -> dict[str, Any]:
    # not at the top: bceval.experiment reads the evaluator registry on import, and bceval.cli.main imports this
    # module before it can report a broken plugin in one line
    from bceval.graph.experiment import experiment_tasks

    return experiment_tasks(settings, lambda variant: run_graph(variant, ["prepare"]))  # in this process


def open_output(settings: Settings) -> None:
    """Before doit opens its state file in the output directory: the inputs exist, the directory is usable,
    and a state file a killed run left half written is dropped (one line says so)."""
    check_inputs(settings)
    ensure_output_dir(settings.out)
    if repair_doit_state(settings.doit_db):
        print(
            f"bceval: {settings.doit_db} was not doit's state database (an older bceval's or damaged); rebuilding",
            file=sys.stderr,
        )


def run_graph(
    settings: Settings, tasks: list[str], force: bool = False, verbose: bool = False, listing: Listing | None = None
) -> int:
    """Run tasks through doit, as the CLI and the tests do; `listing`: the corpus's, when the caller scanned it."""
    open_output(settings)
    args = ["run", *(["--always-execute"] if force else []), *(["--verbosity", "2"] if verbose else []), *tasks]
    return run_namespace(build_namespace(settings, GraphInputs(settings, listing), tasks), args)


# `doit` in a checkout loads this module through the top-level dodo.py: bind the graph for the settings of
# the directory doit was started in (doit itself changes to the dodo file's folder) and the environment.
# Imported as a library (the CLI, tests), it binds nothing: they build their own namespace.
if get_initial_workdir() is not None:
    try:
        _settings = load_settings(cwd=Path(get_initial_workdir()))
        open_output(_settings)
        globals().update(build_namespace(_settings))
    except BcevalError as exc:  # e.g. a malformed [tool.bceval]: doit prints one "ERROR:" line
        raise InvalidDodoFile(str(exc)) from None
