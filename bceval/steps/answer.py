"""Answer-stage actions: the run record, one answer per selected case (the run's agent, a result or an
infrastructure record, a transcript for live agents and one progress line), and the run's summary line. The
graph runs one answer per case (in parallel for `--jobs N`)."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bceval.agents.registry import Agent, ReviewSetup, make_agent
from bceval.config import Settings, agent_settings
from bceval.errors import BcevalError
from bceval.jsonio import dumps, parse_json, write_atomic
from bceval.layout import infra_files, infra_name, result_files, result_name
from bceval.review.cases import ReviewCase
from bceval.runs.selection import shard_cases
from bceval.runs.transcript import write_prompt, write_transcript
from bceval.steps.prepare import derive, recorded_cases, require_complete

if TYPE_CHECKING:
    from bceval.agents.base import Answer


def hidden_paths(settings: Settings) -> dict[str, Path]:
    """What an agent must never reach: the answer key and everything bceval wrote from it."""
    hidden = {"the corpus": settings.corpus, "the output directory": settings.out}
    if settings.manifest is not None:
        hidden["the manifest"] = settings.manifest
    for number, path in enumerate(settings.hide, start=1):
        hidden[f"bceval's output ({number})"] = path
    return hidden


def review_agent(settings: Settings, cases: list[ReviewCase]) -> Agent:
    """The run's agent (bceval.agents.registry.make_agent), answering review questions."""
    agent = agent_settings(settings) if settings.live else None
    setup = ReviewSetup(cases, settings.corpus, settings.cache_dir, hidden_paths(settings), agent)
    return make_agent(settings.adapter, setup)


def selected_cases(settings: Settings, cases: list[ReviewCase]) -> list[ReviewCase] | None:
    """The cases to answer: those `--case`, `-k` and `--failed-from` select; with none of them, the cases
    the run already covers (a partial run stays partial until more cases are selected); None for all."""
    from bceval.runs.record import selection_of
    from bceval.runs.selection import failed_case_ids, select_cases

    failed = failed_case_ids(settings.failed_from, settings.out) if settings.failed_from else None
    chosen = select_cases(cases, settings.cases, settings.patterns, failed)
    if chosen is None:
        recorded = selection_of(settings.run_dir)
        chosen = [case for case in cases if case.id in recorded] if recorded is not None else None
    return None if chosen is not None and len(chosen) == len(cases) else chosen


def cases_to_answer(settings: Settings, cases: list[ReviewCase]) -> list[ReviewCase]:
    """The selected cases of this machine's shard."""
    return shard_cases(selected_cases(settings, cases) or cases, settings.shard)


def preflight(settings: Settings) -> list[str]:
    """Everything that can be wrong with an answer command, checked before anything is written: the agent
    command and its gates, the selection, a clash with the run's earlier settings. Returns warnings."""
    from bceval.runs.record import new_record, read_record

    warnings = []
    derivation, _, _ = derive(settings)
    selected = selected_cases(settings, derivation.cases) if not derivation.problems else None
    new_record(run_facts(settings), [case.id for case in selected] if selected else None, read_record(settings.run_dir))
    if settings.live:
        adapter = review_agent(settings, derivation.cases)
        if settings.isolation == "view":
            from bceval.agents.view import check_view_folder

            check_view_folder()
        if adapter.model_is_label_only:
            warnings.append(
                f"bceval: warning: the model '{settings.model}' is only a label: the command has no {{model}}, so "
                "the agent uses its own default and the run is recorded as unpinned"
            )
    return warnings


def write_run_record(settings: Settings, selected: list[str] | None, replace: bool = False) -> None:
    """run.json of the run (its agent settings and the cases it covers); drops answers of vanished cases.

    `replace`: the run is an experiment arm's, whose file defines it: a changed arm is a new record.
    """
    from bceval.runs.record import new_record, read_record, write_record

    cases = recorded_cases(settings)
    record = new_record(run_facts(settings), selected, None if replace else read_record(settings.run_dir), len(cases))
    write_record(settings.run_dir, record)
    prune_vanished(settings.results_dir, cases)


def run_facts(settings: Settings) -> Any:
    """What the run's record says about it (bceval.runs.record.RunFacts)."""
    from bceval.agents.settings import pinned
    from bceval.runs.record import RunFacts

    return RunFacts(
        name=settings.run_name,
        directory=settings.run_dir,
        asked=settings.asked,
        pinned=pinned(settings.command or "", settings.model) if settings.live else True,
        shard=settings.shard,
        corpus=str(settings.corpus),
        manifest=str(settings.manifest) if settings.manifest is not None else None,
    )


def warn_preflight(settings: Settings) -> None:
    """Check an answer command before anything is written (see preflight) and print its warnings."""
    for warning in preflight(settings):
        print(warning, file=sys.stderr)


def answer_case(run_answers: Callable[[], Any], case: ReviewCase) -> None:
    """One answer through the run's `RunAnswers`, made on first use."""
    answers = run_answers()
    require_complete(answers.settings)
    answers.answer(case)


def report_answers(settings: Settings, run_answers: Callable[[], Any]) -> None:
    """One line: how the run stands, and how much of it this invocation answered."""
    answers = run_answers()
    results = result_files(settings.results_dir) if settings.results_dir.is_dir() and _any_result(settings) else []
    failures = infra_files(settings.results_dir) if settings.results_dir.is_dir() else []
    done, cached = answers.done, answers.cached
    now = f"{done - cached} answered now, {cached} from the cache" if done else "nothing new to answer"
    note = f"; {len(failures)} infrastructure failure(s), rerun to retry" if failures else ""
    print(
        f"Run {settings.run_name}: {len(results)} case(s) answered with the {settings.adapter} adapter ({now}){note}; "
        f"results in {settings.results_dir}"
    )


def _any_result(settings: Settings) -> bool:
    try:
        result_files(settings.results_dir)
    except BcevalError:
        return False
    return True


class RunAnswers:
    """One run's answering in one process: its adapter (made once, on first use) and its progress count."""

    def __init__(self, settings: Settings, cases: list[ReviewCase]) -> None:
        self.settings = settings
        self.cases = cases
        self._adapter: Agent | None = None
        self._lock = threading.Lock()
        self.done = 0
        self.failed = 0
        self.cached = 0

    def adapter(self) -> Agent:
        with self._lock:
            if self._adapter is None:
                self._adapter = review_agent(self.settings, self.cases)
                self._adapter.start()  # a live agent's version probe overlaps the answers
            return self._adapter

    def answer(self, case: ReviewCase, note: dict[str, Any] | None = None) -> None:
        """Answer one case; `note` adds to its answer record (an experiment's `sharedFrom`)."""
        settings = self.settings
        adapter = self.adapter()
        from bceval.agents.base import case_input

        outcome = adapter.answer(case_input(settings.prepare_dir, settings.corpus, case))
        described = adapter.describe()
        if note and settings.live and not outcome.cached:
            note = None  # the arm meant to share this answer has none (its agent failed): this arm paid for its own
        record = {**self.record(case, outcome, described), **(note or {})}
        write_outcome(settings.results_dir, case.modelId, outcome, described, record)
        with self._lock:
            self.done += 1
            self.failed += outcome.failure is not None
            self.cached += outcome.cached
            line = f"[{self.done}] {case.modelId} {status(outcome)}"
        if settings.live:  # a live run is slow enough to want a line per case
            print(line, file=sys.stderr, flush=True)

    def record(self, case: ReviewCase, outcome: Answer, described: dict[str, Any]) -> dict[str, Any]:
        """The answer record kept beside the result: epoch, what the agent saw, what it cost, its transcript."""
        settings = self.settings
        transcript = None
        if outcome.transcript is not None:
            transcript = write_transcript(
                settings.run_dir, case.modelId, settings.run_name, described, outcome.transcript, outcome.usage
            )
            for text in outcome.prompts:
                write_prompt(settings.run_dir, text)
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
    from bceval.agents.base import result_document  # pydantic's models: only when a case is answered

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
