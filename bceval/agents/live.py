"""The agent processes and temp folders in use, so that Ctrl-C, a timeout or an agent's daemon never leaves one
behind: agents run in sessions of their own, and on Linux bceval is a child subreaper (it adopts their orphans).
A folder is removed read-only parts included, changing no file's mode (a file an agent linked in keeps its own)."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.jsonio import read_regular_bytes

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
KILL_ROUNDS = 20  # an agent forking while it is ended: look again until nothing of its tree is left
_running: set[subprocess.Popen] = set()
_views: set[Path] = set()
_lock = threading.Lock()
_state: dict[str, Any] = {"subreaper": None, "stopping": False, "listed": None}
_stops = 0  # how many times stop_all ran: an agent whose start was under way by then is ended once it exists
_starting = 0  # agents being started outside the lock (worker threads)
_sweeping = 0  # `end`s looking for orphans: a start under way would look like one, so they wait for each other
_quiet = threading.Condition(_lock)


class Interrupted(BcevalError):
    """Raised to a worker that would start an agent or a folder after bceval was interrupted."""


def become_subreaper() -> bool:
    """Make this process the child subreaper of everything it starts (Linux); False where that is not possible."""
    if _state["subreaper"] is None:
        try:
            libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
            _state["subreaper"] = libc is not None and libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _state["subreaper"] = False
    return bool(_state["subreaper"])


def _refuse_if_stopping() -> None:
    if _state["stopping"]:
        raise Interrupted("interrupted: no new agent or view is started")


def start(
    argv: list[str], cwd: Path | None, env: dict[str, str], stdout: Any, stderr: Any, stdin: Any = subprocess.PIPE
) -> subprocess.Popen:
    """Start an agent in its own session, remembered until `end`. A worker forks outside the lock and ends a start
    that finishes after `stop_all`; the main thread (the one interrupted) keeps the lock until it is registered.
    A start and a sweep reading every process wait for each other (the new agent would look like an orphan)."""
    global _starting
    main = threading.current_thread() is threading.main_thread()
    whole = main or _whole_table()  # the main thread's children are where a sweep looks for orphans
    with _lock:
        _refuse_if_stopping()
        become_subreaper()
        while whole and _sweeping:
            _quiet.wait()
        if main:  # registered before any interrupt can be handled, so none escapes `stop_all`
            process = _popen(argv, cwd, env, stdout, stderr, stdin)
            _running.add(process)
            return process
        _starting += 1
        stops = _stops
    try:
        process = _popen(argv, cwd, env, stdout, stderr, stdin)
    finally:
        with _lock:
            _starting -= 1
            _quiet.notify_all()
    with _lock:
        stopped = stops != _stops or _state["stopping"]
        if not stopped:
            _running.add(process)
    if stopped:
        end(process)
        raise Interrupted("interrupted: no new agent or view is started")
    return process


def _popen(argv: list[str], cwd: Path | None, env: dict[str, str], out: Any, err: Any, stdin: Any) -> subprocess.Popen:
    return subprocess.Popen(argv, cwd=cwd, stdin=stdin, stdout=out, stderr=err, env=env, start_new_session=True)


def forget(process: subprocess.Popen) -> None:
    with _lock:
        _running.discard(process)


# --- the process table (Linux /proc) -------------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, session id, state) of a process, or None when it is gone."""
    try:
        text = read_regular_bytes(f"/proc/{pid}/stat").decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the command name may hold spaces and parentheses
    return (int(fields[1]), int(fields[3]), fields[0]) if len(fields) >= 4 else None


def _children(pid: int) -> list[int]:
    """The children of a process (every thread's); only asked where the kernel lists them (see `_adopted`)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            found += [int(word) for word in read_regular_bytes(f"/proc/{pid}/task/{task}/children").split()]
        except OSError:
            continue  # the thread ended meanwhile
    return found


def _adopted() -> list[int] | None:
    """The children of bceval's main thread (where adopted orphans go), or None where the kernel lists none."""
    me = os.getpid()
    try:
        return [int(word) for word in read_regular_bytes(f"/proc/{me}/task/{me}/children").split()]
    except FileNotFoundError:
        return None
    except OSError:
        return []


def _table(skip: frozenset[int] = frozenset(), roots: tuple[int, ...] = ()) -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, session id, state) of adopted orphans and `roots` with their descendants (not those of
    `skip`, agents still running); every process where the kernel does not list children."""
    table: dict[int, tuple[int, int, str]] = {}
    pending = _adopted()
    whole = pending is None
    try:
        pending = [int(name) for name in os.listdir("/proc") if name.isdigit()] if whole else [*pending, *roots]
    except OSError:
        return table
    while pending:
        pid = pending.pop()
        if pid in table:
            continue
        info = _stat(pid)
        if info is None:
            continue
        table[pid] = info
        if not whole and pid not in skip:
            pending += _children(pid)
    return table


def _whole_table() -> bool:
    """True where the kernel does not list children, so a sweep reads every process."""
    if _state.get("listed") is None:
        _state["listed"] = _adopted() is not None
    return not _state["listed"]


def _agent_tree(leader: int, table: dict[int, tuple[int, int, str]]) -> set[int]:
    """The live processes of the agent led by `leader`: its descendants, its session, and the orphans it left
    (bceval's children in a session of their own that no running agent leads)."""
    me, my_session = os.getpid(), os.getsid(0)
    with _lock:
        agents = {process.pid for process in _running}
    found = {pid for pid, (_, session, _) in table.items() if session == leader}
    found |= {
        pid
        for pid, (parent, session, _) in table.items()
        if parent == me and session != my_session and pid not in agents and session not in agents
    }
    found.add(leader)
    while more := {pid for pid, (parent, _, _) in table.items() if parent in found and pid not in found}:
        found |= more  # descendants of everything found
    return {pid for pid in found if pid in table and pid != me and table[pid][2] != "Z"}


def _reap_orphans() -> None:
    """Collect the exit status of orphans bceval adopted (zombies that no Popen waits for)."""
    me, my_session = os.getpid(), os.getsid(0)
    with _lock:
        agents = {process.pid for process in _running}
    for pid, (parent, session, state) in _table(frozenset(agents)).items():
        if parent == me and state == "Z" and session != my_session and pid not in agents:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def end(process: subprocess.Popen) -> None:
    """End the agent and everything it started, orphans included, and reap it (it may have exited already)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if sys.platform.startswith("linux"):
        global _sweeping
        whole = _whole_table()
        with _lock:  # reading every process: no agent is half-started (forked, not yet registered) meanwhile
            while whole and _starting:
                _quiet.wait()
            _sweeping += 1
            others = frozenset(p.pid for p in _running if p is not process)
        try:
            for _ in range(KILL_ROUNDS):
                tree = _agent_tree(process.pid, _table(others, (process.pid,)))
                if not tree:
                    break
                for pid in tree:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                time.sleep(0.01)
            _reap_orphans()
        finally:
            with _lock:
                _sweeping -= 1
                _quiet.notify_all()
    process.wait()


# --- folders ---------------------------------------------------------------------------------------------------


def temp_folder(kind: str, parent: Path | None = None) -> Path:
    """A new folder `bceval-<kind>-<pid>-...` (a later run can tell what a killed one left), remembered until
    `release`: an interrupt removes it."""
    with _lock:
        _refuse_if_stopping()
        root = Path(tempfile.mkdtemp(prefix=f"bceval-{kind}-{os.getpid()}-", dir=parent))
        _views.add(root)
    return root


def release(root: Path) -> None:
    """Remove a folder made by `temp_folder` (unless `stop_all` is removing it already)."""
    with _lock:
        tracked = root in _views
        _views.discard(root)
    if tracked:
        remove(root)


# A folder opened for listing and removal: never through a symbolic link.
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove(root: Path) -> None:
    """Remove a folder and anything an agent added, folder by folder through descriptors; a link, a file, or a
    tree an agent changed under us goes the careful way (a link itself, never its target)."""
    try:
        _remove_by_descriptors(root)
        return
    except FileNotFoundError:
        if not os.path.lexists(root):
            return  # gone already
    except OSError:
        pass
    if os.path.islink(root):  # an agent swapped the folder for a link: remove the link, never its target
        os.unlink(root)
        return
    if not root.is_dir():
        return
    for folder, _, _ in os.walk(root):  # top-down: each folder is made writable before its entries go
        if not os.path.islink(folder):
            os.chmod(folder, stat.S_IRWXU)
    shutil.rmtree(root)


def _remove_by_descriptors(root: Path) -> None:
    """Remove `root` folder by folder, each opened without following a link, made writable and emptied."""
    top = os.open(root, _FOLDER_FLAGS)
    try:
        _empty(top)
    finally:
        os.close(top)
    os.rmdir(root)


def _empty(folder: int) -> None:
    os.fchmod(folder, stat.S_IRWXU)
    with os.scandir(folder) as entries:
        found = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    for name, is_folder in found:
        if is_folder:
            inner = os.open(name, _FOLDER_FLAGS, dir_fd=folder)
            try:
                _empty(inner)
            finally:
                os.close(inner)
            os.rmdir(name, dir_fd=folder)
        else:
            os.unlink(name, dir_fd=folder)


def stop_all() -> int:
    """On Ctrl-C: end every agent's whole tree and remove every folder in use; nothing new starts afterwards."""
    global _stops
    with _lock:
        _state["stopping"] = True
        _stops += 1
        running, views = list(_running), list(_views)
        _running.clear()
        _views.clear()
    for process in running:
        end(process)
    for root in views:
        for _ in range(5):  # a worker may still be writing into it: try again until it is gone
            try:
                remove(root)
                break
            except OSError:
                time.sleep(0.02)
    return len(running)


def reset() -> None:
    """Allow agents again after `stop_all` (tests that interrupt and go on in one process)."""
    with _lock:
        _state["stopping"] = False
