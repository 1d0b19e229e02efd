"""Safe inputs (spec §1.1-§1.3, §5.1, §5.5): paths are normalised lexically and any link is refused, never followed;
messages name a label chosen by bceval, never the offending value, so a model's text never reaches the console."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.evaluators.guidance import GuidanceError
from bceval.jsonio import MAX_JSON_BYTES, parse_json, read_regular_bytes

LINKS = "Links, junctions, reparse points and hard links are not supported"
_SHAPE = re.compile(r"[A-Za-z0-9_-]+(?:/[A-Za-z0-9_.-]+)+")
_KNOWLEDGE = re.compile(r"(?:microsoft|community|custom)/knowledge/[a-z0-9-]+/(?:[a-z0-9-]+/)*[a-z0-9-]+\.md")
_FRONT_MATTER = re.compile(r"---\r?\n.*?\r?\n---(?:\r?\n|$)", re.DOTALL)
_DOMAIN_LINE = re.compile(r"^domain:[ \t]*\S", re.IGNORECASE | re.MULTILINE)
_NORMATIVE_HEADING = re.compile(r"^## (?:Best Practice|Anti Pattern)[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
DIMENSIONS = ("bc-version", "technologies", "countries", "application-area")
CONTEXT_LISTS = ("technologies", "countries", "application-area", "unknown")


def is_link(st: os.stat_result) -> bool:
    """A symbolic link, or a regular file with more than one hard link."""
    return stat.S_ISLNK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_nlink > 1)


def safe_path(path: Path | str, label: str, *, kind: str | None = None, missing_ok: bool = False) -> Path:
    """Normalise `path` and check every component from the filesystem root (§5.1). kind: "file" or "dir" to
    require that type; missing_ok allows a tail that does not exist yet (its existing ancestors are checked)."""
    absolute = Path(os.path.abspath(path))  # `..` collapsed lexically; links are not resolved
    parts = absolute.parts
    for name in parts[1:]:
        if name.endswith((".", " ")):
            raise GuidanceError(f"{label}: path components must not end in a dot or a space")
    current = Path(parts[0])
    st = os.lstat(current)
    for name in parts[1:]:
        current = current / name
        try:
            st = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):
            if missing_ok and stat.S_ISDIR(st.st_mode):
                return absolute
            raise GuidanceError(f"{label} does not exist") from None
        if is_link(st):
            raise GuidanceError(f"{label}: {LINKS}")
    if kind == "file" and not stat.S_ISREG(st.st_mode):
        raise GuidanceError(f"{label} must be an existing regular file")
    if kind == "dir" and not stat.S_ISDIR(st.st_mode):
        raise GuidanceError(f"{label} must be an existing directory")
    return absolute


def walk(directory: Path, label: str, skip: frozenset[Path] = frozenset()) -> Iterator[tuple[str, str, os.stat_result]]:
    """(relative path, path, lstat) of every entry below a directory, hidden ones too, each checked: any link, hard
    link or special file is refused. Folders in `skip` are not looked into."""
    pending = [(directory, "")]
    while pending:
        folder, prefix = pending.pop()
        if folder in skip:
            continue
        try:
            entries = list(os.scandir(folder))
        except OSError:
            raise GuidanceError(f"{label} could not be read safely") from None
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if is_link(st):
                raise GuidanceError(f"{label}: {LINKS}")
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                raise GuidanceError(f"{label}: only regular files and directories are supported")
            if stat.S_ISDIR(st.st_mode):
                pending.append((Path(entry.path), f"{prefix}{entry.name}/"))
            yield f"{prefix}{entry.name}", entry.path, st


def scan_links(directory: Path, label: str, skip: frozenset[Path] = frozenset()) -> None:
    """Refuse any link, hard link or special file below a directory."""
    for _ in walk(directory, label, skip):
        pass


def check_separation(protected: list[tuple[str, Path]], artifacts: Iterable[tuple[str, Path | str | None]]) -> None:
    """Protected roots are pairwise distinct and not nested; artifacts lie outside all of them (§5.5)."""
    for index, (_, first) in enumerate(protected):
        for _, second in protected[index + 1 :]:
            if first.is_relative_to(second) or second.is_relative_to(first):  # lexical: no realpath
                raise GuidanceError(
                    "The knowledge checkout and every target workspace must be distinct, non-overlapping roots"
                )
    for label, artifact in artifacts:
        if artifact is None:
            continue
        checked = safe_path(artifact, label, missing_ok=True)
        if any(checked.is_relative_to(root) for _, root in protected):
            raise GuidanceError(f"{label} must be outside target workspaces and the knowledge checkout")


def resolve_reference(root: Path, value: object, label: str, *, mode: str = "generic", article: str = "") -> Path:
    """The absolute file a reference (§1.3) names in the knowledge checkout `root` (already safe-checked). mode:
    "generic" (skill), "knowledge" (a normative article) or "sample" (a good/bad sibling of `article`)."""
    if not isinstance(value, str) or not value.strip():
        raise GuidanceError(f"{label} must be a non-empty string")
    rel = value
    if not _SHAPE.fullmatch(rel) or any(s in (".", "..") or s.endswith((".", " ")) for s in rel.split("/")):
        raise GuidanceError(f"{label} must be a relative reference path without traversal")
    if mode == "knowledge" and not _KNOWLEDGE.fullmatch(rel):
        raise GuidanceError(f"{label} must point to layered knowledge articles (<layer>/knowledge/<domain>/*.md)")
    if mode == "sample":
        stem = re.escape(article[: -len(".md")])
        if not re.fullmatch(stem + r"\.(?:good|bad)\.[A-Za-z0-9]+", rel):
            raise GuidanceError(f"{label} must name one of the cited article's good/bad siblings")
    missing = GuidanceError(f"{label} must be an existing file inside the knowledge checkout")
    current = root
    st: os.stat_result | None = None
    for name in rel.split("/"):
        parent, current = current, current / name
        try:
            st = os.lstat(current)
            names = os.listdir(parent)
        except (FileNotFoundError, NotADirectoryError):
            raise missing from None
        except OSError:
            raise GuidanceError(f"{label} could not be read safely") from None
        if is_link(st):
            raise GuidanceError(f"{label}: {LINKS}")
        if name not in names:  # a case-insensitive filesystem found it under another spelling
            raise GuidanceError(f"{label}: path casing must match the knowledge checkout exactly")
    if st is None or not stat.S_ISREG(st.st_mode) or not current.is_relative_to(root):
        raise missing
    if mode == "knowledge":
        try:
            text = read_regular_bytes(current).decode("utf-8").removeprefix("\ufeff")
        except OSError:
            raise GuidanceError(f"{label} could not be read safely") from None
        except UnicodeDecodeError:
            text = ""  # not an article
        # front matter first, a `domain:` line, and a Best Practice or Anti Pattern heading
        if not (_FRONT_MATTER.match(text) and _DOMAIN_LINE.search(text) and _NORMATIVE_HEADING.search(text)):
            raise GuidanceError(f"{label} must be a normative knowledge article (front matter, domain, practice)")
    return current


STRICT = "must be strict JSON with unique members (UTF-8, at most 32 MiB, depth 64)"


def parse_strict(data: bytes, label: str) -> Any:
    """Parse untrusted bytes; any problem becomes the one `strict JSON` message for `label`."""
    try:
        value = parse_json(data, label)  # size, UTF-8, unique members, depth
    except BcevalError:  # its message may quote a member name from the document: never show it
        raise GuidanceError(f"{label} {STRICT}") from None
    stack = [value]  # member names must also be unique ignoring case, in every object
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if len({key.lower() for key in item}) != len(item):
                raise GuidanceError(f"{label} {STRICT}")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return value


def read_limited(path: Path | str, label: str, unreadable: str) -> tuple[Path, bytes]:
    """The checked path and the bytes of a safe, regular file of at most 32 MiB."""
    checked = safe_path(path, label, kind="file")
    try:
        if checked.stat().st_size > MAX_JSON_BYTES:
            raise GuidanceError(f"{unreadable} {STRICT}")
        return checked, read_regular_bytes(checked)
    except OSError:
        raise GuidanceError(f"{unreadable} could not be read safely") from None


def read_strict(path: Path, label: str) -> Any:
    return parse_strict(read_limited(path, label, label)[1], label)


def require_object(value: Any, label: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise GuidanceError(f"{label} must be a JSON object")
    for name in required:
        if name not in value:  # a null value counts as present, as in the reference
            raise GuidanceError(f"{label} is missing required field '{name}'")
    return value


def require_string(value: Any, label: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GuidanceError(f"{label} must be a non-empty string")
    return value


def require_array(value: Any, label: str, *, strings: bool = False, non_empty: bool = False) -> list[Any]:
    if not isinstance(value, list):
        raise GuidanceError(f"{label} must be a JSON array")
    if non_empty and not value:
        raise GuidanceError(f"{label} must not be empty")
    if strings:
        for item in value:
            require_string(item, f"{label} entry")
    return value


def require_int(value: Any, label: str) -> int:
    if type(value) is not int or value < 0:  # JSON true is not an integer, nor is 1.0
        raise GuidanceError(f"{label} must be a non-negative integer")
    return value


def require_bool(value: Any, label: str) -> bool:
    if not isinstance(value, bool):
        raise GuidanceError(f"{label} must be a JSON boolean")
    return value


def check_context(value: Any, label: str, extra_lists: tuple[str, ...] = ()) -> dict[str, Any]:
    """The applicability context of a manifest case or a report (§1.2)."""
    context = require_object(value, label, ("bc-version", *CONTEXT_LISTS, *extra_lists))
    bc_version = require_string(context["bc-version"], f"{label}.bc-version")
    for name in CONTEXT_LISTS:
        items = require_array(context[name], f"{label}.{name}", strings=True)
        if len({item.lower() for item in items}) != len(items):
            raise GuidanceError(f"{label}.{name} contains duplicates (compared ignoring case)")
    for name in extra_lists:
        require_array(context[name], f"{label}.{name}", strings=True)
    unknown = context["unknown"]
    for item in unknown:
        if item not in DIMENSIONS:
            raise GuidanceError(f"{label}.unknown entry must name a valid dimension; it has an invalid dimension")
    missing = []
    if bc_version.lower() == "unknown" and "bc-version" not in unknown:
        missing.append("bc-version")
    for name in DIMENSIONS[1:]:
        items = context[name]
        if (not items or any(item.lower() == "unknown" for item in items)) and name not in unknown:
            missing.append(name)
    if missing:
        raise GuidanceError(
            f"{label}: Unavailable applicability dimensions must be listed in {label}.unknown ({', '.join(missing)})"
        )
    return context
