"""A live agent's settings as plain data (no process code, so config can read them)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bceval.errors import BcevalError
from bceval.prices import PriceTable

UNPINNED_MODEL = "unpinned"
PLACEHOLDERS = ("model", "request", "workdir")
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class EndpointSettings:
    """How the `api` kind talks to a chat-completions endpoint; `identity` is in the cache key. The key itself is
    never held here, only the name of its variable."""

    base_url: str | None = None  # None: the openai package's default (OPENAI_BASE_URL, else OpenAI's)
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = None
    max_turns: int = 12
    max_output_tokens: int | None = None
    seed: int | None = None
    jobs: int = 1  # the most requests in flight (concurrency adapts below it on 429)
    knowledge: str = "embedded"  # or "bounded": the review request holds no candidates, the agent's tools find them

    def identity(self) -> dict[str, object]:
        return {
            "baseUrl": self.base_url,
            "temperature": self.temperature,
            "maxTurns": self.max_turns,
            "maxOutputTokens": self.max_output_tokens,
            "seed": self.seed,
            **({"knowledge": self.knowledge} if self.knowledge != "embedded" else {}),  # embedded: keys unchanged
        }


@dataclass(frozen=True)
class AgentSettings:
    """Everything that decides what the agent is asked and how; all of it but the limits is in the cache key."""

    command: str
    model: str | None = None
    isolation: str = "view"  # "view" or "none"
    sandbox: str = "none"  # "none" or "bwrap"
    sandbox_allow: tuple[Path, ...] = ()  # bound read-only
    epoch: int = 1
    timeout: float = 300.0
    retries: int = 2
    retry_wait: float = 5.0
    cache_salt: str = ""  # set to keep answers apart that would otherwise be shared (experiments' --no-share)
    sandbox_network: str = "share"  # "share" or "none": whether the bwrap sandbox keeps the host's network
    paid_by: str = ""  # the run answering (its folder): a cached answer it paid for itself is its own, not cached
    endpoint: EndpointSettings | None = None  # the api kind's endpoint; None for a command line
    prices: PriceTable | None = None  # what tokens cost, by model (an envelope or a response that gives tokens only)
    agent: str | None = None  # the preset (bceval.agents.presets) the command line came from: its environment
    agent_config: str | None = None  # the digest of its configuration folder (bceval.agents.agentconfig)
    sandbox_allow_rw: tuple[Path, ...] = ()  # bound read-write

    def __post_init__(self) -> None:
        # a grant is part of the cache key and the run's identity, so one that does nothing must not pass silently
        grants = {"--sandbox-allow": self.sandbox_allow, "--sandbox-allow-rw": self.sandbox_allow_rw}
        for flag, paths in grants.items():
            if paths and self.sandbox != "bwrap":
                raise BcevalError(f"{flag} only applies under --sandbox bwrap: add --sandbox bwrap or drop it")
        if self.sandbox_network != "share" and self.sandbox != "bwrap":
            raise BcevalError("--sandbox-network only applies under --sandbox bwrap: add --sandbox bwrap or drop it")
        for flag, paths in grants.items():
            for path in paths:
                if not Path(path).exists():
                    raise BcevalError(f"{flag} {path} does not exist; create it or drop the flag")


def placeholders(command: str) -> set[str]:
    return set(PLACEHOLDER.findall(command))


def check_command(command: str, model: str | None) -> None:
    """The command line's placeholders, checked before anything runs."""
    found = placeholders(command)
    unknown = sorted(found - set(PLACEHOLDERS))
    if unknown:
        known = ", ".join("{" + name + "}" for name in PLACEHOLDERS)
        raise BcevalError(f"--command has an unknown placeholder {{{unknown[0]}}}; the known ones are {known}")
    if "model" in found and not model:
        raise BcevalError("--command uses {model} but no model was given: add --model NAME (or BCEVAL_MODEL)")


def pinned(command: str, model: str | None) -> bool:
    """A model is pinned only when it was given and reaches the command through {model}."""
    return bool(model) and "model" in placeholders(command)
