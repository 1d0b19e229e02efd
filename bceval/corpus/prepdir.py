"""The prepare directory: claimed with a marker, refused when it holds someone else's files."""

from __future__ import annotations

from pathlib import Path

from bceval.errors import BcevalError
from bceval.jsonio import write_atomic
from bceval.layout import MARKER_NAME, PrepareDir

MARKER_TEXT = "This directory holds neutral review requests prepared by bceval; it may be rewritten.\n"


def claim(directory: Path) -> None:
    """Create the directory (or accept our own) and write the marker; never touch a foreign one."""
    if directory.exists() and not directory.is_dir():
        raise BcevalError(f"{directory}: prepare path exists and is not a directory")
    marker = PrepareDir(directory).marker
    if directory.is_dir() and not marker.is_file() and any(directory.iterdir()):
        raise BcevalError(
            f"{directory}: prepare directory is not empty and has no {MARKER_NAME} marker; "
            "choose an empty or new directory"
        )
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(marker, MARKER_TEXT)


def strays(directory: Path, expected: set[str]) -> list[Path]:
    """Files a previous prepare wrote that the current corpus no longer produces: top-level regular files with our
    names (results, notes and anything else are not ours)."""
    if not directory.is_dir():
        return []
    return [
        entry
        for entry in sorted(directory.iterdir())
        if entry.name not in expected and PrepareDir.owns(entry.name) and entry.is_file() and not entry.is_symlink()
    ]
