"""The api agent in a development run (spec §11.2, §11.8): bceval's own chat-completions conversation with the
read-only tools over the case's workspace copy and (in arms with guidance) the knowledge view, plus two write
tools confined to the copy: `write_file(path, content)` and `edit_file(path, old, new)`.

A write path that leaves the copy (`..`, absolute, through a link, into .git, into knowledge/) is a tool error the
model sees; the ToolBox records it with every other call, and nothing is written. Because bceval runs the tools,
its read evidence `{path, complete, bytes, sha256}` comes from its own tool results, never from the model: knowledge
recall and precision of this agent count only articles it read in full (bceval.evaluators.development.readevidence).

One conversation per case and no retries: a retried conversation would start on a copy the first one already
changed. A conversation that ends without an answer (timeout, endpoint error, --max-turns) is an infrastructure
error of the case (§11.10); an answer that is not JSON is the model's failure.
"""

from __future__ import annotations

import hashlib
import os
import random
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bceval.agents.api_tools import READ_TOOLS, TOOLS_VERSION, Tool, ToolBox, ToolError
from bceval.agents.settings import AgentSettings
from bceval.errors import BcevalError
from bceval.usage import Usage

WORKSPACE, KNOWLEDGE = "workspace", "knowledge"
WRITE_CHARS = 1_000_000  # the most text one write_file or edit_file may carry
PROMPT_VERSION = 1
SYSTEM = (
    "You are a Business Central AL developer in an evaluation, working only through tools. 'workspace/' is the "
    "fixture repository you change: write_file and edit_file work there and nowhere else. {knowledge}Make the "
    "change the request asks for with the tools, keep it in the working tree, and answer with nothing but the "
    "implementationReport JSON object in the shape of the request's resultSchema. List as knowledge only articles "
    "you read in full and that shaped the change."
)
SYSTEM_KNOWLEDGE = (
    "'knowledge/' is a read-only copy of the BCQuality knowledge checkout; knowledge/knowledge-index.json lists its "
    "articles, and the request's knowledge paths are relative to knowledge/. "
)


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 120 else text[:117] + "..."


class WorkspaceBox(ToolBox):
    """The ToolBox of one development conversation: read tools over its roots, write tools over workspace/ only,
    and the record of every write that happened."""

    def __init__(self, roots: Mapping[str, Path]) -> None:
        super().__init__(dict(roots), DEVELOPMENT_TOOLS)
        self.writes: list[dict[str, Any]] = []
        self.outside: list[str] = []  # write paths refused because they would leave the copy

    def writable(self, path: Any) -> tuple[str, Path]:
        """(the path as the tools name it, where it is on disk) for a file under workspace/, or ToolError. A path
        that would leave the copy is also kept in `outside`: the run reports every such attempt."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string such as workspace/src/MyTable.Table.al")
        text = path.strip().replace("\\", "/")
        if "\0" in text or text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
            self._outside(path, f"'{_short(path)}' is absolute; write to a path under {WORKSPACE}/")
        if ".." in text.split("/"):
            self._outside(path, f"'{_short(path)}' leaves {WORKSPACE}/; only files inside it can be written")
        parts = [part for part in text.split("/") if part not in ("", ".")]
        if not parts or parts[0] != WORKSPACE:
            if parts and parts[0] in self.roots:  # another root: the knowledge view
                self._outside(path, f"'{_short(path)}' is in {parts[0]}/, which is read-only; write under {WORKSPACE}/")
            raise ToolError(f"'{_short(path)}' is not under {WORKSPACE}/; only files there can be written")
        inside = parts[1:]
        if not inside:
            raise ToolError(f"'{_short(path)}' is a folder, not a file")
        if any(part.lower() == ".git" for part in inside):
            self._outside(path, "the repository's .git folder cannot be written")
        root = self.roots[WORKSPACE]
        assert isinstance(root, Path)
        current = root
        for part in inside:
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                continue  # a new file (or folder) below here
            except OSError as exc:
                raise ToolError(f"'{_short(path)}' cannot be checked ({exc.strerror})") from None
            if stat.S_ISLNK(mode):
                self._outside(path, f"'{_short(path)}' goes through a link; links are not followed")
        if not current.parent.resolve().is_relative_to(root.resolve()):  # belt and braces
            self._outside(path, f"'{_short(path)}' leaves {WORKSPACE}/")
        return "/".join(parts), current

    def _outside(self, path: Any, message: str) -> None:
        self.outside.append(_short(path))
        raise ToolError(message)

    def store(self, name: str, target: Path, data: bytes, action: str) -> None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError as exc:
            raise ToolError(f"'{name}' cannot be written ({exc.strerror})") from None
        self.writes.append(
            {"path": name, "action": action, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        )


def _text_argument(arguments: dict[str, Any], name: str, allow_empty: bool = True) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or len(value) > WRITE_CHARS or (not allow_empty and not value):
        wanted = "text" if allow_empty else "non-empty text"
        raise ToolError(f"{name} must be {wanted} of at most {WRITE_CHARS} characters")
    return value


def _write_file(box: ToolBox, arguments: dict[str, Any]) -> str:
    assert isinstance(box, WorkspaceBox)
    name, target = box.writable(arguments.get("path"))
    content = _text_argument(arguments, "content")
    if target.is_dir():
        raise ToolError(f"'{name}' is a folder, not a file")
    action = "modified" if target.exists() else "created"
    data = content.encode("utf-8")
    box.store(name, target, data, action)
    return f"wrote {name} ({len(data)} bytes, {action})"


def _edit_file(box: ToolBox, arguments: dict[str, Any]) -> str:
    assert isinstance(box, WorkspaceBox)
    name, target = box.writable(arguments.get("path"))
    old, new = _text_argument(arguments, "old", allow_empty=False), _text_argument(arguments, "new")
    if not target.is_file():
        raise ToolError(f"'{name}' is not a file; create it with write_file")
    try:
        text = target.read_bytes().decode("utf-8")  # bytes, so line ends stay as they are
    except UnicodeDecodeError:
        raise ToolError(f"'{name}' is not UTF-8 text; replace it with write_file") from None
    count = text.count(old)
    if count != 1:
        raise ToolError(f"old occurs {count} times in '{name}'; it must occur exactly once")
    box.store(name, target, text.replace(old, new, 1).encode("utf-8"), "modified")
    return f"edited {name}"


_PATH = {"type": "string", "description": "under workspace/, forward slashes"}
WRITE_FILE = Tool(
    "write_file",
    "Create or overwrite a text file under workspace/ with `content` (UTF-8).",
    {
        "type": "object",
        "properties": {"path": _PATH, "content": {"type": "string"}},
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    _write_file,
)
EDIT_FILE = Tool(
    "edit_file",
    "Replace the one occurrence of `old` by `new` in a text file under workspace/ (old must occur exactly once).",
    {
        "type": "object",
        "properties": {"path": _PATH, "old": {"type": "string"}, "new": {"type": "string"}},
        "required": ["path", "old", "new"],
        "additionalProperties": False,
    },
    _edit_file,
)
DEVELOPMENT_TOOLS: tuple[Tool, ...] = (*READ_TOOLS, WRITE_FILE, EDIT_FILE)


@dataclass
class Work:
    """What one case's conversation did: its final text or why there is none, and its record."""

    text: str | None
    failure: str | None  # "kind: detail" when the conversation ended without an answer
    reads: list[dict[str, Any]]  # bceval's read evidence, paths as the tools name them (workspace/..., knowledge/...)
    record: dict[str, Any] = field(default_factory=dict)  # the transcript's body (scrubbed of the key)
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0


class DevelopmentApiAgent:
    """The api kind in a development run: its endpoint is made (and the opt-in and key checked) before any case."""

    name = kind = "api"

    def __init__(self, agent: AgentSettings, environ: Mapping[str, str] | None = None) -> None:
        from bceval.agents.api import Endpoint

        environ = dict(os.environ if environ is None else environ)
        if environ.get("BCEVAL_LIVE") != "1":
            raise BcevalError("the api adapter calls a live model and is opt-in: set BCEVAL_LIVE=1 to allow it")
        if not agent.model:
            raise BcevalError("the api adapter needs --model (or BCEVAL_MODEL): the model the endpoint serves")
        if agent.endpoint is None:
            raise BcevalError("the api adapter needs its endpoint settings")
        if agent.sandbox != "none":
            raise BcevalError("the api adapter runs no process: it takes no --sandbox")
        self.agent = agent
        self.endpoint = Endpoint(agent.endpoint, agent.model, environ, time.sleep, random.Random(), agent.retry_wait)

    def describe(self) -> dict[str, Any]:
        assert self.agent.endpoint is not None
        return {
            "adapter": self.name,
            "model": self.agent.model,
            "servedModel": self.endpoint.served_model,
            "version": f"openai-python {getattr(self.endpoint.openai, '__version__', 'unknown')}",
            "pinned": True,
            "baseUrl": self.agent.endpoint.base_url or "default",
            "endpoint": self.agent.endpoint.identity(),
            "tools": [tool.name for tool in DEVELOPMENT_TOOLS],
            "toolsVersion": TOOLS_VERSION,
            "promptVersion": PROMPT_VERSION,
        }

    def work(self, request_text: str, workspace: Path, knowledge: Path | None, timeout: float) -> Work:
        """One conversation over the copy (and the knowledge view when the arm names it)."""
        assert self.agent.endpoint is not None
        roots = {WORKSPACE: workspace, **({KNOWLEDGE: knowledge} if knowledge is not None else {})}
        box = WorkspaceBox(roots)
        system = SYSTEM.format(knowledge=SYSTEM_KNOWLEDGE if knowledge is not None else "")
        user = f"=== request ===\n{request_text}"
        started = time.monotonic()
        talk = self.endpoint.converse(system, user, box, None, timeout, self.agent.endpoint.prices)
        seconds = round(time.monotonic() - started, 3)
        usage = talk.usage if talk.cost_known else replace(talk.usage, costUsd=None)  # unknown stays unknown
        usage = usage.plus(Usage(wallSeconds=seconds))
        failure = f"{talk.failure[0]}: {talk.failure[1]}" if talk.failure else None
        record = {
            "outcome": "answered" if failure is None else f"failed: {talk.failure[0] if talk.failure else ''}",
            "detail": talk.failure[1] if talk.failure else None,
            "servedModel": talk.served_model,
            "systemSha256": hashlib.sha256(system.encode("utf-8")).hexdigest(),
            "userSha256": hashlib.sha256(user.encode("utf-8")).hexdigest(),
            "turns": talk.turns,
            "waits": talk.waits,
            "toolCalls": box.calls,
            "refused": len(box.refusals),
            "writes": box.writes,
            "refusedOutside": box.outside,
            "reads": box.reads(),
            "wallSeconds": seconds,
        }
        text = self.endpoint.scrub(talk.text) if talk.text is not None else None
        return Work(text, self.endpoint.scrub(failure), box.reads(), self.endpoint.scrub(record), usage, seconds)
