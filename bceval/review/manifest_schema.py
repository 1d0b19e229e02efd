"""The review fixture manifest as a pydantic model: the source of schemas/review-manifest.schema.json.

Validation itself lives in manifest.py, which lists every problem at once; this model only describes
the shape for the schema (a test checks that both name the same members).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bceval.models import StrictModel


class DomainOverride(StrictModel):
    article: str | None = Field(
        default=None, description="Slug (with or without .md) to select instead of the first paired article."
    )
    context: str | None = Field(default=None, description="Extra context sent with the domain's primary cases.")
    additionalArticles: list[str] | None = Field(
        default=None, description="Further paired slugs of the domain that each get a positive and a clean case."
    )


class ReviewManifest(StrictModel):
    schema_: str | None = Field(
        default=None, alias="$schema", description="Where editors find this schema; ignored by bceval."
    )
    version: Literal[2]
    selection: Literal["first-paired-al-article"]
    minimumExpectedRecall: float = Field(ge=0, le=1)
    minimumCleanRate: float = Field(ge=0, le=1)
    overrides: dict[str, DomainOverride] = Field(default_factory=dict)
