"""The scoring stage's tasks: judge each result file, aggregate into score.json, record the scorecard and report
the verdict."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from doit import create_after
from doit.tools import config_changed

from bceval import __version__
from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.graph.doitlib import action, always
from bceval.graph.inputs import GraphInputs
from bceval.layout import infra_files, result_files
from bceval.runs.record import selection_of
from bceval.steps import publish, scoring
from bceval.steps.prepare import cases_file


def score_tasks(inputs: GraphInputs) -> dict[str, Callable[[], Any]]:
    """Task creators of the scoring stage (`summary` is defined last of the whole graph: see loader)."""
    settings, basics = inputs.settings, inputs.basics

    def after_answers(creator: Any) -> Any:
        """Result files to score are only known once the graph has answered (when it answers at all)."""
        return create_after(executed="answered")(creator) if settings.answers_in_graph else creator

    @after_answers
    def task_verdict() -> Iterator[dict]:
        """One task per result file: read it and judge each case it answers."""
        return verdict_tasks(settings)

    @after_answers
    def task_score_json() -> dict:
        """Aggregate the verdicts into out/runs/<run>/score.json (metrics, thresholds, every case)."""
        return score_json_task(settings, basics)

    def task_scorecard() -> dict:
        """out/runs/<run>/scorecard.json, .md and .html: the scored run's record (git state is read each time)."""
        return always(action(scoring.write_scorecard, settings), "score_json")

    def task_score() -> dict:
        """Print the verdict of out/runs/<run>/score.json; exit 1 when the gate fails (always runs; it is cheap)."""
        return always(action(scoring.report_score, settings), "scorecard")

    def task_publish() -> dict:
        """Add the scored run to the committed page (default evaluation/scorecard.md)."""
        return always(action(publish.publish_page, settings), "scorecard")

    def task_summary() -> dict:
        """The main job's report: the same verdict as `score`, but a failed gate does not fail the run."""
        return always(action(scoring.report_score, settings, False), "scorecard")

    return {
        "task_verdict": task_verdict,
        "task_score_json": task_score_json,
        "task_scorecard": task_scorecard,
        "task_score": task_score,
        "task_publish": task_publish,
        "task_summary": task_summary,
    }


def result_paths(settings: Settings) -> list[Path]:
    try:
        return result_files(settings.results_dir)
    except BcevalError:
        return []  # score_json reports the missing results in one line


def verdict_tasks(settings: Settings) -> Iterator[dict]:
    for path in result_paths(settings):
        yield {
            "name": path.name,
            "actions": [action(scoring.judge_result_file, settings, path)],
            "file_dep": [str(path), str(cases_file(settings))],
            "targets": [str(scoring.reading_file(settings, path))],
            "uptodate": [config_changed({"bceval": __version__})],
        }


def score_json_task(settings: Settings, basics: dict[str, Any]) -> dict:
    if settings.results_path is not None:  # one combined results document
        return {
            "actions": [action(scoring.score_single_file, settings)],
            "file_dep": [str(cases_file(settings))]
            + ([str(settings.results_path)] if settings.results_path.is_file() else []),
            "targets": [str(settings.score_file)],
            "task_dep": ["prepare"],
            "uptodate": [config_changed({**basics, "results_path": str(settings.results_path)})],
        }
    results = result_paths(settings)
    infra = infra_files(settings.results_dir) if results else []
    selected = sorted(selection_of(settings.run_dir) or []) if settings.results is None else []
    recorded = {
        **basics,
        "results": [p.name for p in results],
        "infra": [p.name for p in infra],
        "selected": selected,
        **({"requireRead": True} if settings.require_read else {}),
    }
    return {
        "actions": [action(scoring.write_score, settings)],
        "file_dep": [str(cases_file(settings))]
        + [str(scoring.reading_file(settings, path)) for path in results]
        + [str(path) for path in infra],
        "targets": [str(settings.score_file)],
        "task_dep": ["prepare", "verdict"],
        "uptodate": [config_changed(recorded)],
    }
