"""The view task: out/view/, rebuilt when any file of a run, experiment or guidance run changed (their sizes and
times, listed only when `doit view` is asked for), a no-op otherwise."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from bceval.config import Settings
from bceval.graph.doitlib import action
from bceval.layout import OutDir
from bceval.steps.view import build_view
from bceval.viewer.collect import input_files


def inputs_digest(settings: Settings) -> str:
    digest = hashlib.sha256()
    for path in input_files(settings.out):
        try:
            info = path.stat()
        except OSError:
            continue
        digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def view_tasks(settings: Settings) -> dict[str, Callable[[], Any]]:
    def unchanged(task: Any, values: dict[str, Any]) -> bool:
        # computed when the task is considered, not whenever the graph is loaded: the walk is the view's alone
        digest = inputs_digest(settings)
        task.value_savers.append(lambda: {"view-inputs": digest})
        return values.get("view-inputs") == digest

    def task_view() -> dict:
        """out/view/: the static viewer of every run, experiment and guidance run (bceval view)."""
        return {
            "actions": [action(build_view, settings.out)],
            "targets": [str(OutDir(settings.out).view / "index.html")],
            "uptodate": [unchanged],
        }

    return {"task_view": task_view}
