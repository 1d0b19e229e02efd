"""What an answer cost (time, money, tokens), as far as it is known: the one record every agent and report uses."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any


def known_number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return value


@dataclass(frozen=True)
class Usage:
    """What one answer cost, as far as it is known; None is unknown, never zero."""

    wallSeconds: float | None = None  # measured by bceval around the agent process
    agentSeconds: float | None = None  # the agent's own duration_ms
    costUsd: float | None = None
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheCreationTokens: int | None = None
    cacheReadTokens: int | None = None
    turns: int | None = None

    def plus(self, other: Usage) -> Usage:
        """Field by field: known + known adds, known + unknown keeps the known part, unknown + unknown stays unknown."""
        values = {}
        for name in _NAMES:
            mine, theirs = getattr(self, name), getattr(other, name)
            values[name] = theirs if mine is None else mine if theirs is None else mine + theirs
        return Usage(**values)

    def as_record(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _NAMES}

    @classmethod
    def from_record(cls, record: Any) -> Usage:
        if not isinstance(record, dict):
            return cls()
        return cls(**{name: known_number(record.get(name)) for name in _NAMES})


_NAMES = tuple(item.name for item in fields(Usage))
