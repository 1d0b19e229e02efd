"""The review pipeline's prepare and score stages as doit tasks; the frame puts the answer stage between them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from doit import create_after
from doit.tools import config_changed

from bceval import __version__
from bceval.clock import generated_at
from bceval.corpus.prepdir import claim
from bceval.corpus.rows import FORMAT as ROWS_FORMAT
from bceval.corpus.skills import SKILL_INDEX
from bceval.corpus.strict import STRICT
from bceval.errors import BcevalError
from bceval.evaluators.review import steps as review
from bceval.evaluators.review.manifest import CURABIS
from bceval.graph.doitlib import action, always
from bceval.graph.inputs import GraphInputs
from bceval.layout import BuildDir, OutDir, PrepareDir, infra_files, result_files
from bceval.runs.record import selection_of
from bceval.steps import prepare as steps
from bceval.steps import publish


def prepare_tasks(inputs: GraphInputs) -> dict[str, Callable[[], Any]]:
    """Task creators of the prepare stage, in their order of definition."""
    stage = PrepareStage(inputs)
    names = ("cases", "validate", "coverage", "prepare_dir", "rows", "index", "domain", "review_request", "prepare")
    return {f"task_{name}": getattr(stage, f"task_{name}") for name in names}


class PrepareStage:
    def __init__(self, inputs: GraphInputs) -> None:
        self.inputs = inputs
        self.settings, self.prep, self.basics = inputs.settings, PrepareDir(inputs.prep), inputs.basics
        self.build = BuildDir(inputs.settings.build_dir)
        self.strict = {"index": STRICT} if self.settings.index == STRICT else {}  # absent by default: keys unchanged

    def task_cases(self) -> dict:
        """Validate the manifest and corpus conventions; record the derived cases."""
        ids, skills = self.settings.additional_ids, self.settings.corpus / SKILL_INDEX
        recorded = config_changed(
            {
                **self.basics,
                "listing": self.inputs.listing.digest,
                "manifest": str(self.settings.manifest),
                # absent by default, so the keys of a corpus without them are unchanged
                **({"additionalIds": ids} if ids != CURABIS else {}),
                **({"skillIndex": True} if skills.is_file() else {}),  # it orders the leaves
            }
        )
        gate = (self.settings.coverage_report, self.settings.gate_paths, self.settings.changed_from)
        return {
            "actions": [action(review.write_cases, self.settings)],
            "file_dep": [str(path) for path in (self.settings.manifest, skills) if path is not None and path.is_file()],
            "targets": [str(self.build.cases)] + [str(self.build.domain_cases(d)) for d in self.inputs.domains],
            # with a coverage report or a changed-paths gate asked for, validation runs every time (it is cheap); the
            # configuration is still recorded, so the next plain run finds the cases up to date
            "uptodate": [False, recorded] if any(value is not None for value in gate) else [recorded],
            "verbosity": 1,
        }

    def task_coverage(self) -> dict:
        """The coverage report: paired articles per leaf domain and how many a case selects (out/coverage.*)."""
        return {
            "actions": [action(review.write_coverage, self.settings)],
            "targets": [str(OutDir(self.settings.out).coverage("json")), str(OutDir(self.settings.out).coverage("md"))],
            "uptodate": [False],
        }

    def task_validate(self) -> dict:
        """Check the manifest and corpus and print the verdict (always runs; it is cheap)."""
        return always(action(review.report_validation, self.settings, self.inputs.loose_samples), "cases", "rows")

    def task_prepare_dir(self) -> dict:
        """Claim the prepare directory with its marker (refuses a foreign non-empty directory)."""
        return {
            "actions": [action(claim, self.settings.prepare_dir)],
            "targets": [str(self.prep.marker)],
            "task_dep": ["cases"],
            "uptodate": [config_changed(self.basics)],
        }

    def task_rows(self) -> Iterator[dict]:
        """Knowledge-index rows, one task per knowledge folder (see steps.article_group)."""
        listing, folders = self.inputs.listing, self.inputs.group_folders
        for group in self.inputs.groups:
            yield {
                "name": group,
                "actions": [action(steps.write_group_rows, self.settings, listing, group, folders[group])],
                "targets": [str(self.build.rows(group))],
                # A stat signature of the folder's articles instead of one file_dep each: at 25,000
                # articles doit's per-dependency bookkeeping cost more than the stats themselves.
                "uptodate": [
                    config_changed(
                        {
                            "bceval": __version__,
                            "format": ROWS_FORMAT,
                            "files": self.inputs.signatures[group],
                            **self.strict,
                        }
                    )
                ],
                "verbosity": 1,  # the strict index's warnings reach stderr
            }

    def task_index(self) -> dict:
        """knowledge-index.json plus each leaf domain's candidate rows."""
        # The rows files name their articles, so they and the group names cover every article added,
        # removed or renamed.
        groups, domains = list(self.inputs.groups), self.inputs.domains
        return {
            "actions": [action(steps.write_index, self.settings, groups, domains)],
            "file_dep": [str(self.build.rows(group)) for group in groups],
            "targets": [str(self.prep.knowledge_index)] + [str(self.build.domain_articles(d)) for d in domains],
            "task_dep": ["prepare_dir"],
            "uptodate": [
                config_changed(
                    {**self.basics, "groups": groups, "domains": domains, "at": generated_at(), **self.strict}
                )
            ],
        }

    def task_domain(self) -> Iterator[dict]:
        """Per leaf domain: index-, request- and request-case- files and the neutral case files."""
        derivation = self.inputs.plan
        for domain in self.inputs.domains:
            cases = derivation.cases_of(domain) if derivation else []
            leaf = next((lf for lf in derivation.leaves if lf.domain == domain), None) if derivation else None
            yield {
                "name": domain,
                "actions": [action(review.write_domain, self.settings, domain)],
                "file_dep": [
                    str(self.build.domain_cases(domain)),
                    str(self.build.domain_articles(domain)),
                ]
                + ([str(self.settings.corpus / leaf.path)] if leaf else [])
                + [str(self.settings.corpus / case.input) for case in cases],
                "targets": [str(self.prep.domain_index(domain)), str(self.prep.domain_request(domain))]
                + [str(self.prep.case_file(case.modelId)) for case in cases]
                + [str(self.prep.case_request(case.modelId)) for case in cases],
                "task_dep": ["prepare_dir"],
                "uptodate": [config_changed(self.basics)],
            }

    def task_review_request(self) -> dict:
        """review-request.json: every case in one all-domains request."""
        return {
            "actions": [action(review.write_review_request, self.settings)],
            "file_dep": [str(self.build.cases)],
            "targets": [str(self.prep.review_request)],
            "task_dep": ["prepare_dir"],
            "uptodate": [config_changed(self.basics)],
        }

    def task_prepare(self) -> dict:
        """Validate, then write the neutral request directory (out/review/ by default)."""
        model_ids = self.inputs.model_ids
        return {
            "actions": [action(review.finish_prepare, self.settings, self.inputs.groups)],
            "task_dep": ["cases", "index", "domain", "review_request"],
            "uptodate": [
                config_changed({**self.basics, "planned": self.inputs.plan is not None}),
                lambda: steps.nothing_to_prune(self.settings, self.inputs.groups, self.inputs.domains, model_ids),
                lambda: not self.prep.incomplete.exists(),
            ],
        }


def score_tasks(inputs: GraphInputs) -> dict[str, Callable[[], Any]]:
    """Task creators of the scoring stage (`summary` is defined last of the whole graph: see loader)."""
    settings, basics = inputs.settings, inputs.basics

    def task_score_json() -> dict:
        """Judge every result into out/runs/<run>/score.json (metrics, thresholds, every case)."""
        if settings.results_path is not None:  # one combined results document
            files = [settings.results_path] if settings.results_path.is_file() else []
            recorded = {**basics, "results_path": str(settings.results_path)}
        else:
            try:
                results = result_files(settings.results_dir)
            except BcevalError:
                results = []  # score_json reports the missing results in one line
            infra = infra_files(settings.results_dir) if results else []
            files = results + infra
            recorded = {
                **basics,
                "results": [p.name for p in results],
                "infra": [p.name for p in infra],
                "selected": sorted(selection_of(settings.run_dir) or []) if settings.results is None else [],
                **({"requireRead": True} if settings.require_read else {}),
            }
        return {
            "actions": [action(review.write_score, settings)],
            "file_dep": [str(BuildDir(settings.build_dir).cases)] + [str(path) for path in files],
            "targets": [str(settings.score_file)],
            "task_dep": ["prepare"],
            "uptodate": [config_changed(recorded)],
        }

    if settings.answers_in_graph:  # result files to score are only known once the graph has answered
        task_score_json = create_after(executed="answered")(task_score_json)

    def task_scorecard() -> dict:
        """out/runs/<run>/scorecard.json, .md and .html: the scored run's record (git state is read each time)."""
        return always(action(review.write_scorecard, settings), "score_json")

    def task_score() -> dict:
        """Print the verdict of out/runs/<run>/score.json; exit 1 when the gate fails (always runs; it is cheap)."""
        return always(action(review.report_score, settings), "scorecard")

    def task_publish() -> dict:
        """Add the scored run to the committed page (default evaluation/scorecard.md)."""
        return always(action(publish.publish_page, settings), "scorecard")

    def task_summary() -> dict:
        """The main job's report: the same verdict as `score`, but a failed gate does not fail the run."""
        return always(action(review.report_score, settings, False), "scorecard")

    creators = (task_score_json, task_scorecard, task_score, task_publish, task_summary)
    return {creator.__name__: creator for creator in creators}
