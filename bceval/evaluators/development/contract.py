"""The findings-report contract of upstream's Validate-FindingsReport.ps1 (spec upstream-2026-09.md §3): after the
draft-07 schema, the semantic checks with upstream's codes, JSON paths, messages and order, and the bounded
normalization. `bceval findings validate` and the review gate both use it."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from bceval.evaluators.development import inside
from bceval.evaluators.development.findings import findings_report_errors
from bceval.evaluators.development.superskill import (
    CONFIDENCE_RANK,
    SEVERITY_RANK,
    SLUG,
    Composition,
    derived_outcome,
    overlap,
    represents,
    same_correction,
    same_json,
)

LEAF, SUPER = "leaf", "super"
SEVERITIES = ("blocker", "major", "minor", "info")
KNOWLEDGE_PATH = re.compile(r"^(microsoft|community|custom)/knowledge/.+\.md$")
UNSAFE_PATH = re.compile(r"(^|/)\.{1,2}(/|$)|//|[\\:#?%*\x00-\x1f\x7f]")
SCHEMA = "SCHEMA"  # no upstream code: upstream throws at the first schema error, bceval lists them all
# normalization never repairs a citation: these leave the report rejected as it is
CITATION_CODES = ("REFERENCE_PATH_INVALID", "REFERENCE_MISSING", "REFERENCE_NOT_RETRIEVED", "AGENT_REFERENCE_INVALID")
# upstream's message of each code (a code with several has one key per message: CODE:variant)
MESSAGES = {
    "COUNT_MISMATCH": "Expected {n}.",
    "COVERAGE_INVALID": "items-evaluated exceeds worklist-size.",
    "COMPLETED_COVERAGE_INCOMPLETE": "A completed report must evaluate its full worklist.",
    "PARTIAL_COVERAGE_INVALID": "A partial report must evaluate a non-zero proper subset of its worklist.",
    "LEAF_COMPOSITION_INVALID": "A leaf report must not contain sub-results or skipped-sub-skills.",
    "SUPER_SUB_RESULTS_REQUIRED": "A super-skill report must contain sub-results.",
    "LEAF_PRODUCER_INVALID": "A leaf finding must not contain from-sub-skill.",
    "SUPER_PRODUCER_REQUIRED": "A super-skill finding must identify its producer in from-sub-skill.",
    "AGENT_ID_INVALID": "An agent finding id must use its role-specific agent: prefix.",
    "AGENT_CONFIDENCE_INVALID": "Agent confidence cannot be high.",
    "AGENT_SEVERITY_INVALID": "Agent severity cannot exceed minor.",
    "AGENT_REFERENCE_INVALID": "An agent finding must not contain citations.",
    "PRIMARY_REFERENCE_MISMATCH": "Finding id must equal the primary reference path.",
    "REFERENCE_PATH_INVALID": "Invalid knowledge path '{p}'.",
    "REFERENCE_MISSING": "Knowledge path '{p}' does not exist.",
    "REFERENCE_NOT_RETRIEVED": "Knowledge path '{p}' was not retrieved in full.",
    "SOURCE_OUT_OF_SCOPE": "Source path '{f}' is outside the supplied scope.",
    "SOURCE_MISSING": "Source path '{f}' does not exist.",
    "SOURCE_LINE_INVALID": "Line exceeds the file's {n} lines.",
    "RANGE_START_MISMATCH": "start-line must equal line.",
    "SOURCE_RANGE_INVALID": "Range is reversed or exceeds the source file.",
    "SUPER_DUPLICATE_SUB_RESULT": "A leaf may appear only once in sub-results.",
    "SUPER_SKIP_CONFLICT": "Skill '{id}' is duplicated or both returned and skipped.",
    "SUPER_IDENTITY_MISMATCH": "Super-skill identity differs from expected composition.",
    "SUPER_UNEXPECTED_SUB_RESULT": "Skill '{id}' was not selected.",
    "SUPER_LEAF_VERSION_MISMATCH": "Unexpected version for '{id}'.",
    "SUPER_LEAF_NOT_ACCEPTED": "Leaf '{id}' has no host-captured accepted result.",
    "SUPER_LEAF_CONTENT_MISMATCH": "Leaf '{id}' differs from its host-captured accepted result.",
    "SUPER_SUB_RESULT_ORDER": "Sub-results must preserve the selected worklist order.",
    "SUPER_ACCEPTED_LEAF_MISSING": "Host-captured accepted leaf '{id}' must be included.",
    "SUPER_MISSING_LEAF_REASON": "The reason must name missing selected leaf '{id}'.",
    "SUPER_UNEXPECTED_SKIP": "Skill '{id}' was not excluded by the coordinator.",
    "SUPER_SKIP_MISMATCH": "Skip identity or reason differs for '{id}'.",
    "SUPER_SKIP_MISSING": "Expected exclusion '{id}' is missing.",
    "SUPER_OUTCOME_MISMATCH": "Expected '{o}' from sub-results.",
    "SUPER_COVERAGE_MISMATCH": "Expected worklist-size {w} and items-evaluated {i} from non-failed sub-results.",
    "SUPER_AGENT_REVIEW_INCOMPLETE": "Super-skill self-review is forbidden while selected leaf results are missing.",
    "SUPER_AGENT_FINDING_INVALID": "A super-skill agent finding must use an agent: id, Agent domain, and no "
    "references.",
    "SUPER_FAILED_FINDING_LEAKAGE": "Finding is attributed to failed sub-skill '{p}'.",
    "SUPER_PRODUCER_INVALID": "Sub-skill '{p}' has no non-failed result.",
    "SUPER_FINDING_MISMATCH": "Rolled-up finding '{id}' is not owned by a matching finding from '{p}'.",
    "SUPER_FINDING_MISMATCH:conflict": "Rolled-up finding '{id}' represents leaf findings with conflicting "
    "suggested-code replacements.",
    "SUPER_FINDING_MISMATCH:rank": "Rolled-up finding '{id}' must retain the highest severity and confidence "
    "justified by its represented leaf findings.",
    "SUPER_FINDING_MISMATCH:alone": "No distinct locationless leaf finding corresponds to this rolled-up finding.",
    "SUPER_DUPLICATE_FINDINGS": "Top-level findings {i} and {j} overlap and prescribe the same correction; they must "
    "be merged.",
    "SUPER_FINDING_MISSING": "No distinct rolled-up finding represents a locationless finding from '{p}'.",
    "SUPER_FINDING_MISSING:located": "No valid rolled-up finding represents a finding from '{p}' at its source "
    "location.",
}


class Problem(NamedTuple):
    code: str
    path: str  # a JSON path: $, $.findings[0].id, $.sub-results[1].summary.coverage
    message: str

    def __str__(self) -> str:
        if self.code == SCHEMA:
            return f"Invalid findings-report JSON or schema: {self.message}"
        return f"{self.code} at {self.path}: {self.message}"


@dataclass(frozen=True)
class Scope:
    """What a report is checked against (upstream's parameters). `corpus` or `retrieved` None: not known here, so
    not checked (the review gate cannot see what its reviewer read, and checks cited articles itself)."""

    corpus: Path | None = None  # -BCQualityRoot: cited paths must be files under it
    retrieved: frozenset[str] | None = frozenset()  # -RetrievedArticlePaths
    source_root: Path | None = None  # -SourceRoot: location lines are counted there
    sources: frozenset[str] = frozenset()  # -SourcePaths: the files findings may point at
    kind: str = LEAF  # -SkillKind
    composition: Composition | None = None  # -ExpectedCompositionPath (super only)


@dataclass
class Accepted:
    """The verdict on one report: no problems means accepted; `report` is then the accepted report (a normalized
    copy when `normalized`, the input is never changed) with upstream's telemetry of what normalization did."""

    problems: list[Problem]
    report: Any
    normalized: bool = False
    normalized_ids: list[dict[str, Any]] = field(default_factory=list)
    removed_ranges: list[dict[str, Any]] = field(default_factory=list)


def line_count(data: bytes) -> int:
    """Lines as .NET's ReadAllLines counts them: CRLF, LF or CR end a line; a final newline adds none."""
    return len(data.splitlines())


class _Checker:
    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.problems: list[Problem] = []
        self._lines: dict[str, int | None] = {}

    def add(self, key: str, path: str, **values: Any) -> None:
        self.problems.append(Problem(key.split(":")[0], path, MESSAGES[key].format(**values)))

    def report(self, current: dict[str, Any], prefix: str, kind: str) -> None:
        findings = current["findings"]
        for severity in SEVERITIES:
            actual = sum(1 for finding in findings if finding["severity"] == severity)
            if current["summary"]["counts"][severity] != actual:
                self.add("COUNT_MISMATCH", f"{prefix}.summary.counts.{severity}", n=actual)
        coverage, outcome = current["summary"]["coverage"], current["outcome"]
        size, done = coverage["worklist-size"], coverage["items-evaluated"]
        if done > size:
            self.add("COVERAGE_INVALID", f"{prefix}.summary.coverage")
        elif outcome == "completed" and done != size:
            self.add("COMPLETED_COVERAGE_INCOMPLETE", f"{prefix}.summary.coverage")
        elif kind == LEAF and outcome == "partial" and not 0 < done < size:
            self.add("PARTIAL_COVERAGE_INVALID", f"{prefix}.summary.coverage")
        composed = "sub-results" in current
        if kind == LEAF and (composed or "skipped-sub-skills" in current):
            self.add("LEAF_COMPOSITION_INVALID", prefix)
        elif kind == SUPER and not composed:
            self.add("SUPER_SUB_RESULTS_REQUIRED", prefix)
        for index, finding in enumerate(findings):
            self._finding(finding, f"{prefix}.findings[{index}]", kind)
        if kind == SUPER and composed:
            self._super(current, prefix)

    def _finding(self, finding: dict[str, Any], path: str, kind: str) -> None:
        producer = finding.get("from-sub-skill")
        if kind == LEAF and producer is not None:
            self.add("LEAF_PRODUCER_INVALID", f"{path}.from-sub-skill")
        elif kind == SUPER and producer is None:
            self.add("SUPER_PRODUCER_REQUIRED", path)
        references = finding["references"]
        if not references:
            own = kind == LEAF or producer == "agent"  # else the id carries its producer: <producer>:agent:<slug>
            marker = "agent:" if own else re.escape(producer or "") + ":agent:"
            if not re.match(f"^{marker}{SLUG}$", finding["id"]):
                self.add("AGENT_ID_INVALID", f"{path}.id")
            if finding["confidence"] == "high":
                self.add("AGENT_CONFIDENCE_INVALID", f"{path}.confidence")
            if finding["severity"] in ("blocker", "major"):
                self.add("AGENT_SEVERITY_INVALID", f"{path}.severity")
        else:
            if re.search("(^|:)agent:", finding["id"]) or producer == "agent":
                self.add("AGENT_REFERENCE_INVALID", f"{path}.references")
            if finding["id"] != references[0]["path"]:
                self.add("PRIMARY_REFERENCE_MISMATCH", f"{path}.id")
            for reference in references:
                self._citation(reference["path"], f"{path}.references")
        if "location" in finding:
            self._location(finding["location"], path)

    def _citation(self, cited: str, path: str) -> None:
        if not KNOWLEDGE_PATH.search(cited) or UNSAFE_PATH.search(cited):
            self.add("REFERENCE_PATH_INVALID", path, p=cited)
            return
        if self.scope.corpus is not None and not (self.scope.corpus / cited).is_file():
            self.add("REFERENCE_MISSING", path, p=cited)
        if self.scope.retrieved is not None and cited not in self.scope.retrieved:
            self.add("REFERENCE_NOT_RETRIEVED", path, p=cited)

    def _location(self, location: dict[str, Any], path: str) -> None:
        file = location["file"]
        if file not in self.scope.sources:
            self.add("SOURCE_OUT_OF_SCOPE", f"{path}.location.file", f=file)
        if file not in self._lines:  # counted under the source root; None: no root, or no such file under it
            found = inside(self.scope.source_root, file) if self.scope.source_root is not None else None
            try:
                self._lines[file] = line_count(found.read_bytes()) if found is not None and found.is_file() else None
            except OSError:
                self._lines[file] = None
        count = self._lines[file]
        if count is None:
            self.add("SOURCE_MISSING", f"{path}.location.file", f=file)
        elif location["line"] > count:
            self.add("SOURCE_LINE_INVALID", f"{path}.location.line", n=count)
        span = location.get("range")
        if span is not None and span["start-line"] != location["line"]:
            self.add("RANGE_START_MISMATCH", f"{path}.location.range.start-line")
        if span is not None and (
            span["end-line"] < span["start-line"] or (count is not None and span["end-line"] > count)
        ):
            self.add("SOURCE_RANGE_INVALID", f"{path}.location.range")

    def _super(self, current: dict[str, Any], prefix: str) -> None:
        """A super-skill report with sub-results: each sub-result is checked as a leaf of its own right after its
        duplicate test; then skips, the composition, outcome, coverage and the rolled-up findings."""
        subs = current["sub-results"]
        returned: set[str] = set()
        for index, sub in enumerate(subs):
            if sub["skill"]["id"] in returned:
                self.add("SUPER_DUPLICATE_SUB_RESULT", f"{prefix}.sub-results[{index}].skill.id")
            returned.add(sub["skill"]["id"])
            self.report(sub, f"{prefix}.sub-results[{index}]", LEAF)
        skipped: set[str] = set()
        for skip in current.get("skipped-sub-skills", []):
            if skip["skill"]["id"] in skipped | returned:
                self.add("SUPER_SKIP_CONFLICT", f"{prefix}.skipped-sub-skills", id=skip["skill"]["id"])
            skipped.add(skip["skill"]["id"])
        chosen = self.scope.composition
        missing = self._composition(current, prefix, chosen) if chosen is not None else 0
        expected = derived_outcome([sub["outcome"] for sub in subs], missing)
        if current["outcome"] != expected:
            self.add("SUPER_OUTCOME_MISMATCH", f"{prefix}.outcome", o=expected)
        included = [sub for sub in subs if sub["outcome"] != "failed"]
        size = sum(sub["summary"]["coverage"]["worklist-size"] for sub in included)
        done = sum(sub["summary"]["coverage"]["items-evaluated"] for sub in included)
        coverage = current["summary"]["coverage"]
        if (coverage["worklist-size"], coverage["items-evaluated"]) != (size, done):
            self.add("SUPER_COVERAGE_MISMATCH", f"{prefix}.summary.coverage", w=size, i=done)
        failed = {sub["skill"]["id"] for sub in subs if sub["outcome"] == "failed"}
        eligible = [(sub["skill"]["id"], finding) for sub in included for finding in sub["findings"]]
        producers = {sub["skill"]["id"] for sub in included}
        for index, finding in enumerate(current["findings"]):
            self._rolled(finding, f"{prefix}.findings[{index}]", eligible, failed, producers, missing)
        self._represented(current["findings"], eligible, prefix)

    def _composition(self, current: dict[str, Any], prefix: str, chosen: Composition) -> int:
        """The checks against the coordinator's composition; returns how many selected leaves are not returned."""
        if (current["skill"]["id"], current["skill"]["version"]) != chosen.super_skill:
            self.add("SUPER_IDENTITY_MISMATCH", f"{prefix}.skill")
        order, previous = list(chosen.leaves), -1
        for index, sub in enumerate(current["sub-results"]):
            name, where = sub["skill"]["id"], f"{prefix}.sub-results[{index}]"
            if name not in chosen.leaves:
                self.add("SUPER_UNEXPECTED_SUB_RESULT", f"{where}.skill", id=name)
                continue
            if sub["skill"]["version"] != chosen.leaves[name]:
                self.add("SUPER_LEAF_VERSION_MISMATCH", f"{where}.skill.version", id=name)
            if name not in chosen.accepted:
                self.add("SUPER_LEAF_NOT_ACCEPTED", where, id=name)
            elif not same_json(sub, chosen.accepted[name]):
                self.add("SUPER_LEAF_CONTENT_MISMATCH", where, id=name)
            if order.index(name) <= previous:
                self.add("SUPER_SUB_RESULT_ORDER", f"{where}.skill")
            previous = order.index(name)
        returned = {sub["skill"]["id"] for sub in current["sub-results"]}
        missing = [name for name in order if name not in returned]
        for name in missing:
            if name in chosen.accepted:
                self.add("SUPER_ACCEPTED_LEAF_MISSING", f"{prefix}.sub-results", id=name)
            # named as a whole token: no letter, digit, _ or - next to it
            if not re.search(
                rf"(?<![a-zA-Z0-9_-]){re.escape(name)}(?![a-zA-Z0-9_-])", current.get("outcome-reason", "")
            ):
                self.add("SUPER_MISSING_LEAF_REASON", f"{prefix}.outcome-reason", id=name)
        skips = current.get("skipped-sub-skills", [])
        for skip in skips:
            name = skip["skill"]["id"]
            if name not in chosen.skips:
                self.add("SUPER_UNEXPECTED_SKIP", f"{prefix}.skipped-sub-skills", id=name)
            elif (skip["skill"]["version"], skip["reason"]) != chosen.skips[name]:
                self.add("SUPER_SKIP_MISMATCH", f"{prefix}.skipped-sub-skills", id=name)
        reported = {skip["skill"]["id"] for skip in skips}
        for name in (name for name in chosen.skips if name not in reported):
            self.add("SUPER_SKIP_MISSING", f"{prefix}.skipped-sub-skills", id=name)
        return len(missing)

    def _rolled(self, finding: dict, where: str, eligible: list, failed: set, producers: set, missing: int) -> None:
        """One top-level finding of a super-skill report: its own agent finding, or a roll-up its producer owns."""
        producer = finding.get("from-sub-skill", "")
        if producer == "agent":
            if missing:
                self.add("SUPER_AGENT_REVIEW_INCOMPLETE", where)
            if (
                finding["references"]
                or not re.match(f"^agent:{SLUG}$", finding["id"])
                or finding.get("domain") != "Agent"
            ):
                self.add("SUPER_AGENT_FINDING_INVALID", where)
        elif producer in failed:
            self.add("SUPER_FAILED_FINDING_LEAKAGE", f"{where}.from-sub-skill", p=producer)
        elif producer not in producers:
            self.add("SUPER_PRODUCER_INVALID", f"{where}.from-sub-skill", p=producer)
        elif not any(name == producer and represents(finding, leaf, name, owner=True) for name, leaf in eligible):
            self.add("SUPER_FINDING_MISMATCH", where, id=finding["id"], p=producer)
        else:
            represented = [leaf for name, leaf in eligible if represents(finding, leaf, name)]
            if len({leaf["suggested-code"] for leaf in represented if "suggested-code" in leaf}) > 1:
                self.add("SUPER_FINDING_MISMATCH:conflict", where, id=finding["id"])
            elif (SEVERITY_RANK[finding["severity"]], CONFIDENCE_RANK[finding["confidence"]]) != (
                max(SEVERITY_RANK[leaf["severity"]] for leaf in represented),
                max(CONFIDENCE_RANK[leaf["confidence"]] for leaf in represented),
            ):
                self.add("SUPER_FINDING_MISMATCH:rank", where, id=finding["id"])

    def _represented(self, findings: list[dict[str, Any]], eligible: list, prefix: str) -> None:
        """Top-level findings that should have been merged, and leaf findings no rolled-up finding represents (a
        locationless one needs a distinct locationless roll-up of its own)."""
        for first, one in enumerate(findings):
            for second in range(first + 1, len(findings)):
                if overlap(one, findings[second]) and same_correction(one, findings[second]):
                    self.add("SUPER_DUPLICATE_FINDINGS", f"{prefix}.findings[{second}]", i=first, j=second)
        used: set[int] = set()
        for producer, leaf in (item for item in eligible if "location" not in item[1]):
            match = [
                index
                for index, rolled in enumerate(findings)
                if index not in used and "location" not in rolled and represents(rolled, leaf, producer)
            ]
            if match:
                used.add(match[0])
            else:
                self.add("SUPER_FINDING_MISSING", f"{prefix}.findings", p=producer)
        for index, rolled in enumerate(findings):
            if rolled.get("from-sub-skill") != "agent" and "location" not in rolled and index not in used:
                self.add("SUPER_FINDING_MISMATCH:alone", f"{prefix}.findings[{index}]")
        for producer, leaf in (item for item in eligible if "location" in item[1]):
            if not any(
                rolled.get("from-sub-skill") != "agent" and represents(rolled, leaf, producer) for rolled in findings
            ):
                self.add("SUPER_FINDING_MISSING:located", f"{prefix}.findings", p=producer)


def semantic_problems(report: dict[str, Any], scope: Scope) -> list[Problem]:
    """Every semantic problem of a schema-valid report, in upstream's order (sub-results as leaves of their own)."""
    checker = _Checker(scope)
    checker.report(report, "$", scope.kind)
    return checker.problems


def judge(report: Any, scope: Scope, normalize: bool = False) -> Accepted:
    """The verdict on a report: the schema, then the semantic checks; with `normalize`, a report whose only problems
    bounded normalization repairs is accepted as its normalized copy (§3.5)."""
    invalid = findings_report_errors(report)
    if invalid:
        return Accepted([Problem(SCHEMA, "$", line) for line in invalid], report)
    problems = semantic_problems(report, scope)
    if problems and normalize and not any(problem.code in CITATION_CODES for problem in problems):
        return _normalized(report, scope) or Accepted(problems, report)
    return Accepted(problems, report)


def _normalized(report: dict[str, Any], scope: Scope) -> Accepted | None:
    """§3.5 on a copy, top-level findings only: ids become their primary reference path, then a range whose start
    is not its line is removed when the line lies inside it and no suggested-code depends on it."""
    candidate = copy.deepcopy(report)
    ids: list[dict[str, Any]] = []
    for index, finding in enumerate(candidate["findings"]):
        references = finding["references"]
        if references and finding["id"] != references[0]["path"]:
            ids.append({"findingIndex": index, "originalId": finding["id"], "canonicalId": references[0]["path"]})
            finding["id"] = references[0]["path"]
    if any(problem.code != "RANGE_START_MISMATCH" for problem in semantic_problems(candidate, scope)):
        return None
    ranges: list[dict[str, Any]] = []
    for index, finding in enumerate(candidate["findings"]):
        location = finding.get("location", {})
        span = location.get("range")
        if span is None or span["start-line"] == location["line"]:
            continue
        if not span["start-line"] <= location["line"] <= span["end-line"] or "suggested-code" in finding:
            return None
        removed = {
            "findingIndex": index,
            "findingId": finding["id"],
            "file": location["file"],
            "line": location["line"],
        }
        ranges.append({**removed, "startLine": span["start-line"], "endLine": span["end-line"]})
        del location["range"]
    if findings_report_errors(candidate) or semantic_problems(candidate, scope):
        return None
    return Accepted([], candidate, True, ids, ranges)
