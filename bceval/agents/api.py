"""The `api` kind: bceval's own agent, one chat-completions conversation per attempt over any OpenAI-compatible
endpoint (the `openai` package, extra `bceval[api]`), for every question shape. Because bceval runs the tools, it
records which files were read completely; 429 and 503 wait as `Retry-After` says, and the API key is scrubbed from
every record."""

from __future__ import annotations

import email.utils
import hashlib
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from bceval.agents.api_tools import TOOLS_VERSION, ToolBox
from bceval.agents.process import RETRY_WAIT_CAP, LiveAgent, _Attempt, backoff
from bceval.agents.settings import EndpointSettings
from bceval.agents.view import View
from bceval.errors import BcevalError
from bceval.runs.identity import asking, question
from bceval.usage import Usage, known_number

PROMPT_VERSION = 1  # of this agent's review protocol: with TOOLS_VERSION, part of every cache key
INSTALL = "the api adapter needs the openai package: pip install 'bceval[api]'"
RATE_LIMIT_RETRIES = 12  # waits on 429/503 within one attempt before it is an infrastructure failure
TOOL_CALLS_PER_TURN = 32  # more in one response are answered with an error each
TRANSCRIPT_TEXT = 20_000  # characters of a model message a transcript keeps
SCRUBBED = "[api key]"
SCRUB_MIN = 8  # characters: real keys are far longer


class AdaptiveLimit:
    """How many requests may be in flight: at most `most`; halved on a 429, one added back after `limit`
    successes in a row (a run of successes as long as the current limit)."""

    def __init__(self, most: int) -> None:
        self.most = max(1, most)
        self.limit = self.most
        self.lowest = self.most  # the lowest the limit has been
        self.active = 0
        self.streak = 0
        self._cond = threading.Condition()

    def acquire(self) -> float:
        """Wait for a slot; returns the seconds waited."""
        started = time.monotonic()
        with self._cond:
            while self.active >= self.limit:
                self._cond.wait()
            self.active += 1
        return time.monotonic() - started

    def release(self) -> None:
        with self._cond:
            self.active -= 1
            self._cond.notify_all()

    def rate_limited(self) -> int:
        with self._cond:
            self.limit = max(1, self.limit // 2)
            self.lowest = min(self.lowest, self.limit)
            self.streak = 0
            return self.limit

    def succeeded(self) -> None:
        with self._cond:
            self.streak += 1
            if self.limit < self.most and self.streak >= self.limit:
                self.limit += 1
                self.streak = 0
                self._cond.notify_all()


def retry_after(headers: Any, now: float | None = None) -> float | None:
    """Seconds a `Retry-After` (or `retry-after-ms`) header asks for: a number, or an HTTP date; None without one."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            return max(0.0, float(headers[name]) / scale)
        except (KeyError, TypeError, ValueError):
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))


def shared_first(request: dict[str, Any], shared: tuple[str, ...]) -> dict[str, Any]:
    """`request` with the members every case shares first (in `shared`'s order), then the others in theirs: a
    provider caches the longest prompt prefix it has seen, so what differs between cases goes last."""
    return {**{name: request[name] for name in shared if name in request}, **request}


@dataclass
class Conversation:
    """What one attempt's conversation produced: the final text or why there is none, and what it did."""

    text: str | None = None
    failure: tuple[str, str, str | None] | None = None
    turns: list[dict[str, Any]] = field(default_factory=list)
    waits: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_known: bool = True
    uncached_known: bool = True
    served_model: str | None = None
    structured: bool = False
    deadline: float = 0.0  # time.monotonic() when the attempt's time is up


def _field(value: Any, key: str) -> Any:
    """`value[key]` of a JSON object, None for anything else (any part of a response may be missing)."""
    return value.get(key) if isinstance(value, dict) else None


def _count(usage: Any, key: str) -> int | None:
    value = _field(usage, key)
    return value if isinstance(value, int) else None


def _clip(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    return text if len(text) <= TRANSCRIPT_TEXT else text[:TRANSCRIPT_TEXT] + f"[... {len(text)} characters]"


_THREAD_CLIENTS = threading.local()  # per thread: (openai module, base URL, key) -> its client (see Endpoint.client)


class Endpoint:
    """One chat-completions endpoint: the client, the model, the sampling settings and the shared limit."""

    def __init__(
        self,
        settings: EndpointSettings,
        model: str,
        environ: Mapping[str, str],
        sleep: Callable[[float], None],
        rng: random.Random,
        first_wait: float,
    ) -> None:
        try:
            import openai  # not at the top: the optional extra bceval[api], needed only by an api agent
        except ImportError:
            raise BcevalError(INSTALL) from None
        key = environ.get(settings.api_key_env)
        if not key:
            raise BcevalError(
                f"the api adapter reads its key from ${settings.api_key_env}, which is not set: set it (any value "
                "for a local server) or name another variable with --api-key-env"
            )
        self.key = key
        self.openai = openai
        self.settings = settings
        self.model = model
        self.limit = AdaptiveLimit(settings.jobs)
        self.sleep = sleep
        self.rng = rng  # random.Random is safe to share between threads
        self.first_wait = first_wait
        self.structured = True  # until the endpoint refuses response_format once
        self.served_model: str | None = None

    @property
    def client(self) -> Any:
        """This thread's openai client for this address and key, made on its first request: a shared client's
        connection pool is one lock every request takes, and every Endpoint of one address shares it."""
        clients = _THREAD_CLIENTS.__dict__.setdefault("clients", {})
        identity = (self.openai, self.settings.base_url or "", self.key)
        client = clients.get(identity)
        if client is None:
            base_url = self.settings.base_url
            address = urlsplit(base_url or "")  # no base URL: the package's default, neither Azure nor plain HTTP
            query = dict(parse_qsl(address.query))  # Azure's `?api-version=...` goes on every request, not the path
            if base_url and "?" in base_url:
                base_url = urlunsplit(address._replace(query=""))
            # Azure OpenAI takes its key in an `api-key` header rather than as a bearer token
            azure = (address.hostname or "").endswith((".openai.azure.com", ".cognitiveservices.azure.com"))
            plain = address.scheme == "http"
            client = clients[identity] = self.openai.OpenAI(
                api_key=self.key,
                base_url=base_url,
                max_retries=0,
                default_query=query or None,
                default_headers={"api-key": self.key} if azure else None,
                timeout=60.0,
                # plain HTTP (a local server): no TLS trust store to load, and no redirect to an unverified host
                http_client=self.openai.DefaultHttpxClient(verify=False, follow_redirects=False) if plain else None,
            )
        return client

    def scrub(self, value: Any) -> Any:
        """`value` with the API key replaced wherever it occurs (a server may echo it); a key shorter than SCRUB_MIN
        is a local server's placeholder, not a secret."""
        if len(self.key) < SCRUB_MIN:
            return value
        if isinstance(value, str):
            return value.replace(self.key, SCRUBBED) if self.key in value else value
        if isinstance(value, dict):
            return {self.scrub(k): self.scrub(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.scrub(item) for item in value]
        return value

    def _request(self, messages: list[Any], tools: ToolBox, schema: dict[str, Any] | None, timeout: float) -> Any:
        options: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools.tools:
            options["tools"] = tools.specs()
        settings = self.settings
        sampling = {
            "temperature": settings.temperature,
            "max_tokens": settings.max_output_tokens,
            "seed": settings.seed,
        }
        options.update({name: value for name, value in sampling.items() if value is not None})
        if schema is not None and self.structured:
            options["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "result", "schema": schema, "strict": False},
            }
        # the client's documented `post`: the body is sent as it is and the response comes back as plain JSON
        return self.client.post("/chat/completions", body=options, cast_to=object, options={"timeout": timeout})

    def complete(
        self, messages: list[Any], tools: ToolBox, schema: dict[str, Any] | None, timeout: float, talk: Conversation
    ) -> Any:
        """One response, waiting out 429/503 (each wait in `talk.waits`), or why there is none: (kind, detail,
        subtype)."""
        openai, limited = self.openai, 0
        while True:
            if time.monotonic() >= talk.deadline:
                return ("timeout", f"no answer within {timeout:g} s", None)
            queued = self.limit.acquire()
            if queued > 0.05:
                talk.waits.append({"turn": len(talk.turns) + 1, "reason": "concurrency", "seconds": round(queued, 3)})
            try:
                response = self._request(messages, tools, schema, max(0.05, talk.deadline - time.monotonic()))
                self.limit.succeeded()
                return response
            except openai.APITimeoutError:
                return ("timeout", f"no answer within {timeout:g} s", None)
            except openai.APIConnectionError as exc:
                return ("agent-error", f"cannot reach the endpoint ({type(exc).__name__})", "connection")
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status == 400 and self.structured and schema is not None and "response_format" in str(exc):
                    self.structured = False  # this endpoint takes no structured output: the strict parser reads it
                    continue
                if status not in (429, 503):
                    detail = self.scrub(f"the endpoint answered HTTP {status}: {str(exc)[:300]}")
                    return ("agent-error", detail, f"http-{status}")
                asked = retry_after(exc.response.headers if exc.response is not None else None)
            except openai.OpenAIError as exc:
                return ("invalid-output", f"unreadable response ({type(exc).__name__})", None)
            finally:
                self.limit.release()
            limited += 1
            if limited > RATE_LIMIT_RETRIES:
                return ("agent-error", f"HTTP {status} {limited} times in a row; gave up waiting", "rate-limited")
            wait = (
                backoff(limited + 1, self.first_wait or 1.0, self.rng) if asked is None else min(RETRY_WAIT_CAP, asked)
            )
            concurrency = self.limit.rate_limited() if status == 429 else self.limit.limit
            if time.monotonic() + wait > talk.deadline:
                return ("timeout", f"HTTP {status} asked to wait {wait:g} s, past the attempt's {timeout:g} s", None)
            talk.waits.append(
                {
                    "turn": len(talk.turns) + 1,
                    "reason": f"http-{status}",
                    "retryAfter": asked,
                    "seconds": round(wait, 3),
                    "concurrency": concurrency,
                }
            )
            self.sleep(wait)

    def converse(
        self,
        system: str,
        user: str,
        tools: ToolBox,
        schema: dict[str, Any] | None,
        timeout: float,
        prices: Any,
    ) -> Conversation:
        """One conversation: turns until a message without tool calls (the answer) or --max-turns."""
        messages: list[Any] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        talk = Conversation(structured=self.structured and schema is not None, deadline=time.monotonic() + timeout)
        price = prices.price(self.model) if prices is not None else None
        for number in range(1, self.settings.max_turns + 1):
            response = self.complete(messages, tools, schema, timeout, talk)
            if isinstance(response, tuple):
                talk.failure = response
                return talk
            talk.structured = self.structured and schema is not None
            message, turn = self._turn(response, number, price, talk)
            if not isinstance(message, dict):
                talk.failure = ("invalid-output", "the response has no message", None)
                return talk
            calls = message.get("tool_calls")
            calls = calls if isinstance(calls, list) else []
            if not calls:
                content = message.get("content")
                talk.text = content if isinstance(content, str) else ""
                return talk
            messages.extend(_answer_calls(message, calls, number, tools, turn))
        turns = self.settings.max_turns
        talk.failure = ("agent-error", f"no final answer within {turns} turns (--max-turns)", "max-turns")
        return talk

    def _turn(self, response: Any, number: int, price: Any, talk: Conversation) -> tuple[Any, dict[str, Any]]:
        """The response's message, and its turn as the transcript keeps it (its tokens and cost added to `talk`)."""
        choices = _field(response, "choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = _field(choice, "message")
        served = _field(response, "model")
        if isinstance(served, str) and served:
            talk.served_model = talk.served_model or served
            self.served_model = self.served_model or served
        usage = _field(response, "usage")
        prompt, completion = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
        cached = _count(_field(usage, "prompt_tokens_details"), "cached_tokens") or 0
        reported = known_number(_field(usage, "cost"))  # the provider's own (OpenRouter's `cost`), if any
        cost = float(reported) if reported is not None else None
        if cost is None and price is not None and prompt is not None and completion is not None:
            cost = price.cost(prompt, completion, cached)
        talk.cost_known = talk.cost_known and cost is not None
        # the cost had nothing been cached: the cached tokens at the input price (known without them, or with a price)
        saving = 0.0 if not cached else None
        if price is not None and prompt is not None and completion is not None:
            saving = price.cost(prompt, completion) - price.cost(prompt, completion, cached)
        uncached = cost + saving if cost is not None and saving is not None else None
        talk.uncached_known = talk.uncached_known and uncached is not None
        talk.usage = talk.usage.plus(
            Usage(
                costUsd=cost,
                inputTokens=prompt,
                outputTokens=completion,
                cacheReadTokens=cached if prompt is not None else None,
                turns=1,
                uncachedCostUsd=uncached,
            )
        )
        turn: dict[str, Any] = {
            "turn": number,
            "finishReason": _field(choice, "finish_reason"),
            "content": _clip(_field(message, "content")),
            "usage": {"inputTokens": prompt, "outputTokens": completion, "cachedTokens": cached, "costUsd": cost},
        }
        talk.turns.append(turn)
        return message, turn


def _answer_calls(
    message: dict[str, Any], calls: list[Any], number: int, tools: ToolBox, turn: dict[str, Any]
) -> list[dict[str, Any]]:
    """The messages that answer one response's tool calls: the assistant's, echoed, then one result per call."""
    echoed, results = [], []
    turn["toolCalls"] = []
    for index, call in enumerate(calls):
        function = _field(call, "function")
        name = _field(function, "name")
        arguments = _field(function, "arguments")
        call_id = _field(call, "id") or f"call-{number}-{index}"
        echoed.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": str(name or ""), "arguments": arguments if isinstance(arguments, str) else ""},
            }
        )
        if index >= TOOL_CALLS_PER_TURN:
            text, error = f"error: at most {TOOL_CALLS_PER_TURN} tool calls are answered per turn", True
            tools.calls.append({"tool": str(name)[:100], "arguments": "", "ok": False, "error": text[7:]})
        else:
            text, error = tools.call(name, arguments)
        turn["toolCalls"].append({"tool": str(name)[:100], "error": error})
        results.append({"role": "tool", "tool_call_id": call_id, "content": text})
    return [{"role": "assistant", "content": message.get("content"), "tool_calls": echoed}, *results]


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
        if agent.endpoint.knowledge != "embedded" and not getattr(self.shape, "bounded", False):
            raise BcevalError(f"--knowledge {agent.endpoint.knowledge} applies to review questions only: drop it here")
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
        usage = usage if talk.uncached_known else replace(usage, uncachedCostUsd=None)
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
