"""The development doit tasks: `development_prepare` and `development` (a run into development-runs/)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from doit.tools import config_changed

from bceval import __version__
from bceval.agents.settings import AgentSettings
from bceval.config import DEMO_CORPUS, Settings, environment_values
from bceval.errors import EvaluationFailed
from bceval.evaluators.development import CAPABILITIES_RELATIVE, CHECKS_RELATIVE, MANIFEST_RELATIVE
from bceval.evaluators.development.cli import development_pyproject, run_mode
from bceval.evaluators.development.runner import DEMO_AGENT, RunOptions, api_settings, run_development
from bceval.graph.doitlib import action
from bceval.layout import GuidanceRunDir, OutDir


def development_tasks(settings: Settings) -> dict[str, Callable[[], Any]]:
    given = environment_values("development")
    project = development_pyproject(Path.cwd())  # [tool.bceval.development]: below the variables
    for key in ("root", "manifest", "capabilities", "workspace_map", "checks", "adapter"):
        if not given.get(key) and key in project:
            given[key] = str(project[key])
    custom = bool(given["root"])
    root = Path(given["root"] or (settings.corpus if settings.corpus else DEMO_CORPUS)).absolute()
    demo_root = Path(given["root"]).absolute() if custom else DEMO_CORPUS

    def task_development_prepare() -> dict[str, Any]:
        """Validate the development manifest and write its requests (BCEVAL_DEVELOPMENT_* settings)."""
        manifest = Path(given["manifest"] or root / MANIFEST_RELATIVE)
        out = Path(given["out"] or OutDir(settings.out).development).absolute()
        files = [str(p) for p in (manifest, root / CAPABILITIES_RELATIVE) if p.is_file()]
        return {
            "actions": [action(prepare_task, str(root), given["manifest"], str(out))],
            "file_dep": files,
            "uptodate": [config_changed({"bceval": __version__, "root": str(root), "out": str(out)})],
            "verbosity": 1,
        }

    def task_development() -> dict[str, Any]:
        """Run every development case in a fresh copy with runner-owned gates (default: the demo's control)."""

        def path(key: str) -> Path | None:
            return Path(given[key]) if custom and given[key] else None

        opts = RunOptions(
            root=demo_root,
            out=OutDir(settings.out).development_runs.absolute(),  # the folder of runs: each gets a new run-NNNN
            workspace_map=path("workspace_map"),
            checks=Path(given["checks"]) if given["checks"] else demo_root / CHECKS_RELATIVE,
            adapter=given["adapter"],
            agent=AgentSettings((settings.command if custom else None) or DEMO_AGENT),
            manifest=path("manifest"),
            capabilities=path("capabilities"),
        )
        return {
            "actions": [action(run_task, opts)],
            "uptodate": [False],  # every run is a new evaluation with fresh evidence
            "verbosity": 1,
        }

    return {"task_development_prepare": task_development_prepare, "task_development": task_development}


def prepare_task(root: str, manifest: str | None, out: str) -> None:
    """`doit development_prepare`: validate, then prepare into out (a marked directory is rewritten)."""
    if run_mode("prepare", Path(root), Path(manifest) if manifest else None, out=Path(out)) != 0:
        raise EvaluationFailed("Development fixture validation FAILED", verdict=False)


def run_task(opts: RunOptions) -> None:
    """`doit development`: one run into a new run-NNNN; a failing run fails the task (its lines are printed)."""
    agent = api_settings(None) if opts.adapter == "api" else opts.agent  # the api's settings are read when it runs
    opts = replace(opts, out=GuidanceRunDir.next_in(opts.out).path, agent=agent)
    if run_development(opts) != 0:
        raise EvaluationFailed(f"Development run FAILED: see {opts.out}", verdict=False)
