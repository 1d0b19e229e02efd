"""The development doit tasks.

`development_prepare` validates the development manifest and writes its requests into `<out>/development`
(a marked directory is rewritten). `development` runs every case through bceval's runner into a new
`<out>/development-runs/run-NNNN`: by default the demo corpus with its scripted control agent (the known-good
patch) and its stand-in gates; with BCEVAL_DEVELOPMENT_ROOT it runs that checkout with BCEVAL_COMMAND.

Settings the shared Settings model does not carry come from the environment (bceval.config.options):
BCEVAL_DEVELOPMENT_ROOT, BCEVAL_DEVELOPMENT_MANIFEST, BCEVAL_DEVELOPMENT_CAPABILITIES, BCEVAL_DEVELOPMENT_OUT
(the preparation), BCEVAL_DEVELOPMENT_WORKSPACE_MAP, BCEVAL_DEVELOPMENT_CHECKS and BCEVAL_DEVELOPMENT_ADAPTER.
Where a variable is unset, [tool.bceval.development] in pyproject.toml gives the value (its root, manifest,
capabilities, workspace_map, checks file and adapter; inline checks are for `bceval development run`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from doit.tools import config_changed

from bceval import __version__
from bceval.config import DEMO_CORPUS, Settings, environment_values
from bceval.evaluators.development import CAPABILITIES_RELATIVE, MANIFEST_RELATIVE
from bceval.evaluators.development.config import development_pyproject
from bceval.graph.doitlib import action
from bceval.layout import OutDir


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
        command = settings.command if custom else None
        runs = OutDir(settings.out).development_runs.absolute()
        return {
            "actions": [
                action(
                    run_task,
                    str(demo_root),
                    str(runs),
                    given["checks"],
                    command,
                    given["adapter"],
                    (given["manifest"], given["capabilities"], given["workspace_map"]) if custom else (None,) * 3,
                )
            ],
            "uptodate": [False],  # every run is a new evaluation with fresh evidence
            "verbosity": 1,
        }

    return {"task_development_prepare": task_development_prepare, "task_development": task_development}


# The runner's steps load only when a development task runs: every doit command builds this module's tasks.
def prepare_task(*args: Any) -> Any:
    from bceval.evaluators.development.runner import prepare_task as prepare

    return prepare(*args)


def run_task(*args: Any) -> Any:
    from bceval.evaluators.development.runner import run_task as run

    return run(*args)
