"""The one strict pydantic base every bceval model builds on, and the records the frame and the evaluators share:
read evidence, and the infrastructure failure of an answer."""

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer


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


class DropUnset(StrictModel):
    """A model whose OPTIONAL fields are left out of its dump when unset, so records of runs that have none (every
    run but the api agent's) keep their exact bytes."""

    OPTIONAL: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> Any:
        data = handler(self)
        for key in self.OPTIONAL:
            if isinstance(data, dict) and data.get(key) is None:
                data.pop(key, None)
        return data


class ReadSummary(StrictModel):
    """The run's read evidence: how many citations a complete read backs, and how much was opened."""

    requireRead: bool = Field(description="True when an unbacked citation failed its case (--require-read).")
    casesWithEvidence: int = Field(ge=0, description="Answered cases whose reads bceval recorded itself.")
    casesWithoutEvidence: int = Field(ge=0, description="Answered cases whose reads are unknown.")
    citations: int = Field(ge=0, description="Findings given in the cases with evidence.")
    citationsBacked: int = Field(ge=0, description="Of those, findings backed by a complete, matching read.")
    backedShare: float | None = Field(description="citationsBacked / citations; null without citations.")
    meanOpened: float | None = Field(description="Candidate articles opened per case with evidence.")
    candidatesOpened: int = Field(ge=0, description="Candidate articles opened, over the cases with evidence.")
    candidates: int = Field(ge=0, description="Candidate articles offered, over the cases with evidence.")


class InfraFailure(StrictModel):
    """A case the answering side could not answer (timeout, crash, unparseable output)."""

    id: str
    kind: Literal["timeout", "crash", "invalid-output", "spawn-error", "too-large", "agent-error", "budget"]
    detail: str
    attempts: int = Field(ge=0, description="Attempts made (0: never started, a budget stopped the run first).")
    subtype: str | None = Field(default=None, description="The agent's own error subtype (agent-error only).")
    answeredBy: dict[str, Any] | None = None
    record: dict[str, Any] | None = Field(default=None, description="Epoch, view digest, usage and transcript.")
