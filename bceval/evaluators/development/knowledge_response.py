"""Read evidence (spec §11.8, §13): the record of what bceval's tools served an agent, what it proves of a report's
knowledge, and the validator of an `al-knowledge` answer against its bound question."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bceval.evaluators.development import inside, plain_path
from bceval.evaluators.development.findings import contract_errors
from bceval.evaluators.development.manifest import Case
from bceval.evaluators.development.report import knowledge_ratios
from bceval.evaluators.development.values import MISSING, member, text, wrap

LAYERS = ("microsoft", "community", "custom")


def _reads(evidence: Any, run_id: str, bound_sha: str, hash_member: str, errors: list[str]) -> dict[str, Any]:
    if evidence is None:
        return {}
    if not isinstance(evidence, dict):
        errors.append("Read evidence must be an object")
        return {}
    if evidence.get("runId") != run_id:
        errors.append("Read evidence belongs to a different run")
    if evidence.get(hash_member) != bound_sha:
        errors.append("Read evidence belongs to a different question")
    records = evidence.get("reads")
    if not isinstance(records, list):
        errors.append("Read evidence must contain a reads array")
        return {}
    reads: dict[str, Any] = {}
    for record in records:
        if not isinstance(record, dict) or not isinstance(record.get("path"), str):
            errors.append("Invalid read evidence record")
            continue
        if record["path"] in reads:
            errors.append(f"Duplicate read evidence: {record['path']}")
        reads[record["path"]] = record  # the last record of a path is the one that counts
    return reads


def validate_response(
    response: Any,
    *,
    question: str,
    root: Path,
    run_id: str,
    evidence: Any = None,
    enabled_layers: Iterable[str] = LAYERS,
    hash_member: str = "questionSha256",
    bound: bytes | None = None,
) -> list[str]:
    """Every problem of `response`, in the spec's order; the evidence's hash is of `bound` when given."""
    errors = [f"Schema: {message}" for _, message in contract_errors("al-knowledge-response", response)]
    if errors:
        return errors
    root = Path(root).resolve()
    if response["question"] != question:
        errors.append("question must equal the bound input exactly, including whitespace")
    enabled = set(enabled_layers)
    if not enabled <= set(LAYERS):
        errors.append("Unknown enabled layers")
    references, suppressed = response["references"], response["suppressed"]
    for entry, is_reference in [(r, True) for r in references] + [(s, False) for s in suppressed]:
        path = entry["path"]
        file = inside(root, path)
        if file is None:
            errors.append(f"Noncanonical corpus path: {path}")
        elif not file.is_file():
            errors.append(f"Corpus path does not exist: {path}")
        # a configuration exclusion may name a disabled layer; a citation or a precedence suppression may not
        if path.split("/")[0] not in enabled and (is_reference or entry.get("reason") != "configuration"):
            errors.append(f"Path belongs to a disabled layer: {path}")
    bound_sha = hashlib.sha256(question.encode("utf-8") if bound is None else bound).hexdigest()
    reads = _reads(evidence, run_id, bound_sha, hash_member, errors)
    for reference in references:
        path = reference["path"]
        if not plain_path(path):
            errors.append(f"Noncanonical citation path: {path}")
            continue
        content = _live(root, path)
        if content is None:
            errors.append(f"Citation is missing or outside the corpus: {path}")
            continue
        record = reads.get(path)
        if record is None or record.get("complete") is not True:
            errors.append(f"No complete read evidence for citation: {path}")
            continue
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            errors.append(f"Citation is not strict UTF-8: {path}")
            continue
        if type(record.get("bytes")) is not int or record["bytes"] != len(content):
            errors.append(f"Read byte count does not match the full article: {path}")
        if record.get("sha256") != hashlib.sha256(content).hexdigest():
            errors.append(f"Read content hash does not match the live article: {path}")
    return errors


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
    file = inside(root, path)
    try:
        return file.read_bytes() if file is not None and file.is_file() else None
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
