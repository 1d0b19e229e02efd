"""The agent processes bceval has running, so that Ctrl-C or a crash never leaves one behind.

Agents run in sessions of their own (a timeout kills the whole group, and a terminal's Ctrl-C does not reach
them half-way through writing), so bceval itself must stop them when it is interrupted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

_running: set[subprocess.Popen] = set()
_views: set[Path] = set()
_lock = threading.Lock()
_stops = 0  # how many times stop_all ran: an agent whose start was under way by then is killed once it exists


def start(argv: list[str], cwd: Path | None, env: dict[str, str], stdout: Any, stderr: Any) -> subprocess.Popen:
    """Start an agent in its own process group, remembered until `forget`.

    Agents are started side by side from worker threads, so the fork and exec happen outside the lock (holding
    it across Popen made every start wait for the one before). Only the main thread is ever interrupted, so a
    start made there keeps the lock until the process is registered; one that finishes in a worker after
    `stop_all` ran is killed at once instead of being registered."""
    if threading.current_thread() is threading.main_thread():
        with _lock:  # registered before any interrupt can be handled, so none escapes `stop_all`
            process = _popen(argv, cwd, env, stdout, stderr)
            _running.add(process)
        return process
    stops = _stops
    process = _popen(argv, cwd, env, stdout, stderr)
    with _lock:
        stopped = stops != _stops
        if not stopped:
            _running.add(process)
    if stopped:
        kill(process)
    return process


def _popen(argv: list[str], cwd: Path | None, env: dict[str, str], stdout: Any, stderr: Any) -> subprocess.Popen:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=stdout,
        stderr=stderr,
        env=env,
        start_new_session=os.name == "posix",
    )


def forget(process: subprocess.Popen) -> None:
    with _lock:
        _running.discard(process)


def kill(process: subprocess.Popen) -> None:
    """Kill the agent and everything it started, and reap it."""
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def track_view(root: Path) -> None:
    with _lock:
        _views.add(root)


def forget_view(root: Path) -> bool:
    """True when the view was still tracked (so the caller removes it, not `stop_all`)."""
    with _lock:
        if root in _views:
            _views.discard(root)
            return True
        return False


def stop_all() -> int:
    """Kill every agent still running and remove the views of cases in flight (on Ctrl-C); returns how many
    agents there were."""
    from bceval.agents.view import remove

    global _stops
    with _lock:
        _stops += 1
        running, views = list(_running), list(_views)
        _running.clear()
        _views.clear()
    for process in running:
        kill(process)
    for root in views:
        try:
            remove(root)
        except OSError:
            pass  # a worker was removing it at the same moment
    return len(running)
