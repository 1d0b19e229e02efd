"""Runner-owned read-only evidence (spec §5.2-§5.4): snapshots, baseline capture, the baseline gate. bceval's own
git reads must never write: no optional locks, no fsmonitor, no system or global config, none of the variables that
point git at another repository, and only plumbing that never refreshes the index."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.manifest import GuidanceManifest
from bceval.evaluators.guidance.paths import parse_strict, read_limited, require_object, require_string, safe_path, walk
from bceval.jsonio import create_exclusive, dumps, open_regular, read_regular_bytes

BASELINE_KIND = "bcquality-guidance-runner-baseline"
SNAPSHOT_VERSION = 1
GIT_UNREADABLE = "Git evidence could not be read"
REDIRECTING_GIT_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_NAMESPACE",
)
_HARDENED = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
_METADATA_NAMES = (
    "HEAD",
    "commondir",
    "config",
    "config.worktree",
    "packed-refs",
    "refs",
    "objects",
    "index",
    "info/exclude",
    "shallow",
)
_INCLUDE_LINE = re.compile(rb"^\s*\[include(?:if)?\b", re.IGNORECASE | re.MULTILINE)
_DIGEST = re.compile(r"[0-9A-Fa-f]{64}")


@contextmanager
def _scrubbed_environ() -> Iterator[None]:
    """GitPython copies os.environ for each call and can only add to it: drop the redirecting
    variables for the duration of the call (normally none is set, so nothing changes)."""
    saved = {name: os.environ.pop(name) for name in REDIRECTING_GIT_VARIABLES if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def run_git(root: Path, *args: str, raw: bool = False) -> Any:
    """One read-only git query in `root`; stdout without trailing CR/LF (bytes untouched when raw)."""
    command = ["git", "--no-optional-locks", "-c", "core.fsmonitor=false", "-C", str(root), *args]
    try:
        with _scrubbed_environ():
            output = git.Git().execute(command, env=_HARDENED, stdout_as_string=not raw, strip_newline_in_stdout=False)
    except (git.GitCommandError, OSError, ValueError):
        raise GuidanceError(GIT_UNREADABLE) from None
    return output if raw else output.rstrip("\r\n")


def file_sha256(path: Path) -> str:
    with open_regular(path) as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _identity(st: os.stat_result) -> dict[str, int]:
    """Stable metadata of an entry. Linux has no creation time, so the inode change time stands in:
    it moves on any content, permission, owner or link change and never on a read."""
    return {
        "unixMode": st.st_mode,
        "uid": st.st_uid,
        "gid": st.st_gid,
        "inode": st.st_ino,
        "changeTimeNs": st.st_ctime_ns,
    }


def _standalone(label: str) -> GuidanceError:
    return GuidanceError(f"{label}: guidance targets must be standalone repositories with internal .git storage")


def _git_dirs(root: Path, target: bool, label: str) -> tuple[Path, Path]:
    """Resolve git storage: (gitDir, commonDir). Targets must keep both in root/.git."""
    if not os.path.lexists(root / ".git"):
        if target:
            raise _standalone(label)
        raise GuidanceError(f"{label} must be the root of a git worktree (it has no .git)")  # e.g. a corpus folder
    dot_git = safe_path(root / ".git", f"{label} .git")
    if dot_git.is_dir():
        git_dir = dot_git
    elif target:
        raise _standalone(label)
    else:
        text = read_regular_bytes(dot_git).decode("utf-8", errors="strict")
        match = re.fullmatch(r"gitdir: ([^\r\n]+)\n?", text)
        if not match:
            raise GuidanceError(f"{label}: .git file must hold exactly one 'gitdir:' line")
        git_dir = safe_path(root / match.group(1), f"{label} git directory", kind="dir")
    common_file = git_dir / "commondir"
    if os.path.lexists(common_file):
        safe_path(common_file, f"{label} commondir", kind="file")
        common = read_regular_bytes(common_file).decode("utf-8").strip()
        common_dir = safe_path(git_dir / common, f"{label} common git directory", kind="dir")
    else:
        common_dir = git_dir
    if target and (git_dir != root / ".git" or common_dir != git_dir):
        raise _standalone(label)
    return git_dir, common_dir


def check_git_storage(root: Path, *, target: bool, label: str) -> None:
    """The cheap first part of a snapshot (no git call): a worktree root whose git storage is usable
    (for a target: a standalone repository)."""
    _git_dirs(safe_path(root, label, kind="dir"), target, label)


def _git_metadata(root: Path, storages: list[Path], label: str) -> dict[str, str]:
    metadata: dict[str, str] = {}
    for storage in storages:
        for name in _METADATA_NAMES:
            path = safe_path(storage / name, f"{label} git metadata", missing_ok=True)
            if not os.path.lexists(path):
                continue
            if path.is_dir():
                if not path.is_relative_to(root):  # inside root the content walk already covers it
                    for _ in walk(path, f"{label} git metadata"):  # refuses any link or special file
                        pass
                continue
            data = read_regular_bytes(path)
            if name.startswith("config") and _INCLUDE_LINE.search(data):
                raise GuidanceError(f"{label}: git configuration includes are not supported")
            metadata[str(path)] = hashlib.sha256(data).hexdigest()
        for name in ("objects/info/alternates", "objects/info/http-alternates"):
            if os.path.lexists(storage / name):
                raise GuidanceError(f"{label}: alternate git object stores are not supported")
    return metadata


def snapshot(root: Path, *, target: bool, label: str) -> dict[str, Any]:
    """The recorded state of one repository (§5.3); raises GuidanceError when it is unsupported."""
    root = safe_path(root, label, kind="dir")
    git_dir, common_dir = _git_dirs(root, target, label)
    metadata = _git_metadata(root, list(dict.fromkeys([git_dir, common_dir])), label)
    top = run_git(root, "rev-parse", "--show-toplevel")
    if safe_path(top, f"{label} worktree root", kind="dir") != root:
        raise GuidanceError(f"{label} must be the exact Git worktree root")
    if any(line.startswith("160000 ") for line in run_git(root, "ls-files", "--stage").splitlines()):
        raise GuidanceError(f"{label}: Submodule entries are not supported")
    if any(line.startswith("S ") for line in run_git(root, "ls-files", "-t").splitlines()):
        raise GuidanceError(f"{label}: Sparse checkouts (skip-worktree entries) are not supported")
    try:
        head = run_git(root, "rev-parse", "--verify", "HEAD")
    except GuidanceError:
        raise GuidanceError(f"{label} has no commit: {GIT_UNREADABLE}") from None
    references = run_git(root, "for-each-ref", "--format=%(refname) %(objectname) %(symref)")
    head_file = safe_path(git_dir / "HEAD", f"{label} HEAD file", kind="file")
    index_path = safe_path(git_dir / "index", f"{label} index", missing_ok=True)
    index_sha = file_sha256(index_path) if os.path.lexists(index_path) else None
    files = []  # every entry below root, hidden ones and `.git` included; empty directories are entries too
    for rel, path, st in walk(root, label):
        if stat.S_ISDIR(st.st_mode):
            files.append({"path": rel, "kind": "directory", **_identity(st)})
        else:
            content = {"length": st.st_size, "lastWriteNs": st.st_mtime_ns, "sha256": file_sha256(Path(path))}
            files.append({"path": rel, "kind": "file", **_identity(st), **content})
    return {
        "version": SNAPSHOT_VERSION,
        "root": str(root),
        "rootIdentity": _identity(os.lstat(root)),
        "gitDir": str(git_dir),
        "commonDir": str(common_dir),
        "gitMetadata": metadata,
        "head": head,
        "headFileSha256": file_sha256(head_file),
        "references": references,
        "indexPath": str(index_path),
        "indexSha256": index_sha,
        "files": sorted(files, key=lambda record: record["path"]),
    }


def workspace_label(case_id: str) -> str:
    return f"Target workspace of '{case_id}'"


KNOWLEDGE_LABEL = "Knowledge checkout"


def protected_roots(manifest: GuidanceManifest, workspaces: dict[str, Path] | None) -> list[tuple[str, Path]]:
    """The knowledge checkout and every bound workspace, labelled, for the separation check (§5.5)."""
    roots = [(KNOWLEDGE_LABEL, manifest.root)]
    if workspaces:
        roots += [(workspace_label(case.id), workspaces[case.id]) for case in manifest.cases]
    return roots


def capture(manifest: GuidanceManifest, workspaces: dict[str, Path], baseline_path: Path) -> str:
    """Record the baseline before the agent runs; returns the uppercase SHA-256 of the file."""
    baseline = safe_path(baseline_path, f"Baseline path {baseline_path}", missing_ok=True)
    if os.path.lexists(baseline):
        raise GuidanceError("Baseline already exists; capture never overwrites a baseline")
    recorded: dict[str, Any] = {}
    for case in manifest.cases:  # targets first, in manifest order, then the knowledge checkout
        root = workspaces[case.id]
        recorded[case.id] = {
            "caseId": case.hashed,
            "root": str(root),
            "snapshot": snapshot(root, target=True, label=workspace_label(case.id)),
        }
    document = {
        "kind": BASELINE_KIND,
        "version": 1,
        "root": str(manifest.root),
        "manifestPath": str(manifest.path),
        "manifestSha256": manifest.sha256,
        "rootSnapshot": snapshot(manifest.root, target=False, label=KNOWLEDGE_LABEL),
        "workspaces": recorded,
    }
    data = dumps(document).encode("utf-8")
    if not create_exclusive(baseline, data):
        raise GuidanceError("Baseline already exists; capture never overwrites a baseline")
    return hashlib.sha256(data).hexdigest().upper()


@dataclass(frozen=True)
class Baseline:
    root_snapshot: Any
    workspaces: dict[str, Path]  # manifest id -> bound workspace root
    snapshots: dict[str, Any]  # manifest id -> recorded target snapshot


def load_baseline(path: Path, digest: str, manifest: GuidanceManifest) -> Baseline:
    """The scoring gate (§5.4): digest from runner memory first, then the recorded bindings."""
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise GuidanceError("BaselineSha256 must be a SHA256 digest (64 hex digits)")
    _, data = read_limited(path, f"Baseline {path}", "Baseline")
    if hashlib.sha256(data).hexdigest().upper() != digest.upper():
        raise GuidanceError("Baseline digest mismatch: the baseline changed after capture")
    document = require_object(
        parse_strict(data, "Baseline"),
        "Baseline",
        ("version", "kind", "root", "manifestPath", "manifestSha256", "workspaces", "rootSnapshot"),
    )
    version = document["version"]
    if type(version) is not int or version != 1 or document["kind"] != BASELINE_KIND:
        raise GuidanceError("Unsupported runner baseline kind or version")
    recorded_for = (document["root"], document["manifestPath"], str(document["manifestSha256"]).upper())
    if recorded_for != (str(manifest.root), str(manifest.path), manifest.sha256):
        raise GuidanceError("Baseline was captured for another knowledge root or manifest")
    recorded = require_object(document["workspaces"], "Baseline workspaces")
    if set(recorded) != {case.id for case in manifest.cases}:
        raise GuidanceError("Baseline workspaces: case set mismatch with the manifest")
    bound: dict[str, Path] = {}
    snapshots: dict[str, Any] = {}
    for case in manifest.cases:
        label = f"Baseline workspace of '{case.id}'"
        entry = require_object(recorded[case.id], label, ("caseId", "root", "snapshot"))
        if entry["caseId"] != case.hashed:
            raise GuidanceError(f"{label}: case identity mismatch")
        root = require_string(entry["root"], f"{label}.root")
        bound[case.id] = safe_path(root, f"{label}.root", kind="dir")
        snapshots[case.id] = entry["snapshot"]
    return Baseline(root_snapshot=document["rootSnapshot"], workspaces=bound, snapshots=snapshots)
