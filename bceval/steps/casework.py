"""A frame for simple case-based evaluators (docs/contributing.md): a plugin subclasses CaseEvaluator, overrides
five hooks (load, cases, question_for, known_answer, judge), and gets the uniform verbs and an experiment's
whole-run unit. Folders (OUT is --out; a run is --run, else <adapter>-<evaluator>; a new answer replaces it whole):
    OUT/<evaluator>/prepared/<case>/   question.json (id, prompt, files) and the files (`prepare`)
    OUT/runs/<run>/                    work/<case>/, transcripts/ (`answer`); score.json, scorecard.md, run.json
    OUT/view/<evaluator>/<run>.html    `view`, with index.html
The `command` agent runs in a fresh copy of its question folder outside OUT, the prompt on stdin, under bceval's
process runner (timeout, retries, its whole process tree ended); known answers are never in a question folder.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bceval.agents.command import run_process as run_process  # a plugin's judge runs its programs with it
from bceval.agents.registry import Agent, Shape, ShapedSetup, make_agent
from bceval.agents.view import release, scrubbed_environment, temp_folder
from bceval.config import SOURCES, Settings, agent_settings, load_settings
from bceval.errors import BcevalError
from bceval.escape import console, html, markdown
from bceval.evaluators.base import RUN, Evaluator, Traits
from bceval.jsonio import dumps, read_json, write_atomic
from bceval.layout import GuidanceRunDir, OutDir
from bceval.models import StrictModel
from bceval.runs.record import run_record, write_prompt, write_record, write_transcript
from bceval.steps.answer import hidden_paths
from bceval.viewer.html import bullets, table

QUESTION = "question.json"
ANSWERS = "answers.json"
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
AGENTS = ("oracle", "command")
HEADERS = ("case", "verdict", "failing stage", "problems")


@dataclass(frozen=True)
class Question:
    prompt: str
    files: Mapping[str, bytes] = field(default_factory=dict)  # relative path -> bytes


@dataclass(frozen=True)
class Verdict:
    passed: bool
    stage: str | None = None  # the first stage that failed
    problems: tuple[str, ...] = ()


class CaseScore(StrictModel):
    id: str
    passed: bool
    stage: str | None = None
    problems: list[str] = []


class ScoreFile(StrictModel):
    kind: Literal["bceval-casework-score"] = "bceval-casework-score"
    version: Literal[1] = 1
    evaluator: str
    run: str
    adapter: str
    passed: bool
    cases: list[CaseScore]


@dataclass(frozen=True)
class FolderQuestion:
    folder: Path  # a fresh copy of the case's question folder: the agent runs and writes here
    prompt: str


class FolderShape(Shape):
    """How the `command` kind answers a casework question (bceval.agents.registry.Shape): it runs in the case's
    folder with the prompt on stdin, and its answer is what it leaves there."""

    in_case_view = False
    checks_command = True
    tools: tuple[Any, ...] = ()

    def __init__(self, hidden: Mapping[str, Path]) -> None:
        self.hidden = hidden

    def by_process(self, agent: Any, q: FolderQuestion) -> tuple[str | None, dict[str, Any]]:
        """Why it gave no answer (None when it did) and its transcript record."""
        if agent.agent.sandbox != "none":
            raise BcevalError("--sandbox: a casework agent writes its folder, which the sandbox keeps read-only")
        env = scrubbed_environment(agent.environ, list(self.hidden.values()), q.folder)
        stdin = b"" if agent.reads_request_file else q.prompt.encode("utf-8")

        def attempt(number: int, waited: float) -> Any:
            argv = agent.command_line(q.folder / QUESTION, q.folder)
            return agent.run(argv, q.folder, env, stdin, {"attempt": number, "waitedSeconds": round(waited, 3)})

        done, attempts, usage = agent.ask(attempt, lambda output: output)
        last = attempts[-1].failure
        failure = None if done is not None else f"{last[0]}: {last[1]}" if last else "no answer"
        return failure, {"attempts": [a.record for a in attempts], "outcome": failure or "answered", "usage": usage}

    def by_endpoint(self, agent: Any, q: FolderQuestion) -> Any:
        raise BcevalError("a casework question is answered by the command or the oracle adapter, not api")


def read_answers(run_dir: Path, adapter: str) -> tuple[str, dict[str, str | None]]:
    """The adapter and per-case failures of an answered run's answers.json; one line naming it when broken."""
    path = run_dir / ANSWERS
    answers = read_json(path)
    agent, failures = (answers.get("agent"), answers.get("failures")) if isinstance(answers, dict) else (None, None)
    if not isinstance(agent, dict) or not isinstance(failures, dict):
        raise BcevalError(f"{path}: not the answers of a run (agent, failures); answer the run again")
    return agent.get("adapter", adapter), failures


def _write_files(folder: Path, files: Mapping[str, bytes], what: str) -> None:
    for name, data in files.items():
        parts = Path(name).parts
        if not parts or Path(name).is_absolute() or any(p in ("..", ".") for p in parts) or name == QUESTION:
            raise BcevalError(f"{what}: '{console(name)}' is not a relative path inside the case's folder")
        write_atomic(folder / name, data)


def _copy(source: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, symlinks=True)


class CaseEvaluator(Evaluator):
    """The Evaluator protocol (bceval.evaluators.base) over five hooks; a subclass sets name and description."""

    name = ""
    description = ""
    question = "folder"  # the question shape: a prompt and a folder, answered by changing the folder
    traits = Traits(unit=RUN, default_agent="oracle", prepares_in_run=True, shares_answers=False)

    # --- the hooks a plugin overrides ---------------------------------------------------------------------------
    def load(self, root: Path, manifest: Path | None) -> Any:
        raise NotImplementedError

    def cases(self, loaded: Any) -> list[Any]:
        raise NotImplementedError

    def question_for(self, loaded: Any, case: Any) -> Question:
        raise NotImplementedError

    def known_answer(self, loaded: Any, case: Any) -> Mapping[str, bytes]:
        raise NotImplementedError

    def judge(self, loaded: Any, case: Any, workdir: Path) -> Verdict:
        raise NotImplementedError

    # --- the protocol -------------------------------------------------------------------------------------------
    def model_id(self, case: Any) -> str:
        return str(case.id)  # a task's id is no secret: its prompt names the task anyway

    def unit_inputs(self, arm: Any) -> dict[str, Any]:
        """The SHA-256 of every file of the arm's corpus (path and bytes) and of its manifest."""
        digest = hashlib.sha256()
        for path in sorted(p for p in Path(arm.corpus).rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(f"{path.relative_to(arm.corpus).as_posix()}\0".encode() + path.read_bytes() + b"\0")
        manifest = hashlib.sha256(Path(arm.manifest).read_bytes()).hexdigest() if arm.manifest else None
        return {"corpus": digest.hexdigest(), "manifest": manifest}

    def verb(self, verb: str, args: argparse.Namespace) -> int:
        settings = load_settings(**{key: value for key, value in vars(args).items() if key in SOURCES})
        if verb == "view":
            return self.write_view(settings.out)
        loaded = self.load(settings.corpus, settings.manifest)
        prepared = OutDir(settings.out).path / self.name / "prepared"
        if verb == "prepare":
            self.prepare(loaded, prepared)
            print(f"Prepared {len(self.cases(loaded))} case(s) of {self.name} in {prepared}")
            return 0
        adapter = getattr(args, "adapter", None) or self.traits.default_agent or "oracle"
        run = settings.run or f"{adapter}-{self.name}"
        run_dir = OutDir(settings.out).run(run).path
        if verb == "answer":
            self.answer_run(loaded, prepared, run_dir, adapter, settings)
            print(f"Answered {len(self.cases(loaded))} case(s) with {adapter} into {run_dir}")
            return 0
        if not (run_dir / ANSWERS).is_file():
            raise BcevalError(f"{run_dir}: no answered run (bceval answer --evaluator {self.name} makes one)")
        code = self.score_run(loaded, run_dir, run, adapter)
        if verb == "publish":  # the committed scorecard page is the review evaluator's history
            print(f"Scorecard: {run_dir / 'scorecard.md'} (a {self.name} run is not added to a committed page)")
        return code

    # --- prepare, answer, score ---------------------------------------------------------------------------------
    def prepare(self, loaded: Any, prepared: Path) -> None:
        """Each case's question folder, written anew; folders of cases no longer asked go."""
        wanted: set[str] = set()
        for case in self.cases(loaded):
            if not SAFE_ID.fullmatch(str(case.id)):
                raise BcevalError(f"{self.name}: case id '{console(str(case.id))}' is not a safe file name")
            asked = self.question_for(loaded, case)
            folder = prepared / case.id
            shutil.rmtree(folder, ignore_errors=True)  # no file of an earlier question stays
            _write_files(folder, asked.files, f"{self.name} case {case.id}")
            document = {"id": case.id, "prompt": asked.prompt, "files": sorted(asked.files)}
            write_atomic(folder / QUESTION, dumps(document))
            wanted.add(case.id)
        for folder in prepared.iterdir() if prepared.is_dir() else ():
            if folder.is_dir() and folder.name not in wanted:
                shutil.rmtree(folder)

    def answer_run(self, loaded: Any, prepared: Path, run_dir: Path, adapter: str, settings: Settings) -> None:
        """Prepare, answer every case into a new folder, then put it in place of the run of that name."""
        self.prepare(loaded, prepared)
        building = run_dir.with_name(f".{run_dir.name}.answering-{os.getpid()}")
        shutil.rmtree(building, ignore_errors=True)
        try:
            self.answer_into(loaded, prepared, building, adapter, settings)
            shutil.rmtree(run_dir, ignore_errors=True)
            building.rename(run_dir)
        finally:
            shutil.rmtree(building, ignore_errors=True)

    def answer_into(self, loaded: Any, prepared: Path, run_dir: Path, adapter: str, settings: Settings) -> None:
        """work/<case>/ of every case by the oracle or a command agent, and answers.json (which failed to answer)."""
        if adapter not in AGENTS:
            raise BcevalError(f"--adapter {adapter}: a {self.name} run answers with {' or '.join(AGENTS)}")
        agent = None
        if adapter == "command":
            shape = FolderShape(hidden_paths(settings))
            agent = make_agent("command", ShapedSetup(self.question, shape, agent_settings(settings)))
        failures: dict[str, str | None] = {}
        for case in self.cases(loaded):
            work = run_dir / "work" / case.id
            if agent is None:
                _copy(prepared / case.id, work)
                _write_files(work, self.known_answer(loaded, case), f"{self.name} known answer of {case.id}")
                failures[case.id] = None
                continue
            failures[case.id] = self._ask(agent, prepared / case.id, work, run_dir, case)
        described = agent.describe() if agent is not None else {"adapter": adapter}
        write_atomic(run_dir / ANSWERS, dumps({"evaluator": self.name, "agent": described, "failures": failures}))

    def _ask(self, agent: Agent, question: Path, work: Path, run_dir: Path, case: Any) -> str | None:
        scratch = temp_folder("case")  # outside OUT: the agent sees its question and nothing of any other run
        try:
            folder = scratch / "work"
            _copy(question, folder)
            prompt = read_json(question / QUESTION)["prompt"]
            failure, record = agent.answer(FolderQuestion(folder, prompt))
            _copy(folder, work)
        finally:
            release(scratch)
        usage = record.pop("usage")
        record = {"case": case.id, "promptSha256": write_prompt(run_dir, prompt), **record}
        write_transcript(run_dir, self.model_id(case), run_dir.name, agent.describe(), record, usage)
        return failure

    def score_run(self, loaded: Any, run_dir: Path, run: str, adapter: str) -> int:
        """Judge every answered case (in a scratch copy); score.json, scorecard.md and run.json; 1 when one fails."""
        adapter, failures = read_answers(run_dir, adapter)
        scores = [self._judged(loaded, case, run_dir, failures) for case in self.cases(loaded)]
        score = ScoreFile(
            evaluator=self.name, run=run, adapter=adapter, passed=all(s.passed for s in scores), cases=scores
        )
        write_atomic(run_dir / "score.json", dumps(score.model_dump()))
        write_atomic(run_dir / "scorecard.md", scorecard(score))
        problems = [f"{s.id}: {s.stage}: {p}" for s in scores for p in s.problems or ["failed"] if not s.passed]
        verdicts = [{"case": s.id, "verdict": "error" if s.stage == "answer" else _word(s.passed)} for s in scores]
        record = {"evaluator": self.name, "adapter": adapter, "passed": score.passed, "problems": problems}
        write_record(run_dir, run_record("bceval-casework-run", {**record, "cases": verdicts}))
        passed = sum(s.passed for s in scores)
        print(f"{self.name} run {run}: {passed} of {len(scores)} case(s) passed; scorecard: {run_dir / 'scorecard.md'}")
        return 0 if score.passed else 1

    def _judged(self, loaded: Any, case: Any, run_dir: Path, failures: dict[str, str | None]) -> CaseScore:
        failure = failures.get(case.id, "not answered in this run")
        if failure is not None:
            return CaseScore(id=case.id, passed=False, stage="answer", problems=[f"no answer: {failure}"])
        with tempfile.TemporaryDirectory(prefix="bceval-judge-") as scratch:  # the answer stays as it was given
            _copy(run_dir / "work" / case.id, Path(scratch) / "work")
            verdict = self.judge(loaded, case, Path(scratch) / "work")
        return CaseScore(id=case.id, passed=verdict.passed, stage=verdict.stage, problems=[*verdict.problems])

    def run_unit(self, plan: Any, arm: Any, run: Any, epoch: int, settings: Any) -> None:
        """An experiment's unit: prepare, answer and score the arm's whole task set into a new run-NNNN folder."""
        directory = GuidanceRunDir.next_in(plan.run_folders(arm.name, epoch)).path
        loaded = self.load(arm.corpus, arm.manifest)
        try:
            self.prepare(loaded, directory / "prepared")
            self.answer_into(loaded, directory / "prepared", directory, run.adapter, run)
            self.score_run(loaded, directory, f"{arm.name}-e{epoch}", run.adapter)
        except BcevalError as exc:
            raise BcevalError(f"Experiment {plan.experiment.name}: arm '{arm.name}', epoch {epoch}: {exc}") from None

    # --- view ---------------------------------------------------------------------------------------------------
    def write_view(self, out: Path) -> int:
        """A static page per scored run of this evaluator under OUT/view/<evaluator>/, and an index of them."""
        folder = OutDir(out).view / self.name
        scores = []
        for path in sorted(OutDir(out).runs.glob("*/score.json")):
            document = read_json(path)
            if isinstance(document, dict) and document.get("evaluator") == self.name:
                scores.append(ScoreFile.model_validate(document))
        for score in scores:
            write_atomic(folder / f"{score.run}.html", run_page(score))
        links = [f'<a href="{html(s.run)}.html">{html(s.run)}</a>: {_word(s.passed)}' for s in scores]
        write_atomic(folder / "index.html", _page(f"{self.name} runs", bullets(links)))
        print(f"View: {folder / 'index.html'} ({len(scores)} run(s))")
        return 0


def _word(passed: bool) -> str:
    return "passed" if passed else "failed"


def scorecard(score: ScoreFile) -> str:
    passed = sum(case.passed for case in score.cases)
    head = f"# Scorecard: {markdown(score.evaluator)}, run {markdown(score.run)}\n\nAdapter: {markdown(score.adapter)}."
    lines = [
        f"{head} Passed {passed} of {len(score.cases)} case(s).\n",
        f"| {' | '.join(HEADERS)} |",
        "|---|---|---|---|",
    ]
    for case in score.cases:
        problems = "; ".join(markdown(p) for p in case.problems)
        lines.append(f"| {markdown(case.id)} | {_word(case.passed)} | {markdown(case.stage or '')} | {problems} |")
    return "\n".join(lines) + "\n"


def _page(title: str, body: str) -> str:
    head = f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html(title)}</title></head>'
    return f"{head}\n<body><h1>{html(title)}</h1>\n{body}\n</body></html>\n"


def run_page(score: ScoreFile) -> str:
    rows = [[html(c.id), _word(c.passed), html(c.stage or ""), "<br>".join(map(html, c.problems))] for c in score.cases]
    summary = f"<p>Adapter {html(score.adapter)}: {_word(score.passed)}.</p>"
    return _page(f"{score.evaluator}: run {score.run}", summary + table(HEADERS, rows))
