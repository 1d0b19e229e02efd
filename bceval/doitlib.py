"""The doit glue shared by the graph: one-line failures, a quiet reporter, action wrapping."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from doit.exceptions import BaseFail, TaskError, TaskFailed, UnmetDependency
from doit.reporter import ConsoleReporter

from bceval.errors import BcevalError, EvaluationFailed


class InputError(TaskError):
    """Unreadable or unusable input: doit exits 2, the reporter prints the one line."""


def action(func: Callable[..., Any], *args: Any) -> Callable[[], BaseFail | None]:
    """Wrap a core step so bceval errors become doit failures that carry only our message."""

    def run() -> BaseFail | None:
        try:
            func(*args)
        except EvaluationFailed as exc:
            return TaskFailed(exc.render())
        except BcevalError as exc:
            return InputError(str(exc))
        return None

    run.__name__ = func.__name__
    return run


class BcevalReporter(ConsoleReporter):
    """doit's console reporter, minus the noise: no per-folder or per-result lines, no skipped lines, no tracebacks
    for bceval's own failures (they are already one clear line each)."""

    desc = "bceval console output"

    def write(self, text: str) -> None:
        stream = self.outstream
        if getattr(stream, "closed", False):  # doit bound sys.stdout at import; it may have been swapped since
            stream = sys.stdout
        stream.write(text)

    def execute_task(self, task: Any) -> None:
        if not task.name.startswith(("rows:", "verdict:", "_")) and task.actions:
            self.write(f".  {task.title()}\n")

    def skip_uptodate(self, task: Any) -> None:
        pass

    def add_failure(self, task: Any, fail: BaseFail) -> None:
        if isinstance(fail, UnmetDependency):
            return  # the failure of the dependency already explained itself
        if isinstance(fail, InputError | TaskFailed) and not fail.traceback:
            sys.stderr.write(f"{fail.message}\n")
            return
        super().add_failure(task, fail)

    def complete_run(self) -> None:
        if self.runtime_errors:
            sys.stderr.write("\n".join(self.runtime_errors) + "\n")
        for result in self.failures:
            if result["task"].executed:
                err = "".join(a.err for a in result["task"].actions if a.err)
                if err:
                    sys.stderr.write(err)
