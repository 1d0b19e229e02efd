"""The `api` kind: bceval's own agent, one chat-completions conversation per attempt over any OpenAI-compatible
endpoint, for every question shape. Because bceval runs the tools, it records which files were read completely."""

from __future__ import annotations

import hashlib
import time
from dataclasses import replace
from typing import Any

from bceval.agents.api_tools import TOOLS_VERSION, ToolBox
from bceval.agents.endpoint import Conversation, Endpoint
from bceval.agents.process import LiveAgent, _Attempt
from bceval.agents.view import View
from bceval.errors import BcevalError
from bceval.runs.identity import asking, question
from bceval.usage import Usage

PROMPT_VERSION = 1  # of this agent's review protocol: with TOOLS_VERSION, part of every cache key


class ApiAgent(LiveAgent):
    """bceval's own loop over one endpoint, answering the questions of its shape."""

    name = kind = "api"
    model_is_label_only = False

    def setup(self) -> None:
        agent = self.agent
        # the settings' checks first (no command line to check: there is none), then the opt-in
        if not agent.model:
            raise BcevalError("the api adapter needs --model (or BCEVAL_MODEL): the model the endpoint serves")
        if agent.endpoint is None:
            raise BcevalError("the api adapter needs its endpoint settings")
        if agent.sandbox != "none" or agent.isolation != "view":
            raise BcevalError("the api adapter runs no process: it takes neither --sandbox nor --isolation none")
        self.require_opt_in()
        self.model, self.pinned = agent.model, True  # the model is in every request
        self.tools = self.shape.tools
        self.endpoint = Endpoint(agent.endpoint, agent.model, self.environ, self.sleep, self.rng, agent.retry_wait)

    def answer(self, question: Any) -> Any:
        return self.shape.by_endpoint(self, question)

    def describe(self) -> dict[str, Any]:
        assert self.agent.endpoint is not None
        described = {
            "adapter": self.name,
            "model": self.model,
            "servedModel": self.endpoint.served_model,
            "version": f"openai-python {getattr(self.endpoint.openai, '__version__', 'unknown')}",
            "pinned": True,
            "baseUrl": self.agent.endpoint.base_url or "default",
            "isolation": "view",
            "sandbox": "none",
        }
        return self.shape.described(self, described)

    def cache_key(self, view: View, case: Any) -> str:
        """A review answer's: the view, the model, the endpoint and its sampling settings, the epoch, the tools."""
        asked = replace(asking("api", self.agent, live=True), command=f"api tools={TOOLS_VERSION}")
        return question(asked, view.digest, case.corpus, case.request_path).cache_key(PROMPT_VERSION)

    def converse(
        self, system: str, user: str, box: ToolBox, schema: dict[str, Any] | None
    ) -> tuple[Conversation, Usage, float]:
        """One conversation: what it produced, what it cost (unknown stays unknown) and its seconds."""
        started = time.monotonic()
        talk = self.endpoint.converse(system, user, box, schema, self.agent.timeout, self.agent.prices)
        wall = round(time.monotonic() - started, 3)
        usage = talk.usage if talk.cost_known else replace(talk.usage, costUsd=None)
        return talk, usage.plus(Usage(wallSeconds=wall)), wall

    def attempt(
        self, system: str, user: str, box: ToolBox, schema: dict[str, Any] | None, number: int, waited: float
    ) -> _Attempt:
        talk, usage, wall = self.converse(system, user, box, schema)
        record: dict[str, Any] = {
            "attempt": number,
            "waitedSeconds": round(waited, 3),
            "wallSeconds": wall,
            "structuredOutput": talk.structured,
            "servedModel": talk.served_model,
            "turns": talk.turns,
            "waits": talk.waits,
            "toolCalls": box.calls,
            "refused": len(box.refusals),
            "reads": box.reads(),
            "usage": usage.as_record(),
        }
        if talk.failure is not None:
            return _Attempt(record, usage=usage).failed(*talk.failure)
        record.update(outcome="answered")
        return _Attempt(record, text=talk.text or "", usage=usage)

    def attempts_record(self, attempts: list[_Attempt], user: str, run_id: str | None) -> dict[str, Any]:
        """The attempts of one answer as its record keeps them, with bceval's read evidence of the last one."""
        limited = [w for a in attempts for w in a.record.get("waits", []) if w.get("reason") != "concurrency"]
        seconds = sum(a.record.get("waitedSeconds", 0) for a in attempts) + sum(w["seconds"] for w in limited)
        return {
            "attempts": [a.record for a in attempts],
            "waits": {"retries": len(attempts) - 1, "rateLimited": len(limited), "waitedSeconds": round(seconds, 3)},
            "readBy": "bceval",
            "readEvidence": {
                "runId": run_id,
                "questionSha256": hashlib.sha256(user.encode("utf-8")).hexdigest(),
                "reads": attempts[-1].record.get("reads", []),
            },
        }
