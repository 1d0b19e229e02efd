"""The guidance steps the graph runs, and the uniform verbs (`bceval prepare|answer|score|publish|view --evaluator
plan|implementation`); only bceval's own one-line message can leave a step. answer runs the whole evaluation in one
process (the baseline digest lives only there) into a new OUT/guidance-runs/<kind>/run-NNNN.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from bceval.agents.registry import agent_names, capabilities
from bceval.cli.parser import settings_flags
from bceval.config import Settings, agent_settings, environment_values, load_settings
from bceval.errors import BcevalError, EvaluationFailed
from bceval.evaluators.guidance import MANIFESTS, GuidanceError
from bceval.evaluators.guidance.cli import Options, execute
from bceval.evaluators.guidance.demo import create_demo, demo_is_intact, demo_runs, workspace_count
from bceval.evaluators.guidance.runner import run_verdict
from bceval.layout import GuidanceRunDir, OutDir
from bceval.steps.run_verdict import print_newest_verdict
from bceval.steps.view import report_view

T = TypeVar("T")


@dataclass(frozen=True)
class GuidanceSettings:
    root: str
    manifest: str
    out: str
    workspace_map: str | None


@dataclass(frozen=True)
class RunTarget:
    """One manifest to run: its name (the subtask and run folder), checkout, manifest and map."""

    name: str
    root: str
    manifest: str
    workspace_map: str


@dataclass(frozen=True)
class RunSettings:
    adapter: str
    runs: str  # run directories go to <runs>/<target name>/run-NNNN (each a bceval.layout.GuidanceRunDir)
    targets: tuple[RunTarget, ...] = ()
    uses_demo: bool = False
    demo: str = ""  # the demo directory (used when no workspace map is configured)
    problem: str | None = None  # a settings problem the run task reports in one line
    source: str = ""  # the corpus the demo is built from: bceval's demo corpus, or the corpus's own manifests
    nothing: str | None = None  # the corpus has no guidance manifest: the run task says so, and evaluates none
    agent: Any = None  # the live agent's settings (bceval.agents.settings.AgentSettings) for adapter "command"
    max_cost: float | None = None  # a live agent's budget per run (BCEVAL_MAX_COST): see runner.run_guidance


def guarded(title: str, work: Callable[[], T]) -> T:
    """Run one guidance step; only bceval's own one-line message can leave it."""
    try:
        return work()
    except EvaluationFailed:  # a run's problems, each in bceval's words
        raise
    except GuidanceError as exc:
        raise EvaluationFailed(f"{title} FAILED: {exc}", verdict=False) from None
    except Exception:  # noqa: BLE001 - never a traceback or foreign text
        raise EvaluationFailed(f"{title} FAILED: the input could not be read safely", verdict=False) from None


def prepare_guidance(cfg: GuidanceSettings) -> None:
    """Validate, then (re)write the guidance prepare directory; one line on stdout when it passes."""
    workspace_map = Path(cfg.workspace_map) if cfg.workspace_map else None
    opts = Options(
        "prepare", Path(cfg.root), Path(cfg.manifest), Path(cfg.out), workspace_map, None, None, None, replace=True
    )
    print(guarded("Development guidance preparation", lambda: execute(opts)))


def make_demo(corpus: str, directory: str) -> None:
    """(Re)build the demo directory; one line on stderr."""
    title = "Development guidance demo workspaces"
    runs = guarded(title, lambda: create_demo(Path(corpus), Path(directory), in_output=True))
    print(f"{title} created: {workspace_count(runs)} workspace(s) in {directory}", file=sys.stderr)


def run_target(cfg: RunSettings, target: RunTarget) -> None:
    """One whole evaluation of one manifest into a new run directory; the verdict on stdout."""
    title = "Development guidance run"
    if cfg.problem:
        raise EvaluationFailed(f"{title} FAILED: {cfg.problem}", verdict=False)
    if cfg.nothing:
        print(f"{title}: {cfg.nothing}")
        return

    def work() -> str:
        directory = GuidanceRunDir.next_in(Path(cfg.runs) / target.name).path
        return run_verdict(
            *(target.root, target.manifest, target.workspace_map), directory, cfg.adapter, cfg.agent, cfg.max_cost
        )

    print(guarded(title, work))


def guidance_verb(kind: str, verb: str, args: argparse.Namespace) -> int:
    if verb == "view":  # the site shows every evaluator's runs
        return report_view(load_settings(out=args.out).out, args.serve, args.port)
    settings = load_settings(**settings_flags(args))
    manifest = settings.manifest if args.manifest else settings.corpus / MANIFESTS[kind]
    if verb == "prepare":
        out = OutDir(settings.out).guidance / kind
        prepare_guidance(GuidanceSettings(str(settings.corpus), str(manifest), str(out.absolute()), None))
        return 0
    if verb == "answer":
        return _answer(kind, settings, manifest, args.adapter or "oracle")
    if verb == "score":
        return print_newest_verdict(OutDir(settings.out).guidance_runs / kind, "Development guidance run", kind)
    raise BcevalError(
        f"bceval {verb} --evaluator {kind}: the scorecard page holds review runs and experiments; "
        f"a {kind} run's verdict is in its run.json (bceval score --evaluator {kind}; bceval view shows it)"
    )


def _target(kind: str, settings: Settings, manifest: Path) -> RunTarget:
    """The manifest to run and its workspaces: BCEVAL_GUIDANCE_WORKSPACE_MAP's, else the corpus's demo ones."""
    given = environment_values("guidance")["workspace_map"]
    if given:
        return RunTarget(kind, str(settings.corpus), str(manifest), str(Path(given).absolute()))
    demo = OutDir(settings.out).guidance_demo.absolute()
    if not demo_is_intact(demo):
        make_demo(str(settings.corpus), str(demo))
    run = next((run for run in demo_runs(demo) if run.kind == kind), None)
    if run is None or not run.workspace_map.is_file():
        raise GuidanceError(
            f"the corpus {settings.corpus} has no {kind} manifest with demo workspaces; "
            "set BCEVAL_GUIDANCE_WORKSPACE_MAP to run it against workspaces of your own"
        )
    return RunTarget(kind, str(run.root), str(run.manifest), str(run.workspace_map))


def _answer(kind: str, settings: Settings, manifest: Path, adapter: str) -> int:
    if adapter not in agent_names("guidance"):
        raise BcevalError(f"the {kind} evaluator answers with {' or '.join(agent_names('guidance'))}, not {adapter}")
    live = capabilities(adapter).live
    agent = agent_settings(replace(settings, adapter=adapter)) if live else None
    runs = str(OutDir(settings.out).guidance_runs.absolute())
    run_target(
        RunSettings(adapter, runs, agent=agent, max_cost=settings.max_cost if live else None),
        _target(kind, settings, manifest),
    )
    return 0
