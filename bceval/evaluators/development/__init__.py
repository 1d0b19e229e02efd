"""The development-fixtures evaluator (spec development.md): AL authoring tasks scored from reports or run by bceval."""

from __future__ import annotations

import re
from pathlib import Path

from bceval.errors import EXIT_FAILED, BcevalError

MANIFEST_RELATIVE = "evaluation/development-fixtures.json"
CAPABILITIES_RELATIVE = "coverage/development-capabilities.json"
CHECKS_RELATIVE = "evaluation/development-checks.yaml"
MARKER = ".bcquality-development-evaluation"
CHECK_IDS = ("compile", "tests", "review")
# the hand-written contracts and the result template, beside the package (a wheel ships them there: pyproject)
SCHEMA_DIR = Path(__file__).resolve().parents[3] / "schemas"
PINNED = re.compile(r"^(?P<repo>.+)@(?P<commit>[0-9a-fA-F]{7,40})$")  # a git repository pinned to a commit


def plain_path(path: str) -> bool:
    """A canonical relative path: forward slashes, no empty, `.` or `..` segment."""
    return "\\" not in path and all(s not in ("", ".", "..") for s in path.split("/"))


def inside(root: Path, path: str) -> Path | None:
    """The file a plain path names under `root` (resolved), or None when the path is not plain or leaves the root."""
    if not plain_path(path):
        return None
    try:
        file = (root / path).resolve()
        return file if file.is_relative_to(root.resolve()) else None
    except OSError:
        return None


def anchored(source: str, base: Path) -> str:
    """A starting repository relative to `base`: a folder, or repository@commit (a URL stays as given)."""
    pinned = PINNED.match(source)
    if pinned and "://" in source:
        return source
    local = base / (pinned["repo"] if pinned else source)
    return f"{local}@{pinned['commit']}" if pinned else str(local)


class DevelopmentError(BcevalError):
    """Bad input for the development evaluator (upstream crashes here): one line, exit 2."""


class UnreadableKnowledge(DevelopmentError):
    """The knowledge checkout could not be indexed: a failed evaluation (exit 1), as for the guidance evaluators."""

    exit_code = EXIT_FAILED
