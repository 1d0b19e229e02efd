"""Settings in one place. Precedence: command-line flag > environment > pyproject.toml > default."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bceval.errors import BcevalError

PACKAGE_ROOT = Path(__file__).resolve().parent
DEMO_CORPUS = PACKAGE_ROOT.parent / "evaluation" / "demo-corpus"
MANIFEST_RELATIVE = Path("evaluation") / "review-fixtures.json"
ENV_KEYS = {"corpus": "BCEVAL_CORPUS", "manifest": "BCEVAL_MANIFEST", "out": "BCEVAL_OUT"}


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    corpus: Path
    manifest: Path
    out: Path

    @property
    def prepare_dir(self) -> Path:
        return self.out / "review"

    @property
    def build_dir(self) -> Path:
        """Intermediate files of the graph; never read by model runners."""
        return self.out / ".build"

    @property
    def doit_db(self) -> Path:
        return self.out / ".bceval.doit.db"


def _pyproject_values(cwd: Path) -> dict[str, Path]:
    pyproject = cwd / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BcevalError(f"{pyproject}: cannot read [tool.bceval]: {exc}") from None
    table = data.get("tool", {}).get("bceval", {})
    values: dict[str, Path] = {}
    for key in ENV_KEYS:
        if key in table:
            if not isinstance(table[key], str) or not table[key]:
                raise BcevalError(f"{pyproject}: [tool.bceval] {key} must be a non-empty path string")
            values[key] = (cwd / table[key]).resolve()
    unknown = sorted(set(table) - set(ENV_KEYS))
    if unknown:
        raise BcevalError(f"{pyproject}: [tool.bceval] has unknown setting '{unknown[0]}'")
    return values


def load_settings(
    corpus: str | os.PathLike | None = None,
    manifest: str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    cwd = Path.cwd() if cwd is None else cwd
    environ = os.environ if environ is None else environ
    flags = {"corpus": corpus, "manifest": manifest, "out": out}
    from_file = _pyproject_values(cwd)
    chosen: dict[str, Path | None] = {}
    for key, env_key in ENV_KEYS.items():
        if flags[key] is not None:
            chosen[key] = (cwd / Path(flags[key])).resolve()
        elif environ.get(env_key):
            chosen[key] = (cwd / environ[env_key]).resolve()
        else:
            chosen[key] = from_file.get(key)
    corpus_path = chosen["corpus"] or DEMO_CORPUS
    return Settings(
        corpus=corpus_path,
        manifest=chosen["manifest"] or corpus_path / MANIFEST_RELATIVE,
        out=chosen["out"] or (cwd / "out").resolve(),
    )


def check_inputs(settings: Settings) -> None:
    """Fail early, in one line, when the corpus or manifest cannot be used at all."""
    if not settings.corpus.exists():
        raise BcevalError(f"{settings.corpus}: corpus directory does not exist")
    if not settings.corpus.is_dir():
        raise BcevalError(f"{settings.corpus}: corpus path is not a directory")
    if not settings.manifest.exists():
        raise BcevalError(f"{settings.manifest}: review fixture manifest not found")
    if not settings.manifest.is_file():
        raise BcevalError(f"{settings.manifest}: review fixture manifest is not a file")
