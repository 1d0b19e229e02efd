"""The corpus at a commit, exported once from git (read-only: nothing is checked out or fetched)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from bceval.errors import BcevalError
from bceval.vcs import commit_folder

DONE = ".bceval-export"  # written last: an export without it was interrupted and is made again
LINK_MODE = 0o120000
EXECUTABLE = 0o100755
EXPORT_EPOCH = 946684800  # 2000-01-01T00:00:00Z: an export's commit depends on its content alone


def export_commit(repository: Path, commit: str, subdir: str, target: Path, as_checkout: bool = False) -> bool:
    """Write the files of `subdir` at `commit` into `target`; False when it was already there.

    `as_checkout` also commits the export as a git work tree of its own (a guidance arm reads its corpus as a
    knowledge checkout, which must be the root of one); the export's `.bceval-export` names the source commit.
    """
    if (target / DONE).is_file():
        if as_checkout and not (target / ".git").exists():
            _commit_export(target, commit)
        return False
    import git

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
        finally:
            repo.close()
        (staging / DONE).write_text(f"{commit}\n", encoding="utf-8")
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
