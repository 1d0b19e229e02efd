"""Read evidence in a development run (spec §11.8, §13): what bceval's tools served the api agent."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from bceval.evaluators.development import plain_path
from bceval.evaluators.development.manifest import Case
from bceval.evaluators.development.report import knowledge_ratios
from bceval.evaluators.development.values import MISSING, member, text, wrap

KNOWLEDGE_PREFIX = "knowledge/"


def evidence_record(run_id: str, request: bytes, tool_reads: list[dict[str, Any]]) -> dict[str, Any]:
    """The §13 record for one case, from the tools' reads (paths `knowledge/<path>`; workspace reads left out)."""
    reads = [
        {**read, "path": read["path"][len(KNOWLEDGE_PREFIX) :]}
        for read in tool_reads
        if isinstance(read.get("path"), str) and read["path"].startswith(KNOWLEDGE_PREFIX)
    ]
    return {"runId": run_id, "requestSha256": hashlib.sha256(request).hexdigest(), "reads": reads}


def _live(root: Path, path: str) -> bytes | None:
    if not plain_path(path):
        return None
    file = root.joinpath(*path.split("/"))
    try:
        if not file.resolve().is_relative_to(root.resolve()) or not file.is_file():
            return None
        return file.read_bytes()
    except OSError:
        return None


def complete_reads(record: dict[str, Any], root: Path) -> set[str]:
    """Lower-cased paths with a complete read whose byte count and SHA-256 are the live file's."""
    proven = set()
    for read in record.get("reads") or []:
        path = read.get("path")
        if not isinstance(path, str) or read.get("complete") is not True:
            continue
        live = _live(root, path)
        size = read.get("bytes")
        if live is None or type(size) is not int or size != len(live):
            continue
        if read.get("sha256") == hashlib.sha256(live).hexdigest():
            proven.add(path.lower())
    return proven


def _claimed(report: Any) -> list[tuple[str, str]]:
    """(as written, lower-cased) for every knowledge entry with a path."""
    found = []
    for entry in wrap(member(report, "knowledge")):
        path = member(entry, "path")
        if path is not MISSING:
            written = text(path).replace("\\", "/")
            found.append((written, written.lower()))
    return found


def read_problems(case: Case, report: Any, record: dict[str, Any], root: Path) -> list[str]:
    """§11.8: every knowledge entry needs a complete read of the live file in this run."""
    proven = complete_reads(record, root)
    return [
        f"{case.id}: no complete read evidence for knowledge entry '{written}'."
        for written, lowered in _claimed(report)
        if lowered not in proven
    ]


def read_measures(case: Case, report: Any, record: dict[str, Any], root: Path) -> tuple[float, float]:
    """(recall, precision) of the report's knowledge, counting only entries backed by a complete read."""
    proven = complete_reads(record, root)
    used = [lowered for _, lowered in _claimed(report)]
    return knowledge_ratios(case, used, [path for path in used if path in proven])
