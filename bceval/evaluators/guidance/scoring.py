"""Scoring (spec §4): fresh snapshots against the baseline first, then each case's result file, its report
checks (§3, fail-fast in the reference's order), and the knowledge recall/precision thresholds."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from bceval.evaluators.base import CaseMeasures
from bceval.evaluators.guidance import IMPLEMENTATION, IMPLEMENTATION_SKILL_ID, PLAN_SKILL_ID, GuidanceError
from bceval.evaluators.guidance import report_models as models
from bceval.evaluators.guidance.evidence import KNOWLEDGE_LABEL, Baseline, run_git, snapshot, workspace_label
from bceval.evaluators.guidance.manifest import CONSUMED_FIELDS, OUTCOMES, GuidanceCase, GuidanceManifest
from bceval.evaluators.guidance.paths import (
    check_context,
    read_strict,
    require_array,
    require_int,
    require_object,
    require_string,
    resolve_reference,
    safe_path,
)
from bceval.jsonio import dumps, read_regular_bytes, read_regular_text
from bceval.layout import result_name

SUPPRESSION_REASONS = ("layer-precedence", "configuration")
DEDUP_STRATEGY = "omit-exact-consumed-match"
IMPLEMENTATION_LISTS = ("affected-files", "affected-symbols", "changed-tokens")
_SHA = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
_SUMMARY_TEXT = ("request", "phase", "decision", "decision-key", "evidence-fingerprint")
_SUMMARY_COUNTS = ("candidates", "selected", "omitted-consumed")


@dataclass(frozen=True)
class KnowledgeCheckout:
    """The live knowledge checkout as scoring sees it: its root and its current HEAD commit."""

    root: Path
    head: str


def check_envelope(document: Any, case: GuidanceCase, bound: Path) -> Any:
    """§3.1: caseId must be the case's hashed id; a legacy workspaceRoot must equal the runner's binding."""
    result = require_object(document, "result", ("caseId", "guidanceReport"))
    if require_string(result["caseId"], "result caseId") != case.hashed:
        raise GuidanceError("result caseId mismatch: it must be the request's caseId")
    if "workspaceRoot" in result:
        value = require_string(result["workspaceRoot"], "result workspaceRoot")
        try:
            agrees = Path(value).is_absolute() and safe_path(value, "result workspaceRoot", kind="dir") == bound
        except GuidanceError:
            agrees = False
        if not agrees:
            raise GuidanceError("result workspaceRoot must agree with the runner binding (it never overrides it)")
    return result["guidanceReport"]


def _check_outcome(report: dict[str, Any], case: GuidanceCase) -> str:
    outcome = require_string(report["outcome"], "outcome")
    if outcome not in OUTCOMES:
        raise GuidanceError("outcome must be a value of the outcome enum")
    if outcome != case.expected_outcome:
        raise GuidanceError("outcome does not equal the fixture's expectedOutcome")
    if outcome in ("partial", "failed") and "outcome-reason" not in report:
        raise GuidanceError("outcome-reason is required when the outcome is partial or failed")
    if "outcome-reason" in report:
        require_string(report["outcome-reason"], "outcome-reason")
    return outcome


def _check_sha(value: Any, label: str, rel: str, checkout: KnowledgeCheckout) -> None:
    """§3.5: a full commit id equal to HEAD (ignoring case) whose committed article is the live one."""
    if not isinstance(value, str) or not _SHA.fullmatch(value):
        raise GuidanceError(f"{label} must be a full commit object id (40 or 64 hex digits)")
    if value.lower() != checkout.head.lower():
        raise GuidanceError(f"{label} must be the recorded live checkout HEAD commit")
    committed = run_git(checkout.root, "cat-file", "blob", f"HEAD:{rel}", raw=True)
    try:
        live = read_regular_bytes(checkout.root / rel)
    except OSError:
        raise GuidanceError(f"{label}: the live knowledge article could not be read safely") from None
    if committed.replace(b"\r\n", b"\n") != live.replace(b"\r\n", b"\n"):
        raise GuidanceError(f"{label}: the committed article differs from the live knowledge article")


def _check_knowledge(entries: list[Any], checkout: KnowledgeCheckout) -> list[str]:
    """Knowledge entries (§3.3.9); sample duplicates are refused in both modes (§7.16: stricter)."""
    used: list[str] = []
    for entry in entries:
        item = require_object(entry, "knowledge entry", ("path", "used-for", "constraints", "sample-paths"))
        path = item["path"]
        resolve_reference(checkout.root, path, "knowledge.path", mode="knowledge")
        if path in used:
            raise GuidanceError("Duplicate knowledge reference: each article is cited once")
        used.append(path)
        require_string(item["used-for"], "knowledge.used-for")
        require_array(item["constraints"], "knowledge.constraints", strings=True, non_empty=True)
        samples = require_array(item["sample-paths"], "knowledge.sample-paths", strings=True)
        if len({sample.lower() for sample in samples}) != len(samples):
            raise GuidanceError("knowledge.sample-paths contains duplicates")
        for sample in samples:
            resolve_reference(checkout.root, sample, "knowledge.sample-paths entry", mode="sample", article=path)
        if "sha" in item:
            _check_sha(item["sha"], "knowledge.sha", path, checkout)
    return used


def _check_considerations(entries: list[Any]) -> None:
    seen: set[str] = set()
    for entry in entries:
        item = require_object(entry, "validation-considerations entry", ("id", "reason", "evidence"))
        for name in ("id", "reason", "evidence"):
            require_string(item[name], f"validation-considerations.{name}")
        if item["id"] in seen:
            raise GuidanceError("validation-considerations ids must be unique")
        seen.add(item["id"])


def _check_suppressed(entries: list[Any], used: list[str], checkout: KnowledgeCheckout) -> None:
    """Suppressed references; uniqueness and 'not also selected' apply in both modes (§7.16: stricter)."""
    paths: list[str] = []
    for entry in entries:
        item = require_object(entry, "suppressed entry", ("reference", "reason"))
        reference = require_object(item["reference"], "suppressed.reference", ("path",))
        path = reference["path"]
        resolve_reference(checkout.root, path, "suppressed.reference.path", mode="knowledge")
        if "sha" in reference:
            _check_sha(reference["sha"], "suppressed.reference.sha", path, checkout)
        if require_string(item["reason"], "suppressed.reason") not in SUPPRESSION_REASONS:
            raise GuidanceError("suppressed.reason must be layer-precedence or configuration")
        if path in paths or path in used:
            raise GuidanceError("Duplicate or selected suppressed reference")
        paths.append(path)


def _check_current_decision(report: dict[str, Any], decision: dict[str, Any]) -> None:
    """An applicable implementation report repeats the case's current decision and its pins exactly."""
    for name in ("decision-key", "evidence-fingerprint", "phase", "decision"):
        if report["summary"][name] != decision.get(name):
            raise GuidanceError(f"summary.{name} must preserve current decision context exactly")
    pins = report["pins"]
    if pins["development-plan"] != decision.get("development-plan-pin") or pins[
        "implementation-evidence"
    ] != decision.get("implementation-evidence-pin"):
        raise GuidanceError("pins must repeat the consumer-supplied pins of the decision context exactly")


def _check_omitted(
    entries: list[Any], case: GuidanceCase, summary: dict[str, Any], used: list[str], checkout: KnowledgeCheckout
) -> None:
    """Each omitted entry is exactly one consumed triple of the current decision; the omitted set is the
    fixture's (§3.4.12). A changed key or fingerprint is a new surface, never an exact match."""
    paths: list[str] = []
    for entry in entries:
        item = require_object(entry, "deduplication.omitted entry", CONSUMED_FIELDS)
        for name in CONSUMED_FIELDS:
            require_string(item[name], f"deduplication.omitted.{name}")
        path = item["path"]
        resolve_reference(checkout.root, path, "deduplication.omitted.path", mode="knowledge")
        triple = (path, item["decision-key"], item["evidence-fingerprint"])
        matches = [c for c in case.consumed if (c["path"], c["decision-key"], c["evidence-fingerprint"]) == triple]
        current = (summary["decision-key"], summary["evidence-fingerprint"])
        if len(matches) != 1 or triple[1:] != current:
            raise GuidanceError(
                "deduplication.omitted entry must be an exact consumed match (path, decision-key and "
                "evidence-fingerprint of consumed guidance and of the current decision)"
            )
        if path in paths or path in used:
            raise GuidanceError("deduplication.omitted entry is duplicated or reissued as knowledge")
        paths.append(path)
    if set(paths) != set(case.expected_omitted):
        raise GuidanceError("deduplication.omitted does not match the fixture's expected omitted set")


def check_report(value: Any, case: GuidanceCase, checkout: KnowledgeCheckout, implementation: bool) -> list[str]:
    """Every report rule of its kind (§3.3, §3.4) in the reference's order; returns the cited knowledge paths."""
    model = models.ImplementationGuidanceReport if implementation else models.PlanGuidanceReport
    report = require_object(value, "guidanceReport", models.members(model))
    skill = require_object(report["skill"], "skill", ("id", "version"))
    expected = IMPLEMENTATION_SKILL_ID if implementation else PLAN_SKILL_ID
    identity, version = require_string(skill["id"], "skill.id"), skill["version"]  # implementation too (§7.21)
    if identity != expected or type(version) is not int or version != 1:
        raise GuidanceError(f"skill identity/version must be {expected} version 1 (an integer)")
    outcome = _check_outcome(report, case)
    summary = require_object(report["summary"], "summary", models.members(model.model_fields["summary"].annotation))
    for name in _SUMMARY_TEXT if implementation else ("request",):
        require_string(summary[name], f"summary.{name}")
    if not implementation and require_string(summary["kind"], "summary.kind") != case.expected_kind:
        raise GuidanceError("summary.kind must equal the fixture's intended change kind")
    candidates, selected = (require_int(summary[name], f"summary.{name}") for name in _SUMMARY_COUNTS[:2])
    omitted_count = require_int(summary["omitted-consumed"], "summary.omitted-consumed") if implementation else 0
    applicable = implementation and case.expected_outcome != "not-applicable"
    if implementation:
        pins = require_object(report["pins"], "pins", models.members(models.Pins))
        for name in models.members(models.Pins):
            require_string(pins[name], f"pins.{name}")
        pin = pins["knowledge-checkout"]
        # Exact comparison: git prints lower case, so an upper-case pin fails (spec §7.4).
        if pin != "unpinned" and not (_SHA.fullmatch(pin) and pin == checkout.head):
            raise GuidanceError("pins.knowledge-checkout: Knowledge checkout pin must be unpinned or the exact HEAD")
    if applicable:
        _check_current_decision(report, case.decision_context)
    context = check_context(report["context"], "context", IMPLEMENTATION_LISTS if implementation else ())
    if applicable:
        for name in IMPLEMENTATION_LISTS:
            if context[name] != case.decision_context.get(name):
                raise GuidanceError(f"context.{name} must preserve current implementation evidence exactly")
    knowledge = require_array(report["knowledge"], "knowledge")
    considerations = require_array(report["validation-considerations"], "validation-considerations")
    suppressed = require_array(report["suppressed"], "suppressed")
    unresolved = require_array(report["unresolved"], "unresolved", strings=True)
    omitted: list[Any] = []
    if implementation:
        dedup = require_object(report["deduplication"], "deduplication", ("strategy", "omitted"))
        if dedup["strategy"] != DEDUP_STRATEGY:
            raise GuidanceError(f"deduplication.strategy must be {DEDUP_STRATEGY}")
        omitted = require_array(dedup["omitted"], "deduplication.omitted")
    if selected != len(knowledge) or omitted_count != len(omitted) or selected + omitted_count > candidates:
        raise GuidanceError(
            "Summary counts are inconsistent: selected must equal the knowledge entries, omitted-consumed the "
            "omitted entries, and together they must not exceed candidates"
        )
    if outcome in ("no-knowledge", "not-applicable") and knowledge:
        raise GuidanceError(f"outcome {outcome} requires empty knowledge")
    if outcome == "completed" and not knowledge:
        raise GuidanceError("outcome completed requires at least one knowledge entry (report no-knowledge instead)")
    if (outcome == "partial" or case.requires_unresolved) and not unresolved:
        raise GuidanceError("unresolved gaps must be listed for a partial outcome or when the fixture requires them")
    lowered = [text.lower() for text in unresolved]
    if any(not any(dimension.lower() in text for text in lowered) for dimension in context["unknown"]):
        raise GuidanceError("Unknown dimensions require an explanation in the unresolved gaps")
    if any(dimension not in context["unknown"] for dimension in case.expected_unknown):  # a plan case's
        raise GuidanceError("context.unknown: an expected unknown dimension was silently resolved")
    used = _check_knowledge(knowledge, checkout)
    _check_omitted(omitted, case, summary, used, checkout)  # a plan case expects none omitted
    _check_considerations(considerations)
    _check_suppressed(suppressed, used, checkout)
    return used


@dataclass
class ScoreOutcome:
    problems: list[str] = field(default_factory=list)
    reads: dict[str, Any] | None = None  # what the agent read, where bceval recorded it (runner.guidance_reads)

    @property
    def passed(self) -> bool:
        return not self.problems


def knowledge_metrics(case: GuidanceCase, used: list[str]) -> tuple[Fraction, Fraction]:
    """Recall over the required set and precision over the accepted set (case-sensitive membership)."""
    cited, required = set(used), set(case.required)
    recall = Fraction(len(required & cited), len(required)) if required else Fraction(1)
    if cited:
        precision = Fraction(len(cited & (required | set(case.optional))), len(cited))
    else:
        precision = Fraction(1) if not required else Fraction(0)
    return recall, precision


def _check_metrics(manifest: GuidanceManifest, case: GuidanceCase, used: list[str]) -> None:
    minimums = (manifest.minimum_recall, manifest.minimum_precision)
    measured = zip(("recall", "precision"), knowledge_metrics(case, used), minimums, strict=True)
    for name, value, minimum in measured:
        if value < Fraction(minimum):
            raise GuidanceError(f"knowledge {name} is below the manifest minimum ({float(value):.3f} < {minimum:g})")


def score(manifest: GuidanceManifest, baseline: Baseline, results_dir: Path) -> ScoreOutcome:
    """Score every case in manifest order; a failure of the knowledge snapshot itself aborts the run."""
    results = safe_path(results_dir, "Results directory", missing_ok=True)
    outcome = ScoreOutcome()
    fresh_root = snapshot(manifest.root, target=False, label=KNOWLEDGE_LABEL)
    if json.loads(dumps(fresh_root)) != baseline.root_snapshot:  # as the baseline file holds it
        outcome.problems.append("Knowledge checkout identity/content changed since the baseline was captured")
    checkout = KnowledgeCheckout(root=manifest.root, head=fresh_root["head"])
    for case in manifest.cases:
        bound = baseline.workspaces[case.id]
        try:
            # The workspace is compared before its result is read: a report cannot redirect evidence.
            fresh = snapshot(bound, target=True, label=workspace_label(case.id))
            if json.loads(dumps(fresh)) != baseline.snapshots[case.id]:
                raise GuidanceError("target workspace identity/content changed since the baseline was captured")
            report = check_envelope(read_strict(results / result_name(case.hashed), "result file"), case, bound)
            _check_metrics(manifest, case, check_report(report, case, checkout, manifest.kind == IMPLEMENTATION))
        except GuidanceError as exc:
            outcome.problems.append(f"{case.id}: {exc}")
        except Exception:  # noqa: BLE001 - anything else is reported without its text
            outcome.problems.append(f"{case.id}: the result could not be read safely")
    return outcome


def read_leniently(results_dir: Path, hashed: str) -> tuple[Any, list[str]] | None:
    """A result's outcome and the article paths its report cites, read leniently (scoring proper is `score`); None
    without a readable report."""
    try:
        report = json.loads(read_regular_text(results_dir / result_name(hashed), "utf-8"))["guidanceReport"]
        entries = report.get("knowledge") or []
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    cited = [entry.get("path") for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []
    return report.get("outcome"), list(dict.fromkeys(path for path in cited if isinstance(path, str)))


def case_measures(manifest: GuidanceManifest, results_dir: Path) -> dict[str, CaseMeasures]:
    """Per manifest case id, its outcome agreement and cited recall and precision."""
    measures = {}
    for case in manifest.cases:
        read = read_leniently(results_dir, case.hashed)
        if read is None:
            measures[case.id] = CaseMeasures(None, None, None)
        else:
            recall, precision = knowledge_metrics(case, read[1])
            measures[case.id] = CaseMeasures(read[0] == case.expected_outcome, float(recall), float(precision))
    return measures
