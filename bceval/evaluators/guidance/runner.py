"""`bceval guidance run`: prepare -> capture -> answer -> score in one process, whose memory alone holds the
baseline digest; every run gets a new directory (evidence must be fresh, so a killed run is repeated)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from bceval.agents.base import GuidanceCaseInput, NoReport
from bceval.agents.registry import Agent, agent_names, capabilities, make_agent
from bceval.config import agent_settings
from bceval.errors import BcevalError, EvaluationFailed
from bceval.escape import console
from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.asking import GuidanceSetup, GuidanceShape
from bceval.evaluators.guidance.evidence import (
    KNOWLEDGE_LABEL,
    REDIRECTING_GIT_VARIABLES,
    capture,
    check_git_storage,
    file_sha256,
    load_baseline,
    protected_roots,
    run_git,
    workspace_label,
)
from bceval.evaluators.guidance.manifest import GuidanceManifest, load_manifest, load_workspace_map
from bceval.evaluators.guidance.paths import check_separation, safe_path
from bceval.evaluators.guidance.prepare import prepare
from bceval.evaluators.guidance.scoring import ScoreOutcome, read_leniently, score
from bceval.jsonio import create_exclusive, dumps, read_regular_text, write_atomic
from bceval.layout import KNOWLEDGE_INDEX, GuidanceRunDir
from bceval.models import CaseReads
from bceval.ordering import sort_key
from bceval.runs.record import read_record, run_record, write_record
from bceval.steps.budget import Budget, experiment_ledger, unpriced_warning
from bceval.steps.scoring import corpus_article
from bceval.usage import known_number


def _exists(run: Path) -> GuidanceError:
    return GuidanceError(f"Run directory {run} already exists: every run needs a new directory (evidence is fresh)")


def _ask(adapter: Agent, case: GuidanceCaseInput) -> bytes | NoReport:
    """The adapter's answer as result-file bytes; anything unusable is a NoReport (never its text)."""
    try:
        answer = adapter.answer(case)
    except Exception:  # noqa: BLE001 - an adapter's own failure is reported without its text
        return NoReport("adapter-error")
    if isinstance(answer, NoReport):
        return answer
    if not isinstance(answer, dict):
        return NoReport("not-an-object")
    try:
        return dumps(answer).encode("utf-8")
    except (TypeError, ValueError):
        return NoReport("not-json")


def run_guidance(
    manifest: GuidanceManifest, workspaces: dict[str, Path], run: Path, adapter: Agent, max_cost: float | None
) -> ScoreOutcome:
    """Prepare, capture, answer every case, score with the held digest. Once the run's known cost reaches
    `max_cost` no new case starts and the run, which a verdict needs whole, ends unscored (a GuidanceError)."""
    check_separation(protected_roots(manifest, workspaces), [(f"Run directory {run}", run)])
    # Refuse what capture would refuse for want of a repository before anything is written.
    check_git_storage(manifest.root, target=False, label=KNOWLEDGE_LABEL)
    for case in manifest.cases:
        check_git_storage(workspaces[case.id], target=True, label=workspace_label(case.id))
    run.parent.mkdir(parents=True, exist_ok=True)
    try:
        run.mkdir()  # exclusive: two runs never share a directory
    except FileExistsError:
        raise _exists(run) from None
    run_dir = GuidanceRunDir(run)
    prepare(manifest, workspaces, run_dir.requests)
    digest = capture(manifest, workspaces, run_dir.baseline)  # from here on only in this frame
    # the agent's environment: the runner's without the variables that would point its git at another repository
    environment = {key: value for key, value in os.environ.items() if key not in REDIRECTING_GIT_VARIABLES}
    budget = _budget(adapter, max_cost)
    try:
        for number, case in enumerate(manifest.cases):
            if budget is not None and budget.reached():
                raise GuidanceError(
                    f"{case.id}: not started: {budget.describe()}; {number} of {len(manifest.cases)} case(s) "
                    "answered, so the run is partial and unscored; run again with a larger --max-cost"
                )
            answer = _ask(
                adapter,
                GuidanceCaseInput(
                    case_id=case.hashed,
                    request_path=run_dir.prepared.case_request(case.hashed),
                    workspace=workspaces[case.id],
                    knowledge=manifest.root,
                    environment=environment,
                ),
            )
            if budget is not None:
                spent = getattr(adapter, "last_usage", None)
                budget.spend(spent.costUsd if spent is not None else None, case.id)
            if isinstance(answer, NoReport):
                raise GuidanceError(f"{case.id}: the {adapter.name} adapter produced no report ({answer.kind})")
            if not create_exclusive(run_dir.result(case.hashed), answer):
                raise GuidanceError(
                    f"{case.id}: a result file appeared in the run directory before the runner wrote it"
                )
    finally:
        adapter.close()  # a live agent's knowledge view goes as soon as the answers are in
    outcome = score(manifest, load_baseline(run_dir.baseline, digest, manifest), run_dir.results)
    evidence = adapter.read_evidence()
    if evidence:
        outcome.reads = guidance_reads(manifest, run_dir.results, evidence)
    can = capabilities(adapter.kind)
    per_case = {case.id: evidence[case.hashed] for case in manifest.cases if case.hashed in evidence}
    record = {
        "adapter": adapter.name,
        **({"agent": adapter.describe()} if can.live else {}),
        **({"usage": adapter.usage.as_record()} if can.reports_usage else {}),
        "root": str(manifest.root),
        "manifest": str(manifest.path),
        "manifestSha256": manifest.sha256,
        "cases": len(manifest.cases),
        "passed": outcome.passed,
        "problems": outcome.problems,
        **({"readEvidence": per_case} if per_case else {}),
        **({"reads": outcome.reads} if outcome.reads is not None else {}),
    }
    write_record(run_dir.path, run_record("bceval-guidance-run", record), exclusive=True)
    return outcome


def run_from_files(
    root: Path | str,
    manifest_path: Path | str,
    workspace_map: Path | str,
    directory: Path | str,
    adapter: str,
    agent: Any = None,
    hide: tuple[Path, ...] = (),
    max_cost: float | None = None,
) -> tuple[GuidanceManifest, ScoreOutcome]:
    """The CLI's and the graph's entry: refuse an existing run first, then load and check the inputs. `hide`
    names more paths a live agent must not reach (an experiment's output folder)."""
    run = safe_path(directory, f"Run directory {directory}", missing_ok=True)
    if os.path.lexists(run):
        raise _exists(run)
    manifest = load_manifest(root, manifest_path)
    workspaces = load_workspace_map(workspace_map, manifest)
    hidden = {"the workspace map": Path(workspace_map).absolute()}
    hidden.update({f"bceval's output ({number})": Path(path).absolute() for number, path in enumerate(hide, 1)})
    chosen = make_agent(adapter, GuidanceSetup(manifest, agent, GuidanceShape(manifest, run, hidden)))
    check_separation(
        protected_roots(manifest, workspaces), [(f"Workspace map path {workspace_map}", Path(workspace_map))]
    )
    return manifest, run_guidance(manifest, workspaces, run, chosen, max_cost)


def run_verdict(
    root: Path | str,
    manifest_path: Path | str,
    workspace_map: Path | str,
    directory: Path,
    adapter: str,
    agent: Any = None,
    max_cost: float | None = None,
) -> str:
    """One run from the files, its Reads line on stderr (when bceval ran the agent's tools); returns the PASSED line
    or raises EvaluationFailed with the run's problems."""
    manifest, outcome = run_from_files(root, manifest_path, workspace_map, directory, adapter, agent, max_cost=max_cost)
    if outcome.reads is not None:
        print(reads_line(outcome.reads), file=sys.stderr)
    if not outcome.passed:
        title = f"Development guidance run FAILED with {len(outcome.problems)} problem(s):"
        raise EvaluationFailed(title, outcome.problems, verdict=False)
    return f"Development guidance run PASSED: {len(manifest.cases)} case(s) in {directory}"


def _budget(adapter: Agent, max_cost: float | None) -> Any:
    """The run's --max-cost as a budget (bceval.steps.budget.Budget), said unenforceable up front in one line when
    no price is known for the agent's model; None without one, or for an agent that costs nothing."""
    if max_cost is None or not capabilities(adapter.kind).live:
        return None
    agent = getattr(adapter, "agent", None)
    warning = unpriced_warning(
        f"--max-cost {max_cost:g}", getattr(agent, "prices", None), [getattr(agent, "model", None)]
    )
    if warning:
        print(warning, file=sys.stderr)
    return Budget(max_cost)


def guidance_unit(current: Any, arm: Any, run: Any, epoch: int, settings: Any) -> None:
    """One whole guidance run of an arm's epoch (prepare, capture, answer, score) into a new run directory."""
    adapter = run.adapter  # the arm's agent, else its evaluator's default (the known-good oracle)
    question = arm.evaluated_by.question
    if question not in capabilities(adapter).questions:
        answering = " or ".join(agent_names(question))  # "a guidance arm answers with oracle or command, not ..."
        raise BcevalError(f"arm '{arm.name}': a {question} arm answers with {answering}, not {adapter}")
    agent = agent_settings(run) if run.live else None
    budget = experiment_ledger(current, settings) if run.live else None  # its ledger, read afresh
    stop = current.budget_stop(arm.name, epoch)
    if budget is not None and budget.reached():  # no new run starts once the experiment's known cost reached it
        write_atomic(stop, dumps({"kind": "budget", "detail": f"not started: {budget.describe()}"}))
        print(f"[{arm.name} e{epoch}] guidance run not started (budget): {budget.describe()}", file=sys.stderr)
        return None
    assert arm.manifest is not None and arm.workspace_map is not None
    directory = GuidanceRunDir.next_in(current.run_folders(arm.name, epoch)).path
    try:
        _, outcome = run_from_files(arm.corpus, arm.manifest, arm.workspace_map, directory, adapter, agent, run.hide)
    except BcevalError as exc:  # the guidance run's own errors and its agent's (e.g. a refused sandbox grant)
        raise BcevalError(f"Experiment {current.experiment.name}: arm '{arm.name}', epoch {epoch}: {exc}") from None
    stop.unlink(missing_ok=True)
    if budget is not None:
        usage = (read_record(directory) or {}).get("usage") or {}  # what the run's answers are known to have cost
        cost = usage.get("costUsd") if isinstance(usage, dict) else None
        budget.spend(known_number(cost), f"{run.run_name}/{directory.name}")
    verdict = "passed" if outcome.passed else f"{len(outcome.problems)} problem(s)"
    print(f"[{arm.name} e{epoch}] guidance run {directory.name}: {verdict}", file=sys.stderr)


def guidance_inputs(arm: Any) -> dict[str, Any]:
    """What a guidance arm's epoch reads besides its fields: the knowledge checkout (commit and state), the
    manifest, the workspace map and each workspace's commit. A change to any of them runs the epoch again;
    whatever cannot be read is left to the run itself to report."""

    def state(root: Any) -> str:
        try:
            status = run_git(root, "status", "--porcelain", raw=True)
            return run_git(root, "rev-parse", "HEAD") + "+" + hashlib.sha256(status).hexdigest()
        except GuidanceError:
            return "unreadable"

    def digest(path: Any) -> str:
        try:
            return file_sha256(path)
        except OSError:
            return "unreadable"

    try:
        bound = json.loads(read_regular_text(arm.workspace_map, "utf-8"))
        workspaces = {key: state(value) for key, value in sorted(bound.items()) if isinstance(value, str)}
    except (OSError, ValueError, AttributeError):
        workspaces = {}
    return {
        "knowledge": state(arm.corpus),
        "manifest": digest(arm.manifest),
        "workspaceMap": digest(arm.workspace_map),
        "workspaces": workspaces,
    }


# What the agent read, where bceval ran its tool loop (the api agent) and so recorded every file a `read_file`
# returned; of an agent whose loop bceval does not run nothing is said (never guessed from its report).
KNOWLEDGE = "knowledge/"  # the tools' name for the knowledge view (bceval.agents.api)


def case_reads(root: Path, evidence: dict[str, Any], cited: list[str]) -> CaseReads:
    """One case's reads from bceval's evidence `{runId, questionSha256, reads}` and the paths its report cited."""
    listed = evidence.get("reads") or []
    reads = [item for item in listed if isinstance(item, dict) and isinstance(item.get("path"), str)]
    articles = [(item["path"].removeprefix(KNOWLEDGE), item) for item in reads if item["path"].startswith(KNOWLEDGE)]
    articles = [(path, item) for path, item in articles if path != KNOWLEDGE_INDEX]
    opened = sorted({path for path, _ in articles}, key=sort_key)
    article = corpus_article(root)
    backed = {
        path
        for path, item in articles
        if item.get("complete") is True and article(path) == (item.get("bytes"), item.get("sha256"))
    }
    return CaseReads(
        source="bceval",
        opened=opened,
        cited=cited,
        citedWithoutCompleteRead=[path for path in cited if path not in backed],
        readNotCited=[path for path in opened if path not in set(cited)],
    )


def guidance_reads(
    manifest: GuidanceManifest, results_dir: Path, evidence: dict[str, dict[str, Any]]
) -> dict[str, Any] | None:
    """Per manifest case id its reads, and the run's summary; None when no case has evidence (`evidence`: per hashed
    case id, the record bceval kept of its tool results: `{readBy: "bceval", readEvidence: {...}}`)."""
    cases: dict[str, Any] = {}
    for case in manifest.cases:
        record = evidence.get(case.hashed)
        read = read_leniently(results_dir, case.hashed)
        if not isinstance(record, dict) or record.get("readBy") != "bceval" or read is None:
            continue
        cases[case.id] = case_reads(manifest.root, record.get("readEvidence") or {}, read[1]).model_dump()
    if not cases:
        return None
    citations = sum(len(reads["cited"]) for reads in cases.values())
    backed = citations - sum(len(reads["citedWithoutCompleteRead"]) for reads in cases.values())
    opened = sum(len(reads["opened"]) for reads in cases.values())
    summary = {
        "casesWithEvidence": len(cases),
        "casesWithoutEvidence": len(manifest.cases) - len(cases),
        "citations": citations,
        "citationsBacked": backed,
        "backedShare": backed / citations if citations else None,
        "meanOpened": opened / len(cases),
    }
    return {"summary": summary, "cases": cases}


def reads_line(reads: dict[str, Any]) -> str:
    """One line on a guidance run's read evidence, as a review scorecard gives it."""
    summary = reads["summary"]
    share = f"{summary['backedShare']:.0%}" if summary["backedShare"] is not None else "no citations"
    unbacked = [
        f"{case_id}: {path}" for case_id, case in reads["cases"].items() for path in case["citedWithoutCompleteRead"]
    ]
    listed = f"; cited without a complete read: {console(', '.join(unbacked[:5]))}" if unbacked else ""
    more = f" and {len(unbacked) - 5} more" if len(unbacked) > 5 else ""
    return (
        f"Reads: {summary['citationsBacked']} of {summary['citations']} citations backed by a complete read ({share}); "
        f"{summary['meanOpened']:.1f} articles opened per case; evidence for {summary['casesWithEvidence']} case(s), "
        f"unknown for {summary['casesWithoutEvidence']}{listed}{more}"
    )
