"""The output directory: created once (ignored by git when it sits in a checkout), checked writable, locked
while a graph runs, and swept of what a killed run left behind."""

from __future__ import annotations

import fcntl
import os
import re
import stat
import tempfile
from pathlib import Path

from bceval.errors import BcevalError
from bceval.jsonio import TEMP_PREFIX, NotRegularFile, open_regular
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
    names, only at the top of `out` and in the folders bceval owns under it (never a corpus or anything else
    that shares it, never through a link), and only when the process that made one is gone."""
    found = [(out, name) for name in next(os.walk(out), ("", [], []))[2]]  # the files at the top of `out`
    for folder in OutDir(out).own_folders:
        for parent, _, names in os.walk(folder):
            found.extend((parent, name) for name in names if name.startswith(TEMP_PREFIX))
    removed = []
    for parent, name in found:
        match = _TEMP_FILE.match(name)
        if match is None or alive(int(match[1])):
            continue
        path = Path(parent, name)
        try:
            if path.is_symlink() or not path.is_file():
                continue
            path.unlink()
            removed.append(path)
        except OSError:
            pass  # gone already, or not ours to remove; never worth failing a run for
    return removed


def alive(pid: int) -> bool:
    """Whether process `pid` may still be running (this one included; unknown counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        pass  # someone else's process, or no pid at all: left alone
    return True


# The first bytes of every SQLite database file (an empty file is one too: SQLite makes it a new database).
SQLITE_HEADER = b"SQLite format 3\x00"


def repair_doit_state(db: Path) -> bool:
    """Drop doit's state file when it is not an SQLite database (the JSON state of an older bceval, or a damaged
    file: doit would stop with a traceback on it); True when it was dropped. Losing it only makes the next run redo
    its work; the atomic writes keep every output byte-identical."""
    try:
        with open_regular(db) as handle:
            head = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return False
    except (IsADirectoryError, NotRegularFile):
        raise BcevalError(f"{db}: doit's state file is not a regular file; remove it") from None
    except OSError as exc:
        raise BcevalError(f"{db}: cannot read doit's state file ({exc.strerror}); remove it") from None
    if head in (b"", SQLITE_HEADER):
        return False
    db.unlink(missing_ok=True)
    return True


class OutputLock:
    """An exclusive lock on the output directory for one graph run: two runs writing one directory would corrupt
    doit's state and each other's files. It dies with the process, so a killed run never leaves it behind."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self._handle: int | None = None

    def acquire(self) -> None:
        path = OutDir(self.out).lock
        try:  # never through a link, never anything but a plain file
            handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise BcevalError(f"{path}: cannot open the output lock: {exc.strerror}; remove it") from None
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            os.close(handle)
            raise BcevalError(f"{path}: the output lock is not a regular file; remove it")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(handle)
            raise BcevalError(
                f"{self.out}: another bceval run is using this output directory; wait for it or choose another --out"
            ) from None
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            os.close(self._handle)  # closing the only descriptor of the lock releases it
            self._handle = None
