"""Scoring implementation reports (spec §9) on the raw JSON tree, in the reference's order (§10.16)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.evaluators.development.manifest import Case, Loaded
from bceval.evaluators.development.values import MISSING, as_int, blank, member, number_text, one_of, same, text, wrap
from bceval.jsonio import parse_json
from bceval.layout import result_name
from bceval.ordering import sort_key

REPORT_FIELDS = (
    "skill",
    "outcome",
    "summary",
    "plan",
    "knowledge",
    "changes",
    "validation",
    "review",
    "review-rounds",
    "suppressed",
    "remaining",
)
REVIEW_FIELDS = ("skill", "outcome", "summary", "findings", "suppressed")
SEVERITIES = ("blocker", "major", "minor", "info")
GATING = SEVERITIES[:2]
ROUND_OUTCOMES = ("clean", "fixing", "stalled", "limit-reached")
NOT_JSON = "not strict JSON (UTF-8, unique members, no NaN, at most 32 MiB, depth 64)"

# workspace states a probe reports
OK, NOT_GIT, UNREADABLE = "ok", "not-git", "unreadable"


@dataclass(frozen=True)
class WorkspaceChanges:
    """What a workspace shows: its state, and when OK the changed paths (repository-relative, forward slashes)."""

    state: str
    paths: tuple[str, ...] = ()


Probe = Callable[[Path], WorkspaceChanges]


@dataclass(frozen=True)
class RunnerEvidence:
    """Runner mode: the evidence that replaces the agent's claims for one case."""

    validation: list[dict[str, Any]]  # the runner's entries (one per required check)
    review: dict[str, Any] | None  # the runner's review findings-report; None: the review is not a runner gate


@dataclass
class CaseScore:
    case: str
    problems: list[str] = field(default_factory=list)
    lints: list[str] = field(default_factory=list)  # bceval's non-gating remarks (never change the verdict)


def parse_result(data: bytes) -> tuple[Any, str | None]:
    """The parsed wrapper, or the parser's problem in bceval's words (file content is never echoed)."""
    try:
        value = parse_json(data, "result")  # a file over its size limit is a BcevalError too
    except BcevalError:
        return None, NOT_JSON
    stack = [value]
    while stack:  # member names differing only in case are duplicates too, as for the reference's parser
        item = stack.pop()
        if isinstance(item, dict):
            if len({k.lower() for k in item}) != len(item):
                return None, NOT_JSON
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return value, None


def _plain_relative(path: str) -> bool:
    """Not rooted and without a `..` segment (split on both separators)."""
    return not (path.startswith(("/", "\\")) or ".." in path.replace("\\", "/").split("/"))


def _unique_sorted(paths: list[str]) -> list[str]:
    firsts: dict[str, str] = {}
    for path in paths:
        firsts.setdefault(path.lower(), path)
    return sorted(firsts.values(), key=sort_key)


def score_wrapper(
    loaded: Loaded, case: Case, wrapper: Any, probe: Probe, runner: RunnerEvidence | None = None
) -> CaseScore:
    """Rules 3–18 on a parsed result wrapper."""
    cid = case.id
    score = CaseScore(cid)
    out = score.problems
    if not same(member(wrapper, "caseId"), case.model_id):  # a missing caseId is '', never a model id
        out.append(f"{cid}: result caseId mismatch.")
        return score
    report = member(wrapper, "implementationReport")
    if report is MISSING:
        out.append(f"{cid}: implementationReport is missing.")
        return score
    out += [f"{cid}: implementation report is missing '{n}'." for n in REPORT_FIELDS if member(report, n) is MISSING]
    skill_id = text(member(member(report, "skill"), "id"))
    if not same(skill_id, "al-development"):
        out.append(f"{cid}: implementation report skill is '{skill_id}'.")
    if blank(member(member(report, "summary"), "request")):
        out.append(f"{cid}: summary.request is missing or empty.")
    kind = text(member(member(report, "plan"), "kind"))
    if not same(kind, case.expected_kind):
        out.append(f"{cid}: plan.kind '{kind}' does not match expected mode '{case.expected_kind}'.")
    outcome = text(member(report, "outcome"))
    if not same(outcome, "completed"):
        out.append(f"{cid}: implementation outcome is '{outcome}'.")
    _knowledge(loaded, case, report, out)
    _validation(case, runner.validation if runner else wrap(member(report, "validation")), out)
    if not wrap(member(report, "changes")):
        out.append(f"{cid}: implementation report contains no changed files.")
    workspace = member(wrapper, "workspaceRoot")
    if not _changes(cid, report, workspace, probe, out):
        return score
    _review(cid, report, runner, out)
    score.lints += _count_lint(cid, member(report, "review"))
    _rounds(loaded, cid, report, out)
    if wrap(member(report, "remaining")):
        out.append(f"{cid}: completed report still lists remaining work.")
    return score


def _knowledge(loaded: Loaded, case: Case, report: Any, out: list[str]) -> None:
    cid = case.id
    entries = wrap(member(report, "knowledge"))
    if not entries:
        out.append(f"{cid}: implementation report contains no knowledge entries.")
    used = [text(member(e, "path")) for e in entries if member(e, "path") is not MISSING]
    if len({u.lower() for u in used}) != len(used):
        out.append(f"{cid}: knowledge contains duplicate paths.")
    root = loaded.root.resolve()
    for entry in entries:
        path = text(member(entry, "path"))
        target = root.joinpath(*path.replace("\\", "/").split("/")) if path else root
        if blank(path) or not _plain_relative(path) or not target.is_file():
            out.append(f"{cid}: knowledge entry has a missing or invalid path '{path}'.")
        if blank(member(entry, "used-for")):
            out.append(f"{cid}: knowledge entry '{path}' has no used-for explanation.")
    for name, value in zip(("recall", "precision"), knowledge_measures(case, report), strict=True):
        minimum = loaded.manifest[f"minimumKnowledge{name.title()}"]
        if value < float(minimum):
            out.append(f"{cid}: knowledge {name} {number_text(value)} is below {number_text(minimum)}.")


def knowledge_measures(case: Case, report: Any) -> tuple[float, float]:
    """(recall, precision) of a report's knowledge, as rules 11–12 compute them."""
    used = [
        text(member(e, "path")).lower() for e in wrap(member(report, "knowledge")) if member(e, "path") is not MISSING
    ]
    return knowledge_ratios(case, used, used)


def knowledge_ratios(case: Case, used: list[str], counted: list[str]) -> tuple[float, float]:
    """(recall over `counted`, precision of `used`), paths lower-cased."""
    required = [r.lower() for r in case.required]
    accepted = set(required) | {p.lower() for p in case.optional}
    recall = sum(1 for r in required if r in counted) / len(required) if required else 1.0
    return recall, (sum(1 for u in counted if u in accepted) / len(used) if used else 0.0)


def _validation(case: Case, entries: list[Any], out: list[str]) -> None:
    for check in case.checks:
        matching = [e for e in entries if same(member(e, "id"), check)]
        if len(matching) != 1 or not same(member(matching[0], "status"), "passed"):
            out.append(f"{case.id}: required check '{check}' did not pass exactly once.")
            continue
        if blank(member(matching[0], "command")) or blank(member(matching[0], "details")):
            out.append(f"{case.id}: required check '{check}' lacks command or evidence details.")


def _changes(cid: str, report: Any, workspace: Any, probe: Probe, out: list[str]) -> bool:
    """Rule 15; False when the case stops here (not a git worktree)."""
    if blank(workspace) or not Path(text(workspace)).is_dir():
        out.append(f"{cid}: workspaceRoot is missing or unavailable.")
        return True
    observed = probe(Path(text(workspace)))
    if observed.state == NOT_GIT:
        out.append(f"{cid}: workspaceRoot is not a readable git worktree.")
        return False
    if observed.state == UNREADABLE:
        out.append(f"{cid}: unable to read the workspace diff.")
        return True
    actual = _unique_sorted([p.replace("\\", "/") for p in observed.paths if p.strip()])
    collected = []
    for change in wrap(member(report, "changes")):
        if member(change, "path") is MISSING:
            continue
        path = text(member(change, "path")).replace("\\", "/")
        if not _plain_relative(path):
            out.append(f"{cid}: changed path is not repository-relative: {path}")
        collected.append(path)
    reported = _unique_sorted(collected)
    for path in reported:
        if path.lower() not in {a.lower() for a in actual}:
            out.append(f"{cid}: reported change is absent from the worktree diff: {path}")
    for path in actual:
        if path.lower() not in {r.lower() for r in reported}:
            out.append(f"{cid}: worktree change is absent from the implementation report: {path}")
    return True


def gating_count(review: Any) -> int:
    """Top-level findings of severity blocker or major (ci)."""
    return sum(1 for f in wrap(member(review, "findings")) if one_of(member(f, "severity"), GATING))


def _review(cid: str, report: Any, runner: RunnerEvidence | None, out: list[str]) -> None:
    if member(report, "review") is MISSING:
        out.append(f"{cid}: complete post-implementation review is missing.")
        return
    review = runner.review if runner and runner.review is not None else member(report, "review")
    out += [f"{cid}: review is missing '{name}'." for name in REVIEW_FIELDS if member(review, name) is MISSING]
    outcome = text(member(review, "outcome"))
    if not same(outcome, "completed"):
        out.append(f"{cid}: post-implementation review outcome is '{outcome}'.")
    gating = gating_count(review)
    if gating > 0:
        out.append(f"{cid}: post-implementation review has {gating} gating finding(s).")


def _count_lint(cid: str, review: Any) -> list[str]:
    """§9 rule 16's bceval lint: the review's summary.counts against the severity tally of its findings."""
    counts = member(member(review, "summary"), "counts")
    if not isinstance(counts, dict):
        return []
    findings = wrap(member(review, "findings"))
    tally = {s: sum(1 for f in findings if same(member(f, "severity"), s)) for s in SEVERITIES}
    if all(text(counts.get(s, 0)) == str(n) for s, n in tally.items()):
        return []
    return [f"{cid}: review summary.counts do not match the severities of its findings (bceval lint, not gating)."]


def _rounds(loaded: Loaded, cid: str, report: Any, out: list[str]) -> None:
    rounds = wrap(member(report, "review-rounds"))
    limit = loaded.review_rounds
    if not rounds or len(rounds) > limit:
        out.append(f"{cid}: review-rounds must contain 1..{limit} entries.")
        return
    for i, item in enumerate(rounds, 1):
        n = as_int(member(item, "round"), f"{cid}: review round {i} number")  # a missing number is 0
        outcome = text(member(item, "outcome"))
        ids = wrap(member(item, "gating-finding-ids"))
        if n != i:
            out.append(f"{cid}: review round numbering is not contiguous.")
        if not one_of(outcome, ROUND_OUTCOMES):
            out.append(f"{cid}: review round {n} has invalid outcome '{outcome}'.")
        if same(outcome, "clean") and ids:
            out.append(f"{cid}: clean review round {n} must have no gating IDs.")
        if one_of(outcome, ROUND_OUTCOMES[1:]) and not ids:
            out.append(f"{cid}: review round {n} outcome '{outcome}' requires gating IDs.")
        if len({text(x).lower() for x in ids}) != len(ids):
            out.append(f"{cid}: review round {n} has duplicate gating IDs.")
    if not same(member(rounds[-1], "outcome"), "clean"):
        out.append(f"{cid}: completed implementation must end with a clean review round.")


def score_case(loaded: Loaded, case: Case, results: Path, probe: Probe) -> CaseScore:
    """Rules 1–18 for one case's result file in report mode."""
    path = results / result_name(case.model_id)
    if not path.is_file():
        return CaseScore(case.id, [f"{case.id}: missing result file."])
    try:
        data = path.read_bytes()
    except OSError:
        return CaseScore(case.id, [f"{case.id}: result is not valid JSON: the file cannot be read"])
    wrapper, problem = parse_result(data)
    if problem is not None:
        return CaseScore(case.id, [f"{case.id}: result is not valid JSON: {problem}"])
    return score_wrapper(loaded, case, wrapper, probe)


def score_results(loaded: Loaded, results: Path, probe: Probe) -> list[CaseScore]:
    return [score_case(loaded, case, results, probe) for case in loaded.cases]
