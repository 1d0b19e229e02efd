"""Git access: hermetic writes (a folder committed as a new repository, the same commit on every machine) and a
corpus at a commit exported once, read-only."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from bceval.errors import BcevalError

GIT = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"]


def hermetic_env(epoch: int, author: tuple[str, str]) -> dict[str, str]:
    """The environment of a git command that reads no user, system or environment configuration and commits with
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
    return env


def commit_folder(folder: Path, message: str, epoch: int, author: tuple[str, str]) -> None:
    """`git init` + one commit of everything in `folder`, hermetic (see hermetic_env)."""
    env = hermetic_env(epoch, author)
    # --template=: no sample hooks, a minimal .git
    for args in (["init", "-q", "--template="], ["add", "-A"], ["commit", "-q", "-m", message]):
        try:
            subprocess.run([*GIT, *args], cwd=folder, env=env, check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            raise BcevalError(f"{folder}: git could not commit it ({exc})") from None


def git_root(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` holding `.git` (a directory, or a file in a linked worktree)."""
    return next((parent for parent in (folder, *folder.parents) if (parent / ".git").exists()), None)


# --- a commit exported ---------------------------------------------------------------------------------------------

LINK_MODE = 0o120000
EXECUTABLE = 0o100755
EXPORT_EPOCH = 946684800  # 2000-01-01T00:00:00Z: an export's commit depends on its content alone


def export_commit(
    repository: Path, commit: str, subdir: str, target: Path, done: str, as_checkout: bool = False
) -> bool:
    """Write the files of `subdir` at `commit` into `target` (read-only: nothing is checked out or fetched); False
    when it was already there. The file `done` is written last and names the source commit: an export without it
    was interrupted and is made again. `as_checkout` also commits the export as a git work tree of its own (a
    guidance arm reads its corpus as a knowledge checkout, which must be the root of one)."""
    if (target / done).is_file():
        if as_checkout and not (target / ".git").exists():
            _commit_export(target, commit)
        return False
    import git  # here, not at the top: GitPython fails to import where no git executable is installed

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        repo = git.Repo(repository)
        try:
            tree = repo.commit(commit).tree
            if subdir:
                tree = tree / subdir
            for item in tree.traverse():
                if item.type != "blob":
                    continue
                rel = item.path[len(subdir) + 1 :] if subdir else item.path
                if any(part in ("", ".", "..") or part.lower() == ".git" for part in rel.split("/")):
                    raise BcevalError(f"{repository}: {item.path!r} at {commit[:12]} is no plain path of a corpus")
                if item.mode == LINK_MODE:
                    raise BcevalError(
                        f"{repository}: {item.path} at {commit[:12]} is a link; corpora are exported without links"
                    )
                path = staging.joinpath(*rel.split("/"))
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(item.data_stream.read())
                if item.mode == EXECUTABLE:
                    path.chmod(path.stat().st_mode | stat.S_IXUSR)
        except KeyError:
            raise BcevalError(f"{repository}: {subdir} does not exist at {commit[:12]}") from None
        except ValueError as exc:  # GitPython refuses a tree entry such as `..` while walking the tree
            raise BcevalError(f"{repository}: the tree at {commit[:12]} holds an unsafe path: {exc}") from None
        finally:
            repo.close()
        (staging / done).write_text(f"{commit}\n", encoding="utf-8")
        if as_checkout:
            _commit_export(staging, commit)
        if target.exists():  # an interrupted export, or one made meanwhile: the finished one wins
            shutil.rmtree(target)
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return True


def _commit_export(folder: Path, commit: str) -> None:
    commit_folder(folder, f"bceval export of {commit}", EXPORT_EPOCH, ("bceval", "bceval@localhost"))


# --- changed files -------------------------------------------------------------------------------------------------


def changed_since(folder: Path, ref: str) -> list[str]:
    """The files committed since the merge base of `ref` and HEAD (`git diff --name-only --no-renames -z
    --relative REF...HEAD`, run in `folder`): under `folder`, relative to it, unquoted; no working-tree edits."""
    if not ref or ref.startswith("-"):  # git would read `-…` as an option (`--output=FILE` writes a file)
        raise BcevalError(f"--changed-from {ref or repr('')}: not a git revision (empty, or starts with '-')")
    if git_root(folder) is None:
        raise BcevalError(f"--changed-from {ref}: {folder} is not in a git checkout")
    try:
        import git
    except ImportError:  # GitPython finds no git executable
        raise BcevalError(f"--changed-from {ref}: git is not available to list the changed files") from None
    try:
        listed = git.Git(str(folder)).diff("--name-only", "--no-renames", "-z", "--relative", f"{ref}...HEAD", "--")
    except git.GitCommandError as exc:
        reason = next((line.strip() for line in str(exc.stderr).splitlines() if line.strip()), "git failed")
        reason = reason.removeprefix("stderr: ").removeprefix("'").removesuffix("'")
        raise BcevalError(f"--changed-from {ref}: cannot list the files changed in {folder} ({reason})") from None
    except OSError as exc:
        raise BcevalError(f"--changed-from {ref}: cannot run git in {folder} ({exc.strerror})") from None
    return [path for path in listed.split("\0") if path]
