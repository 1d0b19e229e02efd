"""`run.json`, the one versioned record of a run whatever evaluator made it (its writer and reader), its transcripts
(one JSON file per answered case of a live agent, the prompts beside them once each as `prompts/<sha256>.txt`), and
`bceval runs`, the list of the runs in an output directory."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.escape import markdown_cell
from bceval.jsonio import (
    append_text,
    create_exclusive,
    dumps,
    read_json_or_none,
    read_regular_bytes,
    read_regular_text,
    write_atomic,
)
from bceval.layout import TRANSCRIPTS, OutDir, RunDir
from bceval.runs.identity import IDENTITY, Asking
from bceval.usage import Usage

RUN_RECORD_VERSION = 1  # the version of every run.json, whichever evaluator wrote it
TRANSCRIPT_SCHEMA_VERSION = 1
WRITTEN = "resultsSha256"  # run.json's member: the SHA-256 of every result and infra file bceval wrote there
_written_lock = threading.Lock()  # answers of one run are written by parallel threads


@dataclass(frozen=True)
class RunFacts:
    """What an answered run's record says about the run besides the cases it covers."""

    name: str
    directory: Path
    asked: Asking
    pinned: bool  # the model reaches the command (always True for an agent that is not live)
    shard: str | None
    corpus: str
    manifest: str | None


def _read_object(path: Path) -> dict[str, Any] | None:
    value = read_json_or_none(path)
    return value if isinstance(value, dict) else None


def read_record(run_dir: Path) -> dict[str, Any] | None:
    return _read_object(RunDir(run_dir).record)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def note_written(run_dir: Path, changes: dict[str, str | None]) -> None:
    """Note what bceval just wrote into the run's results folder (file name -> SHA-256, None: removed); scoring
    refuses a file whose bytes differ. One line appended to the run's journal (rewriting run.json per answer made a
    run quadratic); `fold_written` takes the journal into run.json, and until then every reader applies it."""
    if not changes:
        return
    folder = RunDir(run_dir)
    lines = "".join(f"{name} {digest or '-'}\n" for name, digest in changes.items())
    with _written_lock:
        if not folder.record.is_file():
            return  # no record to vouch for these files (as before: nothing is noted)
        append_text(folder.written_journal, lines)  # one write: a killed run leaves at most a partial line, ignored


def _journal(run_dir: Path) -> list[tuple[str, str | None]]:
    """The journal's notes in order; a line that is not a whole note (a run killed while writing it) is skipped."""
    try:
        text = read_regular_text(RunDir(run_dir).written_journal, "utf-8")
    except (OSError, ValueError):
        return []
    notes = []
    for line in text.split("\n"):
        name, _, digest = line.partition(" ")
        if name and (digest == "-" or (len(digest) == 64 and all(c in "0123456789abcdef" for c in digest))):
            notes.append((name, None if digest == "-" else digest))
    return notes


def _with_journal(record: dict[str, Any], notes: list[tuple[str, str | None]]) -> dict[str, str]:
    written = dict(record.get(WRITTEN) or {})
    for name, digest in notes:
        if digest is None:
            written.pop(name, None)
        else:
            written[name] = digest
    return dict(sorted(written.items()))


def fold_written(run_dir: Path) -> None:
    """Take the run's journal into run.json (its `resultsSha256`) and remove it; nothing to do without one."""
    folder = RunDir(run_dir)
    with _written_lock:
        notes = _journal(run_dir)
        record = read_record(run_dir)
        if record is not None and notes:
            record[WRITTEN] = _with_journal(record, notes)
            write_atomic(folder.record, dumps(record))
        folder.written_journal.unlink(missing_ok=True)


def read_current_record(run_dir: Path) -> dict[str, Any] | None:
    """run.json as it stands with its journal applied (what bceval has written so far), without writing anything."""
    record = read_record(run_dir)
    if record is None:
        return None
    notes = _journal(run_dir)
    if notes and isinstance(record.get(WRITTEN), dict):
        record[WRITTEN] = _with_journal(record, notes)
    return record


def tampered(run_dir: Path, files: list[Path]) -> list[str]:
    """One line for each result or infra file of the run that bceval did not write as it is now (changed, foreign
    or gone); empty for a run whose record keeps no digests."""
    record = read_current_record(run_dir)
    written = record.get(WRITTEN) if record else None
    if not isinstance(written, dict):
        return []
    problems = []
    present = {path.name for path in files}
    for path in files:
        expected = written.get(path.name)
        try:
            actual = sha256_of(read_regular_bytes(path))
        except OSError as exc:
            problems.append(f"{path}: cannot read it ({exc.strerror}); answer the case again")
            continue
        if expected is None:
            problems.append(
                f"{path}: bceval did not write this file for run '{run_dir.name}'; remove it, or score it as "
                "external results with --results"
            )
        elif expected != actual:
            problems.append(f"{path}: changed since bceval wrote it (run.json records other bytes); answer it again")
    results = RunDir(run_dir).results
    for name in sorted(set(written) - present):
        problems.append(f"{results / name}: removed since bceval wrote it; answer the case again")
    return problems


def new_record(
    run: RunFacts, selected: list[str] | None, existing: dict[str, Any] | None, total: int | None = None
) -> dict[str, Any]:
    """The record after answering `selected` (manifest ids; None: every case) into the run: selections add up, and
    a run answered with other agent settings is refused, not mixed."""
    mine = run.asked.fields()
    if existing is not None:
        differs = next((key for key in (*IDENTITY, "endpoint") if existing.get(key) != mine.get(key)), None)
        if differs is not None:
            raise BcevalError(
                f"run '{run.name}' in {run.directory} was answered with another {differs} "
                f"({existing.get(differs)!r}, now {mine.get(differs)!r}); name this one with --run, or remove that run"
            )
        before = existing.get("selection")
        if before is None or selected is None:
            selected = None
        else:
            selected = sorted(set(before) | set(selected))
            if total is not None and len(selected) >= total:
                selected = None  # every case is covered now
    live = run.asked.live
    carried = {WRITTEN: existing[WRITTEN]} if existing is not None and isinstance(existing.get(WRITTEN), dict) else {}
    return {
        "schemaVersion": RUN_RECORD_VERSION,  # an answered run names its version so (docs/decisions.md)
        "name": run.name,
        **mine,
        "pinned": run.pinned,
        "modelIsLabelOnly": bool(live and run.asked.model and not run.pinned),
        "shard": run.shard,
        "selection": selected,
        "corpus": run.corpus,
        "manifest": run.manifest,
        **carried,
    }


def run_record(kind: str, members: dict[str, Any]) -> dict[str, Any]:
    """An evaluator's run record: its kind (`bceval-<evaluator>-run`), the version, then the evaluator's members."""
    return {"kind": kind, "version": RUN_RECORD_VERSION, **members}


def write_record(run_dir: Path, record: dict[str, Any], exclusive: bool = False) -> bool:
    """Write the run's run.json atomically (True when its bytes changed); `exclusive`: only if there is none."""
    path = RunDir(run_dir).record
    if exclusive:
        return create_exclusive(path, dumps(record).encode("utf-8"))
    return write_atomic(path, dumps(record))


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
    digest = sha256_of(text.encode("utf-8"))
    path = RunDir(run_dir).prompt(digest)
    if not path.is_file():
        write_atomic(path, text)
    return digest


def selection_of(run_dir: Path) -> set[str] | None:
    """The manifest ids a run covers, or None for every case (also when it has no record)."""
    record = read_record(run_dir)
    selection = record.get("selection") if record else None
    return set(selection) if isinstance(selection, list) else None


def list_runs(out: Path) -> list[dict[str, Any]]:
    """One row per run folder: its record and, once scored, its scorecard's numbers."""
    rows = []
    for run_dir in sorted(OutDir(out).runs.glob("*/"), key=lambda path: path.name.lower()):
        card = _read_object(RunDir(run_dir).scorecard())
        rows.append(
            {"name": run_dir.name, "record": read_record(run_dir) or {}, "scorecard": card, "waits": run_waits(run_dir)}
        )
    return rows


def run_waits(run_dir: Path) -> dict[str, float] | None:
    """The retries, 429/503 waits and seconds waited of a run's answers (the api agent's), or None without any."""
    totals = {"retries": 0, "rateLimited": 0, "waitedSeconds": 0.0}
    found = False
    results = RunDir(run_dir).results
    for path in sorted(results.glob("*-case-*.json")) if results.is_dir() else []:
        record = (_read_object(path) or {}).get("record")
        waits = record.get("waits") if isinstance(record, dict) else None
        if not isinstance(waits, dict):
            continue
        found = True
        for key in totals:
            value = waits.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                totals[key] += value
    return totals if found else None


def _rate(card: dict[str, Any], name: str) -> str:
    rate = card.get(name) or {}
    return f"{rate.get('value', 0):.4g} ({rate.get('passed', 0)}/{rate.get('total', 0)})"


def render_runs(rows: list[dict[str, Any]], out: Path) -> str:
    if not rows:
        return f"No runs in {OutDir(out).runs} yet: `bceval answer` or `bceval score` makes one.\n"
    lines = [
        "| Run | Adapter | Model | Cases | Recall | Clean rate | Verdict | Cost (USD) | Date |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        record, card = row["record"], row["scorecard"]
        adapter = (card or {}).get("adapter", {})
        model = adapter.get("model") or record.get("model") or "-"
        if card is None:
            named = [markdown_cell(str(text)) for text in (row["name"], record.get("adapter", "-"), model)]
            lines.append("| " + " | ".join(named) + " | - | - | - | not scored | - | - |")
            continue
        cost = (card.get("usage") or {}).get("costUsd")
        cases = card["recall"]["total"] + card["cleanRate"]["total"]
        cells = [
            markdown_cell(row["name"]),
            markdown_cell(str(adapter.get("name", "-"))),
            markdown_cell(str(model)) + ("" if adapter.get("pinned") else " (unpinned)"),
            str(cases),
            _rate(card, "recall"),
            _rate(card, "cleanRate"),
            markdown_cell(str(card.get("verdict", "-"))),
            f"{cost:.4f}" if isinstance(cost, int | float) else "unknown",
            markdown_cell(str(card.get("createdAt", "-"))[:10]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    waited = [(row["name"], row["waits"]) for row in rows if row.get("waits")]
    if waited:  # only runs whose agent reports its waits (the api agent); other listings stay as they were
        lines.append("")
        for name, waits in waited:
            lines.append(
                f"{name}: {int(waits['retries'])} retried attempt(s), {int(waits['rateLimited'])} rate-limited "
                f"wait(s) (HTTP 429/503), {waits['waitedSeconds']:.1f} s waited in all"
            )
    return "\n".join(lines) + "\n"
