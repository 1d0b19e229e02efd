"""python-tasks: coding tasks an agent answers with one standalone Python program, judged objectively.

A task set is a folder with one folder per task (its id):

    <task>/task.json      {"title": ..., "prompt": ..., "budgetSeconds": 5, "expected": {...}}
    <task>/known-good.py  a program that passes (what the oracle answers)
    <task>/files/...      optional: files the agent finds in its working folder (data to read)

The agent writes `solution.py`. Scoring has three stages and no string similarity; the first that fails is the
verdict's stage: `compile` (py_compile), `run` (exit code 0 within the task's budget, stdin empty, no network
needed), `output` (exactly one non-empty line on stdout, a JSON value equal to `expected`: same types, same keys,
same values).
"""

from __future__ import annotations

import json
import py_compile
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from bceval.errors import BcevalError
from bceval.escape import quoted
from bceval.jsonio import parse_json, read_regular_bytes
from bceval.models import StrictModel
from bceval.steps.casework import CaseEvaluator, Question, Verdict, run_process

PROGRAM = "solution.py"
KNOWN_GOOD = "known-good.py"
CONTRACT = (
    "Write one standalone Python 3 program (standard library only) to the file {program} in your working "
    "directory. It will be run as `python {program}` from that directory with empty stdin, no network and a time "
    "budget of {budget:g} seconds, and must print exactly one line: a JSON value with the results described above. "
    "Print nothing else."
)


class TaskFile(StrictModel):
    title: str
    prompt: str
    budgetSeconds: float = Field(gt=0, le=600)
    expected: Any


@dataclass(frozen=True)
class Task:
    id: str
    folder: Path
    spec: TaskFile


def _task(folder: Path) -> Task:
    path = folder / "task.json"
    try:
        spec = TaskFile.model_validate(parse_json(read_regular_bytes(path), str(path)))
    except OSError as exc:
        raise BcevalError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "the document"
        raise BcevalError(f"{path}: {where}: {error['msg']}") from None
    return Task(folder.name, folder, spec)


def _difference(got: Any, want: Any, where: str = "$") -> str | None:
    """Where the output first differs from the expected value, or None; True is not 1 and 1 is not 1.0."""
    if type(got) is not type(want):
        return f"at {where}: expected {json.dumps(want)[:80]}, got {json.dumps(got)[:80]}"
    if isinstance(want, dict):
        if set(got) != set(want):
            return f"at {where}: expected the keys {sorted(want)}, got {sorted(got)}"
        return next((d for k in want if (d := _difference(got[k], want[k], f"{where}.{k}"))), None)
    if isinstance(want, list):
        if len(got) != len(want):
            return f"at {where}: expected {len(want)} item(s), got {len(got)}"
        return next((d for i, w in enumerate(want) if (d := _difference(got[i], w, f"{where}[{i}]"))), None)
    return None if got == want else f"at {where}: expected {json.dumps(want)[:80]}, got {json.dumps(got)[:80]}"


def _compiles(program: Path) -> str | None:
    if not program.is_file():
        return f"no {PROGRAM} was written"
    with tempfile.TemporaryDirectory() as scratch:  # the bytecode goes nowhere near the answer
        try:
            py_compile.compile(str(program), cfile=str(Path(scratch) / "solution.pyc"), doraise=True)
        except py_compile.PyCompileError as exc:
            return f"{PROGRAM} does not compile: {quoted(str(exc.exc_value), 160)}"
    return None


class PythonTasks(CaseEvaluator):
    name = "python-tasks"
    description = "coding tasks answered with one standalone Python program: compiles, runs, prints the values"

    def load(self, root: Path, manifest: Path | None) -> list[Task]:
        """Every task folder of `root`, by name; a manifest, when given, is a JSON list of the task ids to ask."""
        folders = sorted(p for p in Path(root).iterdir() if (p / "task.json").is_file())
        if manifest is not None:
            chosen = parse_json(read_regular_bytes(manifest), str(manifest))
            known = {p.name: p for p in folders}
            if not isinstance(chosen, list) or not all(isinstance(c, str) and c in known for c in chosen):
                raise BcevalError(f"{manifest}: not a JSON list of the task ids in {root}")
            folders = [known[c] for c in chosen]
        if not folders:
            raise BcevalError(f"{root}: no task (a folder with a task.json)")
        return [_task(folder) for folder in folders]

    def cases(self, loaded: list[Task]) -> list[Task]:
        return loaded

    def question_for(self, loaded: list[Task], case: Task) -> Question:
        given = case.folder / "files"
        files = {p.relative_to(given).as_posix(): p.read_bytes() for p in sorted(given.rglob("*")) if p.is_file()}
        names = f"\n\nYour working directory holds: {', '.join(sorted(files))}." if files else ""
        contract = CONTRACT.format(program=PROGRAM, budget=case.spec.budgetSeconds)
        return Question(f"Task {case.id}: {case.spec.title}\n\n{case.spec.prompt}{names}\n\n{contract}\n", files)

    def known_answer(self, loaded: list[Task], case: Task) -> dict[str, bytes]:
        return {PROGRAM: (case.folder / KNOWN_GOOD).read_bytes()}

    def judge(self, loaded: list[Task], case: Task, workdir: Path) -> Verdict:
        problem = _compiles(workdir / PROGRAM)
        if problem is not None:
            return Verdict(False, "compile", (problem,))
        budget = case.spec.budgetSeconds
        ran = run_process([sys.executable, "-I", PROGRAM], workdir, budget)
        if ran.exit_code is None:
            return Verdict(False, "run", (f"still running after the time budget of {budget:g} s",))
        if ran.exit_code != 0:
            last = (ran.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
            return Verdict(False, "run", (f"exit code {ran.exit_code}: {quoted(last, 160)}",))
        lines = [line for line in ran.stdout.decode("utf-8", "replace").splitlines() if line.strip()]
        if len(lines) != 1:
            return Verdict(False, "output", (f"expected one output line, got {len(lines)}",))
        try:
            value = json.loads(lines[0])
        except ValueError:
            return Verdict(False, "output", (f"the output line is not JSON: {quoted(lines[0], 160)}",))
        difference = _difference(value, case.spec.expected)
        return Verdict(False, "output", (difference,)) if difference else Verdict(True)


EVALUATOR = PythonTasks()
