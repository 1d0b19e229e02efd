"""Agent views: for one case, exactly the files an agent may read (the request, the neutral case file, the leaf
and every candidate article), in a fresh folder of its own; its digest is the identity of the question asked."""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from bceval.agents.live import release, remove, temp_folder  # the views' users find them here
from bceval.errors import BcevalError
from bceval.jsonio import dumps, read_regular_bytes, read_regular_text, write_all
from bceval.layout import case_file_name, case_request_name
from bceval.outdir import alive

STALE_AFTER = 3600.0  # seconds; longer than a default answer's attempts take, so a younger folder may be in use
_TEMP_NAME = re.compile(r"bceval-(?:view|knowledge|request|probe)-(\d+)-")
READ_ONLY_FILE = 0o444
READ_ONLY_DIR = 0o555


@dataclass(frozen=True)
class ViewFile:
    path: str  # relative to the view, forward slashes
    data: bytes

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class View:
    files: tuple[ViewFile, ...]
    request_name: str  # the request file, at the top of the view
    case_name: str  # the neutral case file, beside it

    def manifest(self) -> list[dict[str, Any]]:
        """What the view holds: every path with its size and SHA-256, in path order."""
        ordered = sorted(self.files, key=lambda f: f.path)
        return [{"path": f.path, "sha256": f.sha256, "size": len(f.data)} for f in ordered]

    @cached_property  # asked for by the cache key, the record and the answer
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.manifest(), sort_keys=True).encode("utf-8")).hexdigest()

    def text(self, path: str) -> str:
        return next(f.data for f in self.files if f.path == path).decode("utf-8")


def _safe_relative(path: str, where: str) -> str:
    """A repo-relative path that stays inside the view (request files are ours, but a view never trusts)."""
    normal = posixpath.normpath(path)
    if not path or path.startswith("/") or normal.startswith("..") or "\\" in path or ":" in path.split("/")[0]:
        raise BcevalError(f"{where}: path '{path}' cannot be placed in an agent view")
    return normal


def build_view(prepare_dir: Path, corpus: Path, model_id: str) -> View:
    """The view of one case, in memory (nothing is written until `materialize`)."""
    request_name, case_name = case_request_name(model_id), case_file_name(model_id)
    where = str(prepare_dir / request_name)
    try:
        request = json.loads(read_regular_text(prepare_dir / request_name, "utf-8"))
    except (OSError, ValueError) as exc:
        raise BcevalError(f"{where}: cannot read the case's request: {exc}") from None
    # The domain index is not in the view (the candidates are), so the request does not point at it.
    rewritten = {key: value for key, value in request.items() if key != "knowledgeIndex"}
    files = [
        ViewFile(request_name, dumps(rewritten).encode("utf-8")),
        ViewFile(case_name, _read(prepare_dir / case_name)),
    ]
    for rel in [request["skill"], *(row["path"] for row in request["candidateArticles"])]:
        files.append(ViewFile(_safe_relative(rel, where), _read(corpus / rel)))
    names = [f.path.lower() for f in files]
    if len(set(names)) != len(names):
        raise BcevalError(f"{where}: two files of the view would share a path")
    return View(tuple(files), request_name, case_name)


class ViewDigests:
    """The digest of every view of one prepared corpus, each built once (every arm and epoch asks for the same)."""

    def __init__(self, prepare_dir: Path, corpus: Path) -> None:
        self.prepare_dir, self.corpus = prepare_dir, corpus
        self._known: dict[str, str] = {}

    def digest(self, model_id: str) -> str:
        if model_id not in self._known:
            self._known[model_id] = build_view(self.prepare_dir, self.corpus, model_id).digest
        return self._known[model_id]


def _read(path: Path | str) -> bytes:
    try:
        return read_regular_bytes(path)
    except OSError as exc:
        raise BcevalError(f"{path}: cannot read it for the agent view: {exc.strerror}") from None


MEMORY_FOLDER = Path("/dev/shm")  # Linux's memory-backed folder


def view_parent() -> Path:
    """Where agent views (and an agent's captured output) go: a view is written for every answer, and on disk that
    costs about a third of the live throughput (docs/benchmarks.md), so the memory-backed /dev/shm unless TMPDIR
    names a folder or there is none, else the system temp dir."""
    if "TMPDIR" not in os.environ and MEMORY_FOLDER.is_dir() and os.access(MEMORY_FOLDER, os.W_OK | os.X_OK):
        return MEMORY_FOLDER
    return Path(tempfile.gettempdir())


def sweep_stale_folders(parent: Path | None = None) -> int:
    """Remove the folders of killed runs (bceval's by name and owner, their process gone, untouched for
    STALE_AFTER) in `parent`, else in the temp dir and the views' folder."""
    if parent is None:
        parents = dict.fromkeys([Path(tempfile.gettempdir()), view_parent()])
        return sum(sweep_stale_folders(folder) for folder in parents)
    removed = 0
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return 0
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
        try:
            if match is None or not entry.is_dir(follow_symlinks=False):
                continue
            info = entry.stat(follow_symlinks=False)
            if info.st_uid != os.getuid() or time.time() - info.st_mtime < STALE_AFTER or alive(int(match[1])):
                continue
            remove(Path(entry.path))
            removed += 1
        except OSError:  # another run removing it too, or not ours to remove: leave it
            continue
    return removed


def _new_folder(parent: Path | None) -> Path:
    where = parent or view_parent()
    try:
        return temp_folder("view", where)
    except OSError as exc:
        raise BcevalError(
            f"{where}: cannot create an agent view there ({exc.strerror}); set TMPDIR to a writable folder"
        ) from None


def check_view_folder(parent: Path | None = None) -> None:
    """Fail in one line, before any case runs, when no view can be created; clear what killed runs left."""
    sweep_stale_folders(parent)
    release(_new_folder(parent))


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW


def materialize(view: View, parent: Path | None = None) -> Path:
    """Write the view into a new folder (under `parent`, else `view_parent()`), read-only where the filesystem
    allows."""
    root = _new_folder(parent)
    try:
        for item in view.files:  # paths are relative, normalised and inside the view (see _safe_relative)
            path = os.path.join(root, item.path)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            handle = os.open(path, _CREATE, READ_ONLY_FILE)
            try:
                write_all(handle, item.data)
            finally:
                os.close(handle)
        for folder, _, _ in os.walk(root, topdown=False):  # innermost first, the view itself last
            os.chmod(folder, READ_ONLY_DIR)
    except OSError as exc:
        release(root)
        raise BcevalError(
            f"{root}: cannot write the agent view ({exc.strerror}); check free space in the temp dir"
        ) from None
    return root


def scrubbed_environment(environ: Mapping[str, str], hidden: list[Path], workdir: Path | None) -> dict[str, str]:
    """The environment an isolated agent gets: no BCEVAL_* variable and no value that names a hidden path."""
    needles = {text for path in hidden for text in (str(path), str(path.resolve()))}
    kept = {
        key: value
        for key, value in environ.items()
        if not key.startswith("BCEVAL_") and key not in ("PWD", "OLDPWD") and not any(n in value for n in needles)
    }
    if workdir is not None:
        kept["PWD"] = str(workdir)
    return kept
