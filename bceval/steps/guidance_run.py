"""`bceval guidance run`: one runner-owned cycle, prepare -> capture -> answer -> score.

bceval is the runner here, so it keeps the baseline digest itself: capture returns it, it stays in
this module's local variables, and scoring receives it directly. It is never printed, never written
under the run directory, and never in the environment handed to an adapter. Capture happens before
the first answer; result files are written by the runner, outside every protected root.

A run directory is created exclusively and never reused or cleaned: evidence must be fresh, so a
killed run is simply repeated into a new directory.

The run directory is a bceval.layout.GuidanceRunDir:

    requests/                  the knowledge index and one request per case (prepare)
    evidence/baseline.json     the pre-run baseline (capture)
    results/                   one result per case, as the adapter answered
    run.json                   the verdict: adapter, manifest, passed, problems (bceval's words only)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bceval.agents.guidance import GuidanceCaseInput, NoReport
from bceval.agents.registry import Agent, GuidanceSetup, capabilities, make_agent
from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.evidence import (
    KNOWLEDGE_LABEL,
    REDIRECTING_GIT_VARIABLES,
    capture,
    check_git_storage,
    load_baseline,
    protected_roots,
    workspace_label,
)
from bceval.evaluators.guidance.manifest import GuidanceManifest, load_manifest, load_workspace_map
from bceval.evaluators.guidance.paths import check_separation, create_exclusive, safe_path
from bceval.evaluators.guidance.reads import guidance_reads
from bceval.evaluators.guidance.scoring import ScoreOutcome, score
from bceval.evaluators.registry import evaluator
from bceval.jsonio import dumps
from bceval.layout import GuidanceRunDir
from bceval.runs.record import guidance_record, write_record


def _exists(run: Path) -> GuidanceError:
    return GuidanceError(f"Run directory {run} already exists: every run needs a new directory (evidence is fresh)")


def check_new_run(directory: Path | str) -> Path:
    run = safe_path(directory, f"Run directory {directory}", missing_ok=True)
    if os.path.lexists(run):
        raise _exists(run)
    return run


def git_safe_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment an agent gets: the runner's, minus variables that would point git at another
    repository (the agent's git must see its own workspace, never the checkout)."""
    environ = os.environ if environ is None else environ
    return {key: value for key, value in environ.items() if key not in REDIRECTING_GIT_VARIABLES}


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
    manifest: GuidanceManifest,
    workspaces: dict[str, Path],
    directory: Path,
    adapter: Agent,
    max_cost: float | None = None,
) -> ScoreOutcome:
    """Prepare, capture, answer every case, score with the held digest; returns the scoring outcome.

    Raises GuidanceError (one line, naming the case where there is one) for bad input, a run
    directory that exists, an adapter that produced no report, or a case that `max_cost` (USD, a live
    agent's) kept from starting: once the run's known cost reaches it no new case starts, and the run,
    which a guidance verdict needs whole, ends unscored.
    """
    run = check_new_run(directory)
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
    evaluator(manifest.kind).prepare(manifest, workspaces, run_dir.requests)
    digest, _ = capture(manifest, workspaces, run_dir.baseline)  # from here on only in this frame
    environment = git_safe_environment()
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
    record = guidance_record(
        manifest,
        outcome,
        adapter.name,
        agent=adapter.describe() if can.live else None,
        usage=adapter.usage.as_record() if can.reports_usage else None,
        evidence={case.id: evidence[case.hashed] for case in manifest.cases if case.hashed in evidence} or None,
        reads=outcome.reads,
    )
    write_record(run_dir.path, record, exclusive=True)
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
    """The CLI's and the graph's entry: refuse an existing run first, then load and check the inputs.

    `agent` (bceval.agents.settings.AgentSettings) configures the command adapter; `hide` names more paths it
    must not reach (an experiment's output folder, with every other arm's answers); `max_cost` is the run's
    budget (see run_guidance)."""
    check_new_run(directory)
    manifest = load_manifest(root, manifest_path)
    workspaces = load_workspace_map(workspace_map, manifest)
    hidden = {"the workspace map": Path(workspace_map).absolute()}
    hidden.update({f"bceval's output ({number})": Path(path).absolute() for number, path in enumerate(hide, 1)})
    chosen = make_agent(adapter, GuidanceSetup(manifest, Path(directory).absolute(), hidden, agent))
    check_separation(
        protected_roots(manifest, workspaces), [(f"Workspace map path {workspace_map}", Path(workspace_map))]
    )
    return manifest, run_guidance(manifest, workspaces, Path(directory), chosen, max_cost)


def print_reads(outcome: ScoreOutcome) -> None:
    """The one Reads line of a run whose agent's tools bceval ran (as a review scorecard says what was read)."""
    if outcome.reads is not None:
        from bceval.evaluators.guidance.reads import reads_line

        print(reads_line(outcome.reads), file=sys.stderr)


def _budget(adapter: Agent, max_cost: float | None) -> Any:
    """The run's --max-cost as a budget (bceval.steps.answer.Budget), said unenforceable up front in one line when
    no price is known for the agent's model; None without one, or for an agent that costs nothing."""
    if max_cost is None or not capabilities(adapter.kind).live:
        return None
    from bceval.steps.answer import Budget, unpriced_warning

    agent = getattr(adapter, "agent", None)
    warning = unpriced_warning(
        f"--max-cost {max_cost:g}", getattr(agent, "prices", None), [getattr(agent, "model", None)]
    )
    if warning:
        print(warning, file=sys.stderr)
    return Budget(max_cost)
