"""`bceval init`: the starter files that make one's own corpus checkout evaluable with bceval and doit.

Nothing that exists is overwritten: each file is created, or left as it is with a line saying so.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from bceval.config import MANIFEST_RELATIVE, NOT_FOUND, Settings
from bceval.errors import BcevalError
from bceval.evaluators.registry import DEFAULT, evaluator
from bceval.jsonio import dumps, read_regular_text

SCHEMA_NAME = "review-fixtures.schema.json"
DODO_TEXT = """\
# The bceval build graph for this corpus: `doit` (prepare, answer with the baseline, report),
# `doit score` (the strict gate), `doit publish`, `doit health`; settings in [tool.bceval] of pyproject.toml.
from bceval.dodo import *  # noqa: F401,F403
"""
PYPROJECT_TABLE = """\
[tool.bceval]
# bceval settings for this checkout (paths relative to this file); BCEVAL_* variables and flags win.
corpus = "."
out = "out"
"""


def _create(path: Path, text: str, done: list[str]) -> None:
    if path.exists():
        done.append(f"{path}: exists; left as it is")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "x", encoding="utf-8", newline="\n") as handle:  # "x": never replace a file
        handle.write(text)
    done.append(f"{path}: created")


def _add_pyproject_table(path: Path, done: list[str]) -> None:
    if not path.exists():
        _create(path, PYPROJECT_TABLE, done)
        return
    try:
        text = read_regular_text(path, "utf-8")
        existing = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BcevalError(f"{path}: cannot read it to add [tool.bceval]: {exc}") from None
    if "bceval" in existing.get("tool", {}):
        done.append(f"{path}: already has [tool.bceval]; left as it is")
        return
    with open(path, "a", encoding="utf-8", newline="\n") as handle:
        handle.write(("\n" if text and not text.endswith("\n") else "") + "\n" + PYPROJECT_TABLE)
    done.append(f"{path}: [tool.bceval] added")


def init_corpus(settings: Settings, with_doit: bool) -> int:
    """`bceval init`: the starter manifest (and its schema) in the corpus; with `with_doit` also `dodo.py` and
    `[tool.bceval]`. Prints one line per file saying what happened."""
    from bceval.schemas import schema_of  # not at the top: it reads the evaluator registry (main reports its errors)

    if settings.corpus_source == NOT_FOUND:
        raise BcevalError(
            "no corpus found in the current directory or its parents up to the git root; run bceval init "
            "inside your corpus checkout (a folder with microsoft/, community/ or custom/ layers) or give --corpus"
        )
    root = settings.corpus
    manifest = root / MANIFEST_RELATIVE
    done: list[str] = []
    _create(manifest.parent / SCHEMA_NAME, dumps(schema_of("review-manifest")), done)
    _create(manifest, dumps(evaluator(DEFAULT).starter_manifest()), done)
    if with_doit:
        _create(root / "dodo.py", DODO_TEXT, done)
        _add_pyproject_table(root / "pyproject.toml", done)
    print("\n".join(done))
    return 0
