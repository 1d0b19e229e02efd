"""JUnit XML of bceval's verdicts for CI report views: infrastructure failures are errors (the case was not judged),
unanswered cases skipped; characters XML 1.0 cannot hold are dropped."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: object) -> str:
    return escape(_NOT_XML.sub("", str(value)))


def _attr(value: object) -> str:
    return quoteattr(_NOT_XML.sub("", str(value)))


@dataclass(frozen=True)
class TestCase:
    name: str
    classname: str
    outcome: str  # "passed", "failed", "error" (infrastructure) or "skipped" (not answered)
    message: str = ""
    detail: str = ""
    seconds: float | None = None


def render(suite: str, cases: Sequence[TestCase]) -> str:
    counts = {kind: sum(case.outcome == kind for case in cases) for kind in ("failed", "error", "skipped")}
    total = sum(case.seconds or 0.0 for case in cases)
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name={_attr("bceval")} tests="{len(cases)}" failures="{counts["failed"]}" '
        f'errors="{counts["error"]}" skipped="{counts["skipped"]}" time="{total:.3f}">',
        f'  <testsuite name={_attr(suite)} tests="{len(cases)}" failures="{counts["failed"]}" '
        f'errors="{counts["error"]}" skipped="{counts["skipped"]}" time="{total:.3f}">',
    ]
    for case in cases:
        head = f'    <testcase name={_attr(case.name)} classname={_attr(case.classname)} time="{case.seconds or 0:.3f}"'
        if case.outcome == "passed":
            lines.append(head + "/>")
            continue
        tag = {"failed": "failure", "error": "error", "skipped": "skipped"}[case.outcome]
        lines.append(head + ">")
        lines.append(f"      <{tag} message={_attr(case.message)}>{_text(case.detail)}</{tag}>")
        lines.append("    </testcase>")
    lines += ["  </testsuite>", "</testsuites>", ""]
    return "\n".join(lines)


def outcome_of(passed: bool | None, infra: bool) -> str:
    if infra:
        return "error"
    if passed is None:
        return "skipped"
    return "passed" if passed else "failed"
