"""What an answer cost (time, money, tokens), as far as it is known: the one record every agent and report uses."""

from __future__ import annotations

import math
from collections.abc import Iterable
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
    uncachedCostUsd: float | None = None  # the cost had no prompt token been read from a cache (the api kind's)

    def plus(self, other: Usage) -> Usage:
        """Field by field: known + known adds, known + unknown keeps the known part, unknown + unknown stays unknown."""
        values = {}
        for name in _NAMES:
            mine, theirs = getattr(self, name), getattr(other, name)
            values[name] = theirs if mine is None else mine if theirs is None else mine + theirs
        return Usage(**values)

    def as_record(self) -> dict[str, Any]:
        record = {name: getattr(self, name) for name in _NAMES}
        if self.uncachedCostUsd is None:  # known to the api kind only: every other record stays as it was
            del record["uncachedCostUsd"]
        return record

    @property
    def prompt_tokens(self) -> int | None:
        """Every prompt token. Claude Code's envelope counts the ones written to and read from the cache apart from
        inputTokens (and reports cacheCreationTokens); a chat-completions usage (the api kind's, which has no
        cacheCreationTokens) counts the cached ones among them."""
        if self.inputTokens is None or self.cacheCreationTokens is None:
            return self.inputTokens
        return self.inputTokens + self.cacheCreationTokens + (self.cacheReadTokens or 0)

    @classmethod
    def from_record(cls, record: Any) -> Usage:
        if not isinstance(record, dict):
            return cls()
        return cls(**{name: known_number(record.get(name)) for name in _NAMES})


_NAMES = tuple(item.name for item in fields(Usage))


def cached_share(usages: Iterable[Usage]) -> float | None:
    """The share of prompt tokens read from the provider's cache, over the usages that report both (each by its own
    count: see Usage.prompt_tokens); None without any."""
    prompt = read = 0
    for usage in usages:
        if usage.prompt_tokens is not None and usage.cacheReadTokens is not None:
            prompt, read = prompt + usage.prompt_tokens, read + usage.cacheReadTokens
    return read / prompt if prompt else None
