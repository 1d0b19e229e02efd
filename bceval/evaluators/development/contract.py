"""The findings-report contract of upstream's Validate-FindingsReport.ps1 (spec upstream-2026-09.md §3): after the
draft-07 schema (bceval.evaluators.development.findings), the semantic checks with upstream's codes, JSON paths,
messages and order, and the bounded normalization. `bceval findings validate` and the review gate both use it."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from bceval.evaluators.development import inside
from bceval.evaluators.development.findings import findings_report_errors
from bceval.evaluators.development.superskill import SLUG, Composition, super_problems

LEAF, SUPER = "leaf", "super"
SEVERITIES = ("blocker", "major", "minor", "info")
KNOWLEDGE_PATH = re.compile(r"^(microsoft|community|custom)/knowledge/.+\.md$")
UNSAFE_PATH = re.compile(r"(^|/)\.{1,2}(/|$)|//|[\\:#?%*\x00-\x1f\x7f]")
AGENT_MARK = re.compile(r"(^|:)agent:")
RANGE_START = "RANGE_START_MISMATCH"
SCHEMA = "SCHEMA"  # no upstream code: upstream throws at the first schema error, bceval lists them all
# normalization never repairs a citation: these errors leave the report rejected as it is
CITATION_CODES = ("REFERENCE_PATH_INVALID", "REFERENCE_MISSING", "REFERENCE_NOT_RETRIEVED", "AGENT_REFERENCE_INVALID")


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

    def add(self, code: str, path: str, message: str) -> None:
        self.problems.append(Problem(code, path, message))

    def report(self, current: dict[str, Any], prefix: str, kind: str) -> None:
        findings = current["findings"]
        for severity in SEVERITIES:
            actual = sum(1 for finding in findings if finding["severity"] == severity)
            if current["summary"]["counts"][severity] != actual:
                self.add("COUNT_MISMATCH", f"{prefix}.summary.counts.{severity}", f"Expected {actual}.")
        self._coverage(current, prefix, kind)
        composed = "sub-results" in current
        if kind == LEAF and (composed or "skipped-sub-skills" in current):
            message = "A leaf report must not contain sub-results or skipped-sub-skills."
            self.add("LEAF_COMPOSITION_INVALID", prefix, message)
        elif kind == SUPER and not composed:
            self.add("SUPER_SUB_RESULTS_REQUIRED", prefix, "A super-skill report must contain sub-results.")
        for index, finding in enumerate(findings):
            self._finding(finding, f"{prefix}.findings[{index}]", kind)
        if kind == SUPER and composed:
            super_problems(
                self.add, lambda sub, where: self.report(sub, where, LEAF), current, prefix, self.scope.composition
            )

    def _coverage(self, current: dict[str, Any], prefix: str, kind: str) -> None:
        coverage, where = current["summary"]["coverage"], f"{prefix}.summary.coverage"
        size, done = coverage["worklist-size"], coverage["items-evaluated"]
        if done > size:
            self.add("COVERAGE_INVALID", where, "items-evaluated exceeds worklist-size.")
        elif current["outcome"] == "completed" and done != size:
            self.add("COMPLETED_COVERAGE_INCOMPLETE", where, "A completed report must evaluate its full worklist.")
        elif kind == LEAF and current["outcome"] == "partial" and not 0 < done < size:
            message = "A partial report must evaluate a non-zero proper subset of its worklist."
            self.add("PARTIAL_COVERAGE_INVALID", where, message)

    def _finding(self, finding: dict[str, Any], path: str, kind: str) -> None:
        producer = finding.get("from-sub-skill")
        if kind == LEAF and producer is not None:
            self.add(
                "LEAF_PRODUCER_INVALID", f"{path}.from-sub-skill", "A leaf finding must not contain from-sub-skill."
            )
        elif kind == SUPER and producer is None:
            message = "A super-skill finding must identify its producer in from-sub-skill."
            self.add("SUPER_PRODUCER_REQUIRED", path, message)
        if not finding["references"]:
            own = kind == LEAF or producer == "agent"  # else the id carries its producer: <producer>:agent:<slug>
            marker = "agent:" if own else re.escape(producer or "") + ":agent:"
            if not re.match(f"^{marker}{SLUG}$", finding["id"]):
                self.add(
                    "AGENT_ID_INVALID", f"{path}.id", "An agent finding id must use its role-specific agent: prefix."
                )
            if finding["confidence"] == "high":
                self.add("AGENT_CONFIDENCE_INVALID", f"{path}.confidence", "Agent confidence cannot be high.")
            if finding["severity"] in ("blocker", "major"):
                self.add("AGENT_SEVERITY_INVALID", f"{path}.severity", "Agent severity cannot exceed minor.")
        else:
            self._citations(finding, path, producer)
        if "location" in finding:
            self._location(finding["location"], path)

    def _citations(self, finding: dict[str, Any], path: str, producer: str | None) -> None:
        references = finding["references"]
        if AGENT_MARK.search(finding["id"]) or producer == "agent":
            self.add("AGENT_REFERENCE_INVALID", f"{path}.references", "An agent finding must not contain citations.")
        if finding["id"] != references[0]["path"]:
            self.add("PRIMARY_REFERENCE_MISMATCH", f"{path}.id", "Finding id must equal the primary reference path.")
        corpus, retrieved = self.scope.corpus, self.scope.retrieved
        for reference in references:
            cited = reference["path"]
            if not KNOWLEDGE_PATH.search(cited) or UNSAFE_PATH.search(cited):
                self.add("REFERENCE_PATH_INVALID", f"{path}.references", f"Invalid knowledge path '{cited}'.")
                continue
            if corpus is not None and not (corpus / cited).is_file():
                self.add("REFERENCE_MISSING", f"{path}.references", f"Knowledge path '{cited}' does not exist.")
            if retrieved is not None and cited not in retrieved:
                message = f"Knowledge path '{cited}' was not retrieved in full."
                self.add("REFERENCE_NOT_RETRIEVED", f"{path}.references", message)

    def _location(self, location: dict[str, Any], path: str) -> None:
        file = location["file"]
        if file not in self.scope.sources:
            message = f"Source path '{file}' is outside the supplied scope."
            self.add("SOURCE_OUT_OF_SCOPE", f"{path}.location.file", message)
        count = self._line_count(file)
        if count is None:
            self.add("SOURCE_MISSING", f"{path}.location.file", f"Source path '{file}' does not exist.")
        elif location["line"] > count:
            self.add("SOURCE_LINE_INVALID", f"{path}.location.line", f"Line exceeds the file's {count} lines.")
        span = location.get("range")
        if span is None:
            return
        if span["start-line"] != location["line"]:
            self.add(RANGE_START, f"{path}.location.range.start-line", "start-line must equal line.")
        if span["end-line"] < span["start-line"] or (count is not None and span["end-line"] > count):
            message = "Range is reversed or exceeds the source file."
            self.add("SOURCE_RANGE_INVALID", f"{path}.location.range", message)

    def _line_count(self, file: str) -> int | None:
        """The lines of `file` under the source root; None when there is no root or no such file under it."""
        if file not in self._lines:
            found = inside(self.scope.source_root, file) if self.scope.source_root is not None else None
            try:
                self._lines[file] = line_count(found.read_bytes()) if found is not None and found.is_file() else None
            except OSError:
                self._lines[file] = None
        return self._lines[file]


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
    if any(problem.code != RANGE_START for problem in semantic_problems(candidate, scope)):
        return None
    ranges: list[dict[str, Any]] = []
    for index, finding in enumerate(candidate["findings"]):
        location = finding.get("location", {})
        span = location.get("range")
        if span is None or span["start-line"] == location["line"]:
            continue
        if not span["start-line"] <= location["line"] <= span["end-line"] or "suggested-code" in finding:
            return None
        ranges.append(
            {
                "findingIndex": index,
                "findingId": finding["id"],
                "file": location["file"],
                "line": location["line"],
                "startLine": span["start-line"],
                "endLine": span["end-line"],
            }
        )
        del location["range"]
    if findings_report_errors(candidate) or semantic_problems(candidate, scope):
        return None
    return Accepted([], candidate, True, ids, ranges)
