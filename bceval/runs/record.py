"""`out/runs/<run>/run.json`: how a run answers (its fixed agent settings) and which cases it covers, and
`bceval runs`, the list of the runs in an output directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bceval.config import Settings
from bceval.errors import BcevalError

RECORD_NAME = "run.json"
RECORD_SCHEMA_VERSION = 1
# The settings that make a run what it is: answers given under other values belong to another run.
IDENTITY = ("adapter", "command", "model", "isolation", "sandbox", "sandboxAllow", "epoch")


def identity(settings: Settings) -> dict[str, Any]:
    live = settings.live
    return {
        "adapter": settings.adapter,
        "command": settings.command if live else None,
        "model": settings.model if live else None,
        "isolation": settings.isolation if live else None,
        "sandbox": settings.sandbox if live else None,
        "sandboxAllow": sorted(str(path) for path in settings.sandbox_allow) if live else [],
        "epoch": settings.epoch,
    }


def read_record(run_dir: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((run_dir / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def new_record(
    settings: Settings, selected: list[str] | None, existing: dict[str, Any] | None, total: int | None = None
) -> dict[str, Any]:
    """The record after answering `selected` (manifest ids; None for every case) into the run.

    Selections add up: rerunning the failed cases into a run keeps the others, and a run that once
    covered every case still does. A run answered with other agent settings is refused, not mixed.
    """
    mine = identity(settings)
    if existing is not None:
        theirs = {key: existing.get(key) for key in IDENTITY}
        if theirs != mine:
            differs = next(key for key in IDENTITY if theirs[key] != mine[key])
            raise BcevalError(
                f"run '{settings.run_name}' in {settings.run_dir} was answered with another {differs} "
                f"({theirs[differs]!r}, now {mine[differs]!r}); name this one with --run, or remove that run"
            )
        before = existing.get("selection")
        if before is None or selected is None:
            selected = None
        else:
            selected = sorted(set(before) | set(selected))
            if total is not None and len(selected) >= total:
                selected = None  # every case is covered now
    from bceval.agents.process import pinned

    live = settings.live
    is_pinned = pinned(settings.command or "", settings.model) if live else True
    return {
        "schemaVersion": RECORD_SCHEMA_VERSION,
        "name": settings.run_name,
        **mine,
        "pinned": is_pinned,
        "modelIsLabelOnly": bool(live and settings.model and not is_pinned),
        "shard": settings.shard,
        "selection": selected,
        "corpus": str(settings.corpus),
        "manifest": str(settings.manifest) if settings.manifest is not None else None,
    }


def selection_of(run_dir: Path) -> set[str] | None:
    """The manifest ids a run covers, or None for every case (also when it has no record)."""
    record = read_record(run_dir)
    selection = record.get("selection") if record else None
    return set(selection) if isinstance(selection, list) else None


def list_runs(out: Path) -> list[dict[str, Any]]:
    """One row per run folder: its record and, once scored, its scorecard's numbers."""
    rows = []
    for run_dir in sorted((out / "runs").glob("*/"), key=lambda path: path.name.lower()):
        record = read_record(run_dir) or {}
        try:
            card = json.loads((run_dir / "scorecard.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            card = None
        rows.append({"name": run_dir.name, "record": record, "scorecard": card})
    return rows


def _rate(card: dict[str, Any], name: str) -> str:
    rate = card.get(name) or {}
    return f"{rate.get('value', 0):.4g} ({rate.get('passed', 0)}/{rate.get('total', 0)})"


def render_runs(rows: list[dict[str, Any]], out: Path) -> str:
    if not rows:
        return f"No runs in {out / 'runs'} yet: `bceval answer` or `bceval score` makes one.\n"
    lines = [
        "| Run | Adapter | Model | Cases | Recall | Clean rate | Verdict | Cost (USD) | Date |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        record, card = row["record"], row["scorecard"]
        adapter = (card or {}).get("adapter", {})
        model = adapter.get("model") or record.get("model") or "-"
        if card is None:
            lines.append(f"| {row['name']} | {record.get('adapter', '-')} | {model} | - | - | - | not scored | - | - |")
            continue
        cost = (card.get("usage") or {}).get("costUsd")
        cases = card["recall"]["total"] + card["cleanRate"]["total"]
        cells = [
            row["name"],
            adapter.get("name", "-"),
            model + ("" if adapter.get("pinned") else " (unpinned)"),
            str(cases),
            _rate(card, "recall"),
            _rate(card, "cleanRate"),
            card.get("verdict", "-"),
            f"{cost:.4f}" if isinstance(cost, int | float) else "unknown",
            str(card.get("createdAt", "-"))[:10],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
