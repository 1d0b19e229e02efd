"""Scoring (spec §4): fresh snapshots against the baseline first, then each case's result file, its report
checks, and the knowledge recall/precision thresholds."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from bceval.evaluators.base import CaseMeasures
from bceval.evaluators.guidance import IMPLEMENTATION, GuidanceError
from bceval.evaluators.guidance.evidence import KNOWLEDGE_LABEL, Baseline, snapshot, workspace_label
from bceval.evaluators.guidance.manifest import GuidanceCase, GuidanceManifest
from bceval.evaluators.guidance.paths import safe_path
from bceval.evaluators.guidance.report import (
    KnowledgeCheckout,
    check_envelope,
    check_implementation_report,
    check_plan_report,
)
from bceval.evaluators.guidance.strictjson import read_strict
from bceval.jsonio import dumps, read_regular_text
from bceval.layout import result_name

UNSAFE = "the result could not be read safely"


@dataclass
class ScoreOutcome:
    problems: list[str] = field(default_factory=list)
    reads: dict[str, Any] | None = None  # what the agent read, where bceval recorded it (guidance.reads)

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
    recall, precision = knowledge_metrics(case, used)
    if recall < Fraction(manifest.minimum_recall):
        raise GuidanceError(
            f"knowledge recall is below the manifest minimum ({float(recall):.3f} < {manifest.minimum_recall:g})"
        )
    if precision < Fraction(manifest.minimum_precision):
        raise GuidanceError(
            f"knowledge precision is below the manifest minimum ({float(precision):.3f} < "
            f"{manifest.minimum_precision:g})"
        )


def _round_trip(value: dict[str, Any]) -> Any:
    """The fresh snapshot as the baseline file would hold it, for structural equality."""
    return json.loads(dumps(value))


def score_case(
    manifest: GuidanceManifest, case: GuidanceCase, bound: Path, results: Path, checkout: KnowledgeCheckout
) -> None:
    """Read and judge one result file; raises GuidanceError with the first failing rule."""
    document = read_strict(results / result_name(case.hashed), "result file")
    report = check_envelope(document, case, bound)
    if manifest.kind == IMPLEMENTATION:
        used = check_implementation_report(report, case, checkout)
    else:
        used = check_plan_report(report, case, checkout)
    _check_metrics(manifest, case, used)


def score(manifest: GuidanceManifest, baseline: Baseline, results_dir: Path) -> ScoreOutcome:
    """Score every case in manifest order; a failure of the knowledge snapshot itself aborts the run."""
    results = safe_path(results_dir, "Results directory", missing_ok=True)
    outcome = ScoreOutcome()
    fresh_root = snapshot(manifest.root, target=False, label=KNOWLEDGE_LABEL)
    if _round_trip(fresh_root) != baseline.root_snapshot:
        outcome.problems.append("Knowledge checkout identity/content changed since the baseline was captured")
    checkout = KnowledgeCheckout(root=manifest.root, head=fresh_root["head"])
    for case in manifest.cases:
        bound = baseline.workspaces[case.id]
        try:
            # The workspace is compared before its result is read: a report cannot redirect evidence.
            fresh = snapshot(bound, target=True, label=workspace_label(case.id))
            if _round_trip(fresh) != baseline.snapshots[case.id]:
                raise GuidanceError("target workspace identity/content changed since the baseline was captured")
            score_case(manifest, case, bound, results, checkout)
        except GuidanceError as exc:
            outcome.problems.append(f"{case.id}: {exc}")
        except Exception:  # noqa: BLE001 - anything else is reported without its text
            outcome.problems.append(f"{case.id}: {UNSAFE}")
    return outcome


def case_measures(manifest: GuidanceManifest, results_dir: Path) -> dict[str, CaseMeasures]:
    """Per manifest case id, read leniently from its result file (scoring proper is `score`)."""
    measures = {}
    for case in manifest.cases:
        try:
            document = json.loads(read_regular_text((results_dir / result_name(case.hashed)), "utf-8"))
            report = document["guidanceReport"]
            cited = [entry["path"] for entry in report.get("knowledge") or [] if isinstance(entry, dict)]
            recall, precision = knowledge_metrics(case, [p for p in cited if isinstance(p, str)])
            agrees = report.get("outcome") == case.expected_outcome
            measures[case.id] = CaseMeasures(agrees, float(recall), float(precision))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            measures[case.id] = CaseMeasures(None, None, None)
    return measures
