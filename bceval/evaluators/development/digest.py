"""The content digest of a folder (a starting repository, the knowledge view): SHA-256 over every file's relative
path and the SHA-256 of its bytes (a link by its target), sorted by path, `.git` left out."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def tree_digest(folder: Path) -> str:
    found = []
    for current, dirs, files in os.walk(folder):
        rel = Path(current).relative_to(folder)
        dirs[:] = [d for d in dirs if not (rel == Path(".") and d == ".git")]
        found += [(rel / name).as_posix() for name in files]
        found += [(rel / d).as_posix() for d in dirs if (Path(current) / d).is_symlink()]
    digest = hashlib.sha256()
    for path in sorted(found):
        full = folder.joinpath(*path.split("/"))
        data = os.readlink(full).encode() if full.is_symlink() else full.read_bytes()
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()
