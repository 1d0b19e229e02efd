"""The output directory: created once (ignored by git when it sits in a checkout), checked writable, locked
while a graph runs, and swept of what a killed run left behind."""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.jsonio import TEMP_PREFIX, NotRegularFile, load_own_json, open_regular, write_atomic
from bceval.layout import OutDir
from bceval.vcs import git_root

GITIGNORE_TEXT = "# bceval's output directory: nothing here belongs in git\n*\n"
# write_atomic's temporary names: `.bceval-tmp-<pid>-<8 random characters from mkstemp>` (jsonio.temp_prefix)
_TEMP_FILE = re.compile("^" + re.escape(TEMP_PREFIX) + r"(\d+)-[A-Za-z0-9_]{8}$")


def ensure_output_dir(out: Path) -> None:
    """Create the directory (a new one inside a git checkout gets a `.gitignore` of `*`) and prove it writable."""
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        if created and git_root(out.parent) is not None:
            (out / ".gitignore").write_text(GITIGNORE_TEXT, encoding="utf-8")
        handle, probe = tempfile.mkstemp(prefix=".bceval-probe.", dir=out)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise BcevalError(f"{out}: output directory is not writable ({reason}); choose another with --out") from None


def sweep_temp_files(out: Path) -> list[Path]:
    """Remove the temporary files a killed run left (atomic writes never leave them otherwise): only bceval's
    names, only in the folders bceval owns under `out` (never a corpus or anything else that shares it), and only
    when the process that made one is gone. A folder listed before with nothing of the kind in it, and unchanged
    since (same inode and modification time), is not listed again (see _Remembered)."""
    removed = []
    layout = OutDir(out)
    remembered = _Remembered(layout.swept_folders, str(out))
    folders = [(out, False)] + [(folder, True) for folder in layout.own_folders]
    for top, recurse in folders:
        for path in _temp_named(str(top), recurse, remembered):
            match = _TEMP_FILE.match(path.name)
            if match is None or _alive(int(match[1])):
                continue
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                path.unlink()
                removed.append(path)
            except OSError:
                pass  # gone already, or not ours to remove; never worth failing a run for
    remembered.save()
    return removed


class _Remembered:
    """The folders a sweep need not list again: an experiment's output holds tens of thousands of files in a few
    hundred folders, and every command sweeps it. A folder is remembered with its inode, modification time and
    subfolders when no temporary name was in it and it had gone unchanged for QUIET_SECONDS before the listing:
    any entry made or removed in it later moves its modification time past the remembered one, even on a
    filesystem whose clock ticks coarsely (and a living writer's file keeps its folder listed until it is gone).
    Keys are paths relative to the output folder; an unreadable record is an empty one."""

    QUIET_SECONDS = 5

    def __init__(self, record: Path, out: str) -> None:
        self.record, self.prefix = record, out.rstrip(os.sep) + os.sep
        self.started = time.time_ns()
        self.known: dict[str, list[Any]] = {}
        try:
            loaded = load_own_json(record)
        except (OSError, ValueError):  # absent, unreadable or not JSON (a FIFO there is refused, not opened)
            loaded = None
        if isinstance(loaded, dict):
            self.known = {key: value for key, value in loaded.items() if _is_folder_state(value)}
        self.now: dict[str, list[Any]] = {}

    def subfolders(self, folder: str) -> tuple[list[int], list[str] | None]:
        """The folder's state, and its subfolders' names when it is as remembered (None: list it)."""
        try:
            info = os.stat(folder)
        except OSError:
            return [], None
        state, key = [info.st_ino, info.st_mtime_ns], self._key(folder)
        known = self.known.get(key)
        if known is not None and known[:2] == state:
            self.now[key] = known
            return state, known[2]
        return state, None

    def listed(self, folder: str, state: list[int], subfolders: list[str], temporary: bool) -> None:
        if not temporary and state[1] < self.started - self.QUIET_SECONDS * 1_000_000_000:
            self.now[self._key(folder)] = [*state, subfolders]

    def save(self) -> None:
        if self.now == self.known:
            return
        try:
            write_atomic(self.record, json.dumps(self.now, separators=(",", ":"), sort_keys=True))
        except OSError:
            pass  # the next sweep lists every folder again: slower, never wrong

    def _key(self, folder: str) -> str:
        return folder[len(self.prefix) :] if folder.startswith(self.prefix) else folder


def _is_folder_state(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 3
        and all(isinstance(number, int) for number in value[:2])
        and isinstance(value[2], list)
        and all(isinstance(name, str) and _plain_name(name) for name in value[2])
    )


def _plain_name(name: str) -> bool:
    """A name of an entry in its folder: a record that names `..` or a path would lead the sweep elsewhere."""
    return name not in ("", ".", "..") and "/" not in name and os.sep not in name  # "/": Windows' altsep too


# The outputs swept by graphs still running in this process: a graph inside one of them (an experiment's variant
# prepare runs in the experiment's graph, under its lock) finds nothing that sweep left, so it does not walk again.
_SWEPT: list[Path] = []


def sweep_unless_swept(out: Path) -> None:
    """sweep_temp_files, unless `out` lies inside an output a running graph of this process swept."""
    if not any(out.is_relative_to(swept) for swept in _SWEPT):
        sweep_temp_files(out)


def sweeping(out: Path, running: bool) -> None:
    """Note that a graph holding `out` started (`running`) or ended (see sweep_unless_swept)."""
    if running:
        _SWEPT.append(out)
    else:
        _SWEPT.remove(out)


def _temp_named(top: str, recurse: bool, remembered: _Remembered) -> list[Path]:
    """The entries under `top` (in its subfolders too when `recurse`, not through links) whose names start as a
    temporary file's: one listing per folder and a prefix check per name; when recursing, no listing of a folder
    `remembered` holds as unchanged."""
    found, folders = [], [top]
    while folders:
        folder = folders.pop()
        state: list[int] = []
        if recurse:
            state, known = remembered.subfolders(folder)
            if not state:
                continue  # gone, or not there at all: nothing to sweep
            if known is not None:
                folders.extend(folder + os.sep + name for name in known)
                continue
        subfolders, temporary = [], False
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.startswith(TEMP_PREFIX):
                        found.append(Path(entry.path))
                        temporary = True
                    if recurse and entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                        subfolders.append(entry.name)
        except OSError:
            continue  # gone, or not readable: nothing of ours to sweep there
        if recurse:
            remembered.listed(folder, state, subfolders, temporary)
    return found


def _alive(pid: int) -> bool:
    """Whether process `pid` may still be writing (this one included; unknown counts as alive)."""
    if pid == os.getpid():
        return True
    if os.name != "posix":  # pragma: no cover - Windows: no harmless way to ask
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def repair_doit_state(db: Path) -> bool:
    """Drop doit's state file when it is not valid JSON (doit writes it in place at exit: a killed run or a
    full disk leaves it half written, and doit would stop with a traceback on it).

    Losing it only makes the next run redo its work; the atomic writes keep every output byte-identical.
    Returns True when the file was dropped.
    """
    import json

    try:
        with open_regular(db) as handle:
            json.loads(handle.read())
        return False
    except FileNotFoundError:
        return False
    except (IsADirectoryError, NotRegularFile):
        raise BcevalError(f"{db}: doit's state file is not a regular file; remove it") from None
    except OSError as exc:
        raise BcevalError(f"{db}: cannot read doit's state file ({exc.strerror}); remove it") from None
    except ValueError:
        pass
    db.unlink(missing_ok=True)
    return True


class OutputLock:
    """An exclusive lock on the output directory for the length of one graph run.

    Two runs writing one directory would corrupt doit's state and each other's files; the second one is
    refused in one line instead. The lock dies with the process, so a killed run never leaves it behind.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self._handle: int | None = None

    def acquire(self) -> None:
        path = OutDir(self.out).lock
        try:  # never through a link, never anything but a plain file
            handle = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as exc:
            raise BcevalError(f"{path}: cannot open the output lock: {exc.strerror}; remove it") from None
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            os.close(handle)
            raise BcevalError(f"{path}: the output lock is not a regular file; remove it")
        try:
            _lock(handle)
        except OSError:
            os.close(handle)
            raise BcevalError(
                f"{self.out}: another bceval run is using this output directory; wait for it or choose another --out"
            ) from None
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            _unlock(self._handle)
            os.close(self._handle)
            self._handle = None


if os.name == "nt":  # pragma: no cover - Windows
    import msvcrt

    def _lock(handle: int) -> None:
        msvcrt.locking(handle, msvcrt.LK_NBLCK, 1)

    def _unlock(handle: int) -> None:
        os.lseek(handle, 0, os.SEEK_SET)
        msvcrt.locking(handle, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(handle: int) -> None:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(handle: int) -> None:
        fcntl.flock(handle, fcntl.LOCK_UN)
