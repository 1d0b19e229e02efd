"""`bceval development run` (spec §11): each case in a fresh copy, the agent, the captured diff, runner-owned gates."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bceval.agents.registry import Agent, make_agent
from bceval.agents.sandbox import require_bwrap
from bceval.agents.settings import AgentSettings
from bceval.config import Settings, agent_settings, load_settings
from bceval.corpus.index import knowledge_index_text
from bceval.errors import EXIT_FAILED, BcevalError
from bceval.evaluators.development import CHECKS_RELATIVE, DevelopmentError, UnreadableKnowledge
from bceval.evaluators.development import processes as proc
from bceval.evaluators.development.arms import CHECKPOINTS, arm_request, development_checks, write_summary
from bceval.evaluators.development.asking import Asked, DevelopmentQuestion, DevelopmentSetup, DevelopmentShape
from bceval.evaluators.development.checks import ChecksConfig, read_checks, require_configured, starting_repositories
from bceval.evaluators.development.gates import (
    ERROR,
    FAIL,
    PASS,
    Comparison,
    GateResult,
    compare,
    gates_passed,
    read_review,
    run_gates,
    verdict,
)
from bceval.evaluators.development.knowledge_response import read_measures, read_problems
from bceval.evaluators.development.manifest import Case, Loaded, load
from bceval.evaluators.development.models import CaseLine
from bceval.evaluators.development.prepare import write_prepared
from bceval.evaluators.development.report import OK, RunnerEvidence, WorkspaceChanges, knowledge_measures
from bceval.evaluators.development.report import score_wrapper as score_report
from bceval.evaluators.development.values import MISSING, text
from bceval.jsonio import dumps, write_atomic
from bceval.layout import DevelopmentCaseDir, DevelopmentRunDir, GuidanceRunDir, case_request_name, result_name
from bceval.runs.record import run_record, write_record

CHECKOUT_CHANGED = "Knowledge checkout identity/content changed"
VALIDATION_FAILED = "Development fixture validation FAILED ({n} problem(s)):"
DEMO_AGENT = "{python} {checks_dir}/development-demo/agent.py good"  # the demo's scripted control (known-good patch)


def console(line: str) -> str:
    """A line for the terminal: control characters (ANSI escapes, carriage returns) are shown escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in line)


def problem_block(header: str, problems: list[str]) -> str:
    return "\n".join([header.format(n=len(problems)), *(f"  - {console(p)}" for p in problems)])


def validated(root: Path, manifest: Path | None = None, capabilities: Path | None = None) -> Loaded | None:
    """The loaded manifest, or None after printing the FAILED block."""
    loaded = load(root, manifest, capabilities)
    for warning in loaded.warnings:
        print(f"bceval: warning: {console(warning)}", file=sys.stderr)
    if loaded.problems:
        print(problem_block(VALIDATION_FAILED, loaded.problems))
        return None
    return loaded


@dataclass(frozen=True)
class RunOptions:
    root: Path
    out: Path
    workspace_map: Path | None
    checks: Path
    adapter: str
    agent: AgentSettings | None  # None: the adapter is unknown or the command adapter has no command line
    manifest: Path | None = None
    capabilities: Path | None = None
    fail_on_overclaim: bool = False
    guidance: str = "plan"
    inline_checks: dict[str, Any] | None = None  # [tool.bceval.development]'s checks, toolchain and cases
    workspaces: tuple[tuple[str, str], ...] = ()  # [tool.bceval.development.workspaces]: over the checks file's

    @staticmethod
    def from_args(args: argparse.Namespace, root: Path, settings: Settings, project: dict[str, Any]) -> RunOptions:
        if not args.development_out:
            raise DevelopmentError("run needs --out RUN, a new run directory")
        adapter = args.development_adapter or "command"
        inline = None if args.development_checks else project.get("inline_checks")  # a --checks file wins
        checks = project["pyproject"] if inline is not None else Path(args.development_checks or root / CHECKS_RELATIVE)
        return RunOptions(
            root=root,
            out=Path(args.development_out),
            workspace_map=Path(args.development_workspace_map) if args.development_workspace_map else None,
            checks=checks,
            adapter=adapter,
            agent=agent_for(adapter, settings),
            manifest=Path(args.development_manifest) if args.development_manifest else None,
            capabilities=Path(args.development_capabilities) if args.development_capabilities else None,
            fail_on_overclaim=bool(args.development_fail_on_overclaim),
            guidance=args.development_guidance or "plan",
            inline_checks=inline,
            workspaces=tuple(sorted((project.get("workspaces") or {}).items())),
        )


def api_settings(settings: Settings | None) -> AgentSettings:
    """The api adapter's AgentSettings from Settings (None: BCEVAL_* and [tool.bceval], as doit reads them)."""
    return agent_settings(replace(settings if settings is not None else load_settings(), adapter="api"))


def agent_for(adapter: str, settings: Settings) -> AgentSettings | None:
    """The run's agent settings: the api adapter's endpoint settings, or the command line's (None without one)."""
    if adapter == "api":  # bceval's own agent: its endpoint settings, no command line
        return api_settings(settings)
    if adapter != "command" or not settings.command:
        return None
    bwrap = settings.sandbox == "bwrap"
    return AgentSettings(
        settings.command,
        settings.model,
        sandbox=settings.sandbox,
        sandbox_allow=tuple(Path(p) for p in settings.sandbox_allow) if bwrap else (),
        sandbox_allow_rw=tuple(Path(p) for p in settings.sandbox_allow_rw) if bwrap else (),
        epoch=settings.epoch,
        timeout=settings.timeout,
    )


def knowledge_view(root: Path, parent: Path) -> Path:
    """The knowledge checkout as the agent sees it: a read-only copy without evaluation/ (the answer key)."""
    view = parent / "knowledge"
    shutil.copytree(root, view, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    shutil.rmtree(view / "evaluation", ignore_errors=True)
    _chmod_tree(view, 0o444, 0o555)
    return view


def _chmod_tree(folder: Path, files_mode: int, folders_mode: int) -> None:
    for current, _dirs, files in os.walk(folder, topdown=False):
        for name in files:
            path = Path(current) / name
            if not path.is_symlink():
                path.chmod(files_mode)
        Path(current).chmod(folders_mode)


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
    document: dict[str, Any] = field(default_factory=dict)  # its verdict.json


@dataclass(frozen=True)
class _Shared:
    opts: RunOptions
    loaded: Loaded
    config: ChecksConfig
    requests: Path
    view: Path
    scratch: Path
    agent: Agent


def run_development(opts: RunOptions, stream: Any = None) -> int:
    loaded = validated(opts.root, opts.manifest, opts.capabilities)
    if loaded is None:
        return EXIT_FAILED
    config = read_checks(opts.checks, opts.inline_checks)
    config.workspaces.update(dict(opts.workspaces))
    require_configured(loaded, config)  # before any agent runs (§11.6)
    sources = starting_repositories(loaded, config, opts.checks, opts.workspace_map)
    shape = DevelopmentShape(opts, loaded)
    try:  # the opt-in, the model and the key are checked before any copy is made
        agent = make_agent(opts.adapter, DevelopmentSetup(shape, opts.agent))
    except BcevalError as exc:  # an experiment names the arm of its run's errors
        raise DevelopmentError(str(exc)) from None
    if agent.agent.sandbox == "bwrap":
        shape.bwrap = require_bwrap()
    if opts.out.resolve().is_relative_to(loaded.root.resolve()):  # its own writes would look like the agent's
        raise DevelopmentError(f"--out {opts.out} must be outside the knowledge checkout {loaded.root}")
    if opts.out.exists() and (not opts.out.is_dir() or any(opts.out.iterdir())):
        raise DevelopmentError(f"--out {opts.out} must be a new or empty run directory")

    requests = DevelopmentRunDir(opts.out).requests
    write_prepared(loaded, requests, knowledge_index_text(loaded.root, UnreadableKnowledge))
    scratch = Path(tempfile.mkdtemp(prefix=f"bceval-development-{os.getpid()}-"))
    try:
        view = knowledge_view(loaded.root, scratch)
        shared = _Shared(opts, loaded, config, requests, view, scratch, agent)
        before = {"view": proc.tree_digest(view), "root": proc.tree_digest(loaded.root)}
        source_digests = {c: proc.tree_digest(Path(s)) for c, s in sources.items() if Path(s).is_dir()}
        runs = [_run_case(shared, case, sources[case.id]) for case in loaded.cases]
        after = {"view": proc.tree_digest(view), "root": proc.tree_digest(loaded.root)}
        outside = sorted(c for c, d in source_digests.items() if proc.tree_digest(Path(sources[c])) != d)
    finally:
        _chmod_tree(scratch, 0o644, 0o755)
        shutil.rmtree(scratch, ignore_errors=True)
    run_problems = [CHECKOUT_CHANGED] if before != after else []
    run_problems += [f"starting repository of '{c}' changed outside its copy" for c in outside]
    checkout = {"before": before, "after": after, "unchanged": before == after}
    return _finish(opts, agent.agent, config, runs, run_problems, checkout, stream)


def _run_case(shared: _Shared, case: Case, source: str) -> CaseRun:
    opts = shared.opts
    run = CaseRun(case, DevelopmentRunDir(opts.out).case(case.model_id).path)
    files = DevelopmentCaseDir(run.folder)
    files.agent.mkdir(parents=True)
    files.checks.mkdir()
    prepared = json.loads((shared.requests / case_request_name(case.model_id)).read_text(encoding="utf-8"))
    request_text = dumps(arm_request(prepared, opts.guidance, shared.loaded.root))  # what this arm's agent gets (§12)
    write_atomic(files.request, request_text)
    work = shared.scratch / case.model_id
    work.mkdir()
    workspace = work / "repo"
    base = proc.fresh_copy(source, workspace)
    write_atomic(files.base, dumps(base.model_dump()))
    knowledge = shared.view if opts.guidance != "none" else None  # the baseline names no checkout
    asked = shared.agent.answer(DevelopmentQuestion(case, run.folder, request_text, workspace, knowledge))
    captured = proc.capture(workspace, base.baseCommit, work / "capture")  # before any gate
    write_atomic(files.patch, captured.patch)
    write_atomic(files.changed_paths, dumps(sorted(captured.paths)))
    if captured.head != base.baseCommit:
        run.diagnostics.append(
            f"{case.id}: the agent committed (HEAD moved from the base commit); its commits are "
            "included in the captured diff."
        )
    report, wrapper = _wrapper(run, asked.answer, workspace, opts.out)
    checks = shared.config.checks_for(case.id)
    run.gates = run_gates(case, checks, workspace, work, run.folder, captured, shared.view, shared.loaded, opts.checks)
    comparison = _judge(shared, run, asked, report, wrapper, captured)
    _write_case(run, asked, report, captured, comparison)
    if run.verdict != PASS:  # failing workspaces are kept, outside any view
        shutil.copytree(workspace, files.workspace, symlinks=True)
    return run


def _wrapper(run: CaseRun, answer: dict[str, Any] | None, workspace: Path, out: Path) -> tuple[Any, dict[str, Any]]:
    """The agent's report and its wrapper, always with the runner's caseId and workspace (written)."""
    case = run.case
    report: Any = MISSING
    if answer is not None:
        report = answer["implementationReport"] if "implementationReport" in answer else answer
        for name, ours in (("caseId", case.model_id), ("workspaceRoot", str(workspace))):
            if name in answer and "implementationReport" in answer and text(answer[name]) != ours:
                run.diagnostics.append(
                    f"{case.id}: the agent's wrapper names a different {name}; the runner's is used."
                )
    wrapper: dict[str, Any] = {"caseId": case.model_id, "workspaceRoot": str(workspace)}
    if report is not MISSING:
        wrapper["implementationReport"] = report
    write_atomic(DevelopmentCaseDir(run.folder).result, dumps(wrapper))
    results = DevelopmentRunDir(out).results  # the wrappers together, as report mode and measures read them
    results.mkdir(exist_ok=True)
    write_atomic(results / result_name(case.model_id), dumps(wrapper))
    return report, wrapper


def _judge(
    shared: _Shared, run: CaseRun, asked: Asked, report: Any, wrapper: dict[str, Any], captured: proc.Capture
) -> Comparison:
    """The case's problems, its claims against the gates, its verdict and its knowledge measures (onto `run`)."""
    case, loaded = run.case, shared.loaded
    runner_review = read_review(run.folder) if "review" in shared.config.checks_for(case.id) else None
    evidence = RunnerEvidence([g.entry() for g in run.gates], runner_review)
    captured_changes = WorkspaceChanges(OK, captured.paths)  # against the base commit (§11.5), not the probe's HEAD
    if asked.answer is None and asked.infrastructure is None:
        run.problems.append(f"{case.id}: result is not valid JSON: the agent's answer holds no JSON object")
    elif asked.answer is not None:
        run.problems += score_report(loaded, case, wrapper, lambda _: captured_changes, evidence).problems
    read_record = asked.evidence  # the adapter exposes tool events: §11.8's read-evidence check applies
    if read_record is not None and report is not MISSING:
        run.problems += read_problems(case, report, read_record, loaded.root)
    if asked.refused_outside:
        run.diagnostics.append(
            f"{case.id}: {len(asked.refused_outside)} write(s) outside the copy were refused and not written."
        )
    comparison = compare(case, report, run.gates, runner_review)
    run.diagnostics += comparison.diagnostics
    run.overclaims = len(comparison.overclaims)
    run.gates_passed = gates_passed(run.gates)
    run.verdict = verdict(run.problems, run.gates, asked.infrastructure, shared.opts.fail_on_overclaim, comparison)
    if report is not MISSING:
        run.measures = _measures(case, report, read_record, loaded.root)
    return comparison


def _measures(case: Case, report: Any, read_record: dict[str, Any] | None, root: Path) -> dict[str, Any]:
    recall, precision = knowledge_measures(case, report)
    if read_record is None:
        return {"knowledgeRecall": recall, "knowledgePrecision": precision, "knowledgeEvidence": "claimed"}
    read = read_measures(case, report, read_record, root)  # the api agent: what bceval saw it read
    claimed = {"claimedKnowledgeRecall": recall, "claimedKnowledgePrecision": precision}
    return {"knowledgeRecall": read[0], "knowledgePrecision": read[1], "knowledgeEvidence": "read", **claimed}


def _write_case(run: CaseRun, asked: Asked, report: Any, captured: proc.Capture, comparison: Comparison) -> None:
    files = DevelopmentCaseDir(run.folder)
    evidence = {
        "runner": [g.entry() for g in run.gates],
        "agent": report.get("validation") if isinstance(report, dict) else None,
        "disagreements": comparison.diagnostics,
        "overclaims": comparison.overclaims,
        "underclaims": comparison.underclaims,
        "capture": {
            "patchSha256": hashlib.sha256(captured.patch).hexdigest(),
            "head": captured.head,
            "refs": captured.refs.splitlines(),
        },
        "readEvidence": asked.evidence,
        "refusedOutside": asked.refused_outside,
    }
    write_atomic(files.evidence, dumps(evidence))
    infrastructure = asked.infrastructure or next((g.details for g in run.gates if g.infrastructure), None)
    run.document = {
        "case": run.case.id,
        "caseId": run.case.model_id,
        "verdict": run.verdict,
        "infrastructure": infrastructure,
        "gatesPassed": run.gates_passed,
        "overclaims": run.overclaims,
        "problems": run.problems,
        "diagnostics": run.diagnostics,
        "measures": run.measures,
    }
    write_atomic(files.verdict, dumps(run.document))


def _finish(
    opts: RunOptions,
    agent: AgentSettings,
    config: ChecksConfig,
    runs: list[CaseRun],
    run_problems: list[str],
    checkout: dict[str, Any],
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
    members = {
        "evaluator": "development",
        "guidance": opts.guidance,
        "checkpoints": list(CHECKPOINTS),
        "adapter": opts.adapter,
        "model": agent.model,
        "epoch": agent.epoch,
        "checksDigest": config.digest(),
        "knowledgeCheckout": checkout,
        "verdict": "PASS" if passed else "FAIL",
        "problems": run_problems + gate_problems,
        "counts": counts,
        "overclaims": sum(r.overclaims for r in runs),
        "cases": [{name: r.document[name] for name in CaseLine.model_fields} for r in runs],
    }
    record = run_record("bceval-development-run", members)
    write_record(opts.out, record)
    out = stream or sys.stdout
    for r in runs:
        print(f"{r.verdict.upper()} {r.case.id}" + (f" ({len(r.problems)} problem(s))" if r.problems else ""), file=out)
        for line in r.problems:
            print(f"  - {console(line)}", file=out)
        for line in r.diagnostics:
            print(f"  * {console(line)}", file=out)
    for line in run_problems:
        print(f"  - {console(line)}", file=out)
    print(
        f"Development run {'PASSED' if passed else 'FAILED'}: {counts[PASS]} passed, {counts[FAIL]} failed, "
        f"{counts[ERROR]} error(s) (infrastructure); {record['overclaims']} overclaim(s). Run: {opts.out}",
        file=out,
    )
    out.flush()
    return 0 if passed else EXIT_FAILED


def development_unit(plan: Any, arm: Any, run: Any, epoch: int) -> None:
    """One development run of an arm's epoch; a failing run is an outcome, only bad input fails."""
    directory = GuidanceRunDir.next_in(plan.run_folders(arm.name, epoch)).path
    opts = RunOptions(
        root=arm.corpus,
        out=directory,
        workspace_map=arm.workspace_map,
        checks=development_checks(arm),
        adapter=run.adapter,
        agent=agent_for(run.adapter, replace(run, epoch=epoch)),
        manifest=arm.manifest,
        guidance=arm.fields["guidance"] or "plan",
    )
    try:
        code = run_development(opts, stream=sys.stderr)
    except DevelopmentError as exc:
        raise DevelopmentError(f"Experiment {plan.experiment.name}: arm '{arm.name}', epoch {epoch}: {exc}") from None
    verdict = "passed" if code == 0 else "did not pass"
    print(f"[{arm.name} e{epoch}] development run {directory.name}: {verdict}", file=sys.stderr)
    write_summary(plan)
