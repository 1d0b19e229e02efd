"""Pydantic models of the request files and the result document (for the committed JSON Schemas)."""

from __future__ import annotations

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
