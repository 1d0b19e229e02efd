"""The doit glue shared by the graph: one-line failures, a quiet reporter, action wrapping."""

from __future__ import annotations

import functools
import sqlite3
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from doit.cmd_base import ModuleTaskLoader
from doit.dependency import SqliteDB
from doit.doit_cmd import DoitMain
from doit.exceptions import BaseFail, InvalidTask, TaskError, TaskFailed, UnmetDependency
from doit.reporter import ConsoleReporter

from bceval.config import NOTHING_REBUILT
from bceval.errors import EXIT_USAGE, BcevalError, EvaluationFailed
from bceval.outdir import OutputLock, sweep_temp_files


class StateDB(SqliteDB):
    """doit's sqlite3 backend, put in its place by a doit BACKEND plugin for bceval's own runs (a corpus's plain
    `doit` keeps doit's; the file is the same): saving is one transaction, so a full disk keeps the last whole
    state, and a failed save is doit's one-line error naming the file instead of a traceback. The output lock dies
    with the process, so the run after it starts cleanly."""

    def dump(self) -> None:
        try:
            super().dump()
        except sqlite3.Error as exc:
            self._conn.close()
            raise InvalidTask(f"{self.name}: cannot save the build state: {exc}") from None


class InputError(TaskError):
    """Unreadable or unusable input: doit exits 2, the reporter prints the one line."""


class VerdictFailed(TaskFailed):
    """A failed evaluation: its verdict and problems are a result, so they go to stdout."""


def action(func: Callable[..., Any], *args: Any) -> Callable[[], BaseFail | None]:
    """Wrap a core step so bceval errors become doit failures that carry only our message."""

    def run() -> BaseFail | None:
        try:
            func(*args)
        except EvaluationFailed as exc:
            return (VerdictFailed if exc.verdict else TaskFailed)(exc.render())
        except BcevalError as exc:
            return InputError(f"bceval: {exc}")
        except OSError as exc:  # a full disk, a folder that went away: one line naming the file, no traceback
            where = f"{exc.filename}: " if exc.filename else ""
            return InputError(f"bceval: {where}cannot be written or read: {exc.strerror or exc}")
        return None

    run.__name__ = func.__name__
    return run


def always(run: Callable[[], BaseFail | None], *after: str) -> dict[str, Any]:
    """A task of one action that runs every time (a report: it is cheap), after the tasks `after`."""
    return {"actions": [run], "task_dep": list(after), "uptodate": [False]}


# Tasks that report rather than build: they run every time, so they do not make a run "not up to date". `publish`
# is not one: it writes the user's page, and after it "nothing was rebuilt" would read as "nothing happened".
REPORT_TASKS = frozenset(
    "validate health scorecard score summary bench answered experiment_prepare experiment_report experiment".split()
)


def once(func: Callable[..., Any]) -> Callable[..., Any]:
    """functools.cache that is safe when the first call comes from doit's threads: answer tasks running side
    by side must share one RunAnswers (one adapter, one progress count), not build one each."""
    cached = functools.cache(func)
    lock = threading.RLock()

    @functools.wraps(func)
    def call(*args: Any) -> Any:
        with lock:
            return cached(*args)

    return call


def uncaptured(creator: Callable[[], Any]) -> Callable[[], Any]:
    """A task creator whose tasks write straight to stdout/stderr (verdicts belong on stdout, and doit's
    capture swaps sys.stdout, which is not safe when tasks run in threads).

    doit orders task creators by the line they are defined on (inspect.getsourcelines); every wrapper is this
    one function, not functools.wraps of the creator (doit would follow __wrapped__ to the creator's module), so
    all share a line and the namespace's order is the order."""

    def create() -> Any:
        made = creator()
        if isinstance(made, dict):
            return {**made, "io": {"capture": False}}
        return ({**task, "io": {"capture": False}} for task in made)

    create.__doc__ = creator.__doc__  # doit's description of the task (`doit list`)
    vars(create).update(vars(creator))  # doit's marks on the creator, e.g. create_after's
    return create


class BcevalReporter(ConsoleReporter):
    """doit's console reporter, minus the noise: task lines only at verbosity 2 (and on stderr), no
    tracebacks for bceval's own failures (they are already one clear line each), evaluation verdicts on
    stdout, one "up to date" line when nothing needed rebuilding. A subclass made per graph names the
    corpus line to print and the output directory to lock for the length of the run."""

    desc = "bceval console output"
    context: str | None = None
    out: Path | None = None

    def __init__(self, outstream: Any, options: dict[str, Any]) -> None:
        super().__init__(outstream, options)
        self._lock: OutputLock | None = None
        self._worked = False

    def write(self, text: str) -> None:
        stream = self.outstream
        if getattr(stream, "closed", False):  # doit bound sys.stdout at import; it may have been swapped since
            stream = sys.stdout
        stream.write(text)

    def initialize(self, tasks: Any, selected_tasks: Any) -> None:
        if self.context:
            sys.stderr.write(self.context + "\n")
        if self.out is not None:
            lock = OutputLock(self.out)
            try:
                lock.acquire()
            except BcevalError as exc:
                raise InvalidTask(str(exc)) from None
            self._lock = lock
            sweep_temp_files(self.out)

    def execute_task(self, task: Any) -> None:
        base = task.name.split(":", 1)[0]
        if task.actions and base not in REPORT_TASKS:
            self._worked = True
        if task.actions and (task.verbosity or 0) >= 2:
            sys.stderr.write(f".  {task.title()}\n")

    def skip_uptodate(self, task: Any) -> None:
        pass

    def add_failure(self, task: Any, fail: BaseFail) -> None:
        if isinstance(fail, UnmetDependency):
            return  # the failure of the dependency already explained itself
        if isinstance(fail, InputError | TaskFailed) and not fail.traceback:
            (sys.stdout if isinstance(fail, VerdictFailed) else sys.stderr).write(f"{fail.message}\n")
            self.failures.append({"task": task, "exception": fail})
            return
        super().add_failure(task, fail)

    def complete_run(self) -> None:
        try:
            if self.runtime_errors:
                sys.stderr.write("\n".join(self.runtime_errors) + "\n")
            for result in self.failures:
                if result["task"].executed:
                    err = "".join(a.err for a in result["task"].actions if a.err)
                    if err:
                        sys.stderr.write(err)
            if not (self._worked or self.failures or self.runtime_errors) and self.context:
                sys.stderr.write(NOTHING_REBUILT + "\n")
        finally:
            if self._lock is not None:
                self._lock.release()
                self._lock = None


def run_namespace(namespace: dict[str, Any], args: list[str]) -> int:
    """`doit <args>` over a namespace of task creators, in this process; doit's "error before running" (3)
    becomes bceval's usage exit (2). bceval's graph is exactly the namespace it built: no doit.cfg or [tool.doit]
    of the working folder configures it."""
    plugins = {"BACKEND": {"sqlite3": f"{__name__}:StateDB"}}
    code = DoitMain(ModuleTaskLoader(namespace), config_filenames=(), extra_config=plugins).run(args)
    return EXIT_USAGE if code == 3 else code
