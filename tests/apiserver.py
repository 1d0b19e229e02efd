"""A chat-completions server on 127.0.0.1 for the api adapter's tests: scripted models, no model at all.

The real `openai` client talks to it through --base-url. A scripted model is chosen by the request's `model`
and decides each response from the conversation so far (the tool results it was sent). The right answers come
from the oracle's result files, as for the fake agent CLIs (tests/agents.py). Every request is logged.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bceval.bench.chat import JsonEndpoint

SERVED_SUFFIX = "-2026-01-01"  # the served model name reported back: the asked name plus this


class Reply:
    """An HTTP error reply instead of a completion."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self.status, self.message, self.headers = status, message, headers or {}


def answers_from(results: Path) -> dict[str, list[str]]:
    """model id -> the finding ids the oracle gives (the scripted reviewers' knowledge)."""
    found = {}
    for path in results.glob("result-case-*.json"):
        case = json.loads(path.read_text(encoding="utf-8"))["cases"][0]
        found[case["id"]] = [f["id"] if isinstance(f, dict) else f for f in case["findings"]]
    return found


def request_of(body: dict[str, Any]) -> dict[str, Any]:
    """The review request JSON inside the user message."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    start = user.index("\n", user.index("=== request ")) + 1
    return json.loads(user[start : user.index("\n=== file ", start)])


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def turn_of(body: dict[str, Any]) -> int:
    """1 for the first response of a conversation, 2 after one round of tool calls, ..."""
    return 1 + sum(m["role"] == "assistant" for m in body["messages"])


def calls(*pairs: tuple[str, dict[str, Any] | str]) -> dict[str, Any]:
    """A response asking for these tool calls (arguments as an object, or raw text for malformed ones)."""
    return {
        "tool_calls": [
            {
                "id": f"call-{index}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for index, (name, args) in enumerate(pairs)
        ]
    }


def common_prefix(one: bytes, other: bytes) -> int:
    """The length of the longest prefix two byte strings share (a binary search: slices compare in C)."""
    low, high = 0, min(len(one), len(other))
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if one[:middle] == other[:middle] else (low, middle - 1)
    return low


def final(case_id: str, findings: list[str]) -> dict[str, Any]:
    return {"content": json.dumps({"cases": [{"id": case_id, "findings": [{"id": f} for f in findings]}]})}


class ChatServer:
    """The server, its scripted models and its log; a context manager that starts and stops it."""

    def __init__(self, answers: dict[str, list[str]], latency: float = 0.0, prefix_cache: bool = False) -> None:
        self.answers = answers
        self.latency = latency
        self.prefix_cache = prefix_cache  # usage as a provider's automatic prompt caching would report it
        self.prompts: dict[str, list[bytes]] = {}  # model -> the prompts it was sent, in arrival order
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.storm = 0  # requests still to refuse with 429 (the storm model)
        self.storm_seen = 0
        self.leaked: set[str] = set()
        self.corpus = "/"  # where the cheat looks for the answer key by absolute path
        self.models: dict[str, Callable[[dict[str, Any]], Any]] = {
            "good": self.good,
            "lazy": self.lazy,
            "cheat": self.cheat,
            "storm": self.storm_model,
            "malformed": self.malformed,
            "prose": self.prose,
            "loop": self.loop,
            "slow": self.slow,
            "priced": self.lazy,
            "nostruct": self.nostruct,
            "leaky": self.leaky,
            "bench": self.bench,
            "guide": self.guide,
            "careful-guide": self.careful_guide,
            "author": self.author,
            "redirect": self.redirect,
        }
        self.guidance: dict[str, str] = {}  # guidance case id -> the oracle's result document (text)
        self.authors: dict[str, list[dict[str, Any]]] = {}  # development case id -> its responses, turn by turn
        self.endpoint = JsonEndpoint(self.handle)

    @property
    def base_url(self) -> str:
        return self.endpoint.base_url

    def __enter__(self) -> ChatServer:
        self.endpoint.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.endpoint.__exit__(*exc)

    def requests(self, model: str | None = None) -> list[dict[str, Any]]:
        return [entry for entry in self.log if model is None or entry["body"]["model"] == model]

    def handle(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self.log.append({"path": path, "headers": headers, "body": body, "time": time.monotonic()})
            prompt_tokens, cached = self.cached_prefix(body) if self.prefix_cache else (1000, 200)
        try:
            if self.latency:
                time.sleep(self.latency)
            model = self.models[body["model"]]
            reply = model({**body, "_headers": headers})
        finally:
            with self.lock:
                self.in_flight -= 1
        if isinstance(reply, Reply):
            return reply.status, {"error": {"message": reply.message, "type": "test"}}, reply.headers
        message = {"role": "assistant", "content": reply.get("content")}
        if "tool_calls" in reply:
            message["tool_calls"] = reply["tool_calls"]
        usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": 100}
        usage["total_tokens"] = prompt_tokens + 100
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
        if body["model"] == "priced":
            usage["cost"] = 0.002
        completion = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"] + SERVED_SUFFIX,
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in reply else "stop"}
            ],
            "usage": usage,
        }
        return 200, completion, {}

    def cached_prefix(self, body: dict[str, Any]) -> tuple[int, int]:
        """(prompt tokens, cached tokens) of a request as automatic prefix caching counts them: the prompt is the
        request's tools, response format and messages, in that order (as providers render them: tools and schema
        before the conversation), as compact JSON; a token is 4 of its UTF-8 bytes (rounded up for the prompt, down
        for the cache); the cached part is the longest prefix it shares with an earlier request to the same model.
        No minimum length and no 128-token steps: a provider's (OpenAI's: 1,024 tokens, then steps of 128) would
        cache a little less of short prompts. Called under the lock."""
        parts = {name: body.get(name) for name in ("tools", "response_format", "messages")}
        prompt = json.dumps(parts, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        earlier = self.prompts.setdefault(body["model"], [])
        shared = max((common_prefix(prompt, seen) for seen in earlier), default=0)
        earlier.append(prompt)
        return -(-len(prompt) // 4), shared // 4

    # --- the scripted models ------------------------------------------------------------------------------------

    def redirect(self, body: dict[str, Any]) -> Any:
        """Sends the client elsewhere (an HTTPS host it would not verify over a plain-HTTP endpoint)."""
        return Reply(307, "moved", {"Location": "https://127.0.0.1:9/v1/chat/completions"})

    def good(self, body: dict[str, Any]) -> Any:
        """Lists its files, reads its leaf, every article it will cite and one it will not, then cites."""
        request = request_of(body)
        case_id = request["cases"][0]["id"]
        expected = self.answers[case_id]
        turn = turn_of(body)
        if turn == 1:
            return calls(("list_files", {}))
        if turn == 2:
            others = [row["path"] for row in request["candidateArticles"] if row["path"] not in expected][:1]
            return calls(*[("read_file", {"path": path}) for path in [request["skill"], *expected, *others]])
        return final(case_id, expected)

    def lazy(self, body: dict[str, Any]) -> Any:
        """Cites the right articles without opening one."""
        case_id = request_of(body)["cases"][0]["id"]
        return final(case_id, self.answers[case_id])

    def cheat(self, body: dict[str, Any]) -> Any:
        """Looks for the answer key outside its view, then gives up and reports nothing."""
        request = request_of(body)
        if turn_of(body) == 1:
            return calls(
                ("read_file", {"path": "../../evaluation/review-fixtures.json"}),
                ("read_file", {"path": "/etc/passwd"}),
                ("read_file", {"path": self.corpus.rstrip("/") + "/evaluation/review-fixtures.json"}),
                ("read_file", {"path": "escape/review-fixtures.json"}),
                ("list_files", {}),
            )
        return final(request["cases"][0]["id"], [])

    def storm_model(self, body: dict[str, Any]) -> Any:
        with self.lock:
            self.storm_seen += 1
            refuse = self.storm > 0
            self.storm -= refuse
        if refuse:
            return Reply(429, "slow down", {"Retry-After": "0.05"})
        return self.good(body)

    def malformed(self, body: dict[str, Any]) -> Any:
        """Broken tool calls first (not JSON, an unknown tool, no path), then a good review."""
        if turn_of(body) == 1:
            return calls(("read_file", "{not json"), ("delete_everything", {}), ("read_file", {"offset": 3}))
        return self.lazy(body)

    def prose(self, body: dict[str, Any]) -> Any:
        return {"content": "I looked at the code and it seems fine overall."}

    def loop(self, body: dict[str, Any]) -> Any:
        """Never answers: 100 tool calls in every response."""
        return calls(*[("list_files", {})] * 100)

    def slow(self, body: dict[str, Any]) -> Any:
        time.sleep(3)
        return self.lazy(body)

    def nostruct(self, body: dict[str, Any]) -> Any:
        if "response_format" in body:
            return Reply(400, "response_format is not supported by this server")
        case_id = request_of(body)["cases"][0]["id"]
        return {"content": "Here is my review:\n```json\n" + final(case_id, self.answers[case_id])["content"] + "\n```"}

    def leaky(self, body: dict[str, Any]) -> Any:
        """Echoes the Authorization header it was sent: in an error the first time a case asks, then in its content."""
        key = body["_headers"].get("authorization", "")
        case_id = request_of(body)["cases"][0]["id"]
        with self.lock:
            first = case_id not in self.leaked
            self.leaked.add(case_id)
        if first:
            return Reply(500, f"internal error while checking {key}")
        return {"content": f"note: {key}\n" + final(case_id, self.answers[case_id])["content"]}

    def guide(self, body: dict[str, Any]) -> Any:
        """A guidance agent: lists both folders, reads the knowledge index, then gives the oracle's report."""
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        request = json.loads(user[user.index("\n") + 1 :])
        turn = turn_of(body)
        if turn == 1:
            return calls(("list_files", {}))
        if turn == 2:
            return calls(("read_file", {"path": request["knowledgeIndex"]}), ("read_file", {"path": "../outside"}))
        return {"content": self.guidance[request["caseId"]]}

    def careful_guide(self, body: dict[str, Any]) -> Any:
        """A guidance agent that reads every article it will cite, whole, before it gives the oracle's report."""
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        request = json.loads(user[user.index("\n") + 1 :])
        report = json.loads(self.guidance[request["caseId"]])
        cited = [entry["path"] for entry in report["guidanceReport"].get("knowledge") or []]
        if turn_of(body) == 1 and cited:
            return calls(*[("read_file", {"path": f"knowledge/{path}"}) for path in cited])
        return {"content": self.guidance[request["caseId"]]}

    def bench(self, body: dict[str, Any]) -> Any:
        """Two tool calls per case (list, then read one candidate), then an answer: three responses."""
        request = request_of(body)
        turn = turn_of(body)
        if turn == 1:
            return calls(("list_files", {}))
        if turn == 2:
            return calls(("read_file", {"path": request["candidateArticles"][0]["path"]}))
        case_id = request["cases"][0]["id"]
        return final(case_id, self.answers.get(case_id, []))

    def author(self, body: dict[str, Any]) -> Any:
        """A development agent: the test's script for the request's case, one response per turn (tool calls made
        with `calls`, then the report as content); past the script's end it answers with the last response."""
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        request = json.loads(user[user.index("\n") + 1 :])
        script = self.authors[request["caseId"]]
        return script[min(turn_of(body), len(script)) - 1]
