"""What tokens cost: the user's price table (docs/settings.md), per model, in US dollars per million tokens. A model
the table does not name has an unknown cost, never a cost of 0."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from bceval.errors import BcevalError
from bceval.usage import Usage, known_number

PRICE_KEYS = ("input", "output", "cached-input")


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float:
        """The cost of one response: cached prompt tokens at their own price, the other prompt tokens at input's."""
        cached = min(max(cached_tokens, 0), input_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return ((input_tokens - cached) * self.input + cached * cached_price + output_tokens * self.output) / 1e6


@dataclass(frozen=True)
class PriceTable:
    source: str  # where it was read from, for messages
    prices: tuple[tuple[str, Price], ...] = ()

    def price(self, model: str | None) -> Price | None:
        return dict(self.prices).get(model or "")


def _number(value: Any, where: str) -> float:
    if known_number(value) is None:
        raise BcevalError(f"{where} must be a number of US dollars per million tokens (0 or more), got {value!r}")
    return float(value)


def price_table(data: Any, source: str) -> PriceTable:
    """A checked table from its parsed form: {model: {input, output, cached-input?}}."""
    if not isinstance(data, Mapping):
        raise BcevalError(f"{source}: the price table must map model names to {{input, output, cached-input}}")
    prices = []
    for model, entry in data.items():
        where = f"{source}: prices.{model!s}"
        if not isinstance(model, str) or not model:
            raise BcevalError(f"{source}: a model name in the price table must be a non-empty string")
        if not isinstance(entry, Mapping):
            raise BcevalError(f"{where} must be a table with input and output")
        unknown = sorted(set(map(str, entry)) - set(PRICE_KEYS))
        if unknown:
            raise BcevalError(f"{where} has unknown key '{unknown[0]}' (known: {', '.join(PRICE_KEYS)})")
        for needed in ("input", "output"):
            if needed not in entry:
                raise BcevalError(f"{where} has no '{needed}' price")
        cached = entry.get("cached-input")
        price = Price(
            _number(entry["input"], f"{where}.input"),
            _number(entry["output"], f"{where}.output"),
            _number(cached, f"{where}.cached-input") if cached is not None else None,
        )
        prices.append((model, price))
    return PriceTable(source, tuple(sorted(prices)))


def read_price_file(path: Path) -> PriceTable:
    """A YAML price file: either the table itself or a mapping with one key `prices` holding it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BcevalError(f"{path}: price file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BcevalError(f"{path}: cannot read the price file: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise BcevalError(f"{path}{line}: not valid YAML") from None
    if isinstance(data, Mapping) and set(data) == {"prices"}:
        data = data["prices"]
    return price_table(data, str(path))


def priced(usage: Usage, table: PriceTable | None, models: tuple[str | None, ...]) -> tuple[Usage, str | None]:
    """An agent's usage with its cost: the agent's own where it reported one, else the price table's for the first
    of `models` the table names (the model the agent says it used, then the run's), from its tokens. Returns the
    usage and the model priced (None when the cost is the agent's or stays unknown: never a guessed 0).

    Prompt tokens are counted as Claude Code's envelope splits them: `inputTokens` plus the tokens written to and
    read from the provider's cache; the ones read from it cost `cached-input`, the others `input`."""
    if usage.costUsd is not None or table is None or usage.inputTokens is None or usage.outputTokens is None:
        return usage, None
    for model in models:
        price = table.price(model) if model else None
        if price is not None:
            cached = usage.cacheReadTokens or 0
            prompt = usage.inputTokens + (usage.cacheCreationTokens or 0) + cached
            return replace(usage, costUsd=price.cost(prompt, usage.outputTokens, cached)), model
    return usage, None
