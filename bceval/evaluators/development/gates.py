"""The runner-owned gates of a case (spec §11.5): compile, tests and bceval's own review, run in a disposable copy
of the agent's workspace and logged under the case's checks/ folder; the agent's claims against them (§11.7, §11.10)."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bceval.agents.process import extract_json_object
from bceval.evaluators.development import CHECK_IDS, plain_path
from bceval.evaluators.development import processes as proc
from bceval.evaluators.development.checks import Check, expand
from bceval.evaluators.development.contract import Scope, judge
from bceval.evaluators.development.manifest import Case, Loaded
from bceval.evaluators.development.report import SEVERITIES, gating_count
from bceval.evaluators.development.values import MISSING, member, same, text, wrap
from bceval.jsonio import dumps, write_atomic
from bceval.layout import DevelopmentCaseDir

REVIEW_PROTOCOL = (
    "Review the changed Business Central AL file with the quality skill named in skill, using the knowledge "
    "checkout you are given. Answer with nothing but a findings-report JSON object (skill, outcome, summary, "
    "findings, suppressed)."
)


PASS, FAIL, ERROR = "pass", "fail", "error"


@dataclass(frozen=True)
class GateResult:
    """One runner-owned check as it ran: becomes a runner validation entry (§11.5.5)."""

    id: str
    command: str
    status: str  # passed | failed | not-run
    details: str  # never blank
    exit_code: int | None = None
    duration_s: float = 0.0
    log_path: str | None = None
    infrastructure: bool = False  # not-run because the tool could not start, or the toolchain is unavailable

    def entry(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "command": self.command,
            "status": self.status,
            "details": self.details,
            "exitCode": self.exit_code,
            "durationS": round(self.duration_s, 3),
            "logPath": self.log_path,
        }


@dataclass
class Comparison:
    diagnostics: list[str] = field(default_factory=list)
    overclaims: list[str] = field(default_factory=list)
    underclaims: list[str] = field(default_factory=list)


def compare(case: Case, report: Any, gates: list[GateResult], runner_review: dict[str, Any] | None) -> Comparison:
    """The agent's self-reported validation and review against the runner's (§11.7)."""
    result = Comparison()
    claimed = wrap(member(report, "validation"))  # a missing report claims nothing
    for gate in gates:
        entries = [e for e in claimed if same(member(e, "id"), gate.id)]
        if len(entries) != 1:
            result.diagnostics.append(f"{case.id}: validation '{gate.id}' was not reported by the agent.")
            continue
        status = text(member(entries[0], "status"))
        if status.lower() == gate.status:
            continue
        line = f"{case.id}: validation '{gate.id}' reported '{status}' but the runner observed '{gate.status}'."
        result.diagnostics.append(line)
        if status.lower() == "passed":
            result.overclaims.append(line)
        elif gate.status == "passed":
            result.underclaims.append(line)
    agent_review = member(report, "review")
    if runner_review is not None and agent_review is not MISSING:
        claimed_gating, observed = gating_count(agent_review), gating_count(runner_review)
        if claimed_gating != observed:
            line = (
                f"{case.id}: review reported {claimed_gating} gating finding(s) but the runner's review found "
                f"{observed}."
            )
            result.diagnostics.append(line)
            (result.overclaims if claimed_gating < observed else result.underclaims).append(line)
    return result


def gates_passed(gates: list[GateResult]) -> bool:
    """The primary outcome of §12: compile, tests and the review all passed (not run is never a pass)."""
    by_id = {g.id: g.status for g in gates}
    return all(by_id.get(check) == "passed" for check in ("compile", "tests", "review"))


def verdict(
    problems: list[str],
    gates: list[GateResult],
    agent_infra: str | None,
    fail_on_overclaim: bool,
    comparison: Comparison,
) -> str:
    """§11.10: error (infrastructure), else fail when any rule failed, else pass."""
    if agent_infra is not None or any(g.infrastructure for g in gates):
        return ERROR
    if problems or (fail_on_overclaim and comparison.overclaims):
        return FAIL
    return PASS


def run_gates(
    case: Case,
    checks: dict[str, Check],
    workspace: Path,
    work: Path,
    folder: Path,
    captured: proc.Capture,
    view: Path,
    loaded: Loaded,
    checks_file: Path,
) -> list[GateResult]:
    gate_copy = work / "gates"  # so build outputs never reach the workspace that is kept
    shutil.copytree(workspace, gate_copy, symlinks=True)
    results: list[GateResult] = []
    compile_failed = False
    for check_id in CHECK_IDS:
        check = checks.get(check_id)
        if check is None:  # not required: require_configured refused a required check without one
            continue
        argv = expand(check.argv, case, gate_copy, folder.resolve(), checks_file)
        log = DevelopmentCaseDir(folder).check_log(check_id)
        log_path = str(log.relative_to(folder))
        if check.unavailable:
            write_atomic(log, "toolchain: unavailable (declared in the checks file)\n")
            details = "not-run: the toolchain is declared unavailable"
            results.append(GateResult(check_id, shlex.join(argv), "not-run", details, None, 0.0, log_path, True))
        elif check_id == "tests" and compile_failed:
            write_atomic(log, "not run: compile failed\n")
            results.append(
                GateResult(check_id, shlex.join(argv), "not-run", "not-run: compile failed", None, 0.0, log_path)
            )
        elif check_id == "review":
            results.append(_review_gate(check, argv, gate_copy, captured, folder, view, loaded))
        else:
            results.append(_command_gate(check, argv, gate_copy, log, log_path))
            compile_failed = compile_failed or (check_id == "compile" and results[-1].status != "passed")
    return results


def _command_gate(check: Check, argv: list[str], gate_copy: Path, log: Path, log_path: str) -> GateResult:
    finished = proc.run_command(argv, gate_copy, check.timeout_s, proc.clean_environment(check.env))
    output = finished.stdout + finished.stderr
    write_atomic(log, output)
    where = f"log {log_path} sha256 {hashlib.sha256(output).hexdigest()[:12]}"
    status, infra = "failed", False
    if finished.missing:
        status, details, infra = "not-run", f"not-run: the command could not start (exit {finished.exit_code})", True
    elif finished.timed_out:
        details = f"timed out after {check.timeout_s:g} s; {where}"
    else:
        status = "passed" if finished.exit_code in check.pass_exit_codes else "failed"
        lines = [line.strip() for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
        last = lines[-1][:200] if lines else "no output"
        details = f"exit {finished.exit_code} in {finished.seconds:.1f} s; {where}; last line: {last}"
    return GateResult(
        check.id, shlex.join(argv), status, details, finished.exit_code, finished.seconds, log_path, infra
    )


def _review_gate(
    check: Check,
    argv: list[str],
    gate_copy: Path,
    captured: proc.Capture,
    folder: Path,
    view: Path,
    loaded: Loaded,
) -> GateResult:
    """bceval's own review: one fresh question per changed AL file, merged into one findings-report."""
    found = re.search(r"^quality-skill:[ \t]*(\S+)", loaded.skill_text or "", re.MULTILINE)
    skill = found.group(1) if found else "microsoft/skills/review/al-code-review.md"
    answers: list[dict[str, Any]] = []
    accepted: list[dict[str, Any]] = []
    log_lines: list[str] = []
    outcome = "completed"
    infra = False
    env = proc.clean_environment(check.env)
    al_files = [p for p in sorted(captured.paths) if p.lower().endswith(".al") and (gate_copy / p).is_file()]
    for path in al_files:
        question = {
            "protocol": REVIEW_PROTOCOL,
            "skill": skill,
            "file-path": path,
            "content": (gate_copy / path).read_text(encoding="utf-8", errors="replace"),
            "knowledge": str(view),
        }
        finished = proc.run_command(argv, gate_copy, check.timeout_s, env, json.dumps(question).encode("utf-8"))
        timed_out = ", timed out" if finished.timed_out else ""
        log_lines.append(f"{path}: exit {finished.exit_code}, {finished.seconds:.1f} s{timed_out}")
        answer = extract_json_object(finished.stdout.decode("utf-8", "replace")) if not finished.missing else None
        # a reviewer that did not start, timed out, or answered no findings-report gave no review: the gate did not
        # run (infrastructure), which is never a pass and never the change's failure
        if answer is None:
            infra = True
            log_lines.append(f"{path}: no findings-report JSON object in the reviewer's answer")
            continue
        # judged as upstream's host judges a leaf report on `path`: schema, semantics, bounded normalization; cited
        # articles are not checked here, since bceval cannot see what the reviewer read (no REFERENCE_NOT_RETRIEVED)
        # and one absent from the checkout fails the review below (reference integrity) instead of voiding it
        verdict = judge(answer, Scope(None, None, gate_copy, frozenset({path})), normalize=True)
        if verdict.problems:
            infra = True
            invalid = [str(problem) for problem in verdict.problems]
            log_lines.append(f"{path}: the answer is not a findings-report: {invalid[0]}")
            answers.append({"path": path, "answer": answer, "invalid": invalid})
            continue
        report = verdict.report
        telemetry = {"normalizedIds": verdict.normalized_ids, "removedRanges": verdict.removed_ranges}
        answers.append({"path": path, "answer": answer, **(telemetry if verdict.normalized else {})})
        accepted.append(report)
        broken = _broken_references(report, view)
        if broken:  # the reference-integrity gate: a cited article must exist in the pinned checkout
            log_lines.append(f"{path}: cites {len(broken)} article(s) absent from the knowledge checkout")
            outcome = "failed"
        if report["outcome"] != "completed":
            outcome = "partial" if outcome == "completed" else outcome
    merged = _merged(outcome, len(al_files), accepted)
    write_atomic(DevelopmentCaseDir(folder).checks / "review.json", dumps({"merged": merged, "answers": answers}))
    write_atomic(DevelopmentCaseDir(folder).checks / "review.log", "\n".join(log_lines) + "\n")
    if infra:
        details = "not-run: the reviewer gave no valid findings-report for every changed AL file; log checks/review.log"
        return GateResult("review", skill, "not-run", details, None, 0.0, "checks/review.json", True)
    gating = gating_count(merged)
    status = "passed" if outcome == "completed" and gating == 0 else "failed"
    details = (
        f"{len(al_files)} changed AL file(s) reviewed, outcome {outcome}, {gating} gating finding(s); "
        f"log checks/review.log"
    )
    return GateResult("review", skill, status, details, None, 0.0, "checks/review.json")


def _merged(outcome: str, worklist: int, valid: list[dict[str, Any]]) -> dict[str, Any]:
    findings = [finding for answer in valid for finding in answer["findings"]]
    counts = {s: sum(1 for finding in findings if finding["severity"] == s) for s in SEVERITIES}
    return {
        "skill": {"id": "al-code-review", "version": 1},
        "outcome": outcome,
        "summary": {"counts": counts, "coverage": {"worklist-size": worklist, "items-evaluated": len(valid)}},
        "findings": findings,
        "suppressed": [],
    }


def _broken_references(answer: dict[str, Any], view: Path) -> list[str]:
    """Cited paths of a valid findings-report's findings that are not files of the knowledge checkout."""
    cited = [reference["path"] for finding in answer["findings"] for reference in finding["references"]]
    return [path for path in cited if not plain_path(path) or not view.joinpath(*path.split("/")).is_file()]


def read_review(folder: Path) -> dict[str, Any] | None:
    path = DevelopmentCaseDir(folder).checks / "review.json"
    return json.loads(path.read_text(encoding="utf-8"))["merged"] if path.is_file() else None
