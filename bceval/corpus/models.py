"""Pydantic models of the knowledge index files; the committed JSON Schemas are generated from them."""

from __future__ import annotations

from typing import Literal

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
