"""The reviewer's view of an entry: a git working tree whose HEAD is the base (one commit, no history) and whose
uncommitted changes are the patch, new files marked intent-to-add so that `git diff HEAD` shows all of it.
`minimal`: an empty base, exact for a patch that only adds files; `base-files`: the files the patch changes, read
at the base commit from a BCApps checkout the user names (BCEVAL_BCAPPS)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from bceval.errors import BcevalError
from bceval.evaluators.pr_review.entries import Entry
from bceval.vcs import EXPORT_EPOCH, GIT, hermetic_env

MINIMAL = "minimal"
BASE_FILES = "base-files"
CHECKOUT_ENV = "BCEVAL_BCAPPS"
AUTHOR = ("reviewer", "reviewer@localhost")


def _paths(patch: str, marker: str) -> list[str]:
    """The paths of a git diff's `--- a/` (marker "a") or `+++ b/` (marker "b") lines."""
    prefix = ("--- a/", "+++ b/")[marker == "b"]
    return list(
        dict.fromkeys(line[len(prefix) :].rstrip("\t") for line in patch.splitlines() if line.startswith(prefix))
    )


def changed_files(entry: Entry) -> list[str]:
    """The files the patch changes that exist at the base (none for a patch that only adds files)."""
    return _paths(entry.patch, "a")


def _git(folder: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            [*GIT, *args], cwd=folder, input=stdin, env=hermetic_env(EXPORT_EPOCH, AUTHOR), capture_output=True
        )
    except OSError as exc:
        raise BcevalError(f"{folder}: git could not run ({exc})") from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BcevalError(f"{folder}: git {args[0]} failed: {why[0] if why else done.returncode}")
    return done.stdout


def base_files(entry: Entry, checkout: Path | None) -> dict[str, bytes]:
    """The files the patch changes, as they are at its base commit in the checkout; a BcevalError saying why they
    cannot be read (no checkout named, the commit or a file missing there)."""
    wanted = changed_files(entry)
    if not wanted:
        return {}
    if checkout is None:
        raise BcevalError(f"its patch changes {len(wanted)} existing file(s): set {CHECKOUT_ENV} to a BCApps checkout")
    return {path: _git(checkout, "show", f"{entry.base_commit}:{path}") for path in wanted}


def build_view(folder: Path, entry: Entry, hidden: tuple[str, ...]) -> None:
    """Make `folder` (holding the base files, if any, and the `hidden` files the frame keeps there) the view."""
    _git(folder, "init", "-q", "--template=")
    (folder / ".git" / "info").mkdir()
    (folder / ".git" / "info" / "exclude").write_text("".join(f"/{name}\n" for name in hidden), encoding="utf-8")
    if changed_files(entry):
        _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "--allow-empty", "-m", "base")
    # new files intent-to-add: `git diff HEAD` shows them
    _git(folder, "apply", "--ignore-whitespace", "--intent-to-add", "-", stdin=entry.patch.encode("utf-8"))
