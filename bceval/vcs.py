"""Hermetic git writes: a folder committed as a new repository, the same commit on every machine."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bceval.errors import BcevalError

GIT = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"]


def commit_folder(folder: Path, message: str, epoch: int, author: tuple[str, str]) -> None:
    """`git init` + one commit of everything in `folder`, with no user, system or environment configuration and
    a fixed author and date, so the content alone decides the commit."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME=author[0],
        GIT_AUTHOR_EMAIL=author[1],
        GIT_COMMITTER_NAME=author[0],
        GIT_COMMITTER_EMAIL=author[1],
        GIT_AUTHOR_DATE=f"@{epoch} +0000",
        GIT_COMMITTER_DATE=f"@{epoch} +0000",
    )
    # --template=: no sample hooks, a minimal .git
    for args in (["init", "-q", "--template="], ["add", "-A"], ["commit", "-q", "-m", message]):
        try:
            subprocess.run([*GIT, *args], cwd=folder, env=env, check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            raise BcevalError(f"{folder}: git could not commit it ({exc})") from None


def git_root(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` holding `.git` (a directory, or a file in a linked worktree)."""
    return next((parent for parent in (folder, *folder.parents) if (parent / ".git").exists()), None)
