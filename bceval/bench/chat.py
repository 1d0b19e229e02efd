"""A chat-completions endpoint on 127.0.0.1 for `bceval bench`: each conversation asks for two tool calls, then
answers with no findings, every response after a fixed latency."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RESPONSES_PER_CASE = 3


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    start = user.index("\n", user.index("=== request ")) + 1
    request = json.loads(user[start : user.index("\n=== file ", start)])
    turn = 1 + sum(m.get("role") == "assistant" for m in messages)
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if turn < RESPONSES_PER_CASE:
        name, arguments = (
            ("list_files", {}) if turn == 1 else ("read_file", {"path": request["candidateArticles"][0]["path"]})
        )
        message["tool_calls"] = [
            {"id": f"call-{turn}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ]
    else:
        message["content"] = json.dumps({"cases": [{"id": request["cases"][0]["id"], "findings": []}]})
    return {
        "id": "bench",
        "object": "chat.completion",
        "created": 0,
        "model": str(body.get("model")),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if turn < 3 else "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050},
    }


Respond = Callable[[str, dict[str, str], dict[str, Any]], tuple[int, Any, dict[str, str]]]


class JsonEndpoint:
    """A JSON-over-HTTP server on 127.0.0.1 in threads of this process: `respond(path, headers, body)` gives
    (status, payload, extra headers) for each POST; a context manager."""

    def __init__(self, respond: Respond) -> None:
        here = self._here = threading.local()  # .arrived: when this thread's request began to arrive

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: with Nagle's algorithm the body waits for the client's
            # delayed acknowledgement of the headers, 40 ms on every response
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                here.arrived = time.monotonic()
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                sent = {key.lower(): value for key, value in self.headers.items()}
                status, payload, headers = respond(self.path, sent, body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting

        class Server(ThreadingHTTPServer):
            # http.server listens with a backlog of 5: a sixth client connecting at the same moment has its SYN
            # dropped and tries again a second later, a second counted against whoever was connecting
            request_queue_size = 128

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> JsonEndpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class BenchServer(JsonEndpoint):
    """The bench's endpoint: every response `latency` seconds after its request began to arrive."""

    def __init__(self, latency: float) -> None:
        def respond(path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
            reply = json.dumps(_reply(body)).encode("utf-8")  # encoded before the wait, not after it
            time.sleep(max(0.0, self._here.arrived + latency - time.monotonic()))
            return 200, reply, {}

        super().__init__(respond)
