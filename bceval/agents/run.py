"""Answer one prepared case with the run's adapter: a result or an infrastructure record, a transcript for
live agents, and one progress line. The graph runs one of these per case (in parallel for `--jobs N`)."""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from typing import Any

from bceval.agents.base import Adapter, Answer, case_input, result_document
from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.jsonio import dumps, parse_json, write_atomic
from bceval.layout import infra_name, result_name
from bceval.review.cases import ReviewCase

TRANSCRIPT_SCHEMA_VERSION = 1


def hidden_paths(settings: Settings) -> dict[str, Path]:
    """What an agent must never reach: the answer key and everything bceval wrote from it."""
    hidden = {"the corpus": settings.corpus, "the output directory": settings.out}
    if settings.manifest is not None:
        hidden["the manifest"] = settings.manifest
    for number, path in enumerate(settings.hide, start=1):
        hidden[f"bceval's output ({number})"] = path
    return hidden


def agent_settings(settings: Settings) -> Any:
    from bceval.agents.process import AgentSettings

    if not settings.command:
        raise BcevalError("the command adapter needs --command (or BCEVAL_COMMAND), e.g. --command 'claude -p'")
    return AgentSettings(
        command=settings.command,
        model=settings.model,
        isolation=settings.isolation,
        sandbox=settings.sandbox,
        sandbox_allow=settings.sandbox_allow,
        epoch=settings.epoch,
        timeout=settings.timeout,
        retries=settings.retries,
        retry_wait=settings.retry_wait,
        cache_salt=settings.cache_salt,
    )


def make_adapter(settings: Settings, cases: list[ReviewCase]) -> Adapter:
    if settings.adapter == "oracle":
        from bceval.agents.oracle import OracleAdapter

        return OracleAdapter(cases)
    if settings.adapter == "baseline":
        from bceval.agents.baseline import BaselineAdapter

        return BaselineAdapter(settings.corpus)
    from bceval.agents.command import CommandAdapter

    return CommandAdapter(agent_settings(settings), settings.cache_dir, hidden_paths(settings))


class RunAnswers:
    """One run's answering in one process: its adapter (made once, on first use) and its progress count."""

    def __init__(self, settings: Settings, cases: list[ReviewCase]) -> None:
        self.settings = settings
        self.cases = cases
        self._adapter: Adapter | None = None
        self._lock = threading.Lock()
        self.done = 0
        self.failed = 0
        self.cached = 0

    def adapter(self) -> Adapter:
        with self._lock:
            if self._adapter is None:
                self._adapter = make_adapter(self.settings, self.cases)
                if hasattr(self._adapter, "start_version_probe"):  # a live agent: overlap it with the answers
                    self._adapter.start_version_probe()
            return self._adapter

    def answer(self, case: ReviewCase, note: dict[str, Any] | None = None) -> None:
        """Answer one case; `note` adds to its answer record (an experiment's `sharedFrom`)."""
        settings = self.settings
        adapter = self.adapter()
        outcome = adapter.answer(case_input(settings.prepare_dir, settings.corpus, case))
        described = adapter.describe()
        if note and settings.adapter == "command" and not outcome.cached:
            note = None  # the arm meant to share this answer has none (its agent failed): this arm paid for its own
        record = {**self.record(case, outcome, described), **(note or {})}
        write_outcome(settings.results_dir, case.modelId, outcome, described, record)
        with self._lock:
            self.done += 1
            self.failed += outcome.failure is not None
            self.cached += outcome.cached
            line = f"[{self.done}] {case.modelId} {status(outcome)}"
        if settings.adapter == "command":  # a live run is slow enough to want a line per case
            print(line, file=sys.stderr, flush=True)

    def record(self, case: ReviewCase, outcome: Answer, described: dict[str, Any]) -> dict[str, Any]:
        """The answer record kept beside the result: epoch, what the agent saw, what it cost, its transcript."""
        settings = self.settings
        transcript = None
        if outcome.transcript is not None:
            path = settings.transcripts_dir / f"{case.modelId}.json"
            document = {
                "schemaVersion": TRANSCRIPT_SCHEMA_VERSION,
                "run": settings.run_name,
                "answeredBy": described,
                **outcome.transcript,
                "usage": outcome.usage.as_record(),
            }
            write_atomic(path, dumps(document))
            transcript = f"transcripts/{path.name}"
        return {
            "epoch": settings.epoch,
            "viewSha256": outcome.view_digest,
            "cached": outcome.cached,
            "usage": outcome.usage.as_record(),
            "transcript": transcript,
        }


def status(outcome: Answer) -> str:
    if outcome.failure is not None:
        return f"infrastructure failure: {outcome.failure.kind} after {outcome.failure.attempts} attempt(s)"
    if outcome.cached:
        return "cached"
    seconds = outcome.usage.wallSeconds
    return f"answered in {seconds:.1f} s" if seconds is not None else "answered"


def write_outcome(directory: Path, model_id: str, outcome: Answer, described: dict[str, Any], record: dict) -> None:
    """The result file, or the infrastructure-failure record; never both, so a stale one cannot be scored."""
    result_path, infra_path = directory / result_name(model_id), directory / infra_name(model_id)
    if outcome.failure is not None:
        failure = outcome.failure.model_copy(update={"answeredBy": described, "record": record})
        write_atomic(infra_path, dumps(failure.model_dump()))
        result_path.unlink(missing_ok=True)
    else:
        assert outcome.entries is not None
        write_atomic(result_path, result_document(outcome.entries, described, record))
        infra_path.unlink(missing_ok=True)


_OWN_FILE = re.compile(r"^(result|infra)-case-[0-9a-f]{8}\.json$")


def _written_by_bceval(path: Path) -> bool:
    """Result and infra files this runner writes carry an `answeredBy` block; hand-written ones do not."""
    try:
        document = parse_json(path.read_bytes(), str(path))
    except (BcevalError, OSError):
        return False
    return isinstance(document, dict) and isinstance(document.get("answeredBy"), dict)


def prune_vanished(results_dir: Path, cases: list[ReviewCase]) -> None:
    """Remove per-case files this runner wrote for cases that no longer exist (any shard's are kept).

    Only files named exactly like ours and carrying our `answeredBy` block go; anything else stays.
    """
    if not results_dir.is_dir():
        return
    known = {result_name(c.modelId) for c in cases} | {infra_name(c.modelId) for c in cases}
    for path in sorted(results_dir.iterdir()):
        if path.name not in known and _OWN_FILE.match(path.name) and path.is_file() and _written_by_bceval(path):
            path.unlink()
