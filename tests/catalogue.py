"""The hostile and first-hour catalogue of issue 20: every attempt, replayable, with the outcome it must have.

An attempt is a function that sets up its own scratch folder, does what the attacker or the new user did (mostly
`bceval ...` in a subprocess, through `run_bceval`), and returns an `Outcome` saying whether bceval held and what it
answered. `tests/test_catalogue.py` runs every attempt under pytest; `python tests/replay_catalogue.py` runs them all
and prints the counts the issue asks for (attempts, clean one-line errors, tracebacks, hangs, files changed outside
bceval's own, escapes, orphans).

Modules named `tests/catalogue_<part>.py` hold attempts and register them with `@attempt(item, name)`; the test and
the replay script import every one of them, so both see the same catalogue.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Outcome:
    """What one attempt came to. `held` is the verdict; the counters feed the replay script's totals."""

    held: bool
    detail: str  # the one-line answer bceval gave, or what went wrong
    clean_error: bool = False  # the attempt was refused with exactly one line on stderr and exit 2
    traceback: bool = False
    hang: bool = False
    changed_outside: int = 0  # files outside bceval's own folders whose bytes or mode changed
    escapes: int = 0  # model or corpus text that reached the console, Markdown or HTML unescaped
    orphans: int = 0  # agent processes or view folders left behind


@dataclass(frozen=True)
class Attempt:
    item: int  # the item's number in issue 20
    name: str
    run: Callable[[Path], Outcome] = field(repr=False)

    @property
    def id(self) -> str:
        return f"{self.item:02d}-{self.name}"


ATTEMPTS: list[Attempt] = []


def attempt(item: int, name: str) -> Callable[[Callable[[Path], Outcome]], Callable[[Path], Outcome]]:
    def register(run: Callable[[Path], Outcome]) -> Callable[[Path], Outcome]:
        ATTEMPTS.append(Attempt(item, name, run))
        return run

    return register


def load_attempts() -> list[Attempt]:
    """Every registered attempt, in item order (then name), after importing the catalogue modules."""
    import importlib

    tests = Path(__file__).resolve().parent
    if str(tests) not in sys.path:
        sys.path.insert(0, str(tests))
    for module in sorted(tests.glob("catalogue_*.py")):
        importlib.import_module(module.stem)
    return sorted(ATTEMPTS, key=lambda a: (a.item, a.name))


@dataclass(frozen=True)
class Ran:
    code: int | None  # None when the process had to be killed (a hang)
    stdout: str
    stderr: str

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr or "Traceback (most recent call last)" in self.stdout

    @property
    def hang(self) -> bool:
        return self.code is None

    def stderr_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


def run_bceval(
    args: list[str],
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    stdin: str | None = None,
) -> Ran:
    """`python -m bceval ARGS` in CWD, with this checkout on the path; a run that outlives TIMEOUT is a hang."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    environ.update(env or {})
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bceval", *args],
            cwd=cwd,
            env=environ,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as hung:
        out = hung.stdout.decode() if isinstance(hung.stdout, bytes) else (hung.stdout or "")
        err = hung.stderr.decode() if isinstance(hung.stderr, bytes) else (hung.stderr or "")
        return Ran(None, out, err)
    return Ran(done.returncode, done.stdout, done.stderr)


def refusal(ran: Ran, *must_contain: str) -> Outcome:
    """The outcome of an attempt that must be refused: exit 2, one line on stderr naming what is wrong.

    The context line every command prints first (`bceval: corpus ...`) is not counted.
    """
    lines = [line for line in ran.stderr_lines() if not line.startswith("bceval: corpus ")]
    one_line = ran.code == 2 and len(lines) == 1 and all(text in lines[0] for text in must_contain)
    detail = lines[0] if len(lines) == 1 else f"exit {ran.code}, {len(lines)} stderr line(s): {lines[:3]!r}"
    return Outcome(held=one_line, detail=detail, clean_error=one_line, traceback=ran.traceback, hang=ran.hang)
