"""The one strict pydantic base every bceval model builds on, and the read-evidence record every evaluator shares."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CaseReads(StrictModel):
    """What one answer read, from the evidence bceval collected from its own tool results ("bceval"); from the Read
    calls the agent's own stream shows ("agent-trace": its account, not evidence, so no citation counts as backed);
    or, with neither, "unknown" (never guessed from the agent's claims)."""

    source: Literal["bceval", "agent-trace", "unknown"]
    opened: list[str] = Field(default_factory=list, description="Candidate articles read, in part or whole.")
    cited: list[str] = Field(default_factory=list, description="The findings the answer gave.")
    citedWithoutCompleteRead: list[str] = Field(
        default_factory=list,
        description="Citations with no complete read whose bytes and SHA-256 match the article in the corpus.",
    )
    readNotCited: list[str] = Field(default_factory=list, description="Candidate articles read but not cited.")
    candidates: int | None = Field(default=None, description="Candidate articles the case offered.")
