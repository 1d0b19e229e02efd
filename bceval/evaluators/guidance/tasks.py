"""The guidance graph: `guidance_prepare`, `guidance_demo` and `guidance:<name>`, which runs one manifest end to end
in one action (the baseline digest lives only in that process's memory), and the uniform verbs (`bceval
prepare|answer|score|publish|view --evaluator plan|implementation`); only bceval's own one-line message can leave a
step."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from doit import create_after
from doit.tools import config_changed

from bceval import __version__
from bceval.agents.registry import agent_names, capabilities
from bceval.cli.parser import settings_flags
from bceval.clock import generated_at
from bceval.config import Settings, agent_settings, environment_values, load_settings
from bceval.corpus.layers import knowledge_markdown, scan_corpus
from bceval.errors import BcevalError, EvaluationFailed
from bceval.evaluators.base import model_id
from bceval.evaluators.guidance import DEFAULT_MANIFEST, MANIFESTS, GuidanceError
from bceval.evaluators.guidance.cli import Options, execute, guarded
from bceval.evaluators.guidance.demo import MARKER, RunTarget, create_demo, demo_is_intact, demo_runs, workspace_count
from bceval.evaluators.guidance.manifest import load_manifest
from bceval.evaluators.guidance.runner import run_verdict
from bceval.graph.doitlib import action
from bceval.layout import GuidancePrepareDir, GuidanceRunDir, OutDir
from bceval.steps.run_verdict import print_newest_verdict
from bceval.steps.view import report_view


@dataclass(frozen=True)
class GuidanceSettings:
    root: str
    manifest: str
    out: str
    workspace_map: str | None


@dataclass(frozen=True)
class RunSettings:
    adapter: str
    runs: str  # run directories go to <runs>/<target name>/run-NNNN (each a bceval.layout.GuidanceRunDir)
    targets: tuple[RunTarget, ...] = ()
    uses_demo: bool = False
    problem: str | None = None  # a settings problem the run task reports in one line
    nothing: str | None = None  # the corpus has no guidance manifest: the run task says so, and evaluates none
    agent: Any = None  # the live agent's settings (bceval.agents.settings.AgentSettings) for adapter "command"
    max_cost: float | None = None  # a live agent's budget per run (BCEVAL_MAX_COST): see runner.run_guidance


def prepare_guidance(cfg: GuidanceSettings) -> None:
    """Validate, then (re)write the guidance prepare directory; one line on stdout when it passes."""
    workspace_map = Path(cfg.workspace_map) if cfg.workspace_map else None
    opts = Options("prepare", Path(cfg.root), Path(cfg.manifest), Path(cfg.out), workspace_map, replace=True)
    print(guarded("Development guidance preparation", lambda: execute(opts)))


def make_demo(corpus: str, directory: str) -> None:
    """(Re)build the demo directory; one line on stderr."""
    title = "Development guidance demo workspaces"
    runs = guarded(title, lambda: create_demo(Path(corpus), Path(directory), in_output=True), BcevalError)
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
        return report_view(args)
    settings = load_settings(**settings_flags(args))
    manifest = settings.manifest if args.manifest else settings.corpus / MANIFESTS[kind]
    if verb == "prepare":
        out = OutDir(settings.out).guidance / kind
        prepare_guidance(GuidanceSettings(str(settings.corpus), str(manifest), str(out.absolute()), None))
        return 0
    if verb == "answer":
        adapter = args.adapter or "oracle"
        if adapter not in agent_names("guidance"):
            raise BcevalError(
                f"the {kind} evaluator answers with {' or '.join(agent_names('guidance'))}, not {adapter}"
            )
        live = capabilities(adapter).live
        agent = agent_settings(replace(settings, adapter=adapter)) if live else None
        runs = str(OutDir(settings.out).guidance_runs.absolute())
        cfg = RunSettings(adapter, runs, agent=agent, max_cost=settings.max_cost if live else None)
        run_target(cfg, _target(kind, settings, manifest))
        return 0
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
        return RunTarget(kind, settings.corpus, manifest, Path(given).absolute())
    demo = OutDir(settings.out).guidance_demo.absolute()
    if not demo_is_intact(demo):
        make_demo(str(settings.corpus), str(demo))
    run = next((run for run in demo_runs(demo) if run.name == kind), None)
    if run is None or not run.workspace_map.is_file():
        raise GuidanceError(
            f"the corpus {settings.corpus} has no {kind} manifest with demo workspaces; "
            "set BCEVAL_GUIDANCE_WORKSPACE_MAP to run it against workspaces of your own"
        )
    return run


def guidance_settings(settings: Settings) -> GuidanceSettings:
    given = environment_values("guidance")  # BCEVAL_GUIDANCE_*, as the options table declares them
    root = Path(given["root"] or settings.corpus).absolute()
    manifest = given["manifest"] or root / DEFAULT_MANIFEST
    out = given["out"] or OutDir(settings.out).guidance
    workspace_map = given["workspace_map"]
    return GuidanceSettings(
        root=str(root),
        manifest=str(Path(manifest).absolute()),
        out=str(Path(out).absolute()),
        workspace_map=str(Path(workspace_map).absolute()) if workspace_map else None,
    )


def _inputs(cfg: GuidanceSettings) -> tuple[list[str], list[str]]:
    """(files to depend on, request ids) of a valid manifest; the action reports any problem of a broken one."""
    files = [cfg.manifest] + ([cfg.workspace_map] if cfg.workspace_map else [])
    ids: list[str] = []
    try:
        manifest = load_manifest(cfg.root, cfg.manifest)
        ids = [case.id for case in manifest.cases]
        named = [case.required + case.optional + case.expected_omitted for case in manifest.cases]
        files += [str(manifest.skill_file)] + [str(manifest.root / rel) for paths in named for rel in paths]
    except BcevalError:
        pass
    try:  # the index covers every article of the checkout, not only the referenced ones
        files += [os.path.join(cfg.root, rel) for rel in knowledge_markdown(scan_corpus(Path(cfg.root)))]
    except BcevalError:
        pass
    return sorted({f for f in files if os.path.isfile(f)}), ids


def run_settings(settings: Settings) -> RunSettings:
    given = environment_values("guidance")
    adapter = given["adapter"]
    agent = None
    if capabilities(adapter).live and (settings.command or capabilities(adapter).endpoint):
        agent = agent_settings(replace(settings, adapter=adapter))  # BCEVAL_COMMAND, BCEVAL_MODEL, ... as for review
    runs = str(OutDir(settings.out).guidance_runs.absolute())
    # what every run of these settings shares: the adapter, the runs folder, the live agent and its budget
    limit = settings.max_cost if agent is not None else None
    run_settings_of = functools.partial(RunSettings, adapter, runs, agent=agent, max_cost=limit)
    if given["workspace_map"]:
        cfg = guidance_settings(settings)
        target = RunTarget(Path(cfg.manifest).stem, Path(cfg.root), Path(cfg.manifest), Path(cfg.workspace_map or ""))
        return run_settings_of((target,))
    problem = None
    if given["root"] or given["manifest"]:
        # Running the demo instead would silently ignore them.
        problem = (
            "BCEVAL_GUIDANCE_ROOT and BCEVAL_GUIDANCE_MANIFEST need BCEVAL_GUIDANCE_WORKSPACE_MAP to run; "
            "unset them to run the demo"
        )
    # the corpus's own guidance manifests (bceval's demo corpus has both), with its evaluation/guidance-workspaces
    source = Path(settings.corpus)
    kinds = {kind for kind, rel in MANIFESTS.items() if (source / rel).is_file()}
    if not kinds and problem is None:
        nothing = (
            f"the corpus {source} has no guidance manifest ({', '.join(MANIFESTS.values())}): nothing to evaluate; "
            "BCEVAL_GUIDANCE_WORKSPACE_MAP runs a manifest against workspaces of your own"
        )
        return run_settings_of((RunTarget("none", source, Path(), Path()),), nothing=nothing)
    targets = tuple(run for run in demo_runs(OutDir(settings.out).guidance_demo.absolute()) if run.name in kinds)
    return run_settings_of(targets, uses_demo=True, problem=problem)


def guidance_tasks(settings: Settings) -> dict[str, Callable[[], dict[str, Any]]]:
    def task_guidance_prepare() -> dict[str, Any]:
        """Validate the guidance manifest and write its requests (BCEVAL_GUIDANCE_* settings)."""
        cfg = guidance_settings(settings)
        files, ids = _inputs(cfg)
        out = GuidancePrepareDir(Path(cfg.out))
        return {
            "actions": [action(prepare_guidance, cfg)],
            "file_dep": files,
            "targets": [str(out.knowledge_index)] + [str(out.case_request(model_id(i))) for i in ids],
            "uptodate": [config_changed({"bceval": __version__, **asdict(cfg), "inputs": files, "at": generated_at()})],
            "verbosity": 1,
        }

    @create_after()  # made only when a guidance run asks for it: its inputs are the corpus's every file
    def task_guidance_demo() -> dict[str, Any]:
        """Build the demo knowledge checkout, workspaces and maps (kept while intact)."""
        cfg = run_settings(settings)
        demo = OutDir(settings.out).guidance_demo.absolute()
        epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
        source = Path(settings.corpus)  # the corpus whose own manifests and workspaces are evaluated
        return {
            "actions": [action(make_demo, str(source), str(demo))],
            "file_dep": sorted(os.path.join(folder, name) for folder, _, names in os.walk(source) for name in names),
            "targets": [str(demo / MARKER)] + [str(t.workspace_map) for t in cfg.targets if cfg.uses_demo],
            # Rebuilt when the corpus or the commit date changes, or when a repository went missing.
            "uptodate": [
                config_changed({"bceval": __version__, "epoch": epoch, "source": str(source)}),
                (demo_is_intact, [demo], {}),
            ],
            "verbosity": 1,
        }

    def task_guidance() -> Iterator[dict[str, Any]]:
        """Run each guidance manifest end to end (prepare, capture, answer, score) into a new run directory."""
        cfg = run_settings(settings)
        for target in cfg.targets:
            yield {
                "name": target.name,
                "actions": [action(run_target, cfg, target)],
                # The demo's maps come from guidance_demo; a configured map is checked by the action.
                "file_dep": [str(target.workspace_map)] if cfg.uses_demo and not cfg.problem else [],
                "task_dep": ["guidance_demo"] if cfg.uses_demo and not cfg.problem else [],
                "uptodate": [False],  # every run is a new evaluation with fresh evidence
                "verbosity": 1,
            }

    return {
        "task_guidance_prepare": task_guidance_prepare,
        "task_guidance_demo": task_guidance_demo,
        "task_guidance": task_guidance,
    }
