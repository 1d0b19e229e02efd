"""Budgets: a run's --max-cost and an experiment's maxCost against what answers are known to have cost."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.jsonio import append_text, dumps_compact, parse_json
from bceval.usage import known_number


def unpriced_warning(budget: str, prices: Any, models: list[str | None]) -> str | None:
    """The one line saying a budget cannot be enforced up front, when the price table lacks one of `models`."""
    missing = [model for model in dict.fromkeys(models) if prices is None or prices.price(model) is None]
    if not missing:
        return None
    named = ", ".join(f"'{model}'" if model else "the agent's own model (no --model)" for model in missing)
    where = (
        f"the price table ({prices.source}) has no price for {named}"
        if prices is not None
        else "no price table was given (--prices or [tool.bceval.prices])"
    )
    return (
        f"bceval: warning: {budget} cannot be enforced before answers report a cost: {where}; "
        "it applies only to answers whose endpoint or agent reports what they cost"
    )


class Budget:
    """A known cost against its limit. A run's --max-cost starts from what its earlier answers cost; an experiment's
    maxCost (`ledger`) is the sum of its cost ledger, one JSON line per paid answer (`{"unit", "costUsd"}`), read
    again before every case and added to after every answer, so reruns (and other processes answering the same
    experiment) see what was spent. An answer whose cost is unknown adds nothing: the budget then cannot be
    enforced for it (said once)."""

    def __init__(self, limit: float, spent: float = 0.0, ledger: Path | None = None) -> None:
        self.limit = limit
        self.spent = spent
        self.ledger = ledger
        self.what, self.limit_name = ("the experiment's", "maxCost") if ledger else ("the run's", "--max-cost")
        self.unknown = 0
        self._read = 0  # bytes of the ledger already added up
        self._lock = threading.Lock()

    def reached(self) -> bool:
        # sums of float prices are compared to the nano-dollar, so eight answers at 0.0125 do reach 0.1
        return round(self.known(), 9) >= self.limit

    def known(self) -> float:
        with self._lock:
            self._catch_up()
            return self.spent

    def describe(self) -> str:
        with self._lock:
            return f"{self.what} known cost {self.spent:.4f} USD reached {self.limit_name} {self.limit:g}"

    def spend(self, cost: float | None, unit: str) -> None:
        with self._lock:
            if cost is None:
                self.unknown += 1
                if self.unknown == 1:
                    print(
                        "bceval: warning: an answer reported no cost and the price table has none for its model: "
                        f"{self.limit_name} cannot be enforced for such answers",
                        file=sys.stderr,
                    )
            elif self.ledger is None:
                self.spent += cost
            else:
                self.ledger.parent.mkdir(parents=True, exist_ok=True)
                # one short write in append mode: lines never interleave
                append_text(self.ledger, dumps_compact({"unit": unit, "costUsd": cost}))
                self._catch_up()

    def _catch_up(self) -> None:
        """Add the ledger's complete lines not yet counted; a line that is not a known cost counts nothing."""
        if self.ledger is None:
            return
        try:
            with open(self.ledger, "rb") as handle:
                handle.seek(self._read)
                data = handle.read()
        except FileNotFoundError:
            return
        complete = data[: data.rfind(b"\n") + 1]
        self._read += len(complete)
        for raw in complete.splitlines():
            try:
                entry = parse_json(raw, str(self.ledger))
            except BcevalError:
                continue
            cost = entry.get("costUsd") if isinstance(entry, dict) else None
            if known_number(cost) is not None:
                self.spent += cost


def experiment_ledger(plan: Any, settings: Settings) -> Budget | None:
    """The experiment's maxCost (its file's, else --max-cost) over its cost ledger; None without one."""
    limit = plan.budget(settings)
    return None if limit is None else Budget(limit, ledger=plan.folder.cost_ledger)
