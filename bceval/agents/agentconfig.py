"""An agent CLI's configuration folder as an input of the question: Claude Code reads `$CLAUDE_CONFIG_DIR` (its
CLAUDE.md, skills, settings) and Codex `$CODEX_HOME` into every case. bceval reads the user's folder once (the one the
variable names; none: an empty folder), gives every attempt a fresh copy of its own (read-only under bwrap), and the
digest of what it holds joins the question identity and the answer record, so two arms with different configurations
never share an answer. What the CLI writes at run time (sessions, projects, logs, databases) is not copied, and what
only logs the user in (credentials, account state) is copied but not in the digest."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bceval.agents.presets import PRESETS
from bceval.errors import BcevalError
from bceval.jsonio import read_regular_bytes

RUNTIME = {
    "projects",
    "sessions",
    "backups",
    "shell-snapshots",
    "todos",
    "statsig",
    "logs",
    "log",
    "tmp",
    "debug",
    "file-history",
    "ide",
    "cache",
    "history.jsonl",
    "installation_id",
}
RUNTIME_SUFFIXES = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".lock")
LOGIN = {".credentials.json", "auth.json", ".claude.json"}  # copied, never in the digest: not part of the question
MAX_BYTES = 64 << 20  # a configuration, not a home folder


@dataclass(frozen=True)
class AgentConfig:
    variable: str  # CLAUDE_CONFIG_DIR, CODEX_HOME
    source: Path | None  # the user's folder, None: an empty one
    files: tuple[tuple[str, bytes], ...]  # relative path -> bytes, sorted
    digest: str | None  # None for an empty configuration: the question is what it always was

    def record(self) -> dict[str, object]:
        names = [name for name, _ in self.files if Path(name).parts[0] not in LOGIN]
        return {
            "variable": self.variable,
            "source": str(self.source) if self.source else None,
            "sha256": self.digest,
            "files": names,
        }


def read_config(variable: str, environ: Mapping[str, str]) -> AgentConfig:
    """The user's configuration folder, as the variable names it (else empty), read once."""
    given = environ.get(variable)
    if not given:
        return AgentConfig(variable, None, (), None)
    source = Path(given)
    if not source.is_dir():
        raise BcevalError(f"{variable}={given}: not a folder; create it or unset {variable} for an empty one")
    files: list[tuple[str, bytes]] = []
    total = 0
    for folder, subfolders, names in os.walk(source):
        subfolders[:] = sorted(name for name in subfolders if name not in RUNTIME)
        for name in sorted(names):
            path = Path(folder) / name
            if name in RUNTIME or name.endswith(RUNTIME_SUFFIXES) or path.is_symlink() or not path.is_file():
                continue
            data = read_regular_bytes(path)
            total += len(data)
            if total > MAX_BYTES:
                raise BcevalError(
                    f"{variable}={given}: over {MAX_BYTES >> 20} MiB of configuration; point it at a "
                    "folder holding only the configuration"
                )
            files.append((path.relative_to(source).as_posix(), data))
    files.sort()
    asked = [(name, data) for name, data in files if Path(name).parts[0] not in LOGIN]
    digest = hashlib.sha256()
    for name, data in asked:
        digest.update(f"{name}\0{hashlib.sha256(data).hexdigest()}\n".encode())
    return AgentConfig(variable, source, tuple(files), digest.hexdigest() if asked else None)


def config_digest(agent: str, environ: Mapping[str, str]) -> str | None:
    """The digest of the configuration the preset `agent` would be given (None: none)."""
    return read_config(PRESETS[agent].config_variable, environ).digest
