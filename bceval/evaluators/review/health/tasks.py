"""The health task: out/health.json and .md (coverage, ranking margins, the answer-leak audit)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from doit.tools import config_changed

from bceval.evaluators.review.health import steps as health
from bceval.evaluators.review.health.verdict import print_health
from bceval.graph.doitlib import action
from bceval.graph.inputs import GraphInputs
from bceval.layout import OutDir, PrepareDir
from bceval.steps import prepare as steps


def health_tasks(inputs: GraphInputs) -> dict[str, Callable[[], Any]]:
    settings, prep, out = inputs.settings, PrepareDir(inputs.prep), OutDir(inputs.settings.out)

    def task_health_files() -> dict:
        """out/health.json and .md: coverage, ranking margins and the answer-leak audit."""
        groups, model_ids = list(inputs.groups), inputs.model_ids
        changed = settings.changed_paths
        return {
            "actions": [action(health.write_health, settings, groups)],
            "file_dep": [str(steps.cases_file(settings))]
            + [str(steps.rows_file(settings, group)) for group in groups]
            + [str(steps.domain_articles_file(settings, domain)) for domain in inputs.domains]
            + [str(prep.case_file(mid)) for mid in model_ids]
            + [str(prep.case_request(mid)) for mid in model_ids]
            + ([str(changed)] if changed is not None and changed.is_file() else []),
            "targets": [str(out.health("json")), str(out.health("md"))],
            "task_dep": ["prepare"],
            "uptodate": [
                config_changed(
                    {
                        **inputs.basics,
                        "listing": inputs.listing.digest,
                        "articles": inputs.signatures,  # article bodies: what the agent views hold
                        "margin": settings.health_margin,
                        "changed": str(changed) if changed else None,
                    }
                )
            ],
        }

    def task_health() -> dict:
        """The corpus's health on the console (its errors, warnings and summary), also when nothing changed."""
        return {
            "actions": [action(print_health, settings)],
            "task_dep": ["health_files"],
            "uptodate": [False],
            "verbosity": 1,
        }

    return {"task_health_files": task_health_files, "task_health": task_health}
