"""Transcripts: one JSON file per answered case of a live agent, one format for every evaluator.

    {"schemaVersion": 1, "run": <run name>, "answeredBy": <the agent's describe()>,
     ...the agent's record of the case (case, attempts, outcome, ...), "usage": <what the case cost>}
"""

from __future__ import annotations

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
    document = {
        "schemaVersion": TRANSCRIPT_SCHEMA_VERSION,
        "run": run,
        "answeredBy": answered_by,
        **record,
        "usage": usage.as_record(),
    }
    path = RunDir(run_dir).transcript(name)
    write_atomic(path, dumps(document))
    return f"{TRANSCRIPTS}/{path.name}"
