"""Pydantic models of the review manifest, the request files and the result document: the sources of the committed
JSON Schemas. Validation of the manifest lives in manifest.py, which lists every problem at once and takes its member
names from here."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from bceval.corpus.models import IndexRow
from bceval.models import StrictModel


class RequestCase(StrictModel):
    id: str = Field(pattern=r"^case-[0-9a-f]{8}$", description="Opaque model-facing case id.")
    file: str = Field(description="Neutral sample file in the prepare directory.")
    context: str | None = Field(default=None, description="Scenario context from the manifest, when any.")


class ResultSchemaFinding(StrictModel):
    id: str


class ResultSchemaCase(StrictModel):
    id: str
    findings: list[ResultSchemaFinding]


class ResultSchemaExample(StrictModel):
    """The constant example of the answer shape that every request carries."""

    cases: list[ResultSchemaCase]


class ReviewRequest(StrictModel):
    """review-request.json: every case, for one all-domains run."""

    protocol: str
    knowledgeIndex: str
    resultSchema: ResultSchemaExample
    cases: list[RequestCase]


class LeafRequest(StrictModel):
    """request-<domain>.json (all of a domain's cases) and request-case-*.json (one ranked case)."""

    protocol: str
    skill: str = Field(description="Corpus-relative path of the winning review leaf.")
    leafInstructions: str
    knowledgeIndex: str
    candidateArticles: list[IndexRow]
    resultSchema: ResultSchemaExample
    cases: list[RequestCase]


class Finding(StrictModel):
    # Models often add message, confidence and the like; only `id` is scored.
    model_config = ConfigDict(extra="allow")

    id: str = Field(description="Corpus-relative article path copied from candidateArticles[].path.")


class ResultCase(StrictModel):
    model_config = ConfigDict(extra="allow")

    id: str = Field(description="The request's case id (or the manifest id, for hand-written oracle results).")
    findings: list[Finding | str]


class ResultDocument(StrictModel):
    """result-case-*.json, result-<domain>.json or one combined result file."""

    model_config = ConfigDict(extra="allow")

    cases: list[ResultCase]


class DomainOverride(StrictModel):
    article: str | None = Field(
        default=None, description="Slug (with or without .md) to select instead of the first paired article."
    )
    context: str | None = Field(
        default=None,
        description="Extra context sent with the domain's primary cases (with 'articles': with every case).",
    )
    additionalArticles: list[str] | None = Field(
        default=None,
        description="Further paired slugs of the domain that each get a positive and a clean case (ids "
        "<domain>-<kind>-<slug>, no context). Not together with 'articles' anywhere in the manifest.",
    )
    articles: Annotated[list[str], Field(min_length=1)] | str | None = Field(
        default=None,
        description="The fork dialect: the paired slugs to select, in order, instead of 'article'. Each gets a "
        "positive and a clean case (the first <domain>-<kind>, the others <domain>-<slug>-<kind>) and the "
        "context. Not together with 'article', nor with 'additionalArticles' anywhere in the manifest.",
    )

    model_config = ConfigDict(extra="forbid", json_schema_extra={"not": {"required": ["article", "articles"]}})


class CoverageWaiver(StrictModel):
    path: str = Field(min_length=1, description="The article's path, e.g. microsoft/knowledge/ui/x.md.")
    reason: str = Field(min_length=1, description="Why the article may change without being evaluated.")


class ReviewManifest(StrictModel):
    schema_: str | None = Field(
        default=None, alias="$schema", description="Where editors find this schema; ignored by bceval."
    )
    version: Literal[2]
    selection: Literal["first-paired-al-article"]
    minimumExpectedRecall: float = Field(ge=0, le=1)
    minimumCleanRate: float = Field(ge=0, le=1)
    overrides: dict[str, DomainOverride] = Field(default_factory=dict)
    coverageWaivers: list[CoverageWaiver] | None = Field(
        default=None,
        description="Articles that may change in a pull request without any case selecting them (the "
        "changed-paths gate of bceval validate --changed-paths / --changed-from).",
    )
