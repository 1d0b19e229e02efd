"""What a guidance run's agent read, where bceval ran its tool loop (the api agent) and so recorded every file a
`read_file` returned; of an agent whose loop bceval does not run nothing is said (never guessed from its report).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from bceval.escape import console
from bceval.evaluators.guidance.manifest import GuidanceManifest
from bceval.jsonio import read_regular_bytes, read_regular_text
from bceval.layout import KNOWLEDGE_INDEX, result_name
from bceval.models import CaseReads
from bceval.ordering import sort_key

KNOWLEDGE = "knowledge/"  # the tools' name for the knowledge view (bceval.agents.api)


def _cited(results_dir: Path, hashed: str) -> list[str] | None:
    """The article paths a result's report cites, read leniently (scoring proper judges the report); None when
    there is no readable report."""
    try:
        document = json.loads(read_regular_text(results_dir / result_name(hashed), "utf-8"))
        entries = document["guidanceReport"].get("knowledge") or []
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    cited = [entry.get("path") for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []
    return list(dict.fromkeys(path for path in cited if isinstance(path, str)))


def _article(root: Path, path: str) -> tuple[int, str] | None:
    """The size and SHA-256 of an article in the checkout; None when it is not a file inside it."""
    if not path or path.startswith("/") or ".." in Path(path).parts:
        return None
    try:
        data = read_regular_bytes(root / path)
    except (OSError, ValueError):
        return None
    return len(data), hashlib.sha256(data).hexdigest()


def case_reads(root: Path, evidence: dict[str, Any], cited: list[str]) -> CaseReads:
    """One case's reads from bceval's evidence `{runId, questionSha256, reads}` and the paths its report cited."""
    listed = evidence.get("reads") or []
    reads = [item for item in listed if isinstance(item, dict) and isinstance(item.get("path"), str)]
    articles = [(item["path"].removeprefix(KNOWLEDGE), item) for item in reads if item["path"].startswith(KNOWLEDGE)]
    articles = [(path, item) for path, item in articles if path != KNOWLEDGE_INDEX]
    opened = sorted({path for path, _ in articles}, key=sort_key)
    backed = {
        path
        for path, item in articles
        if item.get("complete") is True and _article(root, path) == (item.get("bytes"), item.get("sha256"))
    }
    return CaseReads(
        source="bceval",
        opened=opened,
        cited=cited,
        citedWithoutCompleteRead=[path for path in cited if path not in backed],
        readNotCited=[path for path in opened if path not in set(cited)],
    )


def guidance_reads(
    manifest: GuidanceManifest, results_dir: Path, evidence: dict[str, dict[str, Any]]
) -> dict[str, Any] | None:
    """Per manifest case id its reads, and the run's summary; None when no case has evidence (`evidence`: per hashed
    case id, the record bceval kept of its tool results: `{readBy: "bceval", readEvidence: {...}}`)."""
    cases: dict[str, Any] = {}
    for case in manifest.cases:
        record = evidence.get(case.hashed)
        cited = _cited(results_dir, case.hashed)
        if not isinstance(record, dict) or record.get("readBy") != "bceval" or cited is None:
            continue
        cases[case.id] = case_reads(manifest.root, record.get("readEvidence") or {}, cited).model_dump()
    if not cases:
        return None
    citations = sum(len(reads["cited"]) for reads in cases.values())
    backed = citations - sum(len(reads["citedWithoutCompleteRead"]) for reads in cases.values())
    opened = sum(len(reads["opened"]) for reads in cases.values())
    summary = {
        "casesWithEvidence": len(cases),
        "casesWithoutEvidence": len(manifest.cases) - len(cases),
        "citations": citations,
        "citationsBacked": backed,
        "backedShare": backed / citations if citations else None,
        "meanOpened": opened / len(cases),
    }
    return {"summary": summary, "cases": cases}


def reads_line(reads: dict[str, Any]) -> str:
    """One line on a guidance run's read evidence, as a review scorecard gives it."""
    summary = reads["summary"]
    share = f"{summary['backedShare']:.0%}" if summary["backedShare"] is not None else "no citations"
    unbacked = [
        f"{case_id}: {path}" for case_id, case in reads["cases"].items() for path in case["citedWithoutCompleteRead"]
    ]
    listed = f"; cited without a complete read: {console(', '.join(unbacked[:5]))}" if unbacked else ""
    more = f" and {len(unbacked) - 5} more" if len(unbacked) > 5 else ""
    return (
        f"Reads: {summary['citationsBacked']} of {summary['citations']} citations backed by a complete read ({share}); "
        f"{summary['meanOpened']:.1f} articles opened per case; evidence for {summary['casesWithEvidence']} case(s), "
        f"unknown for {summary['casesWithoutEvidence']}{listed}{more}"
    )
