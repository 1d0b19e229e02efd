"""The questions the built-in evaluators hand an agent, never with the manifest's expectations: a review case
(CaseInput) with its answer (Answer) and result document, and a guidance case (GuidanceCaseInput) with its
NoReport. The Agent protocol every kind keeps is in bceval.agents.registry."""

from __future__ import annotations

import json
from collections.abc import Mapping
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


class _Request:
    request_path: Path

    def request(self) -> dict[str, Any]:
        return json.loads(read_regular_text(self.request_path, "utf-8"))


@dataclass(frozen=True)
class CaseInput(_Request):
    """Everything an adapter may look at for one review case."""

    model_id: str
    request_path: Path  # request-case-*.json in the prepare directory
    case_path: Path  # case-*.al in the prepare directory
    corpus: Path  # where the leaf and the candidate articles the request names are read from


@dataclass(frozen=True)
class GuidanceCaseInput(_Request):
    """Everything an adapter may use for one guidance case."""

    case_id: str  # the hashed id, as in the request
    request_path: Path  # <run>/requests/request-<caseId>.json
    workspace: Path  # the runner-bound workspace: the agent's working directory, read-only
    knowledge: Path  # the knowledge view the agent reads (today: the knowledge checkout itself)
    environment: Mapping[str, str]  # what a process-based adapter gives the agent; never the digest


@dataclass(frozen=True)
class NoReport:
    """The adapter has no report for a guidance case. `kind` is bceval's word for why (no-answer, not-json,
    timeout, crash, invalid-output, ...), safe to print, never the agent's output."""

    kind: str = "no-answer"


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
