"""bceval's temp folders (agent views, knowledge views, scratch): which files in them bceval wrote, and their
removal, which changes the mode of those files only."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from pathlib import Path

_owned: dict[Path, set[tuple[int, int]]] = {}  # per folder: the (device, inode) of every file bceval wrote into it
_owned_lock = threading.Lock()


def owned_in(root: Path) -> set[tuple[int, int]]:
    """The (device, inode) set of the files bceval writes into the folder `root` (filled in as it writes)."""
    with _owned_lock:
        return _owned.setdefault(root, set())


def own_tree(root: Path) -> None:
    """Record every regular file now under `root` as bceval's (a folder it has just filled, e.g. by copying)."""
    owned = owned_in(root)
    for folder, _, names in os.walk(root):
        for name in names:
            info = os.lstat(os.path.join(folder, name))
            if stat.S_ISREG(info.st_mode):
                owned.add((info.st_dev, info.st_ino))


def remove(root: Path) -> None:
    """Remove a view, read-only parts included (and anything an agent added). On POSIX through descriptors,
    changing no file's mode; else only files bceval wrote there are made writable again, so a file an agent linked
    in from elsewhere keeps its mode."""
    with _owned_lock:
        owned = _owned.pop(root, set())
    if _BY_DESCRIPTORS:
        try:
            _remove_by_descriptors(root)
            return
        except FileNotFoundError:
            if not os.path.lexists(root):
                return  # gone already
        except OSError:
            pass  # a link, a file, or a tree an agent changed under us: the careful way below deals with it
    if os.path.islink(root):  # an agent swapped the folder for a link: remove the link, never its target
        os.unlink(root)
        return
    if not root.is_dir():
        return
    for folder, _, files in os.walk(root):  # top-down: each folder is made writable before its entries go
        if not os.path.islink(folder):
            os.chmod(folder, stat.S_IRWXU)
        for name in files:  # Windows refuses to delete a read-only file
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and (info.st_dev, info.st_ino) in owned:
                os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    shutil.rmtree(root)


_BY_DESCRIPTORS = (
    os.name == "posix" and {os.open, os.rmdir, os.unlink} <= os.supports_dir_fd and os.scandir in os.supports_fd
)
# A folder opened for listing and removal: never through a symbolic link.
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _remove_by_descriptors(root: Path) -> None:
    """POSIX: remove `root` folder by folder, each opened without following a link, made writable and emptied."""
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
