"""What a review answer read: the evidence bceval recorded from its own tool results, or the agent's own trace of
its Read calls, and whether a complete read backs each citation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bceval.models import CaseReads
from bceval.ordering import sort_key

Article = Callable[[str], tuple[int, str] | None]  # a corpus path -> (its size, its SHA-256), None when absent


def case_reads(findings: list[str], record: dict[str, Any] | None, article: Article | None) -> CaseReads:
    """What an answered case read, from the evidence bceval recorded itself; "unknown" without it. A citation is
    backed only by a complete read whose bytes and SHA-256 match the article (when `article` can tell)."""
    if isinstance(record, dict) and record.get("readBy") == "agent-trace":
        return traced_reads(findings, record)
    evidence = record.get("readEvidence") if isinstance(record, dict) and record.get("readBy") == "bceval" else None
    if not isinstance(evidence, dict) or not isinstance(evidence.get("reads"), list):
        return CaseReads(source="unknown", cited=list(findings))
    assert isinstance(record, dict)
    candidates = [path for path in record.get("candidates") or [] if isinstance(path, str)]
    lowered = {path.lower() for path in candidates}
    reads = [item for item in evidence["reads"] if isinstance(item, dict) and isinstance(item.get("path"), str)]
    opened = sorted({item["path"] for item in reads if item["path"].lower() in lowered}, key=sort_key)
    backed = set()
    for item in reads:
        if item.get("complete") is not True:
            continue
        if article is not None and article(item["path"]) != (item.get("bytes"), item.get("sha256")):
            continue  # not the article as the corpus holds it
        backed.add(item["path"].lower())
    cited = {finding.lower() for finding in findings}
    return CaseReads(
        source="bceval",
        opened=opened,
        cited=list(findings),
        citedWithoutCompleteRead=[finding for finding in findings if finding.lower() not in backed],
        readNotCited=[path for path in opened if path.lower() not in cited],
        candidates=len(candidates),
    )


def traced_reads(findings: list[str], record: dict[str, Any]) -> CaseReads:
    """What an answer's agent says it read (its stream's Read calls): the candidates it asked for. bceval never saw
    what the agent got, so no citation is backed: every one is cited without a complete read bceval recorded."""
    trace = record.get("agentTrace") if isinstance(record.get("agentTrace"), dict) else {}
    candidates = [path for path in record.get("candidates") or [] if isinstance(path, str)]
    lowered = {path.lower(): path for path in candidates}
    calls = [item for item in trace.get("reads") or [] if isinstance(item, dict) and isinstance(item.get("path"), str)]
    asked = {item["path"].lower() for item in calls}
    opened = sorted((lowered[path] for path in asked if path in lowered), key=sort_key)
    cited = {finding.lower() for finding in findings}
    return CaseReads(
        source="agent-trace",
        opened=opened,
        cited=list(findings),
        citedWithoutCompleteRead=list(findings),
        readNotCited=[path for path in opened if path.lower() not in cited],
        candidates=len(candidates),
    )
