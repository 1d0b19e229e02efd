"""The answering side reads answers without the result models (review.entries); scoring reads result files
with them. Both must read every document the same way: the same cases, the same problems, the same refusals."""

from __future__ import annotations

import json

import pytest

from bceval.agents.process import Unreadable
from bceval.evaluators.review.entries import answered_cases, stored_case
from bceval.evaluators.review.question import _entries
from bceval.evaluators.review.scoring import ResultEntry, read_result_document
from bceval.jsonio import parse_json

DOCUMENTS = [
    {"cases": [{"id": "case-1", "findings": []}]},
    {"cases": [{"id": "case-1", "findings": [{"id": "b/x.md"}, "A/y.md", {"id": "a/Y.md"}, " ", {"id": None}]}]},
    {"cases": {"id": 7, "findings": {"id": 3.5}}},  # a lone case and a lone finding; numbers as text
    {"cases": [{"id": True, "findings": []}, {"id": " ", "findings": []}, {"findings": []}, {"id": "c"}]},
    {"cases": ["not an object", {"id": "d", "findings": [["nested"]]}, {"id": "e", "findings": [{"id": True}]}]},
    {"cases": [{"id": "f", "findings": "one/path.md"}, {"id": "g", "findings": None}]},
    {"cases": []},
    {"answers": []},
    [{"id": "x", "findings": []}],
    "a string",
]


def _scoring_reads(document):
    reading = read_result_document(json.dumps(document).encode("utf-8"), "answer")
    return [(entry.id, entry.findings) for entry in reading.entries], reading.problems


@pytest.mark.parametrize("document", DOCUMENTS)
def test_answered_cases_read_as_scoring_reads(document):
    problems: list[str] = []
    answered = answered_cases(parse_json(json.dumps(document).encode("utf-8"), "answer"), "answer", problems)
    entries, expected_problems = _scoring_reads(document)
    assert [(case.id, case.findings) for case in answered or []] == entries
    assert problems == expected_problems


@pytest.mark.parametrize("document", DOCUMENTS)
def test_a_command_answer_is_taken_exactly_when_scoring_would_take_it(document):
    got = _entries(json.dumps(document))
    entries, problems = _scoring_reads(document) if isinstance(document, dict) else ([], ["no object"])
    if problems or not entries:
        assert isinstance(got, Unreadable)
    else:
        assert [(case.id, case.findings) for case in got] == entries


STORED = [
    {"id": "case-1", "findings": ["a.md", "b.md"]},
    {"id": "case-1", "findings": []},
    {"id": "case-1", "findings": ["a.md"], "extra": 1},
    {"id": "case-1"},
    {"findings": []},
    {"id": 1, "findings": []},
    {"id": "case-1", "findings": "a.md"},
    {"id": "case-1", "findings": [1]},
    {"id": "case-1", "findings": [None]},
    ["case-1", []],
    None,
]


@pytest.mark.parametrize("value", STORED)
def test_a_cached_case_is_taken_exactly_when_the_result_model_takes_it(value):
    try:
        expected = ResultEntry.model_validate(value)
    except ValueError:
        expected = None
    try:
        got = stored_case(value)
    except ValueError:
        got = None
    if expected is None:
        assert got is None
    else:
        assert got is not None and got.model_dump() == expected.model_dump()
