"""The review question (CaseInput), its answer (Answer) and the result documents every review agent writes.
The Agent protocol every kind keeps is in bceval.agents.registry."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bceval.jsonio import dumps, read_regular_text
from bceval.layout import PrepareDir
from bceval.models import InfraFailure
from bceval.usage import Usage

if TYPE_CHECKING:  # annotations only: the frame reaches the review evaluator's types through its plugin
    from bceval.evaluators.review.cases import ReviewCase
    from bceval.evaluators.review.scoring import ResultEntry


@dataclass(frozen=True)
class CaseInput:
    """Everything an adapter may look at for one case; the manifest expectations are not in here."""

    model_id: str
    request_path: Path  # request-case-*.json in the prepare directory
    case_path: Path  # case-*.al in the prepare directory
    corpus: Path  # where the leaf and the candidate articles the request names are read from

    def request(self) -> dict[str, Any]:
        return json.loads(read_regular_text(self.request_path, "utf-8"))


@dataclass
class Answer:
    """One case's outcome: the answered entries or why there are none, what it cost, and its transcript."""

    entries: list[ResultEntry] | None
    failure: InfraFailure | None = None
    usage: Usage = field(default_factory=Usage)
    transcript: dict[str, Any] | None = None  # live agents only
    cached: bool = False
    view_digest: str | None = None
    prompts: tuple[str, ...] = ()  # the prompt texts a live agent sent (the run stores each once, by hash)


def result_document(entries: list[ResultEntry], answered_by: dict[str, Any], record: dict[str, Any]) -> str:
    cases = [{"id": entry.id, "findings": [{"id": f} for f in entry.findings]} for entry in entries]
    return dumps({"cases": cases, "answeredBy": answered_by, "record": record})


def case_input(prepare_dir: Path, corpus: Path, case: ReviewCase) -> CaseInput:
    prep = PrepareDir(prepare_dir)
    return CaseInput(
        model_id=case.modelId,
        request_path=prep.case_request(case.modelId),
        case_path=prep.case_file(case.modelId),
        corpus=corpus,
    )
