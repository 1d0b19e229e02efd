"""After the health graph ran: its verdict, errors and warnings on the console, and the exit code."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bceval.cli.parser import add_command, settings_flags
from bceval.config import Settings, check_inputs, check_leaves, load_settings
from bceval.errors import BcevalError
from bceval.evaluators.base import Command
from bceval.evaluators.review.health.model import HealthReport
from bceval.evaluators.review.health.report import coverage_lines, summary_line
from bceval.evaluators.review.health.steps import write_health_despite_failures
from bceval.graph.loader import run_graph
from bceval.jsonio import load_own_json
from bceval.layout import OutDir


def print_health(settings: Settings) -> Any:
    """Print the report's errors and warnings and its summary line; returns the report."""
    report = HealthReport.model_validate(load_own_json(OutDir(settings.out).health("json")))
    for finding in report.findings:
        if finding.severity != "info":
            print(f"  {finding.severity}: {finding.message}")
    print("\n".join(coverage_lines(report)))
    print(summary_line(report, str(OutDir(settings.out).health("md"))))
    return report


def report_health(settings: Settings, code: int, strict: bool) -> int:
    """`bceval health` after its graph ran (`code` is the graph's exit code): the report on the console, always,
    and the exit code."""
    if code:  # validation or preparation failed (it said why); report what can be read anyway
        print("bceval: the corpus does not prepare cleanly; health reports what it can read", file=sys.stderr)
        write_health_despite_failures(settings)
    report = print_health(settings)
    if code:
        return code  # the corpus itself fails validation or preparation, whatever the findings say
    return 1 if strict and report.errors else 0


def run_health(args: argparse.Namespace) -> int:
    """`bceval health`: validate and prepare, then the health report and its verdict."""
    settings = load_settings(**settings_flags(args))
    check_inputs(settings)
    check_leaves(settings)
    if settings.changed_paths is not None and not settings.changed_paths.is_file():  # before the graph runs
        raise BcevalError(f"{settings.changed_paths}: changed-paths file not found")
    code = run_graph(settings, ["health_files"], verbose=getattr(args, "verbose", False))
    return report_health(settings, code, args.strict)


HEALTH_COMMAND = Command(
    "health",
    lambda commands: add_command(commands, "health", "coverage, ranking margins and answer-leak audit of the corpus"),
    run_health,
)
