"""Half of a large read-only job done by a forked child while this process does the other half.

A no-op prepare of a 25,000-article corpus is mostly the kernel's work for 70,000 `stat` calls, and a process
does them one after the other on one core. Where there are two or more cores, a child forked for the second
half of the folders makes it about half as long. The child only computes: it sends its part back down a pipe
as marshal data and leaves by os._exit, so none of this process's exit handlers, buffered output or locks are
run or released twice. Linux only (macOS's system libraries are not safe to use in a forked child that does
not exec), and only while this process runs one thread (a fork copies none of the others, and any lock one of
them held would stay held in the child). When the child fails in any way, its half is done here instead: the
result never depends on whether it worked.
"""

from __future__ import annotations

import marshal
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from bceval.jsonio import write_all

Item = TypeVar("Item")
Part = dict[str, Any]  # what a part of the job returns: marshal-able keys and values

SPLIT_FROM = 10_000  # units of work (files to stat) below which the fork costs more than the half it saves


def can_split() -> bool:
    """Whether a job may be split here: Linux, two cores or more for this process, and no other thread."""
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return False


def in_halves(items: Sequence[Item], weight: Callable[[Item], int], work: Callable[[Sequence[Item]], Part]) -> Part:
    """`work(items)`, as `work` of the first half (by `weight`) here and of the second in a forked child, merged
    in the order of `items`; all of it here when the job is small or cannot be split (see can_split)."""
    weights = [weight(item) for item in items]
    total = sum(weights)
    if total < SPLIT_FROM or len(items) < 2 or not can_split():
        return work(items)
    cut, done = 0, 0
    while cut < len(items) - 1 and done + weights[cut] <= total / 2:
        done += weights[cut]
        cut += 1
    cut = max(cut, 1)
    mine, theirs = items[:cut], items[cut:]
    child = _fork(theirs, work)
    if child is None:
        return work(items)
    pid, pipe = child
    try:
        part = work(mine)
        with os.fdopen(pipe, "rb") as reader:
            pipe = -1
            data = reader.read()
    except BaseException:
        if pipe != -1:
            os.close(pipe)
        _stop(pid)
        raise
    if not _succeeded(pid):
        return {**part, **work(theirs)}
    try:
        rest = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        rest = None
    if not isinstance(rest, dict):
        rest = work(theirs)
    return {**part, **rest}


def _fork(items: Sequence[Item], work: Callable[[Sequence[Item]], Part]) -> tuple[int, int] | None:
    """(pid, read end of its pipe) of a child computing `work(items)`, or None when no child could be made."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: its part down the pipe, then gone
        code = 1
        try:
            os.close(read)
            write_all(write, marshal.dumps(work(items)))
            code = 0
        except BaseException:  # an interrupt or any failure: the parent does this half itself
            pass
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _succeeded(pid: int) -> bool:
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return False
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def _stop(pid: int) -> None:
    """End and reap a child whose part is no longer wanted (this process is failing or interrupted)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
