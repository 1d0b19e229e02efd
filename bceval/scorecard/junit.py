"""JUnit XML of bceval's verdicts for CI report views: infrastructure failures are errors (the case was not judged),
unanswered cases skipped; characters XML 1.0 cannot hold are dropped."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


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
    return render_suites([(suite, cases)])


def _sums(cases: Sequence[TestCase]) -> str:
    count = {kind: sum(case.outcome == kind for case in cases) for kind in ("failed", "error", "skipped")}
    total = sum(case.seconds or 0.0 for case in cases)
    return (
        f'tests="{len(cases)}" failures="{count["failed"]}" errors="{count["error"]}" skipped="{count["skipped"]}" '
        f'time="{total:.3f}"'
    )


def render_suites(suites: Sequence[tuple[str, Sequence[TestCase]]]) -> str:
    """One document of several test suites (`bceval ci`: its checks, then the cases of each run it scored)."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<testsuites name={_attr('bceval')} "]
    lines[1] += _sums([case for _, cases in suites for case in cases]) + ">"
    for suite, cases in suites:
        lines.append(f"  <testsuite name={_attr(suite)} {_sums(cases)}>")
        for case in cases:
            head = f"    <testcase name={_attr(case.name)} classname={_attr(case.classname)}"
            head += f' time="{case.seconds or 0:.3f}"'
            if case.outcome == "passed":
                lines.append(head + "/>")
            else:
                tag = "failure" if case.outcome == "failed" else case.outcome  # error or skipped
                text = escape(_NOT_XML.sub("", case.detail))
                lines += [head + ">", f"      <{tag} message={_attr(case.message)}>{text}</{tag}>", "    </testcase>"]
        lines.append("  </testsuite>")
    lines += ["</testsuites>", ""]
    return "\n".join(lines)


def outcome_of(passed: bool | None, infra: bool) -> str:
    if infra:
        return "error"
    if passed is None:
        return "skipped"
    return "passed" if passed else "failed"
