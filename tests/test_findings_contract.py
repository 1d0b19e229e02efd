"""The findings-report contract (spec upstream-2026-09.md §3) for leaf reports: every leaf code of §3.3 from a
known-bad report next to the known-good one that yields nothing, bounded normalization (§3.5), `bceval findings
validate`'s lines and exit codes, and the review gate judging its reviewer's answers by the same checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from findings_util import (
    CONSENT,
    OTHER,
    PRIVACY,
    RETENTION,
    SOURCE,
    agent,
    changed,
    cited,
    composition,
    leaf,
    lines,
    make_world,
    report,
    rolled,
    super_scope,
)
from test_development_run import CHECKS_DIR, _checks, develop

from bceval.cli import main
from bceval.evaluators.development.contract import SUPER, Scope, judge, line_count, semantic_problems
from bceval.evaluators.development.superskill import load_composition


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    return make_world(tmp_path)


def test_the_known_good_leaf_and_super_reports_are_accepted_as_they_are(world):
    assert judge(leaf(), world["scope"]).problems == []
    scope = Scope(**{**world["scope"].__dict__, "kind": SUPER})
    assert judge(rolled(), scope).problems == []
    with_composition = Scope(**{**scope.__dict__, "composition": load_composition(composition(world["root"]))})
    verdict = judge(rolled(), with_composition)
    assert (verdict.problems, verdict.normalized, verdict.report) == ([], False, rolled())


LEAF_CASES = [
    ("COUNT_MISMATCH", "summary.counts.major", 2, "COUNT_MISMATCH at $.summary.counts.major: Expected 1."),
    ("COVERAGE_INVALID", "summary.coverage.items-evaluated", 2, "at $.summary.coverage: items-evaluated exceeds"),
    ("COMPLETED_COVERAGE_INCOMPLETE", "summary.coverage.worklist-size", 3, "must evaluate its full worklist."),
    ("LEAF_COMPOSITION_INVALID", "sub-results", [], "LEAF_COMPOSITION_INVALID at $: A leaf report must not"),
    ("LEAF_PRODUCER_INVALID", "findings.0.from-sub-skill", PRIVACY, "at $.findings[0].from-sub-skill: A leaf"),
    ("AGENT_ID_INVALID", "findings.1.id", "privacy:agent:x", "AGENT_ID_INVALID at $.findings[1].id: An agent"),
    ("AGENT_REFERENCE_INVALID", "findings.0.id", "agent:consent", "at $.findings[0].references: An agent finding"),
    ("PRIMARY_REFERENCE_MISMATCH", "findings.0.id", "consent", "at $.findings[0].id: Finding id must equal the"),
    ("REFERENCE_PATH_INVALID", "findings.0.references.0.path", "docs/a.md", "Invalid knowledge path 'docs/a.md'."),
    ("REFERENCE_MISSING", "findings.0.references.0.path", "microsoft/knowledge/privacy/gone.md", "does not exist."),
    ("REFERENCE_NOT_RETRIEVED", "findings.0.references.0.path", RETENTION, f"'{RETENTION}' was not retrieved in"),
    ("SOURCE_OUT_OF_SCOPE", "findings.0.location.file", OTHER, f"Source path '{OTHER}' is outside the supplied"),
    ("SOURCE_MISSING", "findings.0.location.file", "app/Gone.al", "Source path 'app/Gone.al' does not exist."),
    ("SOURCE_LINE_INVALID", "findings.0.location", {"file": SOURCE, "line": 13}, "Line exceeds the file's 12 lines."),
    ("RANGE_START_MISMATCH", "findings.0.location.range.start-line", 3, "range.start-line: start-line must equal"),
    ("SOURCE_RANGE_INVALID", "findings.0.location.range.end-line", 13, "Range is reversed or exceeds the source"),
    ("SOURCE_RANGE_INVALID", "findings.0.location.range.end-line", 3, "at $.findings[0].location.range: Range is"),
]


@pytest.mark.parametrize(("code", "path", "value", "text"), LEAF_CASES, ids=[c[0] for c in LEAF_CASES])
def test_each_leaf_code_comes_from_its_known_bad_report(world, code, path, value, text):
    found = lines(changed(leaf(), path, value), world["scope"])
    assert any(line.startswith(code) and text in line for line in found), found
    assert not any(line.startswith(code) for line in lines(leaf(), world["scope"]))


def test_a_partial_report_must_evaluate_a_proper_subset_of_its_worklist(world):
    partial = {**leaf(), "outcome": "partial", "outcome-reason": "the second file timed out"}
    message = "PARTIAL_COVERAGE_INVALID at $.summary.coverage: A partial report must evaluate a non-zero proper subset"
    assert lines(partial, world["scope"])[0].startswith(message)
    partial["summary"]["coverage"]["worklist-size"] = 2
    assert lines(partial, world["scope"]) == []


def test_agent_caps_are_the_schemas_first_and_the_semantic_checks_second(world):
    # since 0b3a5f0 the schema refuses an uncited finding above minor or with high confidence, so a report never
    # reaches AGENT_SEVERITY_INVALID or AGENT_CONFIDENCE_INVALID; the semantic layer still has them
    loud = report([agent(severity="major", confidence="high")])
    assert all(
        line.startswith("Invalid findings-report JSON or schema: findings/0/") for line in lines(loud, world["scope"])
    )
    found = [str(p) for p in semantic_problems(loud, world["scope"])]
    assert "AGENT_CONFIDENCE_INVALID at $.findings[0].confidence: Agent confidence cannot be high." in found
    assert "AGENT_SEVERITY_INVALID at $.findings[0].severity: Agent severity cannot exceed minor." in found
    assert semantic_problems(leaf(), world["scope"]) == []


@pytest.mark.parametrize(
    "path",
    [
        "microsoft/knowledge/../x.md",
        "microsoft/knowledge/./x.md",
        "microsoft//knowledge/x.md",
        "/microsoft/knowledge/x.md",
        "microsoft/knowledge/%2e%2e/x.md",
        "microsoft/knowledge/x#y.md",
        "microsoft/knowledge/x?.md",
    ],
)
def test_unsafe_knowledge_paths_are_invalid_and_checked_no_further(world, path):
    bad = changed(leaf(), "findings.0.references", [{"path": path}])
    assert [line for line in lines(bad, world["scope"]) if "references" in line] == [
        f"REFERENCE_PATH_INVALID at $.findings[0].references: Invalid knowledge path '{path}'."
    ]


def test_a_backslash_in_a_path_is_the_schemas(world):
    bad = changed(leaf(), "findings.0.references.0.path", "microsoft\\knowledge\\a.md")
    assert lines(bad, world["scope"])[0].startswith("Invalid findings-report JSON or schema: findings/0/references/0")


def test_lines_are_counted_as_dotnet_reads_them():
    assert [line_count(data) for data in (b"", b"a", b"a\n", b"a\r\nb", b"a\rb\r", b"a\n\n", b"\n")] == [
        0,
        1,
        1,
        2,
        2,
        2,
        1,
    ]


def fragments() -> dict[str, Any]:
    """Four findings needing normalization: two fragment ids, and two ranges that start before their line."""
    first = cited(id=f"{CONSENT}#L4")
    second = cited(id=f"{CONSENT}:L9", location={"file": SOURCE, "line": 9, "range": {"start-line": 8, "end-line": 10}})
    third = cited(location={"file": SOURCE, "line": 5, "range": {"start-line": 4, "end-line": 5}})
    return report([first, second, third, agent()])


def test_bounded_normalization_repairs_ids_and_ranges_on_a_copy(world):
    given = fragments()
    verdict = judge(given, world["scope"], normalize=True)
    assert given == fragments() and verdict.problems == [] and verdict.normalized
    assert verdict.normalized_ids == [
        {"findingIndex": 0, "originalId": f"{CONSENT}#L4", "canonicalId": CONSENT},
        {"findingIndex": 1, "originalId": f"{CONSENT}:L9", "canonicalId": CONSENT},
    ]
    assert verdict.removed_ranges == [
        {"findingIndex": 1, "findingId": CONSENT, "file": SOURCE, "line": 9, "startLine": 8, "endLine": 10},
        {"findingIndex": 2, "findingId": CONSENT, "file": SOURCE, "line": 5, "startLine": 4, "endLine": 5},
    ]
    assert "range" not in verdict.report["findings"][1]["location"] and verdict.report["findings"][0]["id"] == CONSENT
    assert [p.code for p in judge(given, world["scope"]).problems] == ["PRIMARY_REFERENCE_MISMATCH"] * 2 + [
        "RANGE_START_MISMATCH"
    ] * 2


@pytest.mark.parametrize(
    ("start", "line", "end", "code", "eligible"),
    [
        (4, 5, 6, False, True),
        (4, 4, 6, False, True),  # nothing to remove
        (4, 6, 6, False, True),
        (5, 4, 6, False, False),  # the line lies before the range
        (2, 4, 3, False, False),  # ... after it
        (4, 5, 6, True, False),  # suggested-code depends on the range
        (6, 5, 4, False, False),  # reversed
        (4, 5, 13, False, False),  # beyond the file: not only a start mismatch
    ],
)
def test_a_range_is_removed_only_when_its_line_lies_inside_and_no_code_depends_on_it(
    world, start, line, end, code, eligible
):
    finding = cited(location={"file": SOURCE, "line": line, "range": {"start-line": start, "end-line": end}})
    if code:
        finding["suggested-code"] = "Session.LogMessage(...)"
    verdict = judge(report([finding]), world["scope"], normalize=True)
    assert (verdict.problems == []) is eligible, verdict.problems


def test_citation_problems_block_normalization(world):
    unretrieved = fragments()
    unretrieved["findings"][2]["references"].append({"path": RETENTION})
    verdict = judge(unretrieved, world["scope"], normalize=True)
    assert not verdict.normalized and "REFERENCE_NOT_RETRIEVED" in {p.code for p in verdict.problems}


def test_fragment_ids_of_nested_leaf_reports_are_never_normalized(world):
    nested = rolled()
    nested["sub-results"][0]["findings"][0]["id"] = f"{CONSENT}#L4"
    verdict = judge(nested, super_scope(world, composed=False), normalize=True)
    assert not verdict.normalized
    assert (
        "PRIMARY_REFERENCE_MISMATCH at $.sub-results[0].findings[0].id: Finding id must equal the primary reference "
        "path." in [str(p) for p in verdict.problems]
    )


def validate(world: dict, capsys, document: Any, *extra: str, raw: bytes | None = None) -> tuple[int, str, str]:
    path = world["root"] / "report.json"
    path.write_bytes(raw if raw is not None else json.dumps(document).encode("utf-8"))
    root = world["root"]
    args = ["findings", "validate", str(path), "--corpus", str(root / "bcq"), "--retrieved", CONSENT]
    code = main([*args, "--source-root", str(root / "src"), "--source", SOURCE, *extra])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def test_the_command_accepts_with_one_line_and_rejects_with_one_line_per_problem(world, capsys):
    assert validate(world, capsys, leaf()) == (
        0,
        f"Findings-report accepted: {world['root'] / 'report.json'} (leaf report).\n",
        "",
    )
    bad = changed(changed(leaf(), "summary.counts.major", 0), "findings.0.location.line", 13)
    code, out, err = validate(world, capsys, bad)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "COUNT_MISMATCH at $.summary.counts.major: Expected 1.",
        "SOURCE_LINE_INVALID at $.findings[0].location.line: Line exceeds the file's 12 lines.",
        "RANGE_START_MISMATCH at $.findings[0].location.range.start-line: start-line must equal line.",
    ]
    code, out, _ = validate(world, capsys, fragments(), "--normalize")
    assert code == 0 and out.endswith("(leaf report, after bounded normalization of 2 id(s) and 2 range(s)).\n")


def test_the_report_file_is_never_changed(world, capsys):
    raw = b"\xef\xbb\xbf" + json.dumps(fragments(), indent=1).replace("\n", "\r\n").encode("utf-8")
    assert validate(world, capsys, None, "--normalize", raw=raw)[0] == 0
    assert (world["root"] / "report.json").read_bytes() == raw


def test_a_report_without_retrieval_evidence_cites_nothing_it_retrieved(world, capsys):
    path = world["root"] / "report.json"
    path.write_text(json.dumps(report([cited(location={"file": SOURCE, "line": 4})])), encoding="utf-8")
    assert main(["findings", "validate", str(path), "--corpus", str(world["root"] / "bcq")]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"REFERENCE_NOT_RETRIEVED at $.findings[0].references: Knowledge path '{CONSENT}' was not retrieved in full.",
        f"SOURCE_OUT_OF_SCOPE at $.findings[0].location.file: Source path '{SOURCE}' is outside the supplied scope.",
        f"SOURCE_MISSING at $.findings[0].location.file: Source path '{SOURCE}' does not exist.",
    ]


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b'{"skill": 1,}', "invalid JSON"),
        (b"// note\n{}", "invalid JSON"),
        (b"\xff{}", "not valid UTF-8"),
    ],
)
def test_a_report_that_is_no_json_is_one_error_line_naming_the_file(world, capsys, raw, said):
    code, out, err = validate(world, capsys, None, raw=raw)
    assert (code, out) == (2, "") and err.startswith(f"bceval: {world['root'] / 'report.json'}: {said}")
    assert len(err.splitlines()) == 1


def test_a_missing_report_or_a_json_array_is_refused(world, capsys):
    assert main(["findings", "validate", str(world["root"] / "none.json")]) == 2
    assert capsys.readouterr().err == f"bceval: {world['root'] / 'none.json'}: file not found\n"
    code, out, _ = validate(world, capsys, [leaf()])
    assert code == 1 and out.startswith("Invalid findings-report JSON or schema: (top level): [")


def test_report_text_in_a_problem_line_cannot_draw_on_the_console_or_forge_a_line(world, capsys):
    forged = changed(leaf(), "findings.0.location.file", "app/\x1b[31m\nFAKE_CODE at x.al")
    code, out, _ = validate(world, capsys, forged)
    assert code == 1 and "\x1b" not in out
    assert [line.split(" ")[0] for line in out.splitlines()] == [
        "SOURCE_OUT_OF_SCOPE",
        "SOURCE_MISSING",
    ]
    assert "Source path 'app/\\x1b[31m\\nFAKE_CODE at x.al' does not exist." in out


def test_timestamps_stay_strings(world, capsys):
    stamped = leaf()
    stamped["findings"][0]["message"] = "2026-09-14T10:00:00Z"
    assert validate(world, capsys, stamped)[0] == 0


def test_the_composition_flags(world, capsys):
    path = str(composition(world["root"]))
    assert validate(world, capsys, rolled(), "--super", "--expected-composition", path)[0] == 0
    code, out, err = validate(world, capsys, leaf(), "--expected-composition", path)
    assert (code, out) == (2, "")
    assert err == "bceval: --expected-composition: Expected composition is supported only for super-skill reports.\n"
    (world["root"] / "composition.json").write_text("{}", encoding="utf-8")
    code, _, err = validate(world, capsys, rolled(), "--super", "--expected-composition", path)
    assert (
        code == 2
        and err
        == f"bceval: {path}: Invalid expected composition: Expected composition does not satisfy its input contract.\n"
    )


def test_the_review_gate_judges_each_answer_by_the_contract(tmp_path, capsys):
    demo = str(CHECKS_DIR / "development-demo")
    answer = report([agent()])
    answer["summary"]["counts"]["minor"] = 0  # upstream refuses a report whose counts disagree with its findings
    reviewer = ["{python}", "-c", f"import sys; sys.stdin.read(); print({json.dumps(json.dumps(answer))})"]
    argv = ["{python}", f"{demo}/tests.py", "{case}"]
    code, _, _, out = develop(tmp_path, capsys, "good", *_checks(tmp_path, argv, review_argv=reviewer))
    folder = next(out.glob("development/case-*"))
    review = json.loads((folder / "evidence.json").read_text())["runner"][2]
    assert code == 1 and review["status"] == "not-run"
    log = (folder / "checks" / "review.log").read_text()
    assert "the answer is not a findings-report: COUNT_MISMATCH at $.summary.counts.minor: Expected 1." in log


def test_the_review_gate_keeps_what_normalization_changed(tmp_path, capsys):
    code, _, _, out = develop(tmp_path, capsys, "bad")
    folder = next(out.glob("development/case-*"))
    review = json.loads((folder / "checks" / "review.json").read_text())
    normalized = [answer for answer in review["answers"] if "normalizedIds" in answer]
    assert code == 1 and normalized  # the demo reviewer's ids carry its rule: upstream's host normalizes them
    assert all(f["id"] == f["references"][0]["path"] for f in review["merged"]["findings"])
    assert review["merged"]["findings"] and all(
        a["answer"]["findings"][0]["id"].startswith("demo-review:") for a in normalized
    )


@pytest.mark.parametrize("severity", ["blocker", "major", "minor", "info"])
@pytest.mark.parametrize("confidence", ["high", "medium", "low"])
def test_the_schema_caps_every_uncited_finding_at_minor_and_medium(world, severity, confidence):
    capped = severity in ("minor", "info") and confidence != "high"
    uncited = agent(severity=severity, confidence=confidence)
    assert (lines(report([uncited]), world["scope"]) == []) is capped
    own = {**agent(id="agent:cross-cutting", domain="Agent"), "severity": severity, "confidence": confidence}
    top = {**rolled(), "findings": [*rolled()["findings"][:2], {**own, "from-sub-skill": "agent"}]}
    top["summary"]["counts"] = report(top["findings"])["summary"]["counts"]
    nested = rolled()
    nested["sub-results"][0]["findings"][1].update(severity=severity, confidence=confidence)
    for document in (top, nested):
        schema = [line for line in lines(document, world["scope"]) if line.startswith("Invalid findings-report")]
        assert (schema == []) is capped, schema
