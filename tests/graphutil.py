"""Drive the bceval doit graph in-process and observe which tasks executed."""

from __future__ import annotations

from pathlib import Path

from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain

from bceval.config import Settings
from bceval.graph.doitlib import BcevalReporter
from bceval.graph.loader import build_namespace, open_output


class RecordingReporter(BcevalReporter):
    executed: list[str] = []

    def execute_task(self, task) -> None:  # noqa: ANN001
        RecordingReporter.executed.append(task.name)
        super().execute_task(task)


def settings_for(corpus: Path, out: Path) -> Settings:
    return Settings(corpus=corpus, manifest=corpus / "evaluation" / "review-fixtures.json", out=out)


def run_graph(settings: Settings, *args: str) -> tuple[int, list[str]]:
    """Run doit on the graph; returns the exit code and the names of the tasks that executed."""
    open_output(settings)  # as bceval's own run_graph: doit's state database goes in the output folder
    namespace = build_namespace(settings)
    namespace["DOIT_CONFIG"] = {**namespace["DOIT_CONFIG"], "reporter": RecordingReporter}
    RecordingReporter.executed = []
    code = DoitMain(ModuleTaskLoader(namespace)).run(["run", *args])
    return code, [name for name in RecordingReporter.executed if name not in {"rows", "domain"}]


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file below a directory by relative path, with its bytes."""
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def mtimes(directory: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in directory.iterdir() if p.is_file()}
