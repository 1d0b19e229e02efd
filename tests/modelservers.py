"""Scripted model servers on 127.0.0.1 for the real agent CLIs: the Anthropic Messages API (SSE) for Claude Code and
the OpenAI Responses API (SSE) for Codex. They answer by a script, never by a model: a careful reviewer first reads
every article it will cite with the CLI's own tool (Claude Code's Read, Codex's exec_command `cat`), then answers
with the oracle's findings for the case (a folder of result files); other scripts fail as a service can (429, 500,
529, a malformed stream, a hang). Requests that carry no bceval prompt (a CLI's own side requests) get "ok".
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SERVED = "scripted-served-1"  # the model name the servers report: not the one asked for
_REQUEST = re.compile(r"=== request [^\n]*\n")
_CWD = re.compile(r"Working directory: (/[^\s]+)")


def _texts(value: Any) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    return []


def bceval_request(body: dict[str, Any]) -> dict[str, Any] | None:
    """The review request a bceval prompt in the conversation carries, or None."""
    for text in _texts(body.get("messages") or body.get("input") or []):
        found = _REQUEST.search(text)
        if found:
            end = text.index("\n=== file ", found.end())
            return json.loads(text[found.end() : end])
    return None


class Script:
    """What the model does. `mode`: "careful" (read what it cites, then answer), "status:CODE" (every request
    fails so), "malformed" (a broken stream), "hang" (never answers)."""

    def __init__(self, answers: Path | None, mode: str = "careful") -> None:
        self.answers = answers
        self.mode = mode
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def findings(self, case_id: str) -> list[dict[str, str]]:
        path = self.answers / f"result-{case_id}.json" if self.answers else None
        if path is None or not path.is_file():
            return []
        return json.loads(path.read_text(encoding="utf-8"))["cases"][0]["findings"]

    def reply(self, body: dict[str, Any], results: int) -> tuple[list[str], str]:
        """(the paths to read, the final text): reads first, while no tool result has come back."""
        request = bceval_request(body)
        if request is None:
            return [], "ok"
        case_id = request["cases"][0]["id"]
        findings = self.findings(case_id)
        if not results and findings:
            return [finding["id"] for finding in findings], ""
        return [], json.dumps({"cases": [{"id": case_id, "findings": findings}]})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: Script
    kind: str  # "anthropic" or "responses"

    def log_message(self, *args: Any) -> None:  # quiet
        return None

    def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        self._send(404, b"{}")

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        script = self.script
        with script.lock:
            script.requests.append(body)
        if not self.path.split("?")[0].endswith(("/messages", "/responses")):
            return self._send(404, b"{}")
        if script.mode.startswith("status:"):
            error = {"type": "error", "error": {"type": "api_error", "message": "scripted failure"}}
            return self._send(int(script.mode.split(":")[1]), json.dumps(error).encode())
        if script.mode == "hang":
            time.sleep(3600)
        if script.mode == "malformed":
            return self._send(200, b"event: message_start\ndata: {not json\n\n", "text/event-stream")
        events = anthropic_events(body, script) if self.kind == "anthropic" else responses_events(body, script)
        data = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events).encode()
        self._send(200, data, "text/event-stream")


def anthropic_events(body: dict[str, Any], script: Script) -> list[dict[str, Any]]:
    """A Messages API stream: Read tool calls for the paths to read (absolute, in the agent's folder), or the text."""
    results = sum(1 for text in _tool_results(body.get("messages") or []))
    reads, text = script.reply(body, results)
    system = " ".join(_texts(body.get("system") or ""))
    found = _CWD.search(system)
    cwd = found.group(1) if found else ""
    usage = {"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": SERVED, "content": []}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "stop_reason": None, "stop_sequence": None, "usage": usage}}
    ]
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for number, path in enumerate(reads):
        use = {"type": "tool_use", "id": f"toolu_{number}_{time.monotonic_ns()}", "name": "Read", "input": {}}
        given = json.dumps({"file_path": f"{cwd}/{path}" if cwd else path})
        blocks.append((use, {"type": "input_json_delta", "partial_json": given}))
    if not reads:
        blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": text}))
    for index, (start, delta) in enumerate(blocks):
        events += [
            {"type": "content_block_start", "index": index, "content_block": start},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    stop = "tool_use" if reads else "end_turn"
    events.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage})
    events.append({"type": "message_stop"})
    return events


def _tool_results(messages: list[Any]) -> list[Any]:
    return [
        block
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def responses_events(body: dict[str, Any], script: Script) -> list[dict[str, Any]]:
    """A Responses API stream: exec_command `cat` calls for the paths to read (relative: Codex runs them in its
    folder), or the assistant message."""
    items = body.get("input") or []
    results = sum(1 for item in items if isinstance(item, dict) and item.get("type") == "function_call_output")
    reads, text = script.reply(body, results)
    output: list[dict[str, Any]] = []
    for number, path in enumerate(reads):
        arguments = json.dumps({"cmd": f"cat {path}"})
        call = f"call_{number}_{time.monotonic_ns()}"
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{call}",
                "name": "exec_command",
                "arguments": arguments,
                "call_id": call,
            }
        )
    if not reads:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        output.append(
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": content}
        )
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 40},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    response = {"id": "resp_1", "object": "response", "model": SERVED, "status": "completed"}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {**response, "status": "in_progress"}}]
    events += [{"type": "response.output_item.done", "output_index": n, "item": item} for n, item in enumerate(output)]
    events.append({"type": "response.completed", "response": {**response, "output": output, "usage": usage}})
    return events


class ModelServer:
    """One scripted server on 127.0.0.1 (a port of its own), in a thread, until `close`."""

    def __init__(self, kind: str, script: Script) -> None:
        handler = type("Handler", (_Handler,), {"script": script, "kind": kind})
        self.script = script
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
