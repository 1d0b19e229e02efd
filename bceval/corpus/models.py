"""Pydantic models of the knowledge index files; the committed JSON Schemas are generated from them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from bceval.models import StrictModel


class IndexRow(StrictModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    path: str = Field(description="Corpus-relative path with forward slashes; the finding id models must copy.")
    layer: Literal["microsoft", "community", "custom"]
    domain: str = Field(description="Frontmatter domain; for an unparsed row, the folder after knowledge/.")
    bc_version: list[str] = Field(alias="bc-version")
    technologies: list[str]
    countries: list[str]
    application_area: list[str] = Field(alias="application-area")
    keywords: list[str]
    title: str
    description: str = Field(description="Lean description: first sentence, at most 120 UTF-16 units plus an ellipsis.")
    parsed: bool = Field(description="False when the frontmatter could not be read; such rows keep every file visible.")
    sourceSha256: str | None = Field(
        default=None, pattern="^[0-9a-f]{64}$", description="The strict index's: SHA-256 of the article's bytes."
    )


class KnowledgeIndex(StrictModel):
    version: Literal[1]
    generatedAt: str = Field(description="SOURCE_DATE_EPOCH (or the Unix epoch), never the wall clock.")
    enabledLayers: list[str]
    knowledgeAllow: list[str]
    knowledgeDeny: list[str]
    articleCount: int = Field(ge=0)
    sourceSnapshot: str | None = Field(
        default=None,
        pattern="^[0-9a-f]{64}$",
        description="The strict index's: SHA-256 of the compact JSON [{path, sha256}] of its rows by path.",
    )
    articles: list[IndexRow]


class DomainIndex(StrictModel):
    version: Literal[1]
    domain: str
    articleCount: int = Field(ge=0)
    articles: list[IndexRow]


_HASH = "^[0-9a-f]{64}$"
_SKILL_PATH = r"^(microsoft|community|custom)/skills/.+\.md$"
_VERSION = r"^(all|[1-9][0-9]*\.\.([1-9][0-9]*)?)$"
_Texts = list[Annotated[str, Field(min_length=1)]]


class SkillFilters(StrictModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    bc_version: list[Annotated[int, Field(ge=1, strict=True)] | Annotated[str, Field(pattern=_VERSION)]] = Field(
        alias="bc-version"
    )
    technologies: _Texts
    countries: _Texts
    application_area: _Texts = Field(alias="application-area")


class SkillRecord(StrictModel):
    path: str = Field(pattern=_SKILL_PATH)
    layer: Literal["microsoft", "community", "custom"]
    id: str = Field(pattern="^[a-z0-9]+(-[a-z0-9]+)*$")
    version: int = Field(ge=1)
    title: str = Field(min_length=1)
    description: str = Field(min_length=1)
    inputs: _Texts
    outputs: list[Literal["findings-report", "development-guidance-report"]] = Field(min_length=1, max_length=1)
    filters: SkillFilters
    subSkills: list[Annotated[str, Field(pattern=_SKILL_PATH)]] = Field(json_schema_extra={"uniqueItems": True})
    sourceSha256: str = Field(pattern=_HASH)


class SkillIndex(StrictModel):
    """skill-index.json (upstream-2026-09.md §5.2): `bceval skills build` writes it, `bceval skills check` checks it."""

    version: Literal[1]
    generatedAt: str = Field(description="SOURCE_DATE_EPOCH (or the Unix epoch), never the wall clock.")
    skillCount: int = Field(ge=0)
    sourceSnapshot: str = Field(pattern=_HASH, description="SHA-256 of the compact JSON [{path, sha256}] in order.")
    skills: list[SkillRecord]
