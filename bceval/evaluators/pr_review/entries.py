"""BC-Bench's code-review dataset, read as it is (docs/pr-review.md): one JSON entry a line, checked by the rules of
BC-Bench's entry model, never rewritten. The entry's own id, its description and its gold stay on this side."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bceval.errors import BcevalError
from bceval.jsonio import parse_json, read_regular_bytes
from bceval.models import StrictModel

INSTANCE_ID = re.compile(r"[A-Za-z0-9_-]+__[A-Za-z0-9_-]+-[0-9]+")
FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ./_-]*\.(al|json)")
ARTICLE = re.compile(r"[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*")
LEVELS = {"critical": 4, "high": 3, "medium": 2, "low": 1}
ALIASES = {
    "error": "high",
    "warning": "medium",
    "suggestion": "low",
    "info": "low",
    "blocker": "critical",
    "major": "high",
    "minor": "low",
}


def severity(value: Any) -> str | None:
    """A severity word or alias as one of LEVELS (case and surrounding blanks ignored), else None."""
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    word = ALIASES.get(word, word)
    return word if word in LEVELS else None


class Comment(StrictModel):
    """A review comment, gold or found (BC-Bench's ReviewComment: an unknown key is an error)."""

    file: str = Field(pattern=FILE.pattern)
    line_start: int = Field(ge=1)
    line_end: int | None = Field(default=None, ge=1)
    domain: str | None = None
    body: str = Field(min_length=1)
    severity: str | None = None
    articles: list[str] = []

    @field_validator("severity", mode="before")
    @classmethod
    def _severity(cls, value: Any) -> str | None:
        if value is not None and severity(value) is None:
            raise ValueError(f"unknown severity {value!r}")
        return severity(value)

    @field_validator("articles")
    @classmethod
    def _articles(cls, value: list[str]) -> list[str]:
        wrong = [a for a in value if not ARTICLE.fullmatch(a)]
        if wrong:
            raise ValueError(f"article id {wrong[0]!r} is not <domain>/<slug>")
        return value


class Metadata(BaseModel):
    model_config = ConfigDict(extra="allow")
    area: str | None = None
    articles: list[str] = []


class Entry(BaseModel):
    """One entry; top-level keys BC-Bench's model does not know (category, description, ...) are tolerated."""

    model_config = ConfigDict(extra="allow")
    instance_id: str = Field(pattern=INSTANCE_ID.pattern)
    repo: str = Field(default="microsoft/BCApps", pattern=r"^[^/\s]+/[^/\s]+$")
    base_commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    patch: str = Field(min_length=1)
    created_at: str = Field(min_length=1)
    environment_setup_version: str = Field(pattern=r"^\d{2}\.\d$")
    project_paths: list[str] = []
    metadata: Metadata = Metadata()
    expected_comments: list[Comment] = []
    ignored_comments: list[Comment] = []

    @model_validator(mode="after")
    def _checked(self) -> Entry:
        if "\0" in self.patch:
            raise ValueError("the patch holds a NUL character")
        on_comments = {a for c in self.expected_comments + self.ignored_comments for a in c.articles}
        both = sorted(on_comments & set(self.metadata.articles))
        if both:
            raise ValueError(f"article {both[0]} is declared both on a comment and in metadata.articles")
        return self

    @property
    def articles(self) -> set[str]:
        """The articles the entry declares: its comments' and its metadata's."""
        return {a for c in self.expected_comments for a in c.articles} | set(self.metadata.articles)


@dataclass(frozen=True)
class Dataset:
    path: Path
    sha256: str
    entries: tuple[Entry, ...]

    def task_id(self, entry: Entry) -> str:
        """The only name of an entry its agent sees: a hash of the dataset and the instance id."""
        return "pr-" + hashlib.sha256(f"{self.sha256}\0{entry.instance_id}".encode()).hexdigest()[:12]


def _one_document(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def read_dataset(path: Path) -> Dataset:
    """Every entry of a code-review JSONL file; the first problem is one BcevalError naming the file and line."""
    try:
        data = read_regular_bytes(path)
    except OSError as exc:
        raise BcevalError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    entries: list[Entry] = []
    seen: set[str] = set()
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            item = parse_json(line, where)
        except BcevalError:
            if number == 1 and _one_document(data):
                raise BcevalError(f"{path}: one JSON document, not JSON lines (one code-review entry a line)") from None
            raise
        try:
            entry = Entry.model_validate(item)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"]) or "the entry"
            raise BcevalError(f"{where}: {field}: {error['msg']}") from None
        if entry.instance_id in seen:
            raise BcevalError(f"{where}: instance_id {entry.instance_id} appears twice")
        seen.add(entry.instance_id)
        entries.append(entry)
    if not entries:
        raise BcevalError(f"{path}: no code-review entry")
    return Dataset(path, hashlib.sha256(data).hexdigest(), tuple(entries))
