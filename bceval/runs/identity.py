"""The identity of a question: what an agent was shown (its view's digest) and how it was asked (the agent settings
and the epoch), for the answer cache's key, the graph's up-to-date checks, the run record and answers shared between
experiment arms. Without isolation (`--isolation none`) where the corpus is is part of the question too."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The settings that make a run what it is (run.json keeps them in this order).
IDENTITY = ("adapter", "command", "model", "isolation", "sandbox", "sandboxAllow", "epoch")


@dataclass(frozen=True)
class Asking:
    """How a question is asked: a run's agent settings, with the live-only ones None for other adapters."""

    adapter: str
    live: bool = False  # a live agent: it has a command, a model, an isolation and a sandbox
    command: str | None = None
    model: str | None = None
    isolation: str | None = None
    sandbox: str | None = None
    sandbox_allow: tuple[str, ...] = ()  # sorted
    epoch: int = 1
    salt: str = ""  # keeps answers apart that would otherwise be shared (experiments' --no-share)
    endpoint: tuple[tuple[str, Any], ...] = ()  # the api kind's endpoint and sampling; () for every other agent
    config: str | None = None  # the digest of a preset agent's configuration folder; None: none, or an empty one
    sandbox_allow_rw: tuple[str, ...] = ()  # sorted

    @property
    def isolated(self) -> bool:
        """True when the agent sees its view only (every agent but a live one under `--isolation none`)."""
        return not self.live or self.isolation == "view"

    def fields(self) -> dict[str, Any]:
        """The run's identity as run.json records it (and the graph's up-to-date checks compare it)."""
        return {
            "adapter": self.adapter,
            "command": self.command,
            "model": self.model,
            "isolation": self.isolation,
            "sandbox": self.sandbox,
            "sandboxAllow": list(self.sandbox_allow),
            "epoch": self.epoch,
            **({"sandboxAllowRw": list(self.sandbox_allow_rw)} if self.sandbox_allow_rw else {}),  # absent: unchanged
            **({"endpoint": dict(self.endpoint)} if self.endpoint else {}),  # absent for others: records unchanged
            **({"agentConfig": self.config} if self.config else {}),  # likewise: only with a configuration
        }


def asking(adapter: str, agent: Any, *, live: bool) -> Asking:
    """The identity of the agent settings `agent` (the run's Settings or an AgentSettings: the same field names)
    under `adapter` (the caller says whether its kind is live)."""
    return Asking(
        adapter=adapter,
        live=live,
        command=agent.command if live else None,
        model=agent.model if live else None,
        isolation=agent.isolation if live else None,
        sandbox=agent.sandbox if live else None,
        sandbox_allow=tuple(sorted(str(path) for path in agent.sandbox_allow)) if live else (),
        epoch=agent.epoch,
        salt=agent.cache_salt,
        endpoint=tuple(agent.endpoint.identity().items()) if live and agent.endpoint is not None else (),
        config=agent.agent_config if live else None,
        sandbox_allow_rw=tuple(sorted(str(path) for path in agent.sandbox_allow_rw)) if live else (),
    )


@dataclass(frozen=True)
class Question:
    """One question: how it was asked, the digest of its view and, unless isolated, where (corpus and request)."""

    asked: Asking
    view: str
    where: tuple[str, ...] = ()
    expected: Any = None  # what a replaying agent answers from (the oracle: the case's expected findings)

    def cache_key(self, prompt_version: int) -> str:
        """The answer cache's key (a live agent's): the bytes of every earlier version, so old entries still hit."""
        asked = self.asked
        parts = [
            prompt_version,
            self.view,
            asked.command,
            asked.model,
            asked.isolation,
            asked.sandbox,
            list(asked.sandbox_allow),
            asked.epoch,
            *([asked.salt] if asked.salt else []),  # absent when unset: existing keys stay valid
            *([dict(asked.endpoint)] if asked.endpoint else []),  # likewise: only the api kind has one
            *([{"agentConfig": asked.config}] if asked.config else []),  # likewise: only with a configuration
            *([{"sandboxAllowRw": list(asked.sandbox_allow_rw)}] if asked.sandbox_allow_rw else []),  # likewise
            *self.where,
        ]
        return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()

    def key(self, version: str) -> str:
        """Equal for two questions exactly when one's answer answers the other (bceval `version` included)."""
        canonical = {
            "bceval": version,
            **self.asked.fields(),
            "salt": self.asked.salt,
            "view": self.view,
            "where": list(self.where),
            "expected": self.expected,
        }
        return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode("utf-8")).hexdigest()


def key_maker(asked: Asking, version: str) -> Callable[[str, tuple[str, ...], Any], tuple[str, ...]]:
    """For many questions asked alike: a key equal for two exactly when their `Question.key(version)` is, without
    hashing each (never stored: it only tells questions apart within one process)."""
    fixed = json.dumps({"bceval": version, **asked.fields(), "salt": asked.salt}, sort_keys=True)

    def key(view: str, where: tuple[str, ...] = (), expected: Any = None) -> tuple[str, ...]:
        return (fixed, view, *where, "\0", json.dumps(expected, sort_keys=True))

    return key


def question(asked: Asking, view: str, corpus: Path, request: Path, expected: Any = None) -> Question:
    """The question `asked` in the view with digest `view`, for the case whose request file is `request`."""
    where = () if asked.isolated else (str(corpus.resolve()), str(request.resolve()))
    return Question(asked, view, where, expected)
