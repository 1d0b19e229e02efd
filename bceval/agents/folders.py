"""The removal of bceval's temp folders (agent views, knowledge views, scratch), read-only parts included, changing
no file's mode: a file an agent linked in from elsewhere keeps its own."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

# A folder opened for listing and removal: never through a symbolic link.
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove(root: Path) -> None:
    """Remove a folder and anything an agent added, folder by folder through descriptors; a link, a file, or a
    tree an agent changed under us is removed the careful way (a link itself, never its target)."""
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
