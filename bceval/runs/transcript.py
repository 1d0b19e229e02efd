"""Transcripts: one JSON file per answered case of a live agent, one format for every evaluator; the prompts are
kept beside them once each, as `prompts/<sha256>.txt` (the `promptSha256` the attempts record)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from bceval.jsonio import dumps, write_atomic
from bceval.layout import TRANSCRIPTS, RunDir
from bceval.usage import Usage

TRANSCRIPT_SCHEMA_VERSION = 1


def write_transcript(
    run_dir: Path, name: str, run: str, answered_by: dict[str, Any], record: dict[str, Any], usage: Usage
) -> str:
    """Write `<run_dir>/transcripts/<name>.json`; returns its path relative to the run directory."""
    document = {"schemaVersion": TRANSCRIPT_SCHEMA_VERSION, "run": run, "answeredBy": answered_by, **record}
    document["usage"] = usage.as_record()
    path = RunDir(run_dir).transcript(name)
    write_atomic(path, dumps(document))
    return f"{TRANSCRIPTS}/{path.name}"


def write_prompt(run_dir: Path, text: str) -> str:
    """Store a prompt once under its SHA-256 (an existing copy is the same bytes, so it is kept); returns the hash."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    path = RunDir(run_dir).prompt(digest)
    if not path.is_file():
        write_atomic(path, text)
    return digest
