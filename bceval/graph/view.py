"""The view task: out/view/, rebuilt when any file of a run, experiment or guidance run changed (their sizes and
times, listed only when `doit view` is asked for), a no-op otherwise."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bceval.config import Settings
from bceval.graph.doitlib import action
from bceval.layout import OutDir
from bceval.steps.view import build_view


def inputs_digest(out: Path) -> str:
    """The names, sizes and times of every file the site is built from (a cheap walk)."""
    layout = OutDir(out)
    found: list[Path] = []
    for root in (layout.runs, layout.guidance_runs, layout.experiments):
        for folder, dirs, files in os.walk(root):  # nothing when it is not there
            # the prepare variants' corpora copies and doit state are not the viewer's input; their requests are
            dirs[:] = [d for d in dirs if d not in (".git", "cache", "corpora")]
            found += [Path(folder, name) for name in files if not name.startswith(".")]
    if layout.prepare.path.is_dir():
        found += [p for p in layout.prepare.path.iterdir() if p.is_file() and not p.name.startswith(".")]
    digest = hashlib.sha256()
    for path in sorted(found):
        try:
            info = path.stat()
        except OSError:
            continue
        digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def view_tasks(settings: Settings) -> dict[str, Callable[[], Any]]:
    def unchanged(task: Any, values: dict[str, Any]) -> bool:
        # computed when the task is considered, not whenever the graph is loaded: the walk is the view's alone
        digest = inputs_digest(settings.out)
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
