"""The tools bceval's own agent may call, confined to the folders it was given (on disk or in memory), and the read
evidence bceval keeps from their results: per file `{path, complete, bytes, sha256}` (complete: every line read).
The write tools, `write_file` and `edit_file`, write only in a workspace copy (`workspace/`; `knowledge/` stays
read-only); a write path that would leave the copy is a tool error, and recorded."""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

TOOLS_VERSION = 1  # part of the api agent's cache key: other tools are another question
READ_LINES = 2000  # lines a read_file returns unless it asks for fewer
RESULT_CHARS = 100_000  # the most text one tool result carries; a longer read stops early (incomplete)
SEARCH_HITS = 200
PATTERN_CHARS = 200
LIST_CAP = 5000
WORKSPACE, KNOWLEDGE = "workspace", "knowledge"
WRITE_CHARS = 1_000_000  # the most text one write_file or edit_file may carry


class ToolError(Exception):
    """What the model is told instead of a result (its own mistake or a refusal); never bceval's failure."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object
    run: Callable[[ToolBox, dict[str, Any]], str]


@dataclass
class _Reading:
    """What one file's reads returned so far."""

    data: bytes
    lines: int
    seen: set[int] = field(default_factory=set)  # 0-based line numbers returned to the model


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines()


class MemoryFolder:
    """A folder held in memory (a review case's agent view), read without writing it to disk first."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.data = dict(files)

    def read(self, inside: list[str], shown: str) -> bytes:
        data = self.data.get("/".join(inside))
        if data is None:
            raise ToolError(f"'{shown}' does not exist")
        return data


Root = Path | MemoryFolder


class ToolBox:
    """The tools of one conversation over its folders, with the record of every call and every file read."""

    def __init__(self, roots: Root | Mapping[str, Root], tools: Sequence[Tool] | None = None) -> None:
        self.roots: dict[str, Root] = {"": roots} if isinstance(roots, Path | MemoryFolder) else dict(roots)
        self.tools = {tool.name: tool for tool in (READ_TOOLS if tools is None else tools)}
        self.calls: list[dict[str, Any]] = []  # every call: name, arguments, ok or the error the model saw
        self._reads: dict[str, _Reading] = {}

    # --- paths ---------------------------------------------------------------------------------------------------

    def _parts(self, path: Any) -> tuple[str, Root, list[str]]:
        """(the path as the evidence names it, its root, its parts inside the root), or ToolError."""
        text = _slashed(path, "relative to the folder you were given")
        if "\0" in text or text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
            raise ToolError(f"'{_short(path)}' is absolute; give a path relative to the folder you were given")
        if ".." in text.split("/"):
            raise ToolError(f"'{_short(path)}' leaves the folder you were given; only paths inside it can be read")
        normal = posixpath.normpath(text)
        root, inside = self._root_of(normal.split("/"))
        if not inside:
            raise ToolError(f"'{_short(path)}' is a folder, not a file")
        return normal, root, inside

    def read(self, path: Any) -> tuple[str, bytes]:
        """(the path as the evidence names it, the file's bytes) for a path the model gave, or ToolError."""
        name, root, inside = self._parts(path)
        if isinstance(root, MemoryFolder):
            return name, root.read(inside, _short(path))
        target = _on_disk(root, inside, _short(path))
        if not target.is_file():
            raise ToolError(f"'{_short(path)}' is not a file")
        try:
            return name, target.read_bytes()
        except OSError as exc:
            raise ToolError(f"'{name}' cannot be read ({exc.strerror})") from None

    def resolve(self, path: Any) -> tuple[str, Path]:
        """(the path as the evidence names it, where it is on disk) for a path the model gave, or ToolError."""
        name, root, inside = self._parts(path)
        if isinstance(root, MemoryFolder):
            raise ToolError(f"'{_short(path)}' is in a folder that cannot be written")
        return name, _on_disk(root, inside, _short(path))

    def _root_of(self, parts: list[str]) -> tuple[Root, list[str]]:
        if "" in self.roots:
            return self.roots[""], [part for part in parts if part not in ("", ".")]
        name, *rest = parts
        if name not in self.roots:
            known = ", ".join(f"{key}/" for key in self.roots)
            raise ToolError(f"paths start with one of {known}")
        return self.roots[name], [part for part in rest if part not in ("", ".")]

    def files(self) -> list[str]:
        """Every regular file under the roots (links and .git folders skipped), by the path the tools take."""
        found = []
        for name, root in self.roots.items():
            if isinstance(root, MemoryFolder):
                found += [f"{name}/{relative}" if name else relative for relative in root.data]
                continue
            for folder, dirs, names in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != ".git" and not os.path.islink(os.path.join(folder, d)))
                for item in names:
                    full = os.path.join(folder, item)
                    if os.path.isfile(full) and not os.path.islink(full):
                        relative = Path(full).relative_to(root).as_posix()
                        found.append(f"{name}/{relative}" if name else relative)
        return sorted(found)

    # --- calls ---------------------------------------------------------------------------------------------------

    def specs(self) -> list[dict[str, Any]]:
        """The chat-completions `tools` entries."""
        return [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in self.tools.values()
        ]

    def call(self, name: Any, arguments: Any) -> tuple[str, bool]:
        """Run one tool call as the model sent it: (the text the model gets, whether it is an error)."""
        entry: dict[str, Any] = {"tool": str(name)[:100], "arguments": str(arguments)[:2000]}
        self.calls.append(entry)
        try:
            tool = self.tools.get(name) if isinstance(name, str) else None
            if tool is None:
                raise ToolError(f"there is no tool '{_short(name)}'; the tools are {', '.join(self.tools)}")
            try:
                parsed = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else {}
            except ValueError:
                raise ToolError("the arguments are not a JSON object") from None
            if not isinstance(parsed, dict):
                raise ToolError("the arguments are not a JSON object")
            text = tool.run(self, parsed)
        except ToolError as exc:
            entry.update(ok=False, error=str(exc))
            return f"error: {exc}", True
        entry.update(ok=True, resultChars=len(text))
        return text, False

    @property
    def refusals(self) -> list[dict[str, Any]]:
        return [call for call in self.calls if not call.get("ok")]

    # --- evidence ------------------------------------------------------------------------------------------------

    def record_read(self, path: str, data: bytes, returned: range) -> None:
        reading = self._reads.get(path)
        if reading is None or reading.data != data:  # a file that changed between reads starts again
            reading = self._reads[path] = _Reading(data, len(_lines(data)))
        reading.seen.update(returned)

    def reads(self) -> list[dict[str, Any]]:
        """The read evidence: one entry per file read, in path order."""
        return [
            {
                "path": path,
                "complete": len(reading.seen) >= reading.lines,
                "bytes": len(reading.data),
                "sha256": hashlib.sha256(reading.data).hexdigest(),
            }
            for path, reading in sorted(self._reads.items())
        ]


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _slashed(path: Any, wanted: str) -> str:
    if not isinstance(path, str) or not path.strip():
        raise ToolError(f"path must be a non-empty string {wanted}")
    return path.strip().replace("\\", "/")


class Outside(ToolError):
    """A path that would lead out of its root (through a link): a write keeps it as refused outside the copy."""


def _on_disk(root: Path, inside: list[str], shown: str, creating: bool = False) -> Path:
    """Where `inside` is under `root`, reached through no link, or ToolError; `creating`: missing parts are new."""
    current = root
    for part in inside:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except OSError as exc:
            if not creating:
                raise ToolError(f"'{shown}' does not exist") from None
            if isinstance(exc, FileNotFoundError):
                continue  # a new file (or folder) below here
            raise ToolError(f"'{shown}' cannot be checked ({exc.strerror})") from None
        if stat.S_ISLNK(mode):
            raise Outside(f"'{shown}' goes through a link; links are not followed")
    if not current.parent.resolve().is_relative_to(root.resolve()):  # belt and braces: never outside the root
        raise Outside(f"'{shown}' leaves the folder you were given")
    return current


def _whole_number(arguments: dict[str, Any], name: str, default: int, lowest: int) -> int:
    value = arguments.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < lowest:
        raise ToolError(f"{name} must be a whole number of at least {lowest}")
    return value


def _list_files(box: ToolBox, arguments: dict[str, Any]) -> str:
    files = box.files()
    shown = files[:LIST_CAP]
    more = f"\n({len(files) - LIST_CAP} more not shown)" if len(files) > LIST_CAP else ""
    return "\n".join(shown) + more if shown else "(no files)"


def _read_file(box: ToolBox, arguments: dict[str, Any]) -> str:
    offset = _whole_number(arguments, "offset", 1, 1)
    limit = _whole_number(arguments, "limit", READ_LINES, 1)
    name, data = box.read(arguments.get("path"))
    lines = _lines(data)
    if offset > max(len(lines), 1):
        raise ToolError(f"'{name}' has {len(lines)} lines; offset {offset} is past its end")
    chosen, size, start = [], 0, offset - 1
    for number in range(start, min(len(lines), start + limit)):
        size += len(lines[number]) + 1
        if size > RESULT_CHARS and chosen:
            break
        chosen.append(lines[number])
    end = start + len(chosen)
    box.record_read(name, data, range(start, end))
    if end < len(lines):
        note = f"[lines {offset}-{end} of {len(lines)}; read on with offset {end + 1}]"
        return "\n".join(chosen) + "\n" + note
    return "\n".join(chosen) + ("\n" if chosen else "") + f"[end of file: {len(lines)} lines]"


def _search(box: ToolBox, arguments: dict[str, Any]) -> str:
    pattern = arguments.get("pattern")
    if not isinstance(pattern, str) or not pattern.strip() or len(pattern) > PATTERN_CHARS:
        raise ToolError(f"pattern must be non-empty text of at most {PATTERN_CHARS} characters")
    needle = pattern.lower()
    hits: list[str] = []
    for name in box.files():
        try:
            text = box.read(name)[1].decode("utf-8", "replace")
        except ToolError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if needle in line.lower():
                hits.append(f"{name}:{number}: {line.strip()[:200]}")
                if len(hits) >= SEARCH_HITS:
                    return "\n".join(hits) + f"\n(stopped at {SEARCH_HITS} matches)"
    return "\n".join(hits) if hits else "(no matches)"


def _object(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments: an object of these properties and no others."""
    needed = {"required": list(required)} if required else {}
    return {"type": "object", "properties": properties, **needed, "additionalProperties": False}


_PATH = {"type": "string", "description": "relative to the folder you were given, forward slashes"}
LIST_FILES = Tool(
    "list_files",
    "List every file you may read, one relative path a line.",
    _object({}),
    _list_files,
)
READ_FILE = Tool(
    "read_file",
    "Read a text file you may read. Returns up to `limit` lines (default 2000) from line `offset` (1-based, "
    "default 1); a longer file says how to read on.",
    _object(
        {"path": _PATH, "offset": {"type": "integer", "minimum": 1}, "limit": {"type": "integer", "minimum": 1}}, "path"
    ),
    _read_file,
)
SEARCH = Tool(
    "search",
    "Find the lines that contain `pattern` (plain text, case-insensitive) in the files you may read; returns "
    "path:line: text for each, at most 200.",
    _object({"pattern": {"type": "string"}}, "pattern"),
    _search,
)
READ_TOOLS: tuple[Tool, ...] = (LIST_FILES, READ_FILE, SEARCH)


class WorkspaceBox(ToolBox):
    """The ToolBox of one development conversation, with the record of every write that happened."""

    def __init__(self, roots: Mapping[str, Path]) -> None:
        super().__init__(dict(roots), READ_WRITE_TOOLS)
        self.writes: list[dict[str, Any]] = []
        self.outside: list[str] = []  # write paths refused because they would leave the copy

    def writable(self, path: Any) -> tuple[str, Path]:
        """(the path as the tools name it, where it is on disk) for a file under workspace/, or ToolError (a path
        that would leave the copy is also kept in `outside`)."""
        text = _slashed(path, "such as workspace/src/MyTable.Table.al")
        if "\0" in text or text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
            self._outside(path, f"'{_short(path)}' is absolute; write to a path under {WORKSPACE}/")
        if ".." in text.split("/"):
            self._outside(path, f"'{_short(path)}' leaves {WORKSPACE}/; only files inside it can be written")
        parts = [part for part in text.split("/") if part not in ("", ".")]
        if not parts or parts[0] != WORKSPACE:
            if parts and parts[0] in self.roots:  # another root: the knowledge view
                self._outside(path, f"'{_short(path)}' is in {parts[0]}/, which is read-only; write under {WORKSPACE}/")
            raise ToolError(f"'{_short(path)}' is not under {WORKSPACE}/; only files there can be written")
        if len(parts) == 1:
            raise ToolError(f"'{_short(path)}' is a folder, not a file")
        if any(part.lower() == ".git" for part in parts):
            self._outside(path, "the repository's .git folder cannot be written")
        root = self.roots[WORKSPACE]
        assert isinstance(root, Path)
        try:
            return "/".join(parts), _on_disk(root, parts[1:], _short(path), creating=True)
        except Outside as exc:
            self._outside(path, str(exc))

    def _outside(self, path: Any, message: str) -> NoReturn:
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


_WRITE_PATH = {"type": "string", "description": "under workspace/, forward slashes"}
WRITE_FILE = Tool(
    "write_file",
    "Create or overwrite a text file under workspace/ with `content` (UTF-8).",
    _object({"path": _WRITE_PATH, "content": {"type": "string"}}, "path", "content"),
    _write_file,
)
EDIT_FILE = Tool(
    "edit_file",
    "Replace the one occurrence of `old` by `new` in a text file under workspace/ (old must occur exactly once).",
    _object({"path": _WRITE_PATH, "old": {"type": "string"}, "new": {"type": "string"}}, "path", "old", "new"),
    _edit_file,
)
READ_WRITE_TOOLS: tuple[Tool, ...] = (*READ_TOOLS, WRITE_FILE, EDIT_FILE)
