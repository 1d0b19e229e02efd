"""Answer-stage actions: the run record, one answer per selected case, and the run's summary line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.layout import infra_files, result_files
from bceval.review.cases import ReviewCase
from bceval.runs.selection import shard_cases
from bceval.steps.prepare import derive, recorded_cases, require_complete


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
    from bceval.agents.run import make_adapter
    from bceval.runs.record import new_record, read_record

    warnings = []
    derivation, _, _ = derive(settings)
    selected = selected_cases(settings, derivation.cases) if not derivation.problems else None
    new_record(run_facts(settings), [case.id for case in selected] if selected else None, read_record(settings.run_dir))
    if settings.adapter == "command":
        adapter = make_adapter(settings, derivation.cases)
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
    from bceval.agents.run import prune_vanished
    from bceval.runs.record import new_record, read_record, write_record

    cases = recorded_cases(settings)
    record = new_record(run_facts(settings), selected, None if replace else read_record(settings.run_dir), len(cases))
    write_record(settings.run_dir, record)
    prune_vanished(settings.results_dir, cases)


def run_facts(settings: Settings) -> Any:
    """What the run's record says about it (bceval.runs.record.RunFacts)."""
    from bceval.agents.process import pinned
    from bceval.runs.identity import asking
    from bceval.runs.record import RunFacts

    live = settings.adapter == "command"
    return RunFacts(
        name=settings.run_name,
        directory=settings.run_dir,
        asked=asking(settings.adapter, settings),
        pinned=pinned(settings.command or "", settings.model) if live else True,
        shard=settings.shard,
        corpus=str(settings.corpus),
        manifest=str(settings.manifest) if settings.manifest is not None else None,
    )


def answer_case(run_answers: Callable[[], Any], case: ReviewCase) -> None:
    """One answer through the run's `RunAnswers` (see bceval.agents.run), made on first use."""
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
