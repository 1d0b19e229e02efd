"""The api agent's write tools, `write_file` and `edit_file`, confined to a writable workspace copy (`workspace/`;
`knowledge/` stays read-only). A write path that would leave the copy is a tool error, and recorded."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bceval.agents.api_tools import READ_TOOLS, Tool, ToolBox, ToolError, _short

WORKSPACE, KNOWLEDGE = "workspace", "knowledge"
WRITE_CHARS = 1_000_000  # the most text one write_file or edit_file may carry


class WorkspaceBox(ToolBox):
    """The ToolBox of one development conversation, with the record of every write that happened."""

    def __init__(self, roots: Mapping[str, Path]) -> None:
        super().__init__(dict(roots), READ_WRITE_TOOLS)
        self.writes: list[dict[str, Any]] = []
        self.outside: list[str] = []  # write paths refused because they would leave the copy

    def writable(self, path: Any) -> tuple[str, Path]:
        """(the path as the tools name it, where it is on disk) for a file under workspace/, or ToolError (a path
        that would leave the copy is also kept in `outside`)."""
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
READ_WRITE_TOOLS: tuple[Tool, ...] = (*READ_TOOLS, WRITE_FILE, EDIT_FILE)
