"""The knowledge-response validator of spec development.md §13: every message, in the spec's order, and the
regression list of its upstream semantics tests (layers, suppressions, traversal, questions, evidence), plus the
`bceval evidence` round trip."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bceval.cli import main
from bceval.evaluators.development.knowledge_response import validate_response

ONE = "microsoft/knowledge/a/one.md"
TWIN = "community/knowledge/a/one.md"  # the same basename in another layer
CUSTOM = "custom/knowledge/c.md"
QUESTION = "How should a page field be labelled?\n"
RUN = "run-0007"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    for path, body in ((ONE, "# One\nUse a ToolTip.\n"), (TWIN, "# Twin\nAnother layer.\n"), (CUSTOM, "# C\n")):
        (corpus / path).parent.mkdir(parents=True, exist_ok=True)
        (corpus / path).write_text(body, encoding="utf-8")
    (corpus / "microsoft/knowledge/latin1.md").write_bytes("caf\xe9\n".encode("latin-1"))
    (tmp_path / "elsewhere.md").write_text("# Outside\n", encoding="utf-8")
    (corpus / "microsoft/knowledge/out.md").symlink_to(tmp_path / "elsewhere.md")
    return corpus


def response(*paths: str, suppressed: list | None = None, **changes) -> dict:
    document = {
        "skill": {"id": "al-knowledge", "version": 1},
        "outcome": "completed",
        "question": QUESTION,
        "answer": "Give every page field a ToolTip.",
        "references": [{"path": p, "applicability": "applicable", "unknown": []} for p in paths],
        "suppressed": suppressed or [],
    }
    document.update(changes)
    return document


def read(root: Path, path: str, **changes) -> dict:
    data = (root / path).read_bytes()
    return {"path": path, "complete": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), **changes}


def evidence(*reads: dict, **changes) -> dict:
    return {
        "runId": RUN,
        "questionSha256": hashlib.sha256(QUESTION.encode()).hexdigest(),
        "reads": list(reads),
        **changes,
    }


def check(root: Path, document, proof=None, question: str = QUESTION, layers=("microsoft", "community", "custom")):
    return validate_response(document, question=question, root=root, run_id=RUN, evidence=proof, enabled_layers=layers)


def test_a_cited_answer_with_complete_reads_of_the_live_articles_is_valid(root):
    assert check(root, response(ONE, CUSTOM), evidence(read(root, ONE), read(root, CUSTOM))) == []
    assert check(root, response(outcome="no-knowledge", answer=""), None) == []  # nothing cited: no evidence needed


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"skill": {"id": "al-other", "version": 1}}, "Schema: 'al-knowledge' was expected"),
        ({"skill": {"id": "al-knowledge", "version": 0}}, "Schema: 0 is less than the minimum of 1"),
        ({"outcome": "not-applicable"}, "Schema: 'not-applicable' is not one of"),
        ({"outcome": "partial"}, "Schema: 'outcome-reason' is a required property"),
        ({"question": ""}, "Schema: '' should be non-empty"),
        ({"answer": ""}, "Schema: '' should be non-empty"),
        ({"references": []}, "Schema: [] should be non-empty"),
        ({"extra": 1}, "Schema: Additional properties are not allowed ('extra' was unexpected)"),
        ({"suppressed": [{"path": ONE, "reason": "taste"}]}, "Schema: 'taste' is not one of"),
    ],
)
def test_schema_errors_are_the_only_errors_and_each_is_prefixed(root, change, message):
    document = response(ONE, **change)
    errors = check(root, document, None, question="a different question")  # would add errors past the schema
    assert errors and all(e.startswith("Schema: ") for e in errors)
    assert any(e.startswith(message) for e in errors), errors


@pytest.mark.parametrize(
    ("reference", "fragment"),
    [
        ({"path": "microsoft/other/one.md", "applicability": "applicable", "unknown": []}, "does not match"),
        ({"path": ONE, "applicability": "applicable", "unknown": ["countries"]}, "is expected to be empty"),
        ({"path": ONE, "applicability": "conditional", "unknown": []}, "should be non-empty"),
        ({"path": ONE, "sha": "ABC", "applicability": "applicable", "unknown": []}, "does not match"),
    ],
)
def test_reference_shape_is_schema_checked(root, reference, fragment):
    errors = check(root, response(references=[reference]), None)
    assert len(errors) == 1 and errors[0].startswith("Schema: ") and fragment in errors[0], errors


def test_failed_and_no_knowledge_cite_nothing(root):
    for outcome in ("failed", "no-knowledge"):
        errors = check(root, response(ONE, outcome=outcome, **{"outcome-reason": "none"}), evidence(read(root, ONE)))
        cited = f"[{{'path': '{ONE}', 'applicability': 'applicable', 'unknown': []}}]"
        assert errors == [f"Schema: {cited} is expected to be empty"]


@pytest.mark.parametrize("asked", [QUESTION.strip(), QUESTION + " ", "How should a page field be named?\n"])
def test_a_rewritten_or_trimmed_question_is_refused(root, asked):
    document = response(ONE, question=asked)
    errors = check(root, document, evidence(read(root, ONE)))
    assert errors == ["question must equal the bound input exactly, including whitespace"]


def test_unknown_enabled_layers(root):
    assert check(root, response(ONE), evidence(read(root, ONE)), layers=("microsoft", "vendor")) == [
        "Unknown enabled layers"
    ]


def test_a_citation_from_a_disabled_layer_is_refused(root):
    errors = check(root, response(TWIN), evidence(read(root, TWIN)), layers=("microsoft",))
    assert errors == [f"Path belongs to a disabled layer: {TWIN}"]
    assert check(root, response(TWIN), evidence(read(root, TWIN)), layers=()) == [
        f"Path belongs to a disabled layer: {TWIN}"
    ]


def test_suppression_by_configuration_may_name_a_disabled_layer_precedence_may_not(root):
    configured = [{"path": TWIN, "reason": "configuration"}]
    assert check(root, response(ONE, suppressed=configured), evidence(read(root, ONE)), layers=("microsoft",)) == []
    precedence = [{"path": TWIN, "reason": "layer-precedence"}]
    assert check(root, response(ONE, suppressed=precedence), evidence(read(root, ONE)), layers=("microsoft",)) == [
        f"Path belongs to a disabled layer: {TWIN}"
    ]


def test_traversal_and_links_out_of_the_corpus_are_noncanonical(root):
    dotted = "microsoft/knowledge/../knowledge/a/one.md"
    assert check(root, response(dotted), evidence(read(root, ONE))) == [
        f"Noncanonical corpus path: {dotted}",
        f"Noncanonical citation path: {dotted}",
    ]
    linked = "microsoft/knowledge/out.md"
    assert check(root, response(linked), None) == [
        f"Noncanonical corpus path: {linked}",
        f"Citation is missing or outside the corpus: {linked}",
    ]
    suppressed = [{"path": "microsoft/knowledge//one.md", "reason": "layer-precedence"}]
    assert check(root, response(ONE, suppressed=suppressed), evidence(read(root, ONE))) == [
        "Noncanonical corpus path: microsoft/knowledge//one.md"
    ]


def test_a_missing_article(root):
    missing = "microsoft/knowledge/a/none.md"
    assert check(root, response(missing), evidence()) == [
        f"Corpus path does not exist: {missing}",
        f"Citation is missing or outside the corpus: {missing}",
    ]


def test_malformed_evidence(root):
    assert check(root, response(ONE), [read(root, ONE)]) == [
        "Read evidence must be an object",
        f"No complete read evidence for citation: {ONE}",
    ]
    assert check(root, response(ONE), evidence(read(root, ONE), runId="run-0001")) == [
        "Read evidence belongs to a different run"
    ]
    assert check(root, response(ONE), evidence(read(root, ONE), questionSha256="0" * 64)) == [
        "Read evidence belongs to a different question"
    ]
    assert check(root, response(ONE), evidence(reads={})) == [
        "Read evidence must contain a reads array",
        f"No complete read evidence for citation: {ONE}",
    ]
    assert check(root, response(ONE), evidence("one.md", {"path": 7}, read(root, ONE))) == [
        "Invalid read evidence record",
        "Invalid read evidence record",
    ]


def test_a_duplicate_record_is_reported_and_the_last_one_counts(root):
    errors = check(root, response(ONE), evidence(read(root, ONE), read(root, ONE, complete=False)))
    assert errors == [f"Duplicate read evidence: {ONE}", f"No complete read evidence for citation: {ONE}"]
    assert check(root, response(ONE), evidence(read(root, ONE, complete=False), read(root, ONE))) == [
        f"Duplicate read evidence: {ONE}"
    ]


def test_missing_evidence_and_a_truncated_read_are_no_complete_read(root):
    assert check(root, response(ONE), None) == [f"No complete read evidence for citation: {ONE}"]
    assert check(root, response(ONE), evidence(read(root, ONE, complete=False))) == [
        f"No complete read evidence for citation: {ONE}"
    ]
    assert check(root, response(ONE), evidence(read(root, ONE, complete="true"))) == [
        f"No complete read evidence for citation: {ONE}"
    ]


def test_a_read_of_the_same_basename_in_another_layer_does_not_count(root):
    assert check(root, response(ONE), evidence(read(root, TWIN))) == [f"No complete read evidence for citation: {ONE}"]


def test_an_article_that_is_not_strict_utf8(root):
    latin = "microsoft/knowledge/latin1.md"
    assert check(root, response(latin), evidence(read(root, latin))) == [f"Citation is not strict UTF-8: {latin}"]


def test_byte_count_changed_body_and_wrong_hash(root):
    record = read(root, ONE)
    assert check(root, response(ONE), evidence({**record, "bytes": record["bytes"] - 1})) == [
        f"Read byte count does not match the full article: {ONE}"
    ]
    assert check(root, response(ONE), evidence({**record, "bytes": True})) == [
        f"Read byte count does not match the full article: {ONE}"
    ]
    assert check(root, response(ONE), evidence({**record, "sha256": "f" * 64})) == [
        f"Read content hash does not match the live article: {ONE}"
    ]
    (root / ONE).write_text("# One\nUse a ToolTop.\n", encoding="utf-8")  # same length, other body
    assert check(root, response(ONE), evidence(record)) == [f"Read content hash does not match the live article: {ONE}"]
    (root / ONE).write_text("# One\nUse a ToolTip, always.\n", encoding="utf-8")
    assert check(root, response(ONE), evidence(record)) == [
        f"Read byte count does not match the full article: {ONE}",
        f"Read content hash does not match the live article: {ONE}",
    ]


def test_the_development_runner_binds_the_request_bytes(root):
    request = b'{"caseId": "case-1"}\n'
    proof = {"runId": RUN, "requestSha256": hashlib.sha256(request).hexdigest(), "reads": [read(root, ONE)]}
    kwargs = {"question": QUESTION, "root": root, "run_id": RUN, "evidence": proof, "hash_member": "requestSha256"}
    assert validate_response(response(ONE), bound=request, **kwargs) == []
    assert validate_response(response(ONE), bound=b"other", **kwargs) == [
        "Read evidence belongs to a different question"
    ]


def test_the_command_line_round_trip(root, tmp_path, capsys):
    (tmp_path / "question.txt").write_bytes(b"\xef\xbb\xbf" + QUESTION.encode())  # a BOM is dropped, not the rest
    (tmp_path / "answer.json").write_text(json.dumps(response(ONE)), encoding="utf-8")
    (tmp_path / "reads.json").write_text(json.dumps(evidence(read(root, ONE))), encoding="utf-8")
    base = ["evidence", str(tmp_path / "answer.json"), "--root", str(root), "--run-id", RUN]
    base += ["--question-file", str(tmp_path / "question.txt")]
    assert main([*base, "--read-evidence", str(tmp_path / "reads.json")]) == 0
    assert json.loads(capsys.readouterr().out) == {"valid": True, "errors": []}
    assert main(base) == 1
    assert json.loads(capsys.readouterr().out) == {
        "valid": False,
        "errors": [f"No complete read evidence for citation: {ONE}"],
    }
    assert main([*base, "--read-evidence", str(tmp_path / "reads.json"), "--enabled-layers", ""]) == 1
    assert json.loads(capsys.readouterr().out)["errors"] == [f"Path belongs to a disabled layer: {ONE}"]
    (tmp_path / "answer.json").write_text('{"outcome": "completed", "outcome": "failed"}', encoding="utf-8")
    assert main(base) == 2
    printed = capsys.readouterr().out
    assert printed.count("\n") == 1 and "duplicate key 'outcome'" in json.loads(printed)["errors"][0]
    assert main([*base[:1], str(tmp_path / "absent.json"), *base[2:]]) == 2
    assert "absent.json cannot be read" in json.loads(capsys.readouterr().out)["errors"][0]
