"""Answer-stage actions: the run record, one answer per selected case (the run's agent, a result or an
infrastructure record, a transcript for live agents and one progress line), and the run's summary line."""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bceval.agents.base import Answer, case_input, result_document
from bceval.agents.registry import Agent, ReviewSetup, make_agent
from bceval.agents.settings import pinned
from bceval.agents.view import check_view_folder
from bceval.config import Settings, agent_settings
from bceval.corpus.layers import Listing, scan_corpus
from bceval.errors import BcevalError, EvaluationFailed
from bceval.escape import console
from bceval.evaluators.registry import DEFAULT, evaluator
from bceval.jsonio import dumps, parse_json, read_regular_bytes, write_atomic
from bceval.layout import infra_name, result_name, run_entries
from bceval.models import InfraFailure
from bceval.runs.record import (
    WRITTEN,
    RunFacts,
    fold_written,
    new_record,
    note_written,
    read_record,
    selection_of,
    sha256_of,
    write_prompt,
    write_record,
    write_transcript,
)
from bceval.runs.selection import failed_case_ids, select_cases
from bceval.steps.budget import Budget, unpriced_warning
from bceval.steps.prepare import require_complete
from bceval.usage import Usage

if TYPE_CHECKING:  # annotations only: the frame reaches the review evaluator through its plugin
    from bceval.evaluators.review.cases import ReviewCase


def hidden_paths(settings: Settings) -> dict[str, Path]:
    """What an agent must never reach: the answer key and everything bceval wrote from it."""
    hidden = {"the corpus": settings.corpus, "the output directory": settings.out}
    if settings.manifest is not None:
        hidden["the manifest"] = settings.manifest
    for number, path in enumerate(settings.hide, start=1):
        hidden[f"bceval's output ({number})"] = path
    return hidden


def review_agent(settings: Settings, cases: list[ReviewCase]) -> Agent:
    agent = agent_settings(settings) if settings.live else None
    setup = ReviewSetup(cases, settings.corpus, settings.cache_dir, hidden_paths(settings), agent)
    return make_agent(settings.adapter, setup)


def selected_cases(settings: Settings, cases: list[ReviewCase]) -> list[ReviewCase] | None:
    """The cases to answer: those `--case`, `-k` and `--failed-from` select; with none of them, the cases
    the run already covers (a partial run stays partial until more cases are selected); None for all."""
    failed = failed_case_ids(settings.failed_from, settings.out) if settings.failed_from else None
    chosen = select_cases(cases, settings.cases, settings.patterns, failed)
    if chosen is None:
        recorded = selection_of(settings.run_dir)
        chosen = [case for case in cases if case.id in recorded] if recorded is not None else None
    return None if chosen is not None and len(chosen) == len(cases) else chosen


def warn_preflight(settings: Settings, listing: Listing | None = None) -> None:
    """Everything that can be wrong with an answer command, checked before anything is written: the agent
    command and its gates, the selection, a clash with the run's earlier settings. Warnings go to stderr."""
    listing = listing or scan_corpus(settings.corpus)
    derivation, _ = evaluator(DEFAULT).derive(settings, listing)
    selected = selected_cases(settings, derivation.cases) if not derivation.problems else None
    # the agent first: a command that is not there is the real error, not the clash its other settings make
    adapter = review_agent(settings, derivation.cases) if settings.live else None
    new_record(run_facts(settings), [case.id for case in selected] if selected else None, read_record(settings.run_dir))
    if adapter is None:
        return
    if settings.isolation == "view":
        check_view_folder()
    unenforceable = settings.max_cost is not None and unpriced_warning(
        f"--max-cost {settings.max_cost:g}", settings.prices, [settings.model]
    )
    if unenforceable:
        print(unenforceable, file=sys.stderr)
    if adapter.model_is_label_only:
        print(
            f"bceval: warning: the model '{settings.model}' is only a label: the command has no {{model}}, so "
            "the agent uses its own default and the run is recorded as unpinned",
            file=sys.stderr,
        )


def write_run_record(settings: Settings, selected: list[str] | None, replace: bool = False) -> None:
    """run.json of the run (its agent settings and the cases it covers); drops answers of vanished cases.

    `replace`: the run is an experiment arm's, whose file defines it: a changed arm is a new record.
    """
    cases, _ = evaluator(DEFAULT).recorded_plan(settings)
    fold_written(settings.run_dir)  # what an interrupted answering noted: the record starts from all of it
    existing = read_record(settings.run_dir)
    record = new_record(run_facts(settings), selected, None if replace else existing, len(cases))
    if existing is not None and isinstance(existing.get(WRITTEN), dict):
        record[WRITTEN] = existing[WRITTEN]  # what bceval wrote stays known, even when an arm's record is new
    elif settings.results is None:  # a new run, or one from before digests were kept: what it wrote, as it is now
        record[WRITTEN] = {path.name: sha256_of(read_regular_bytes(path)) for path in _own_files(settings.results_dir)}
    write_record(settings.run_dir, record)
    removed = prune_vanished(settings.results_dir, cases)
    if removed:
        note_written(settings.run_dir, dict.fromkeys(removed))


def run_facts(settings: Settings) -> RunFacts:
    own_loop = settings.endpoint is not None  # bceval's own agent puts the model in every request
    return RunFacts(
        name=settings.run_name,
        directory=settings.run_dir,
        asked=settings.asked,
        pinned=(own_loop or pinned(settings.command or "", settings.model)) if settings.live else True,
        shard=settings.shard,
        corpus=str(settings.corpus),
        manifest=str(settings.manifest) if settings.manifest is not None else None,
    )


def answer_case(run_answers: Callable[[], Any], case: ReviewCase, note: dict[str, Any] | None = None) -> None:
    """One answer through the run's `RunAnswers`, made on first use; `note` adds to its answer record."""
    answers = run_answers()
    require_complete(answers.settings)
    answers.answer(case, note)


def report_answers(settings: Settings, run_answers: Callable[[], Any]) -> None:
    """One line: how the run stands, and how much of it this invocation answered; exit 1 when the run has no
    answer at all because every case it asked failed."""
    answers = run_answers()
    fold_written(settings.run_dir)  # the answering is over: run.json now vouches for every file it wrote
    try:
        results, failures = run_entries(settings.results_dir)
    except BcevalError:  # no results folder: nothing answered yet
        results, failures = [], []
    done, cached, failed = answers.done - answers.not_started, answers.cached, answers.failed
    if done:
        now = f"{done - cached - failed} answered now, {cached} from the cache"
        now += f", {failed} failed" if failed else ""
    else:
        now = "nothing new to answer"
    budget = [path for path in failures if _document(path).get("kind") == "budget"]
    failures = [path for path in failures if path not in budget]
    note = f"; {len(failures)} infrastructure failure(s), rerun to retry" if failures else ""
    if budget:
        note += f"; {len(budget)} not started (budget), rerun with a larger --max-cost to answer them"
    line = (
        f"Run {settings.run_name}: {len(results)} case(s) answered with the {settings.adapter} adapter ({now}){note}; "
        f"results in {settings.results_dir}"
    )
    if not results and failures:
        raise EvaluationFailed(line, [f"no case was answered: every one failed (see {settings.results_dir})"], False)
    print(line)


def _document(path: Path) -> dict[str, Any]:
    """A results file's JSON object; {} when it cannot be read or is no object."""
    try:
        document = parse_json(read_regular_bytes(path), str(path))
    except (BcevalError, OSError):
        return {}
    return document if isinstance(document, dict) else {}


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
CHECK = {  # what to look at when every answer fails the same way, by the kind of failure
    "timeout": "that the agent reaches its model and answers within --timeout",
    "crash": "that the command answers one prompt by hand (`bceval prompt CASE | COMMAND`)",
    "spawn-error": "that the command starts",
    "agent-error": "the agent's model URL, key and network (under a sandbox: --sandbox-network and the grants)",
    "invalid-output": "the command's output format (the answer object, or a Claude Code or Codex envelope)",
    "too-large": "what the command prints",
}


class Breaker:
    """Stops an invocation that cannot succeed: `limit` answers in a row (the first ones, or any later) failed with
    the same infrastructure cause. The cause is the failure's kind and detail with its numbers left out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cause: str | None = None
        self._count = 0

    def note(self, settings: Settings, failure: InfraFailure | None) -> None:
        if not settings.live or settings.no_breaker:
            return
        cause = None if failure is None else f"{failure.kind}: {_NUMBER.sub('N', failure.detail)}"
        with self._lock:
            self._count = self._count + 1 if cause is not None and cause == self._cause else int(cause is not None)
            self._cause = cause
            tripped = self._count == settings.breaker
        if tripped and failure is not None:
            line = (
                f"bceval: stopped after {settings.breaker} answers in a row failed the same way ({failure.kind}: "
                f"{console(failure.detail)}); check {CHECK.get(failure.kind, 'the agent')}; what was answered is kept "
                f"in {settings.results_dir} (--no-breaker answers every case)"
            )
            raise EvaluationFailed(line, [], False)


class Progress:
    """The progress lines of one invocation (a run, or every arm and epoch of an experiment):
    `[12/32] arm treatment, epoch 2, performance-bad (case-0ad1f118): answered in 3.1 s; 37 s so far, about 1 min
    left`. `total` is what the graph planned to answer; the time left is the time so far per answer, times the
    answers still to come (so side-by-side answers are accounted for)."""

    def __init__(self, total: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self._clock = clock
        self._started: float | None = None
        self._done = 0
        self._lock = threading.Lock()
        self.breaker = Breaker()  # one streak of failures over every run of the invocation

    def start(self) -> None:
        with self._lock:
            if self._started is None:
                self._started = self._clock()

    def line(self, where: str, status: str) -> str:
        with self._lock:
            now = self._clock()
            started = self._started if self._started is not None else now
            self._done += 1
            total = max(self.total, self._done)
            elapsed = now - started
            left = elapsed / self._done * (total - self._done)
        end = "done" if self._done == total else f"about {_duration(left)} left"
        return f"[{self._done}/{total}] {where}: {status}; {_duration(elapsed)} so far, {end}"


class RunAnswers:
    """One run's answering in one process: its adapter (made once, on first use) and its progress count.
    `where` names the run in progress lines (an experiment's arm and epoch); `progress` is shared by every run of
    one invocation, and so is `budget` (an experiment's one budget over all of its runs; else the run's own)."""

    def __init__(
        self,
        settings: Settings,
        cases: list[ReviewCase],
        progress: Progress | None = None,
        where: str = "",
        budget: Budget | None = None,
    ) -> None:
        self.settings = settings
        self.cases = cases
        self._adapter: Agent | None = None
        self._lock = threading.Lock()
        self.done = self.failed = self.cached = self.not_started = 0
        self.progress = progress or Progress()
        self.where = where
        self.budget = budget
        if budget is None and settings.max_cost is not None:  # what its earlier answers cost counts too
            self.budget = Budget(settings.max_cost, recorded_cost(settings.results_dir))
        if not settings.live:
            self.budget = None  # a free agent costs nothing: no budget ever stops it

    def adapter(self) -> Agent:
        with self._lock:
            if self._adapter is None:
                self._adapter = review_agent(self.settings, self.cases)
            return self._adapter

    def answer(self, case: ReviewCase, note: dict[str, Any] | None = None) -> None:
        """Answer one case; `note` adds to its answer record (an experiment's `sharedFrom`). Once the known cost
        has reached the budget, a case the answer cache does not hold is not started (see skip); an answer from
        the cache costs nothing, so it is never stopped nor charged again."""
        settings = self.settings
        adapter = self.adapter()
        self.progress.start()
        question = case_input(settings.prepare_dir, settings.corpus, case)
        paid = self.budget is not None and not adapter.in_cache(question)
        if paid and self.budget.reached():
            self.skip(case, adapter.describe())
            return
        outcome = adapter.answer(question)
        if paid and not outcome.cached:
            self.budget.spend(outcome.usage.costUsd, f"{settings.run_name}/{case.modelId}")
        described = adapter.describe()
        if note and settings.live and not outcome.cached:
            note = None  # the arm meant to share this answer has none (its agent failed): this arm paid for its own
        record = {**self.record(case, outcome, described), **(note or {})}
        if outcome.failure is not None:
            self.keep(case.modelId, outcome.failure.model_copy(update={"answeredBy": described, "record": record}))
        else:
            assert outcome.entries is not None
            self.keep(case.modelId, result_document(outcome.entries, described, record).encode("utf-8"))
        with self._lock:
            self.failed += outcome.failure is not None
            self.cached += outcome.cached
            first_failure = outcome.failure is not None and self.failed == 1
        self.count(case, status(outcome))
        if first_failure:  # explained once, at once, in bceval's words (the agent's own text escaped)
            failure = outcome.failure
            print(
                f"bceval: {case.modelId} failed ({failure.kind}): {console(failure.detail)}; "
                f"every attempt is in {settings.results_dir / infra_name(case.modelId)}",
                file=sys.stderr,
                flush=True,
            )
        self.progress.breaker.note(settings, outcome.failure)

    def skip(self, case: ReviewCase, described: dict[str, Any]) -> None:
        """Record a case the budget never started: no result, an infra file of kind "budget" (never a model miss)."""
        assert self.budget is not None
        detail = f"not started: {self.budget.describe()}"
        self.keep(
            case.modelId, InfraFailure(id=case.modelId, kind="budget", detail=detail, attempts=0, answeredBy=described)
        )
        with self._lock:
            self.not_started += 1
        self.count(case, "not started (budget)")

    def keep(self, model_id: str, outcome: InfraFailure | bytes) -> None:
        """The result file (its bytes), or the infrastructure-failure record; never both, so a stale one cannot be
        scored. run.json notes what a run's own results folder holds now (score checks these bytes)."""
        results = self.settings.results_dir
        kept, gone = (infra_name, result_name) if isinstance(outcome, InfraFailure) else (result_name, infra_name)
        data = dumps(outcome.model_dump()).encode("utf-8") if isinstance(outcome, InfraFailure) else outcome
        write_atomic(results / kept(model_id), data)
        (results / gone(model_id)).unlink(missing_ok=True)
        if self.settings.results is None:
            note_written(self.settings.run_dir, {kept(model_id): sha256_of(data), gone(model_id): None})

    def count(self, case: ReviewCase, said: str) -> None:
        """One more case done, and its progress line (a live run is slow enough to want a line per case)."""
        with self._lock:
            self.done += 1
        line = self.progress.line(f"{self.where}{case.id} ({case.modelId})", said)
        if self.settings.live:
            print(line, file=sys.stderr, flush=True)

    def record(self, case: ReviewCase, outcome: Answer, described: dict[str, Any]) -> dict[str, Any]:
        """The answer record kept beside the result: epoch, what the agent saw, what it cost, its transcript (and
        the read evidence and waits of an agent whose loop bceval runs)."""
        settings = self.settings
        transcript = None
        if outcome.transcript is not None and "readEvidence" in outcome.transcript:
            evidence = {**outcome.transcript["readEvidence"], "runId": settings.run_name}
            outcome.transcript = {**outcome.transcript, "readEvidence": evidence}
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
            **own_evidence(outcome.transcript),
        }


def recorded_cost(results_dir: Path) -> float:
    """The known cost of the answers a run already has and paid for (results and failures written by bceval answer;
    an answer from another run's cache cost this one nothing)."""
    total = 0.0
    for path in _own_files(results_dir):
        record = _document(path).get("record")
        if isinstance(record, dict) and record.get("cached") is not True:  # a cached answer: another run paid for it
            total += Usage.from_record(record.get("usage")).costUsd or 0.0
    return total


def own_evidence(transcript: dict[str, Any] | None) -> dict[str, Any]:
    """What bceval itself saw of an answer whose tool loop it ran (the api agent): the read evidence, its candidate
    articles and the answer's retries and waits; for a command agent whose stream shows its Read calls, that trace,
    labelled as the agent's own (`readBy: "agent-trace"`), and the retries of its model calls it reported."""
    transcript = transcript or {}
    if transcript.get("readBy") == "agent-trace":  # the agent's own account of its reads
        keys: tuple[str, ...] = ("readBy", "agentTrace", "candidates")
    else:
        keys = ("readBy", "readEvidence", "candidates", "waits") if "readEvidence" in transcript else ()
    own = {key: transcript[key] for key in keys if key in transcript}
    retried = [
        a["agentRetries"] for a in transcript.get("attempts") or [] if isinstance(a, dict) and "agentRetries" in a
    ]
    if retried:  # the agent's own retries of its model calls, over every attempt
        own["agentRetries"] = {
            "count": sum(item["count"] for item in retried),
            "waitSeconds": round(sum(item["waitSeconds"] for item in retried), 3),
        }
    return own


def status(outcome: Answer) -> str:
    if outcome.failure is not None:
        return f"infrastructure failure: {outcome.failure.kind} after {outcome.failure.attempts} attempt(s)"
    if outcome.cached:
        return "cached"
    seconds = outcome.usage.wallSeconds
    return f"answered in {seconds:.1f} s" if seconds is not None else "answered"


_OWN_FILE = re.compile(r"^(result|infra)-case-[0-9a-f]{8}\.json$")


def _own_files(results_dir: Path) -> list[Path]:
    """The result and infra files this runner wrote: named exactly like ours and carrying the `answeredBy` block
    that hand-written ones lack."""
    named = (path for path in sorted(results_dir.glob("*-case-*.json")) if _OWN_FILE.match(path.name))
    return [path for path in named if path.is_file() and isinstance(_document(path).get("answeredBy"), dict)]


def prune_vanished(results_dir: Path, cases: list[ReviewCase]) -> list[str]:
    """Remove per-case files this runner wrote for cases that no longer exist (any shard's are kept); returns
    their names (see _own_files)."""
    known = {result_name(c.modelId) for c in cases} | {infra_name(c.modelId) for c in cases}
    removed = [path for path in _own_files(results_dir) if path.name not in known]
    for path in removed:
        path.unlink()
    return [path.name for path in removed]
