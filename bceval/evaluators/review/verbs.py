"""The review evaluator's commands: `bceval validate|prepare|prompt|answer|score|publish|view`, each the same doit
graph (or a step), with their checks before any work."""

from __future__ import annotations

import argparse
import sys
from contextlib import redirect_stdout
from pathlib import Path

from bceval.cli.parser import settings_flags
from bceval.config import check_inputs, check_leaves, check_results, load_settings
from bceval.corpus.layers import scan_corpus
from bceval.evaluators.review.steps import check_coverage_target, gate_changes
from bceval.graph.loader import run_graph
from bceval.steps.answer import warn_preflight
from bceval.steps.ci import score_outputs
from bceval.steps.prompt import print_prompt
from bceval.steps.runs import recorded_run
from bceval.steps.view import report_view


def review_verb(verb: str, args: argparse.Namespace) -> int:
    """Run one review command; a BcevalError from here becomes one line on stderr in bceval.cli.main."""
    if verb == "view":
        return report_view(load_settings(out=args.out).out, args.serve, args.port)
    settings = load_settings(**settings_flags(args))
    if verb in ("score", "publish", "prompt"):  # a named run is scored (and shown) as it was answered
        settings = recorded_run(settings, args.adapter)
    check_inputs(settings)
    check_leaves(settings)
    verbose = getattr(args, "verbose", False)
    if verb in ("score", "publish"):
        check_results(settings)
    if verb in ("validate", "prepare"):
        gate_changes(settings)  # an unreadable changed-paths file or unusable REF: exit 2 before any work
        check_coverage_target(settings.coverage_report)
    if verb == "prepare":
        return run_graph(settings, ["prepare"], force=args.force, verbose=verbose)
    if verb == "prompt":
        with redirect_stdout(sys.stderr):  # stdout holds the prompt alone: the preparation reports on stderr
            code = run_graph(settings, ["prepare"], verbose=verbose)
        return code or print_prompt(settings, args.case)
    if verb == "answer":
        listing = scan_corpus(settings.corpus)  # once: the checks and the graph read the same listing
        warn_preflight(settings, listing)  # nothing is written unless the whole command line makes sense
        return run_graph(settings, ["answered"], verbose=verbose, listing=listing)
    if verb == "score":
        code = run_graph(settings, ["summary" if args.no_gate else "score"], verbose=verbose)
        return score_outputs(settings, code, Path(args.junit) if args.junit else None)
    return run_graph(settings, [verb], verbose=verbose)
