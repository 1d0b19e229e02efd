"""The guidance steps the graph and the verbs run; only bceval's own one-line message can leave a step."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bceval.errors import EvaluationFailed
from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.demo import create_demo, workspace_count
from bceval.evaluators.guidance.evidence import protected_roots
from bceval.evaluators.guidance.manifest import load_manifest, load_workspace_map
from bceval.evaluators.guidance.paths import check_separation
from bceval.evaluators.guidance.prepare import prepare
from bceval.evaluators.guidance.runner import print_reads, run_from_files
from bceval.layout import GuidanceRunDir

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
    demo: str  # the demo directory (used when no workspace map is configured)
    targets: tuple[RunTarget, ...]
    uses_demo: bool
    problem: str | None = None  # a settings problem the run task reports in one line
    source: str = ""  # the corpus the demo is built from: bceval's demo corpus, or the corpus's own manifests
    nothing: str | None = None  # the corpus has no guidance manifest: the run task says so, and evaluates none
    agent: Any = None  # the live agent's settings (bceval.agents.settings.AgentSettings) for adapter "command"
    max_cost: float | None = None  # a live agent's budget per run (BCEVAL_MAX_COST): see runner.run_guidance


def guarded(title: str, work: Callable[[], T]) -> T:
    """Run one guidance step; only bceval's own one-line message can leave it."""
    try:
        return work()
    except GuidanceError as exc:
        raise EvaluationFailed(f"{title} FAILED: {exc}", verdict=False) from None
    except Exception:  # noqa: BLE001 - never a traceback or foreign text
        raise EvaluationFailed(f"{title} FAILED: the input could not be read safely", verdict=False) from None


def prepare_guidance(cfg: GuidanceSettings) -> None:
    """Validate, then (re)write the guidance prepare directory; one line on stdout when it passes."""

    def work() -> tuple[int, Path]:
        manifest = load_manifest(cfg.root, cfg.manifest)
        workspaces = load_workspace_map(cfg.workspace_map, manifest) if cfg.workspace_map else None
        artifacts = [
            (f"Workspace map path {cfg.workspace_map}", cfg.workspace_map),
            (f"Prepare directory {cfg.out}", cfg.out),
        ]
        check_separation(protected_roots(manifest, workspaces), artifacts)
        return len(manifest.cases), prepare(manifest, workspaces, Path(cfg.out), replace=True)

    title = "Development guidance preparation"
    count, directory = guarded(title, work)
    print(f"{title} PASSED: {count} case(s) prepared in {directory}")


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

    def work() -> tuple[int, list[str], Path]:
        directory = GuidanceRunDir.next_in(Path(cfg.runs) / target.name).path
        manifest, outcome = run_from_files(
            target.root, target.manifest, target.workspace_map, directory, cfg.adapter, cfg.agent, max_cost=cfg.max_cost
        )
        print_reads(outcome)
        return len(manifest.cases), outcome.problems, directory

    count, problems, directory = guarded(title, work)
    if problems:
        raise EvaluationFailed(f"{title} FAILED with {len(problems)} problem(s):", problems, verdict=False)
    print(f"{title} PASSED: {count} case(s) in {directory}")
