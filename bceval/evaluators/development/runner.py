"""`bceval development run` (spec §11): every case in a fresh writable copy of its starting repository, the agent
working in the copy, the diff captured against the base commit, the runner-owned gates, the agent's claims
compared with them, and everything kept under the run directory.

Layout of a run (RUN = --out):
  RUN/run.json                       the run: settings digest, knowledge checkout comparison, per-case verdicts
  RUN/requests/                      the prepared requests (marker, knowledge-index.json, request-case-*.json)
  RUN/development/<model id>/        request.json, base.json, agent/ (envelope, stdout, stderr), result.json,
                                     diff.patch, changed-paths.json, checks/<id>.log, checks/review.json,
                                     evidence.json, verdict.json, workspace/ (kept when the case did not pass)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bceval.agents import development as proc
from bceval.agents.process import extract_json_object
from bceval.agents.registry import Agent, DevelopmentSetup, make_agent
from bceval.agents.sandbox import require_bwrap
from bceval.agents.settings import AgentSettings
from bceval.corpus.index import knowledge_index_text
from bceval.errors import EXIT_FAILED, BcevalError
from bceval.evaluators.development import CHECKS_RELATIVE, DevelopmentError, UnreadableKnowledge
from bceval.evaluators.development.arms import (
    CHECKPOINTS,
    arm_request,
    development_checks,
    development_sources,
    names_knowledge,
)
from bceval.evaluators.development.asking import Asked, DevelopmentQuestion, DevelopmentShape
from bceval.evaluators.development.checks import (
    Check,
    ChecksConfig,
    checks_from_table,
    expand,
    read_checks,
    require_configured,
    starting_repositories,
)
from bceval.evaluators.development.digest import tree_digest
from bceval.evaluators.development.evidence import ERROR, FAIL, PASS, GateResult, compare, gates_passed, verdict
from bceval.evaluators.development.findings import findings_report_errors
from bceval.evaluators.development.manifest import Case, Loaded
from bceval.evaluators.development.prepare import write_prepared
from bceval.evaluators.development.readevidence import evidence_record, read_measures, read_problems
from bceval.evaluators.development.report import OK, RunnerEvidence, WorkspaceChanges, gating_count, knowledge_measures
from bceval.evaluators.development.report import score_wrapper as score_report
from bceval.evaluators.development.steps import console, validated
from bceval.evaluators.development.values import MISSING, text
from bceval.jsonio import dumps, write_atomic
from bceval.layout import DevelopmentCaseDir, DevelopmentRunDir, case_request_name, result_name

CHECKOUT_CHANGED = "Knowledge checkout identity/content changed"
REVIEW_PROTOCOL = (
    "Review the changed Business Central AL file with the quality skill named in skill, using the knowledge "
    "checkout you are given. Answer with nothing but a findings-report JSON object (skill, outcome, summary, "
    "findings, suppressed)."
)


@dataclass(frozen=True)
class RunOptions:
    root: Path
    out: Path
    workspace_map: Path | None
    checks: Path
    adapter: str
    command: str | None
    model: str | None = None
    epoch: int = 1
    timeout: float = 300.0
    sandbox: str = "none"
    manifest: Path | None = None
    capabilities: Path | None = None
    fail_on_overclaim: bool = False
    guidance: str = "plan"
    sandbox_allow: tuple[Path, ...] = ()
    agent: Any = None  # the api adapter's AgentSettings (its endpoint); None for the command adapter
    inline_checks: dict[str, Any] | None = None  # [tool.bceval.development]'s checks table (checks = that file)
    workspaces: tuple[tuple[str, str], ...] = ()  # [tool.bceval.development.workspaces]: over the checks file's

    @staticmethod
    def from_args(
        args: argparse.Namespace, root: Path, settings: Any, agent: Any = None, project: dict[str, Any] | None = None
    ) -> RunOptions:
        """From the parsed flags and the loaded Settings (command, model, epoch, timeout, sandbox), with the api
        adapter's AgentSettings when it is the adapter, and what [tool.bceval.development] adds (`project`)."""
        if not args.development_out:
            raise DevelopmentError("run needs --out RUN, a new run directory")
        project = project or {}
        inline = project.get("inline_checks") if not args.development_checks else None
        checks = Path(args.development_checks) if args.development_checks else root / CHECKS_RELATIVE
        if inline is not None:
            inline = {
                "checks": inline,
                **{k: project[k] for k in ("toolchain", "cases") if k in project},
            }
            checks = project["pyproject"]
        return RunOptions(
            root=root,
            out=Path(args.development_out),
            workspace_map=Path(args.development_workspace_map) if args.development_workspace_map else None,
            checks=checks,
            adapter=args.development_adapter or "command",
            command=settings.command,
            model=settings.model,
            epoch=settings.epoch,
            timeout=settings.timeout,
            sandbox=settings.sandbox,
            manifest=Path(args.development_manifest) if args.development_manifest else None,
            capabilities=Path(args.development_capabilities) if args.development_capabilities else None,
            fail_on_overclaim=bool(args.development_fail_on_overclaim),
            guidance=args.development_guidance or "plan",
            sandbox_allow=tuple(Path(p) for p in settings.sandbox_allow),
            agent=agent,
            inline_checks=inline,
            workspaces=tuple(sorted((project.get("workspaces") or {}).items())),
        )


def _checked(model: str, document: dict[str, Any]) -> str:
    """The document's text, after proving it has the shape its published schema says (bceval's own output). The
    models are imported here: every doit command loads this module, and pydantic costs start-up time."""
    from bceval.evaluators.development import models

    getattr(models, model).model_validate(document)
    return dumps(document)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def knowledge_view(root: Path, parent: Path) -> Path:
    """The knowledge checkout as the agent sees it: a read-only copy without evaluation/ (the answer key)."""
    view = parent / "knowledge"
    shutil.copytree(root, view, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    shutil.rmtree(view / "evaluation", ignore_errors=True)
    for folder, _dirs, files in os.walk(view):
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(0o444)
    for folder, _dirs, _ in os.walk(view, topdown=False):
        Path(folder).chmod(0o555)
    return view


def _writable(folder: Path) -> None:
    for current, _dirs, files in os.walk(folder):
        os.chmod(current, 0o755)
        for name in files:
            path = os.path.join(current, name)
            if not os.path.islink(path):
                os.chmod(path, 0o644)


@dataclass
class CaseRun:
    case: Case
    folder: Path
    verdict: str = ERROR
    problems: list[str] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)
    overclaims: int = 0
    gates_passed: bool = False
    gates: list[GateResult] = field(default_factory=list)
    measures: dict[str, Any] = field(default_factory=dict)


def run_development(opts: RunOptions, stream: Any = None) -> int:
    loaded = validated_for_run(opts)
    if loaded is None:
        return EXIT_FAILED
    if opts.inline_checks is not None:
        config = checks_from_table(opts.inline_checks, opts.checks)
    else:
        config = read_checks(opts.checks)
    config.workspaces.update(dict(opts.workspaces))
    require_configured(loaded, config)  # before any agent runs (§11.6)
    sources = starting_repositories(loaded, config, opts.checks, opts.workspace_map)
    shape = DevelopmentShape(opts, loaded)
    try:  # the opt-in, the model and the key are checked before any copy is made
        agent = make_agent(opts.adapter, DevelopmentSetup(shape, _agent_settings(opts)))
    except BcevalError as exc:  # an experiment names the arm of its run's errors
        raise DevelopmentError(str(exc)) from None
    if opts.sandbox == "bwrap":
        shape.bwrap = require_bwrap()
    if opts.out.resolve().is_relative_to(loaded.root.resolve()):  # its own writes would look like the agent's
        raise DevelopmentError(f"--out {opts.out} must be outside the knowledge checkout {loaded.root}")
    if opts.out.exists() and (not opts.out.is_dir() or any(opts.out.iterdir())):
        raise DevelopmentError(f"--out {opts.out} must be a new or empty run directory")

    requests = DevelopmentRunDir(opts.out).requests
    write_prepared(loaded, requests, knowledge_index_text(loaded.root, UnreadableKnowledge))
    scratch = Path(tempfile.mkdtemp(prefix=f"bceval-development-{os.getpid()}-"))
    runs: list[CaseRun] = []
    try:
        view = knowledge_view(loaded.root, scratch)
        before = {"view": tree_digest(view), "root": tree_digest(loaded.root)}
        source_digests = {c: tree_digest(Path(s)) for c, s in sources.items() if Path(s).is_dir()}
        for case in loaded.cases:
            runs.append(_run_case(loaded, opts, config, case, sources[case.id], requests, view, scratch, agent))
        after = {"view": tree_digest(view), "root": tree_digest(loaded.root)}
        outside = sorted(c for c, d in source_digests.items() if tree_digest(Path(sources[c])) != d)
    finally:
        _writable(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
    run_problems = []
    if before != after:
        run_problems.append(CHECKOUT_CHANGED)
    run_problems += [f"starting repository of '{c}' changed outside its copy" for c in outside]
    return _finish(opts, config, runs, run_problems, before, after, stream)


def validated_for_run(opts: RunOptions) -> Loaded | None:
    from bceval.evaluators.development.steps import Options

    return validated(Options("run", opts.root, opts.manifest, opts.capabilities))


def _agent_settings(opts: RunOptions) -> AgentSettings | None:
    """The run's agent settings: the api adapter's own, or the command line's (None without one)."""
    if opts.adapter == "api":
        return opts.agent
    if opts.adapter != "command" or not opts.command:
        return None
    allow = opts.sandbox_allow if opts.sandbox == "bwrap" else ()
    return AgentSettings(
        opts.command, opts.model, sandbox=opts.sandbox, sandbox_allow=allow, epoch=opts.epoch, timeout=opts.timeout
    )


def _run_case(
    loaded: Loaded,
    opts: RunOptions,
    config: ChecksConfig,
    case: Case,
    source: str,
    requests: Path,
    view: Path,
    scratch: Path,
    agent: Agent,
) -> CaseRun:
    folder = DevelopmentRunDir(opts.out).case(case.model_id).path
    DevelopmentCaseDir(folder).agent.mkdir(parents=True)
    DevelopmentCaseDir(folder).checks.mkdir()
    run = CaseRun(case, folder)
    prepared = json.loads((requests / case_request_name(case.model_id)).read_text(encoding="utf-8"))
    request_text = dumps(arm_request(prepared, opts.guidance, loaded.root))  # what this arm's agent gets (§12)
    write_atomic(DevelopmentCaseDir(folder).request, request_text)
    work = scratch / case.model_id
    work.mkdir()
    workspace = work / "repo"
    base = proc.fresh_copy(source, workspace)
    write_atomic(DevelopmentCaseDir(folder).base, _checked("DevelopmentBase", base.record()))

    # the agent, in its copy
    knowledge = view if names_knowledge(opts.guidance) else None
    asked = agent.answer(DevelopmentQuestion(case, folder, request_text, workspace, knowledge))
    answer, agent_infra = asked.answer, asked.infrastructure

    # capture before any gate
    captured = proc.capture(workspace, base.commit, work / "capture")
    write_atomic(DevelopmentCaseDir(folder).patch, captured.patch)
    write_atomic(DevelopmentCaseDir(folder).changed_paths, dumps(sorted(captured.paths)))
    if captured.head != base.commit:
        run.diagnostics.append(
            f"{case.id}: the agent committed (HEAD moved from the base commit); its commits are "
            "included in the captured diff."
        )

    # the wrapper: always the runner's caseId and workspace
    report: Any = MISSING
    if answer is not None:
        report = answer.get("implementationReport", MISSING) if "implementationReport" in answer else answer
        for name, ours in (("caseId", case.model_id), ("workspaceRoot", str(workspace))):
            if name in answer and "implementationReport" in answer and text(answer[name]) != ours:
                run.diagnostics.append(
                    f"{case.id}: the agent's wrapper names a different {name}; the runner's is used."
                )
    wrapper: dict[str, Any] = {"caseId": case.model_id, "workspaceRoot": str(workspace)}
    if report is not MISSING:
        wrapper["implementationReport"] = report
    write_atomic(DevelopmentCaseDir(folder).result, _checked("DevelopmentResult", wrapper))
    results = DevelopmentRunDir(opts.out).results  # the wrappers together, as report mode and measures read them
    results.mkdir(exist_ok=True)
    write_atomic(results / result_name(case.model_id), dumps(wrapper))

    # the runner-owned gates, in a disposable copy
    checks = config.checks_for(case.id)
    gates = _gates(case, checks, workspace, work, folder, captured, view, loaded, opts.checks)
    runner_review = _read_review(folder) if "review" in checks else None
    evidence = RunnerEvidence([g.entry() for g in gates], runner_review, WorkspaceChanges(OK, captured.paths))
    if answer is None and agent_infra is None:
        run.problems.append(f"{case.id}: result is not valid JSON: the agent's answer holds no JSON object")
    elif answer is not None:
        run.problems += score_report(loaded, case, wrapper, lambda _: WorkspaceChanges(OK), evidence).problems
    read_record = None
    if asked.reads is not None:  # the adapter exposes tool events: §11.8's read-evidence check applies
        read_record = {"runId": opts.out.name, "reads": asked.reads}
        if report is not MISSING:
            run.problems += read_problems(case, report, read_record, loaded.root)
    if asked.refused_outside:
        run.diagnostics.append(
            f"{case.id}: {len(asked.refused_outside)} write(s) outside the copy were refused and not written."
        )
    comparison = compare(case, report, gates, runner_review)
    run.diagnostics += comparison.diagnostics
    run.overclaims = len(comparison.overclaims)
    run.gates_passed = gates_passed(gates)
    run.gates = gates
    run.verdict = verdict(run.problems, gates, agent_infra, opts.fail_on_overclaim, comparison)
    if report is not MISSING:
        recall, precision = knowledge_measures(case, report)
        run.measures = {"knowledgeRecall": recall, "knowledgePrecision": precision, "knowledgeEvidence": "claimed"}
        if read_record is not None:  # the api agent: what bceval saw it read replaces the claim
            read_recall, read_precision = read_measures(case, report, read_record, loaded.root)
            run.measures = {
                "knowledgeRecall": read_recall,
                "knowledgePrecision": read_precision,
                "knowledgeEvidence": "read",
                "claimedKnowledgeRecall": recall,
                "claimedKnowledgePrecision": precision,
            }
    write_atomic(
        DevelopmentCaseDir(folder).evidence,
        _checked(
            "DevelopmentEvidence",
            {
                "runner": [g.entry() for g in gates],
                "agent": report.get("validation") if isinstance(report, dict) else None,
                "disagreements": comparison.diagnostics,
                "overclaims": comparison.overclaims,
                "underclaims": comparison.underclaims,
                "capture": {
                    "patchSha256": _sha256(captured.patch),
                    "head": captured.head,
                    "refs": captured.refs.splitlines(),
                },
                "readEvidence": _read_evidence(opts, folder, asked),
                "refusedOutside": asked.refused_outside,
            },
        ),
    )
    write_atomic(
        DevelopmentCaseDir(folder).verdict,
        _checked(
            "DevelopmentVerdict",
            {
                "case": case.id,
                "caseId": case.model_id,
                "verdict": run.verdict,
                "infrastructure": agent_infra or next((g.details for g in gates if g.infrastructure), None),
                "gatesPassed": run.gates_passed,
                "overclaims": run.overclaims,
                "problems": run.problems,
                "diagnostics": run.diagnostics,
                "measures": run.measures,
            },
        ),
    )
    if run.verdict != PASS:  # failing workspaces are kept, outside any view
        shutil.copytree(workspace, DevelopmentCaseDir(folder).workspace, symlinks=True)
    return run


def _read_evidence(opts: RunOptions, folder: Path, asked: Asked) -> dict[str, Any] | None:
    """The §13 record of the case (api adapter), or None where the adapter exposes no tool events."""
    if asked.reads is None:
        return None
    record = evidence_record(opts.out.name, DevelopmentCaseDir(folder).request.read_bytes(), [])
    return {**record, "reads": asked.reads}


def _gate_env(check: Check) -> dict[str, str]:
    return proc.clean_environment(dict(check.env))


def _last_line(log: bytes) -> str:
    lines = [line.strip() for line in log.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"


def _gates(
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
    gate_copy = proc.disposable_copy(workspace, work / "gates")
    # the spec's placeholders, plus bceval's {python} (this interpreter) and {checks_dir} (the checks file's folder)
    values = {
        "workspace": str(gate_copy),
        "case": case.id,
        "case_id": case.model_id,
        "artifacts": str(folder.resolve()),
        "python": sys.executable,
        "checks_dir": str(checks_file.resolve().parent),
    }
    results: list[GateResult] = []
    compile_failed = False
    for check_id in ("compile", "tests", "review"):
        check = checks.get(check_id)
        if check is None:
            if check_id in [c.lower() for c in case.checks]:  # require_configured makes this unreachable
                results.append(GateResult(check_id, "", "not-run", "no check configured", infrastructure=True))
            continue
        argv = expand(check.argv, values)
        command = shlex.join(argv)
        log = DevelopmentCaseDir(folder).check_log(check_id)
        if check.unavailable:
            write_atomic(log, "toolchain: unavailable (declared in the checks file)\n")
            results.append(
                GateResult(
                    check_id,
                    command,
                    "not-run",
                    "not-run: the toolchain is declared unavailable",
                    log_path=str(log.relative_to(folder)),
                    infrastructure=True,
                )
            )
            continue
        if check_id == "tests" and compile_failed:
            write_atomic(log, "not run: compile failed\n")
            results.append(
                GateResult(
                    check_id, command, "not-run", "not-run: compile failed", log_path=str(log.relative_to(folder))
                )
            )
            continue
        if check_id == "review":
            results.append(_review_gate(case, check, argv, gate_copy, captured, folder, view, loaded))
            continue
        finished = proc.run_command(argv, gate_copy, check.timeout_s, _gate_env(check))
        output = finished.stdout + finished.stderr
        write_atomic(log, output)
        where = f"log {log.relative_to(folder)} sha256 {_sha256(output)[:12]}"
        if finished.missing:
            status, details, infra = (
                "not-run",
                f"not-run: the command could not start (exit {finished.exit_code})",
                True,
            )
        elif finished.timed_out:
            status, details, infra = "failed", f"timed out after {check.timeout_s:g} s; {where}", False
        else:
            passed = finished.exit_code in check.pass_codes
            status, infra = ("passed" if passed else "failed"), False
            details = f"exit {finished.exit_code} in {finished.seconds:.1f} s; {where}; last line: {_last_line(output)}"
        compile_failed = compile_failed or (check_id == "compile" and status != "passed")
        results.append(
            GateResult(
                check_id,
                command,
                status,
                details,
                finished.exit_code,
                finished.seconds,
                str(log.relative_to(folder)),
                infra,
            )
        )
    return results


def _review_gate(
    case: Case,
    check: Check,
    argv: list[str],
    gate_copy: Path,
    captured: proc.Capture,
    folder: Path,
    view: Path,
    loaded: Loaded,
) -> GateResult:
    """bceval's own review: one fresh question per changed AL file, asked of the configured review agent with
    the same knowledge checkout in every arm; the answers merge into one findings-report."""
    skill = _quality_skill(loaded)
    answers: list[dict[str, Any]] = []
    log_lines: list[str] = []
    outcome = "completed"
    infra = False
    al_files = [p for p in sorted(captured.paths) if p.lower().endswith(".al") and (gate_copy / p).is_file()]
    for path in al_files:
        question = {
            "protocol": REVIEW_PROTOCOL,
            "skill": skill,
            "file-path": path,
            "content": (gate_copy / path).read_text(encoding="utf-8", errors="replace"),
            "knowledge": str(view),
        }
        finished = proc.run_command(
            argv, gate_copy, check.timeout_s, _gate_env(check), json.dumps(question).encode("utf-8")
        )
        log_lines.append(
            f"{path}: exit {finished.exit_code}, {finished.seconds:.1f} s"
            + (", timed out" if finished.timed_out else "")
        )
        answer = extract_json_object(finished.stdout.decode("utf-8", "replace")) if not finished.missing else None
        # a reviewer that did not start, timed out, or answered no findings-report gave no review: the gate did not
        # run (infrastructure), which is never a pass and never the change's failure
        if answer is None:
            infra = True
            log_lines.append(f"{path}: no findings-report JSON object in the reviewer's answer")
            continue
        invalid = findings_report_errors(answer)
        if invalid:
            infra = True
            log_lines.append(f"{path}: the answer is not a findings-report: {invalid[0]}")
            answers.append({"path": path, "answer": answer, "invalid": invalid})
            continue
        answers.append({"path": path, "answer": answer})
        broken = _broken_references(answer, view)
        if broken:  # the reference-integrity gate: a cited article must exist in the pinned checkout
            log_lines.append(f"{path}: cites {len(broken)} article(s) absent from the knowledge checkout")
            outcome = "failed"
        if not isinstance(answer.get("outcome"), str) or answer["outcome"].lower() != "completed":
            outcome = "partial" if outcome == "completed" else outcome
    valid = [a for a in answers if "invalid" not in a]
    findings = [f for a in valid for f in (a["answer"].get("findings") or []) if isinstance(f, dict)]
    merged = {
        "skill": {"id": "al-code-review", "version": 1},
        "outcome": outcome,
        "summary": {
            "counts": {
                s: sum(1 for f in findings if str(f.get("severity", "")).lower() == s)
                for s in ("blocker", "major", "minor", "info")
            },
            "coverage": {"worklist-size": len(al_files), "items-evaluated": len(valid)},
        },
        "findings": findings,
        "suppressed": [],
    }
    write_atomic(DevelopmentCaseDir(folder).checks / "review.json", dumps({"merged": merged, "answers": answers}))
    write_atomic(DevelopmentCaseDir(folder).checks / "review.log", "\n".join(log_lines) + "\n")
    gating = gating_count(merged)
    if infra:
        details = "not-run: the reviewer gave no valid findings-report for every changed AL file; log checks/review.log"
        return GateResult("review", skill, "not-run", details, None, 0.0, "checks/review.json", True)
    status = "passed" if outcome == "completed" and gating == 0 else "failed"
    details = (
        f"{len(al_files)} changed AL file(s) reviewed, outcome {outcome}, {gating} gating finding(s); "
        f"log checks/review.log"
    )
    return GateResult("review", skill, status, details, None, 0.0, "checks/review.json")


def _broken_references(answer: dict[str, Any], view: Path) -> list[str]:
    """Cited paths of a review answer's findings that are not files of the knowledge checkout."""
    broken = []
    for item in answer.get("findings") or []:
        for reference in (item.get("references") or []) if isinstance(item, dict) else []:
            path = reference.get("path") if isinstance(reference, dict) else reference
            segments = str(path).split("/")
            if not isinstance(path, str) or any(s in ("", ".", "..") for s in segments) or "\\" in path:
                broken.append(str(path))
            elif not view.joinpath(*segments).is_file():
                broken.append(path)
    return broken


def _quality_skill(loaded: Loaded) -> str:
    import re

    found = re.search(r"^quality-skill:[ \t]*(\S+)", loaded.skill_text or "", re.MULTILINE)
    return found.group(1) if found else "microsoft/skills/review/al-code-review.md"


def _read_review(folder: Path) -> dict[str, Any] | None:
    path = DevelopmentCaseDir(folder).checks / "review.json"
    return json.loads(path.read_text(encoding="utf-8"))["merged"] if path.is_file() else None


def _finish(
    opts: RunOptions,
    config: ChecksConfig,
    runs: list[CaseRun],
    run_problems: list[str],
    before: dict[str, str],
    after: dict[str, str],
    stream: Any = None,
) -> int:
    """Write run.json and print the verdict lines (to `stream`, default stdout: an experiment's go to stderr)."""
    counts = {v: sum(1 for r in runs if r.verdict == v) for v in (PASS, FAIL, ERROR)}
    passed = counts[FAIL] == 0 and counts[ERROR] == 0 and not run_problems
    # run.json's problems are what fails a case's primary outcome (gates passed, §12) or the whole run, so an
    # experiment reads every case's outcome from them as it does for other whole-run evaluators
    gate_problems = [
        f"{r.case.id}: gates did not pass ({', '.join(f'{g.id} {g.status}' for g in r.gates)})."
        for r in runs
        if not r.gates_passed
    ]
    write_atomic(
        DevelopmentRunDir(opts.out).record,
        _checked(
            "DevelopmentRun",
            {
                "evaluator": "development",
                "guidance": opts.guidance,
                "checkpoints": list(CHECKPOINTS),
                "adapter": opts.adapter,
                "model": opts.model,
                "epoch": opts.epoch,
                "checksDigest": config.digest(),
                "knowledgeCheckout": {"before": before, "after": after, "unchanged": before == after},
                "verdict": "PASS" if passed else "FAIL",
                "problems": run_problems + gate_problems,
                "counts": counts,
                "overclaims": sum(r.overclaims for r in runs),
                "cases": [
                    {
                        "case": r.case.id,
                        "caseId": r.case.model_id,
                        "verdict": r.verdict,
                        "gatesPassed": r.gates_passed,
                        "overclaims": r.overclaims,
                    }
                    for r in runs
                ],
            },
        ),
    )
    out = stream or sys.stdout
    for r in runs:
        print(f"{r.verdict.upper()} {r.case.id}" + (f" ({len(r.problems)} problem(s))" if r.problems else ""), file=out)
        for line in r.problems:
            print(f"  - {console(line)}", file=out)
        for line in r.diagnostics:
            print(f"  * {console(line)}", file=out)
    for line in run_problems:
        print(f"  - {console(line)}", file=out)
    verdict_word = "PASSED" if passed else "FAILED"
    print(
        f"Development run {verdict_word}: {counts[PASS]} passed, {counts[FAIL]} failed, {counts[ERROR]} "
        f"error(s) (infrastructure); {sum(r.overclaims for r in runs)} overclaim(s). Run: {opts.out}",
        file=out,
    )
    out.flush()
    return 0 if passed else EXIT_FAILED


# --- the doit tasks' actions ---------------------------------------------------------------------------------------

DEMO_AGENT = "{python} {checks_dir}/development-demo/agent.py good"  # the demo's scripted control (known-good patch)


def run_task(
    root: str,
    runs: str,
    checks: str | None,
    command: str | None,
    adapter: str,
    paths: tuple[str | None, str | None, str | None] = (None, None, None),
) -> None:
    """`doit development`: one run into a new run-NNNN; a failing run fails the task (its lines are printed)."""
    from bceval.errors import EvaluationFailed
    from bceval.layout import GuidanceRunDir

    root_path = Path(root)
    manifest, capabilities, workspace_map = (Path(p) if p else None for p in paths)
    opts = RunOptions(
        root=root_path,
        out=GuidanceRunDir.next_in(Path(runs)).path,
        workspace_map=workspace_map,
        manifest=manifest,
        capabilities=capabilities,
        checks=Path(checks) if checks else root_path / CHECKS_RELATIVE,
        adapter=adapter,
        command=command or DEMO_AGENT,
        agent=_api_settings(None) if adapter == "api" else None,
    )
    if run_development(opts) != 0:
        raise EvaluationFailed(f"Development run FAILED: see {opts.out}", verdict=False)


def _api_settings(settings: Any) -> Any:
    """The api adapter's AgentSettings from an arm's Settings (None: BCEVAL_* and [tool.bceval], as doit reads)."""
    from dataclasses import replace

    from bceval.config import agent_settings, load_settings

    return agent_settings(replace(settings if settings is not None else load_settings(), adapter="api"))


def prepare_task(root: str, manifest: str | None, out: str) -> None:
    """`doit development_prepare`: validate, then prepare into out (a marked directory is rewritten)."""
    from bceval.errors import EvaluationFailed
    from bceval.evaluators.development.steps import Options, run_mode

    if run_mode(Options("prepare", Path(root), Path(manifest) if manifest else None, None, Path(out))) != 0:
        raise EvaluationFailed("Development fixture validation FAILED", verdict=False)


# --- experiments: one arm's epoch is one development run ------------------------------------------------------------


def development_unit(plan: Any, arm: Any, run: Any, epoch: int, settings: Any) -> None:
    """One whole development run of an arm's epoch into a new run-NNNN of its run folder; a failing run is an
    outcome the report counts, only bad input fails the task."""
    from bceval.layout import GuidanceRunDir

    directory = GuidanceRunDir.next_in(plan.run_folders(arm.name, epoch)).path
    opts = RunOptions(
        root=arm.corpus,
        out=directory,
        workspace_map=arm.workspace_map,
        checks=development_checks(arm),
        adapter=run.adapter,
        command=run.command,
        model=run.model,
        epoch=epoch,
        timeout=run.timeout,
        sandbox=run.sandbox,
        manifest=arm.manifest,
        guidance=arm.fields["guidance"] or "plan",
        sandbox_allow=tuple(run.sandbox_allow),
        agent=_api_settings(run) if run.adapter == "api" else None,
    )
    try:
        code = run_development(opts, stream=sys.stderr)
    except DevelopmentError as exc:
        raise DevelopmentError(f"Experiment {plan.experiment.name}: arm '{arm.name}', epoch {epoch}: {exc}") from None
    verdict = "passed" if code == 0 else "did not pass"
    print(f"[{arm.name} e{epoch}] development run {directory.name}: {verdict}", file=sys.stderr)
    write_summary(plan)


def write_summary(plan: Any) -> None:
    """development-summary.json and .md in the experiment's folder, from every arm's finished runs so far."""
    from bceval.evaluators.development.summary import arm_summary, render_markdown
    from bceval.steps.experiment_report import completed_run

    arms = []
    for arm in plan.arms:
        runs = [completed_run(plan.run_folders(arm.name, e)) for e in range(1, plan.experiment.epochs + 1)]
        arms.append(arm_summary(arm.name, arm.fields["guidance"] or "plan", [r for r in runs if r is not None]))
    plan.folder.path.mkdir(parents=True, exist_ok=True)
    summary = {"experiment": plan.experiment.name, "arms": arms}
    write_atomic(plan.folder.development_summary("json"), dumps(summary))
    write_atomic(plan.folder.development_summary("md"), render_markdown(plan.experiment.name, arms))


def development_inputs(arm: Any) -> dict[str, Any]:
    """What a development arm's epoch reads besides its fields: the manifest, the gate configuration and the
    starting repositories' content; a change to any runs the epoch again (unreadable input: the run reports)."""
    from bceval.evaluators.development.arms import arm_identity

    try:
        _, config, sources = development_sources(arm)
        identity = arm_identity(sources, config.digest(), arm.fields["model"], str(arm.corpus))
    except (DevelopmentError, OSError):
        return {"development": "unreadable"}
    manifest = arm.manifest.read_bytes() if arm.manifest and arm.manifest.is_file() else b""
    return {"manifest": _sha256(manifest), **identity}
