"""The processes of development runs (spec §11): hardened git (§10.7), gate commands, the agent command."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bceval import vcs
from bceval.agents import live
from bceval.evaluators.development import DevelopmentError
from bceval.evaluators.development.checks import PINNED
from bceval.evaluators.development.models import DevelopmentBase
from bceval.evaluators.development.report import NOT_GIT, OK, UNREADABLE, WorkspaceChanges

GIT = [*vcs.GIT, "-c", "core.quotePath=false"]


def git_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0", LC_ALL="C", **extra)
    return env


def git(args: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run([*GIT, *args], cwd=cwd, env=git_env(**extra), capture_output=True, check=False)
    except OSError as exc:
        raise DevelopmentError(f"git could not run in {cwd} ({exc.strerror})") from None


def _z(output: bytes) -> list[str]:
    return [p for p in output.decode("utf-8", "surrogateescape").split("\0") if p]


def probe_workspace(workspace: Path) -> WorkspaceChanges:
    """Report mode's rule 15: tracked changes against HEAD plus untracked files that are not ignored."""
    if git(["rev-parse", "--is-inside-work-tree"], workspace).returncode != 0:
        return WorkspaceChanges(NOT_GIT)
    diff = git(["diff", "--name-only", "-z", "--no-renames", "HEAD"], workspace)
    others = git(["ls-files", "-z", "--others", "--exclude-standard"], workspace)
    if diff.returncode != 0 or others.returncode != 0:  # §10.6 tighten: both commands are checked
        return WorkspaceChanges(UNREADABLE)
    return WorkspaceChanges(OK, tuple(_z(diff.stdout) + _z(others.stdout)))


def tree_digest(folder: Path) -> str:
    """SHA-256 over every file's relative path and content hash (a link by its target), `.git` left out."""
    found = []
    for current, dirs, files in os.walk(folder):
        rel = Path(current).relative_to(folder)
        dirs[:] = [d for d in dirs if not (rel == Path(".") and d == ".git")]
        found += [(rel / name).as_posix() for name in files]
        found += [(rel / d).as_posix() for d in dirs if (Path(current) / d).is_symlink()]
    digest = hashlib.sha256()
    for path in sorted(found):
        full = folder.joinpath(*path.split("/"))
        data = os.readlink(full).encode() if full.is_symlink() else full.read_bytes()
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def fresh_copy(source: str, target: Path) -> DevelopmentBase:
    """A fresh, writable, standalone repository from a folder (committed once) or a pinned repository."""
    pinned = PINNED.match(source)
    if pinned:
        repository, commit = pinned["repo"], pinned["commit"]
        cloned = git(["clone", "-q", "--no-local", "--no-checkout", repository, str(target)], Path.cwd())
        if cloned.returncode != 0 or git(["checkout", "-q", "--detach", commit], target).returncode != 0:
            raise DevelopmentError(f"starting repository {source} cannot be cloned at that commit")
    else:
        # checks.starting_repositories already made sure it is a folder with app.json
        shutil.copytree(Path(source), target, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        vcs.commit_folder(target, "bceval: starting repository", vcs.EXPORT_EPOCH, ("bceval", "bceval@localhost"))
    if _z(git(["status", "--porcelain", "-z", "--untracked-files=all"], target).stdout):
        raise DevelopmentError(f"starting repository {source} has a dirty working tree after the copy")
    head = git(["rev-parse", "HEAD"], target).stdout.decode().strip()
    tree = git(["rev-parse", "HEAD^{tree}"], target).stdout.decode().strip()
    return DevelopmentBase(source=source, baseCommit=head, treeId=tree, digest=tree_digest(target))


@dataclass(frozen=True)
class Capture:
    paths: tuple[str, ...]
    patch: bytes
    head: str
    refs: str


def capture(workspace: Path, base_commit: str, scratch: Path) -> Capture:
    """The agent's whole change against the base commit (§11.5.1), staged into a throwaway index so the
    workspace's own index is never touched; commits and untracked (not ignored) files are included."""
    scratch.mkdir(parents=True, exist_ok=True)
    index = {"GIT_INDEX_FILE": str(scratch / "capture.index")}
    for args in (["read-tree", base_commit], ["add", "-A", "--", "."]):
        done = git(args, workspace, **index)
        if done.returncode != 0:
            raise DevelopmentError(f"{workspace}: the workspace diff cannot be captured (git {args[0]} failed)")
    names = git(["diff", "--cached", "--name-only", "-z", "--no-renames", base_commit], workspace, **index)
    patch = git(["diff", "--cached", "--binary", "--no-renames", base_commit], workspace, **index)
    if names.returncode != 0 or patch.returncode != 0:
        raise DevelopmentError(f"{workspace}: the workspace diff cannot be read")
    head = git(["rev-parse", "HEAD"], workspace).stdout.decode().strip()
    refs = git(["for-each-ref", "--format=%(refname) %(objectname)"], workspace).stdout.decode()
    (scratch / "capture.index").unlink(missing_ok=True)
    return Capture(tuple(_z(names.stdout)), patch.stdout, head, refs)


@dataclass(frozen=True)
class Finished:
    exit_code: int | None  # None: it did not start, or was stopped at its timeout
    seconds: float
    timed_out: bool
    missing: bool  # the executable could not start (or exited 126/127)
    stdout: bytes
    stderr: bytes


CLEAN_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME", "SYSTEMROOT")


def clean_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """A clean allowlist of the process environment plus the declared variables (no BCEVAL_*, no secrets)."""
    env = {k: os.environ[k] for k in CLEAN_ENV if k in os.environ}
    env.update(extra or {})
    return env


def run_command(argv: list[str], cwd: Path, timeout: float, env: dict[str, str], stdin: bytes = b"") -> Finished:
    """Run argv without a shell in its own session; at its end (or timeout) everything it started is ended."""
    started = time.monotonic()
    pipe = subprocess.PIPE
    try:
        process = live.start(argv, cwd, env, stdout=pipe, stderr=pipe, stdin=pipe)
    except OSError:
        return Finished(None, 0.0, False, True, b"", b"")
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        live.end(process)
        out, err = process.communicate()
        return Finished(None, time.monotonic() - started, True, False, out, err)
    finally:
        live.end(process)
        live.forget(process)
    code = process.returncode
    return Finished(code, time.monotonic() - started, False, code in (126, 127), out, err)
