"""`bceval health`: its doit tasks (out/health.json and .md: coverage, ranking margins, the answer-leak audit), then
the verdict, errors and warnings on the console, and the exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from doit.tools import config_changed

from bceval.cli.parser import add_command, settings_flags
from bceval.config import Settings, check_inputs, load_settings
from bceval.corpus.strict import STRICT
from bceval.errors import BcevalError
from bceval.evaluators.base import Command
from bceval.evaluators.review.health import steps as health
from bceval.evaluators.review.health.model import HealthReport, coverage_lines, summary_line
from bceval.graph.doitlib import action
from bceval.graph.inputs import GraphInputs
from bceval.graph.loader import run_graph
from bceval.jsonio import load_own_json
from bceval.layout import BuildDir, OutDir, PrepareDir


def health_tasks(inputs: GraphInputs) -> dict[str, Callable[[], Any]]:
    settings, prep, out = inputs.settings, PrepareDir(inputs.prep), OutDir(inputs.settings.out)
    build = BuildDir(settings.build_dir)

    def task_health_files() -> dict:
        """out/health.json and .md: coverage, ranking margins and the answer-leak audit."""
        groups, model_ids = list(inputs.groups), inputs.model_ids
        changed = settings.changed_paths
        return {
            "actions": [action(health.write_health, settings)],
            "file_dep": [str(build.cases)]
            + [str(build.rows(group)) for group in groups]
            + [str(build.domain_articles(domain)) for domain in inputs.domains]
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
                        **({"index": settings.index} if settings.index == STRICT else {}),  # the strict findings
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


def print_health(settings: Settings) -> Any:
    """Print the report's errors and warnings and its summary line; returns the report."""
    report = HealthReport.model_validate(load_own_json(OutDir(settings.out).health("json")))
    for finding in report.findings:
        if finding.severity != "info":
            print(f"  {finding.severity}: {finding.message}")
    print("\n".join(coverage_lines(report)))
    print(summary_line(report, str(OutDir(settings.out).health("md"))))
    return report


def run_health(args: argparse.Namespace) -> int:
    """`bceval health`: validate and prepare, then the health report on the console, always, and its verdict."""
    settings = load_settings(**settings_flags(args))
    check_inputs(settings, leaves=True)
    if settings.changed_paths is not None and not settings.changed_paths.is_file():  # before the graph runs
        raise BcevalError(f"{settings.changed_paths}: changed-paths file not found")
    code = run_graph(settings, ["health_files"], verbose=getattr(args, "verbose", False))
    if code:  # validation or preparation failed (it said why); report what can be read anyway
        print("bceval: the corpus does not prepare cleanly; health reports what it can read", file=sys.stderr)
        health.write_health(settings, prepared=False)
    report = print_health(settings)
    if code:
        return code  # the corpus itself fails validation or preparation, whatever the findings say
    return 1 if args.strict and report.errors else 0


HEALTH_COMMAND = Command(
    "health",
    lambda commands: add_command(commands, "health", "coverage, ranking margins and answer-leak audit of the corpus"),
    run_health,
)
