"""Thin command line: parse flags (the options table) into Settings, run the same doit graph or a step, map
failures to exit codes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bceval import __version__
from bceval.agents import live
from bceval.bench import bench_command
from bceval.cli.parser import Parser, add_command, settings_flags
from bceval.config import load_settings
from bceval.errors import EXIT_INTERRUPTED, BcevalError
from bceval.escape import console
from bceval.evaluators.registry import DEFAULT, all_commands, evaluator, registered
from bceval.steps.ci import add_ci_parser, run_ci
from bceval.steps.init import init_corpus
from bceval.steps.runs import print_comparison, print_runs

# the subcommands that are the frame's own; every other one is an evaluator's (`--evaluator`, default review)
FRAME_COMMANDS = ("bench", "ci", "compare", "experiment", "evaluators", "runs", "init")


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="bceval", description="Evaluate BCQuality-style AL review guidance.")
    parser.add_argument("--version", action="version", version=f"bceval {__version__}")
    commands = parser.add_subparsers(dest="subcommand", required=True, metavar="COMMAND", parser_class=Parser)
    for name, text in (
        ("validate", "check the manifest and corpus conventions"),
        ("prepare", "validate, then write neutral model requests"),
        ("answer", "answer the prepared requests into a run with an adapter"),
        ("score", "score a run against the strict gate (exit 1 when it fails)"),
        ("publish", "score, then add the run to the committed scorecard page"),
        ("runs", "list the runs of an output directory with their numbers"),
        ("evaluators", "list the registered evaluators: name, where it comes from, what it evaluates"),
        ("bench", "measure prepare and score on synthetic corpora of several sizes"),
        ("init", "write a starter manifest (and, with --doit, dodo.py and [tool.bceval]) into a corpus"),
        ("prompt", "print what the agent of a run is given for one case (runs no agent)"),
        ("view", "write a static viewer of the runs, experiments and guidance runs (out/view/)"),
    ):
        add_command(commands, name, text)
    for evaluator_command in all_commands().values():
        evaluator_command.add(commands)
    from bceval.cli import experiment  # not at the top: it reads the evaluator registry (main reports its errors)

    experiment.add_parser(commands)
    add_ci_parser(commands)
    add_command(commands, "compare", "compare two runs or scorecards case by case (markdown on stdout)")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        given = sys.argv[1:] if argv is None else argv
        commands = all_commands()
        for command in commands.values():
            shown = command.help_for(given) if command.help_for is not None else None
            if shown is not None:  # as argparse's own --help: print, then exit 0
                sys.stdout.write(shown)
                raise SystemExit(0)
        args = _parser().parse_args(argv)
        if args.subcommand in commands:
            return commands[args.subcommand].run(args)
        if args.subcommand in FRAME_COMMANDS:
            return dispatch(args)
        return evaluator(getattr(args, "evaluator", None) or DEFAULT).verb(args.subcommand, args)
    except BcevalError as exc:
        print(f"bceval: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:  # atomic writes leave no partial file; the next run sweeps any temporary one
        live.stop_all()  # agents run in sessions of their own: stop them
        print("bceval: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def dispatch(args: argparse.Namespace) -> int:
    """Run one of the frame's own subcommands; BcevalError from here becomes one line on stderr in `main`."""
    if args.subcommand == "bench":
        corpus = Path(args.bench_corpus) if args.bench_corpus else None
        texts = {name: getattr(args, f"bench_{name}") for name in ("live", "experiment", "api", "view")}
        return bench_command(args.bench_sizes, args.bench_repeat, Path(args.bench_out), corpus, texts)
    if args.subcommand == "compare":
        out = load_settings(out=args.out).out
        return print_comparison(args.old, args.new, out, args.allow_different_inputs, args.fail_on_regression)
    if args.subcommand == "experiment":
        from bceval.cli import experiment  # not at the top: see _parser

        return experiment.run(args)
    if args.subcommand == "evaluators":
        return print_evaluators()
    if args.subcommand == "ci":
        return run_ci(args, main)
    if args.subcommand == "runs":
        return print_runs(load_settings(out=args.out).out)
    return init_corpus(load_settings(**settings_flags(args)), args.doit)  # init


def print_evaluators() -> int:
    """`bceval evaluators`: one line each, name, origin (built-in or its distribution) and what it evaluates."""
    for entry in registered():
        try:
            description = evaluator(entry.name).description
        except BcevalError as exc:  # a broken plugin is listed with why, not hidden
            description = f"cannot be loaded: {exc}"
        print(f"{console(entry.name):<16} {console(entry.origin):<16} {console(description)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
