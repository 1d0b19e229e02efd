"""The guidance doit tasks: `guidance_prepare`, `guidance_demo` and `guidance:<name>`, which runs one manifest end to
end in one action (the baseline digest lives only in that process's memory)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from doit import create_after
from doit.tools import config_changed

from bceval import __version__
from bceval.agents.registry import capabilities
from bceval.clock import generated_at
from bceval.config import Settings, agent_settings, environment_values
from bceval.corpus.layers import knowledge_markdown, scan_corpus
from bceval.errors import BcevalError
from bceval.evaluators.base import model_id
from bceval.evaluators.guidance import DEFAULT_MANIFEST, MANIFESTS
from bceval.evaluators.guidance.demo import MARKER, demo_is_intact, demo_runs
from bceval.evaluators.guidance.manifest import load_manifest
from bceval.evaluators.guidance.steps import (
    GuidanceSettings,
    RunSettings,
    RunTarget,
    make_demo,
    prepare_guidance,
    run_target,
)
from bceval.graph.doitlib import action
from bceval.layout import GuidancePrepareDir, OutDir


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
    demo = OutDir(settings.out).guidance_demo.absolute()
    # what every run of these settings shares: the adapter, the folders, the live agent and its budget
    limit = settings.max_cost if agent is not None else None
    run_settings_of = functools.partial(RunSettings, adapter, runs, demo=str(demo), agent=agent, max_cost=limit)
    if given["workspace_map"]:
        cfg = guidance_settings(settings)
        return run_settings_of((RunTarget(Path(cfg.manifest).stem, cfg.root, cfg.manifest, cfg.workspace_map or ""),))
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
        return run_settings_of((RunTarget("none", str(source), "", ""),), nothing=nothing)
    made = [run for run in demo_runs(demo) if run.kind in kinds]
    targets = tuple(RunTarget(r.kind, str(r.root), str(r.manifest), str(r.workspace_map)) for r in made)
    return run_settings_of(targets, uses_demo=True, problem=problem, source=str(source))


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
        demo = Path(cfg.demo)
        epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
        source = Path(cfg.source or settings.corpus)  # the corpus whose own manifests and workspaces are evaluated
        return {
            "actions": [action(make_demo, str(source), str(demo))],
            "file_dep": sorted(os.path.join(folder, name) for folder, _, names in os.walk(source) for name in names),
            "targets": [str(demo / MARKER)] + [t.workspace_map for t in cfg.targets if cfg.uses_demo],
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
                "file_dep": [target.workspace_map] if cfg.uses_demo and not cfg.problem else [],
                "task_dep": ["guidance_demo"] if cfg.uses_demo and not cfg.problem else [],
                "uptodate": [False],  # every run is a new evaluation with fresh evidence
                "verbosity": 1,
            }

    return {
        "task_guidance_prepare": task_guidance_prepare,
        "task_guidance_demo": task_guidance_demo,
        "task_guidance": task_guidance,
    }
