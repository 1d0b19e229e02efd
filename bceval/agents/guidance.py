"""The guidance question: what the runner hands an agent once per case (never the manifest's expectations), and
its answer: the result document (`{caseId, guidanceReport}`) or a NoReport."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.jsonio import read_regular_text


@dataclass(frozen=True)
class GuidanceCaseInput:
    """Everything an adapter may use for one case; the manifest expectations are not in here."""

    case_id: str  # the hashed id, as in the request
    request_path: Path  # <run>/requests/request-<caseId>.json
    workspace: Path  # the runner-bound workspace: the agent's working directory, read-only
    knowledge: Path  # the knowledge view the agent reads (today: the knowledge checkout itself)
    environment: Mapping[str, str]  # what a process-based adapter gives the agent; never the digest

    def request(self) -> dict[str, Any]:
        return json.loads(read_regular_text(self.request_path, "utf-8"))


@dataclass(frozen=True)
class NoReport:
    """The adapter has no report for the case. `kind` is bceval's word for why (no-answer, not-json, timeout, crash,
    invalid-output, ...), safe to print, never the agent's output."""

    kind: str = "no-answer"
