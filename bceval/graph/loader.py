"""The build graph: DOIT_CONFIG and task generators only. Logic lives in the core modules.

Generators run on every doit command, so they only walk the corpus directory and read the small
manifest; articles, samples and leaves are read inside actions.
"""

from __future__ import annotations

import hashlib
import os
import sys
from functools import cache
from pathlib import Path
from typing import Any

from doit import create_after, get_initial_workdir
from doit.exceptions import InvalidDodoFile, InvalidTask
from doit.tools import config_changed

from bceval import __version__
from bceval.agents.registry import capabilities
from bceval.agents.view import view_inputs
from bceval.clock import generated_at
from bceval.config import Settings, check_inputs, context_line, load_settings
from bceval.corpus.layers import Listing, discover_leaves, scan_corpus
from bceval.errors import BcevalError
from bceval.graph.doitlib import BcevalReporter, action, once, uncaptured
from bceval.graph.experiment import experiment_tasks
from bceval.graph.guidance import guidance_tasks
from bceval.layout import infra_files, result_files, result_name
from bceval.outdir import ensure_output_dir, repair_doit_state
from bceval.review.cases import Derivation, ReviewCase
from bceval.review.prepdir import claim
from bceval.review.requests import KNOWLEDGE_INDEX, MARKER_NAME, REVIEW_REQUEST
from bceval.review.rows import FORMAT as ROWS_FORMAT
from bceval.runs.record import identity as run_record_identity
from bceval.runs.record import selection_of
from bceval.steps import answer as answering
from bceval.steps import health, publish, scoring
from bceval.steps import prepare as steps


def file_signature(root: str, rels: list[str]) -> str:
    """Digest of each file's name, size and modification time: any edit, addition or removal changes it."""
    parts = []
    for rel in rels:
        try:
            info = os.stat(root + "/" + rel)
            parts.append(f"{rel}\0{info.st_size}\0{info.st_mtime_ns}")
        except OSError:
            parts.append(f"{rel}\0missing")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def build_namespace(settings: Settings) -> dict[str, Any]:
    """DOIT_CONFIG and the task generators for one set of settings (the CLI and `doit` share it)."""

    @cache
    def listing() -> Listing:
        try:
            check_inputs(settings)
            return scan_corpus(settings.corpus)
        except BcevalError as exc:
            raise InvalidTask(str(exc)) from None

    @cache
    def plan() -> Derivation | None:
        """Cases as the graph expects them; None when validation will fail (its task reports why)."""
        return steps.planned_cases(settings, listing())

    @cache
    def groups() -> dict[str, list[str]]:
        return steps.knowledge_groups(listing())

    @cache
    def samples() -> dict[str, list[str]]:
        return steps.sample_groups(listing())

    @cache
    def signatures() -> dict[str, str]:
        """A stat signature per knowledge group: one stat per article and sample, the only per-file cost of a
        no-op."""
        return {group: file_signature(corpus_dir, rels + samples().get(group, [])) for group, rels in groups().items()}

    @cache
    def domains() -> list[str]:
        return [leaf.domain for leaf in discover_leaves(listing())]

    prep = settings.prepare_dir
    corpus_dir = str(settings.corpus)
    basics = {"bceval": __version__, "corpus": str(settings.corpus), "out": str(settings.out)}
    run_identity = {"bceval": __version__, "run": settings.run_name, **run_record_identity(settings)}

    @cache
    def selection() -> tuple[list[ReviewCase] | None, list[ReviewCase]]:
        """(the selected cases or None for all, the cases this shard answers); empty when validation fails."""
        derivation = plan()
        if derivation is None:
            return None, []
        try:
            return answering.selected_cases(settings, derivation.cases), answering.cases_to_answer(
                settings, derivation.cases
            )
        except BcevalError as exc:
            raise InvalidTask(str(exc)) from None

    @once
    def run_answers() -> Any:
        from bceval.steps.answer import RunAnswers

        derivation = plan()
        return RunAnswers(settings, derivation.cases if derivation else [])

    def after_answers(creator: Any) -> Any:
        """Result files to score are only known once the graph has answered (when it answers at all)."""
        return create_after(executed="answered")(creator) if settings.answers_in_graph else creator

    def task_cases() -> dict:
        """Validate the manifest and corpus conventions; record the derived cases."""
        return {
            "actions": [action(steps.write_cases, settings)],
            "file_dep": [str(settings.manifest)] if settings.manifest is not None else [],
            "targets": [str(steps.cases_file(settings))]
            + [str(steps.domain_cases_file(settings, d)) for d in domains()],
            "uptodate": [config_changed({**basics, "listing": listing().digest, "manifest": str(settings.manifest)})],
            "verbosity": 1,
        }

    def task_validate() -> dict:
        """Check the manifest and corpus and print the verdict (always runs; it is cheap)."""
        loose = [rels for group, rels in samples().items() if group not in groups()]  # samples without articles
        return {
            "actions": [action(steps.report_validation, settings, loose)],
            "task_dep": ["cases", "rows"],
            "uptodate": [False],
        }

    def task_prepare_dir() -> dict:
        """Claim the prepare directory with its marker (refuses a foreign non-empty directory)."""
        return {
            "actions": [action(claim, settings.prepare_dir)],
            "targets": [str(prep / MARKER_NAME)],
            "task_dep": ["cases"],
            "uptodate": [config_changed(basics)],
        }

    def task_rows() -> Any:
        """Knowledge-index rows, one task per knowledge folder (see steps.article_group)."""
        for group, rels in groups().items():
            yield {
                "name": group,
                "actions": [action(steps.write_rows, settings, group, rels, samples().get(group, []))],
                "targets": [str(steps.rows_file(settings, group))],
                # A stat signature of the folder's articles instead of one file_dep each: at 25,000
                # articles doit's per-dependency bookkeeping cost more than the stats themselves.
                "uptodate": [
                    config_changed({"bceval": __version__, "format": ROWS_FORMAT, "files": signatures()[group]})
                ],
            }

    def task_index() -> dict:
        """knowledge-index.json plus each leaf domain's candidate rows."""
        # The rows files name their articles, so they and the group names cover every article added,
        # removed or renamed.
        return {
            "actions": [action(steps.write_index, settings, list(groups()), domains())],
            "file_dep": [str(steps.rows_file(settings, group)) for group in groups()],
            "targets": [str(prep / KNOWLEDGE_INDEX)]
            + [str(steps.domain_articles_file(settings, d)) for d in domains()],
            "task_dep": ["prepare_dir"],
            "uptodate": [
                config_changed({**basics, "groups": list(groups()), "domains": domains(), "at": generated_at()})
            ],
        }

    def task_domain() -> Any:
        """Per leaf domain: index-, request- and request-case- files and the neutral case files."""
        derivation = plan()
        for domain in domains():
            cases = derivation.cases_of(domain) if derivation else []
            leaf = next((lf for lf in derivation.leaves if lf.domain == domain), None) if derivation else None
            yield {
                "name": domain,
                "actions": [action(steps.write_domain, settings, domain)],
                "file_dep": [
                    str(steps.domain_cases_file(settings, domain)),
                    str(steps.domain_articles_file(settings, domain)),
                ]
                + ([str(settings.corpus / leaf.path)] if leaf else [])
                + [str(settings.corpus / case.input) for case in cases],
                "targets": [str(prep / f"index-{domain}.json"), str(prep / f"request-{domain}.json")]
                + [str(prep / f"{case.modelId}.al") for case in cases]
                + [str(prep / f"request-{case.modelId}.json") for case in cases],
                "task_dep": ["prepare_dir"],
                "uptodate": [config_changed(basics)],
            }

    def task_review_request() -> dict:
        """review-request.json: every case in one all-domains request."""
        return {
            "actions": [action(steps.write_review_request, settings)],
            "file_dep": [str(steps.cases_file(settings))],
            "targets": [str(prep / REVIEW_REQUEST)],
            "task_dep": ["prepare_dir"],
            "uptodate": [config_changed(basics)],
        }

    def task_prepare() -> dict:
        """Validate, then write the neutral request directory (out/review/ by default)."""
        derivation = plan()
        model_ids = [case.modelId for case in derivation.cases] if derivation else []
        return {
            "actions": [action(steps.finish_prepare, settings, list(groups()))],
            "task_dep": ["cases", "index", "domain", "review_request"],
            "uptodate": [
                config_changed({**basics, "planned": derivation is not None}),
                lambda: steps.nothing_to_prune(settings, list(groups()), domains(), model_ids),
                lambda: not steps.incomplete_marker(settings).exists(),
            ],
        }

    def task_run_record() -> dict:
        """out/runs/<run>/run.json: the run's agent settings and the cases it covers."""
        selected, _ = selection()
        ids = [case.id for case in selected] if selected is not None else None
        record = settings.run_dir / "run.json"
        return {
            "actions": [action(answering.write_run_record, settings, ids)],
            "task_dep": ["prepare"],
            "uptodate": [
                config_changed({**run_identity, "selection": ids, "shard": settings.shard}),
                record.is_file,
            ],
        }

    @create_after(executed="prepare")
    def task_answer() -> Any:
        """One answer per selected case: up to date while every byte its agent could see (request, case file,
        leaf, candidate articles) and the run's agent settings are unchanged."""
        _, chosen = selection()
        for case in chosen:
            try:
                _, inputs = view_inputs(prep, settings.corpus, case.modelId)
            except BcevalError:
                inputs = []  # not prepared: the action says so in one line
            target = settings.results_dir / result_name(case.modelId)
            yield {
                "name": f"{settings.run_name}/{case.modelId}",
                "actions": [action(answering.answer_case, run_answers, case)],
                "file_dep": [str(path) for path in inputs]
                + ([str(steps.cases_file(settings))] if capabilities(settings.adapter).knows_answers else []),
                "targets": [str(target)],
                "task_dep": ["run_record"],
                "uptodate": [config_changed(run_identity), target.is_file],
            }

    def task_answered() -> dict:
        """One line on how the run stands (always runs; it is cheap)."""
        return {
            "actions": [action(answering.report_answers, settings, run_answers)],
            "task_dep": ["answer"],
            "uptodate": [False],
        }

    def result_paths() -> list[Path]:
        try:
            return result_files(settings.results_dir)
        except BcevalError:
            return []  # score_json reports the missing results in one line

    @after_answers
    def task_verdict() -> Any:
        """One task per result file: read it and judge each case it answers."""
        for path in result_paths():
            yield {
                "name": path.name,
                "actions": [action(scoring.judge_result_file, settings, path)],
                "file_dep": [str(path), str(steps.cases_file(settings))],
                "targets": [str(scoring.reading_file(settings, path))],
                "uptodate": [config_changed({"bceval": __version__})],
            }

    @after_answers
    def task_score_json() -> dict:
        """Aggregate the verdicts into out/score.json (metrics, thresholds, every case)."""
        if settings.results_path is not None:
            return {
                "actions": [action(scoring.score_single_file, settings)],
                "file_dep": [str(steps.cases_file(settings))]
                + ([str(settings.results_path)] if settings.results_path.is_file() else []),
                "targets": [str(settings.score_file)],
                "task_dep": ["prepare"],
                "uptodate": [config_changed({**basics, "results_path": str(settings.results_path)})],
            }
        results = result_paths()
        infra = infra_files(settings.results_dir) if results else []
        selected = sorted(selection_of(settings.run_dir) or []) if settings.results is None else []
        return {
            "actions": [action(scoring.write_score, settings)],
            "file_dep": [str(steps.cases_file(settings))]
            + [str(scoring.reading_file(settings, path)) for path in results]
            + [str(path) for path in infra],
            "targets": [str(settings.score_file)],
            "task_dep": ["prepare", "verdict"],
            "uptodate": [
                config_changed(
                    {
                        **basics,
                        "results": [p.name for p in results],
                        "infra": [p.name for p in infra],
                        "selected": selected,
                    }
                )
            ],
        }

    def task_scorecard() -> dict:
        """out/scorecard.json, .md and .html: the record of the scored run (git state is read each time)."""
        return {
            "actions": [action(scoring.write_scorecard, settings)],
            "task_dep": ["score_json"],
            "uptodate": [False],
        }

    def task_score() -> dict:
        """Print the verdict of out/score.json; exit 1 when the gate fails (always runs; it is cheap)."""
        return {"actions": [action(scoring.report_score, settings)], "task_dep": ["scorecard"], "uptodate": [False]}

    def task_publish() -> dict:
        """Add the scored run to the committed page (default evaluation/scorecard.md)."""
        return {"actions": [action(publish.publish_page, settings)], "task_dep": ["scorecard"], "uptodate": [False]}

    def task_summary() -> dict:
        """The main job's report: the same verdict as `score`, but a failed gate does not fail the run."""
        return {
            "actions": [action(scoring.report_score, settings, False)],
            "task_dep": ["scorecard"],
            "uptodate": [False],
        }

    def task_health() -> dict:
        """out/health.json and .md: coverage, ranking margins and the answer-leak audit."""
        derivation = plan()
        model_ids = [case.modelId for case in derivation.cases] if derivation else []
        changed = settings.changed_paths
        return {
            "actions": [action(health.write_health, settings, list(groups()))],
            "file_dep": [str(steps.cases_file(settings))]
            + [str(steps.rows_file(settings, group)) for group in groups()]
            + [str(steps.domain_articles_file(settings, domain)) for domain in domains()]
            + [str(prep / f"{mid}.al") for mid in model_ids]
            + [str(prep / f"request-{mid}.json") for mid in model_ids]
            + ([str(changed)] if changed is not None and changed.is_file() else []),
            "targets": [str(settings.out / "health.json"), str(settings.out / "health.md")],
            "task_dep": ["prepare"],
            "uptodate": [
                config_changed(
                    {
                        **basics,
                        "listing": listing().digest,
                        "articles": signatures(),  # article bodies: what the agent views hold
                        "margin": settings.health_margin,
                        "changed": str(changed) if changed else None,
                    }
                )
            ],
        }

    def task_bench() -> dict:
        """`bceval bench` through doit: sizes from BCEVAL_BENCH_SIZES, repeats from BCEVAL_BENCH_REPEAT."""
        sizes = os.environ.get("BCEVAL_BENCH_SIZES", "250,2500,25000")
        repeat = os.environ.get("BCEVAL_BENCH_REPEAT", "3")
        from bceval.bench import bench_action

        return {
            "actions": [
                action(
                    bench_action,
                    sizes,
                    repeat,
                    os.environ.get("BCEVAL_BENCH_LIVE", "256,16,0.5"),
                    os.environ.get("BCEVAL_BENCH_EXPERIMENT", "none"),
                    settings.out / "bench.json",
                )
            ],
            "uptodate": [False],
            "verbosity": 2,
        }

    reporter = type("Reporter", (BcevalReporter,), {"context": context_line(settings), "out": settings.out})
    tasks = {
        "DOIT_CONFIG": {
            "dep_file": str(settings.doit_db),
            "backend": "json",
            "default_tasks": ["prepare", "answered", "summary"]
            if settings.answers_in_graph
            else ["prepare", "summary"],
            "reporter": reporter,
            "verbosity": 1,
            # A live agent waits on its model: cases run side by side, in threads of this process.
            **({"num_process": settings.jobs, "par_type": "thread"} if settings.jobs > 1 else {}),
        },
        "task_cases": task_cases,
        "task_validate": task_validate,
        "task_prepare_dir": task_prepare_dir,
        "task_rows": task_rows,
        "task_index": task_index,
        "task_domain": task_domain,
        "task_review_request": task_review_request,
        "task_prepare": task_prepare,
        "task_run_record": task_run_record,
        "task_answer": task_answer,
        "task_answered": task_answered,
        "task_verdict": task_verdict,
        "task_score_json": task_score_json,
        "task_scorecard": task_scorecard,
        "task_score": task_score,
        "task_publish": task_publish,
        "task_bench": task_bench,
        "task_health": task_health,
        **guidance_tasks(settings),
        **experiment_tasks(settings),
        "task_summary": task_summary,
    }
    return {name: uncaptured(value) if name.startswith("task_") else value for name, value in tasks.items()}


def open_output(settings: Settings) -> None:
    """Before doit opens its state file in the output directory: the inputs exist, the directory is usable,
    and a state file a killed run left half written is dropped (one line says so)."""
    check_inputs(settings)
    ensure_output_dir(settings.out)
    if repair_doit_state(settings.doit_db):
        print(f"bceval: {settings.doit_db} was left half written by a killed run; rebuilding", file=sys.stderr)


# `doit` in a checkout loads this module through the top-level dodo.py: bind the graph for the settings of
# the directory doit was started in (doit itself changes to the dodo file's folder) and the environment.
# Imported as a library (the CLI, tests), it binds nothing: they build their own namespace.
if get_initial_workdir() is not None:
    try:
        _settings = load_settings(cwd=Path(get_initial_workdir()))
        open_output(_settings)
        globals().update(build_namespace(_settings))
    except BcevalError as exc:  # e.g. a malformed [tool.bceval]: doit prints one "ERROR:" line
        raise InvalidDodoFile(str(exc)) from None
