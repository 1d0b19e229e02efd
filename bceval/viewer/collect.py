"""What the viewer shows, read from an output folder: every review run (top-level and experiment arms'), every
guidance run and every experiment, as plain dataclasses. Reading only; files that cannot be read are shown as
such, never guessed. An experiment arm's run has no score.json: its results are judged here with the scorer."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.evaluators.base import CASE, GUIDANCE
from bceval.evaluators.registry import DEFAULT, evaluator, usable
from bceval.jsonio import read_json_or_none, read_regular_text
from bceval.layout import GUIDANCE_RUN, ExperimentDir, OutDir, RunDir
from bceval.ordering import sort_key
from bceval.scorecard.model import request_set_sha256
from bceval.viewer.html import safe_name


def read_text(path: Path) -> str | None:
    try:
        return read_regular_text(path)  # a FIFO among the files is refused, never waited on
    except (OSError, UnicodeDecodeError):
        return None


@dataclass
class CaseRow:
    """One case of one review run: the scorer's verdict and where its answer's files are."""

    id: str
    model_id: str
    domain: str
    kind: str
    passed: bool | None  # None: not answered (or an infrastructure failure)
    infra: str | None  # why no answer could be obtained (the agent's error)
    expected: list[str]
    findings: list[str]
    missing: list[str]
    unexpected: list[str]
    usage: dict[str, Any]
    transcript: str | None
    cached: bool = False
    shared_from: str | None = None

    @property
    def failed(self) -> bool:
        return self.passed is False or self.infra is not None

    @property
    def reason(self) -> str:
        """Why the case passed or failed, in the scorer's words."""
        if self.infra:
            return f"infrastructure failure: {self.infra}"
        if self.passed is None:
            return "not answered"
        parts = []
        if self.missing:
            parts.append("missing expected finding(s): " + ", ".join(self.missing))
        if self.unexpected:
            what = "clean control produced finding(s): " if self.kind == "clean" else "unexpected finding(s): "
            parts.append(what + ", ".join(self.unexpected))
        return "; ".join(parts) or (
            "found exactly the expected articles" if self.kind == "positive" else "stayed silent"
        )


@dataclass(kw_only=True)
class Run:
    key: str  # the run's folder inside the site, e.g. runs/baseline or experiments/demo/runs/oracle-e1
    name: str
    directory: Path
    record: dict[str, Any]
    experiment: str | None = None
    arm: str | None = None
    epoch: int | None = None


@dataclass(kw_only=True)
class ReviewRun(Run):
    out: Path  # the output folder the run belongs to (its review/ is the prepare folder the run answered)
    card: dict[str, Any] | None
    cases: list[CaseRow]

    @property
    def adapter(self) -> str:
        return str((self.card or {}).get("adapter", {}).get("name") or self.record.get("adapter") or "-")

    @property
    def model(self) -> str:
        return str((self.card or {}).get("adapter", {}).get("model") or self.record.get("model") or "-")

    @property
    def verdict(self) -> str:
        return str(self.card.get("verdict", "-")) if self.card else "not scored"

    @property
    def date(self) -> str:
        return str((self.card or {}).get("createdAt") or "")

    def rate(self, kind: str) -> tuple[int, int]:
        rows = [case for case in self.cases if case.kind == kind]
        return sum(case.passed is True for case in rows), len(rows)

    @property
    def asked(self) -> Path | None:
        """The folder of the requests and case files this run was asked: its request set as kept when it was scored
        (or the prepare folder, while it holds that set); an unscored run's (an experiment arm's) prepare folder;
        None when the set it was scored against is kept nowhere (a run scored before sets were kept)."""
        prepare = OutDir(self.out).prepare.path
        digest = ((self.card or {}).get("corpus") or {}).get("requestSetSha256")
        if not isinstance(digest, str):
            return prepare
        kept = OutDir(self.out).asked(digest)
        if kept.is_dir():
            return kept
        return prepare if prepare.is_dir() and request_set_sha256(prepare) == digest else None

    @property
    def cost(self) -> float | None:
        known = [case.usage.get("costUsd") for case in self.cases if isinstance(case.usage.get("costUsd"), int | float)]
        return sum(known) if known else None


@dataclass
class GuidanceCaseRow:
    id: str
    model_id: str
    passed: bool | None
    problems: list[str]
    expected_outcome: str | None
    reported_outcome: str | None
    required: list[str]
    optional: list[str]
    reported: list[str]  # the knowledge paths the report cited
    report: Any  # the result document as read, or None
    workspace: str | None
    changes: list[str]  # what changed in the workspace since the baseline, when the evidence can say
    transcript: str | None


@dataclass(kw_only=True)
class GuidanceRun(Run):
    cases: list[GuidanceCaseRow]

    @property
    def verdict(self) -> str:
        value = self.record.get("passed")
        return ("failed", "passed")[value] if isinstance(value, bool) else "unfinished"


@dataclass
class Experiment:
    name: str
    directory: Path
    report: dict[str, Any]
    markdown: str | None
    runs: dict[tuple[str, int], ReviewRun | GuidanceRun] = field(default_factory=dict)


@dataclass
class Site:
    out: Path
    runs: list[ReviewRun]
    guidance: list[GuidanceRun]
    experiments: list[Experiment]


def _row(case: dict[str, Any]) -> CaseRow:
    infra = case.get("infrastructureFailure")
    lists = {name: [str(x) for x in case.get(name) or []] for name in ("expected", "findings", "missing", "unexpected")}
    return CaseRow(
        id=str(case.get("id", "")),
        model_id=str(case.get("modelId", "")),
        domain=str(case.get("domain", "")),
        kind=str(case.get("kind", "")),
        passed=case.get("passed") if case.get("answered", True) and not infra else None,
        infra=str(infra) if infra else None,
        **lists,
        usage=case.get("usage") if isinstance(case.get("usage"), dict) else {},
        transcript=case.get("transcript") if isinstance(case.get("transcript"), str) else None,
        cached=bool(case.get("cached")),
        shared_from=case.get("sharedFrom") if isinstance(case.get("sharedFrom"), str) else None,
    )


def read_review_run(run_dir: Path, out: Path, key: str, **where: Any) -> ReviewRun:
    run = RunDir(run_dir)
    score = read_json_or_none(run.score)
    if isinstance(score, dict) and isinstance(score.get("cases"), list):
        cases = score["cases"]
    else:  # a run without a score.json (an experiment arm's): judged from its results as scoring does
        recorded = read_json_or_none(OutDir(out).build.cases)
        try:
            cases = evaluator(DEFAULT).judged(recorded, run.results) if isinstance(recorded, dict) else []
        except Exception:  # noqa: BLE001 - a run the scorer cannot read is shown without cases
            cases = []
    card = read_json_or_none(run.scorecard())
    return ReviewRun(
        key=key,
        name=run_dir.name,
        directory=run_dir,
        out=out,
        record=read_json_or_none(run.record) or {},
        card=card if isinstance(card, dict) else None,
        cases=[_row(case) for case in cases if isinstance(case, dict)],
        **where,
    )


def _file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def workspace_changes(snapshot: dict[str, Any]) -> list[str]:
    """Files of a workspace that differ from its baseline snapshot now (modified, added, removed), outside .git;
    empty when the workspace is gone or unchanged."""
    root = Path(str(snapshot.get("root", "")))
    if not root.is_dir():
        return []
    before = {
        entry["path"]: entry.get("sha256")
        for entry in snapshot.get("files", [])
        if isinstance(entry, dict) and entry.get("kind") == "file" and not str(entry.get("path", "")).startswith(".git")
    }
    now: dict[str, str | None] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (Path(folder) == root and d == ".git")]
        for name in files:
            path = Path(folder) / name
            now[path.relative_to(root).as_posix()] = _file_digest(path)
    changes = [f"modified: {p}" for p in sorted(before) if p in now and now[p] != before[p]]
    changes += [f"added: {p}" for p in sorted(now) if p not in before]
    changes += [f"removed: {p}" for p in sorted(before) if p not in now]
    return changes


def read_guidance_run(run_dir: Path, key: str, name: str, **where: Any) -> GuidanceRun:
    run = RunDir(run_dir)
    record = read_json_or_none(run.record) or {}
    problems = [str(p) for p in record.get("problems") or []]
    baseline = read_json_or_none(run_dir / "evidence" / "baseline.json") or {}
    workspaces = baseline.get("workspaces") if isinstance(baseline.get("workspaces"), dict) else {}
    try:
        loader = next(found for found in usable() if found.question == GUIDANCE)  # a plan or implementation one
        cases = loader.cases(loader.load(record["root"], record["manifest"]))
    except Exception:  # noqa: BLE001 - a moved checkout: the run is shown from its own files
        cases = []
    rows = []
    for case in cases:
        document = read_json_or_none(run.results / f"result-{case.hashed}.json")
        report = document.get("guidanceReport") if isinstance(document, dict) else None
        report = report if isinstance(report, dict) else {}
        cited = [e.get("path") for e in report.get("knowledge") or [] if isinstance(e, dict)]
        mine = [p for p in problems if p.startswith(f"{case.id}: ")]
        space = workspaces.get(case.id) if isinstance(workspaces.get(case.id), dict) else {}
        changed = any("workspace" in p and "changed" in p for p in mine)
        transcript = run.transcript(case.hashed)
        rows.append(
            GuidanceCaseRow(
                id=case.id,
                model_id=case.hashed,
                passed=not mine if record else None,
                problems=mine,
                expected_outcome=case.expected_outcome,
                reported_outcome=report.get("outcome"),
                required=list(case.required),
                optional=list(case.optional),
                reported=[str(p) for p in cited if p is not None],
                report=document,
                workspace=space.get("root"),
                changes=workspace_changes(space.get("snapshot") or {}) if changed else [],
                transcript=transcript.relative_to(run_dir).as_posix() if transcript.is_file() else None,
            )
        )
    return GuidanceRun(key=key, name=name, directory=run_dir, record=record, cases=rows, **where)


def _folders(base: Path) -> list[Path]:
    return sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def _guidance_run_dirs(base: Path) -> list[Path]:
    return [p for p in _folders(base) if GUIDANCE_RUN.fullmatch(p.name)]


def _answers_by_case(arm: dict[str, Any]) -> bool:
    """Whether an arm's runs are a prepare variant's answers case by case, rather than whole runs of their own."""
    try:
        return evaluator(str(arm.get("evaluator", DEFAULT))).traits.unit == CASE
    except BcevalError:  # an evaluator not installed here: its runs are shown from their own files
        return False


def read_experiment(directory: Path, key: str) -> Experiment | None:
    where = ExperimentDir(directory)
    report = read_json_or_none(where.report())
    if not isinstance(report, dict):
        return None
    experiment = Experiment(directory.name, directory, report, read_text(where.report("md")))
    for arm in report.get("arms") or []:
        name, variant, by_case = str(arm.get("name")), where.variant(str(arm.get("variant", ""))), _answers_by_case(arm)
        for epoch in range(1, int(report.get("epochs") or 1) + 1):
            run_key = f"{key}/runs/{safe_name(name)}-e{epoch}"
            facts = {"experiment": directory.name, "arm": name, "epoch": epoch}
            if by_case:
                run_dir = variant.run(f"{name}-e{epoch}").path
                if run_dir.is_dir():
                    experiment.runs[(name, epoch)] = read_review_run(run_dir, variant.path, run_key, **facts)
            else:
                folders = _guidance_run_dirs(where.guidance_runs(str(arm.get("variant")), name, epoch))
                done = [p for p in folders if RunDir(p).record.is_file()]
                if done:
                    title = f"{name} epoch {epoch} ({done[-1].name})"
                    experiment.runs[(name, epoch)] = read_guidance_run(done[-1], run_key, title, **facts)
    return experiment


def collect(out: Path) -> Site:
    layout = OutDir(out)
    runs = [
        read_review_run(path, out, f"runs/{safe_name(path.name)}")
        for path in sorted((p for p in layout.runs.glob("*/") if p.is_dir()), key=lambda p: sort_key(p.name))
    ]
    guidance = [
        read_guidance_run(run, f"guidance/{safe_name(m.name)}/{run.name}", f"{m.name}/{run.name}")
        for m in _folders(layout.guidance_runs)  # a manifest's folder
        for run in _guidance_run_dirs(m)
    ]
    found = (read_experiment(d, f"experiments/{safe_name(d.name)}") for d in _folders(layout.experiments))
    return Site(out, runs, guidance, [experiment for experiment in found if experiment is not None])
