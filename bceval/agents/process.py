"""What the live kinds share (LiveAgent: opt-in, retries, cost) and reading an answer out of model output."""

from __future__ import annotations

import functools
import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bceval.agents.registry import Agent
from bceval.agents.settings import AgentSettings
from bceval.errors import BcevalError
from bceval.jsonio import parse_json_text
from bceval.usage import Usage

RETRY_WAIT_CAP = 300.0  # the longest pause between two attempts
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)
_MISSING = object()


def extract_json_object(text: str) -> Any:
    """The answer object: the whole output, else the last fenced block, else the last line that is one (strict)."""
    for candidate in (text, *reversed(_FENCE.findall(text))):
        value = parse_json_text(candidate.strip(), _MISSING)
        if value is not _MISSING:
            return value if isinstance(value, dict) else None
    for line in reversed(text.splitlines()):
        if line.strip().startswith("{"):
            value = parse_json_text(line.strip(), _MISSING)
            if isinstance(value, dict):
                return value
    return None


def backoff(attempt: int, first_wait: float, rng: random.Random) -> float:
    """Seconds to wait before `attempt` (2, 3, ...): doubling from `first_wait`, capped, jittered (half to all)."""
    if attempt < 2 or first_wait <= 0:
        return 0.0
    base = min(RETRY_WAIT_CAP, first_wait * 2 ** (attempt - 2))
    return base * (0.5 + rng.random() / 2)


@dataclass
class _Attempt:
    record: dict[str, Any]
    text: str | None = None
    failure: tuple[str, str, str | None] | None = None
    usage: Usage = field(default_factory=Usage)
    final: bool = False  # a failure no retry can mend (a start-up failure): the answer's last attempt

    def failed(self, kind: str, detail: str, subtype: str | None = None) -> _Attempt:
        """This attempt as a failure (kind, detail, the agent's subtype), its record saying so too."""
        self.failure = (kind, detail, subtype)
        self.record.update(outcome=kind, detail=detail)
        return self


@dataclass(frozen=True)
class Unreadable:
    """Output that ran fine but holds no answer: an invalid-output failure, and `detail` says why."""

    detail: str


class LiveAgent(Agent):
    """What both live kinds share: their question shape, the opt-in, retries with backoff, and what answers cost."""

    def __init__(
        self,
        agent: AgentSettings,
        shape: Any,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.agent = agent
        self.shape = shape
        self.hidden = dict(shape.hidden)
        self.environ = dict(os.environ if environ is None else environ)
        self.sleep = sleep
        self.rng = rng or random.Random()  # safe to share between threads
        self.usage = Usage()
        self.last_usage: Usage | None = None  # the latest answer's: a guidance run's budget counts case by case
        self._usage_lock = threading.Lock()
        self.setup()

    def setup(self) -> None:
        """The kind's own checks and state, before any case runs."""

    def in_cache(self, question: Any) -> bool:
        return self.shape.in_cache(self, question)

    def close(self) -> None:
        self.shape.close()

    def read_evidence(self) -> dict[str, dict[str, Any]]:
        return self.shape.read_evidence()

    def require_opt_in(self) -> None:
        if self.environ.get("BCEVAL_LIVE") != "1":
            raise BcevalError(
                f"the {self.kind} adapter calls a live model and is opt-in: set BCEVAL_LIVE=1 to allow it"
            )

    def ask(
        self, attempt: Callable[[int, float], _Attempt], read: Callable[[str], Any]
    ) -> tuple[Any, list[_Attempt], Usage]:
        """Attempts until one's output reads as an answer (`read(text)`, else Unreadable): (answer or None, the
        attempts, what they cost)."""
        attempts: list[_Attempt] = []
        for number in range(1, self.agent.retries + 2):
            wait = backoff(number, self.agent.retry_wait, self.rng)
            if wait:
                self.sleep(wait)
            made = attempt(number, wait)
            attempts.append(made)
            if made.failure is not None and (made.failure[0] == "spawn-error" or made.final):
                break  # a command that cannot start will not start on a retry either
            if made.failure is None:
                answer = read(made.text or "")
                if not isinstance(answer, Unreadable):
                    return self._spent(answer, attempts)
                made.failed("invalid-output", answer.detail)
        return self._spent(None, attempts)

    def _spent(self, answer: Any, attempts: list[_Attempt]) -> tuple[Any, list[_Attempt], Usage]:
        spent = functools.reduce(Usage.plus, (attempt.usage for attempt in attempts), Usage())
        with self._usage_lock:
            self.usage = self.usage.plus(spent)
            self.last_usage = spent
        return answer, attempts, spent
