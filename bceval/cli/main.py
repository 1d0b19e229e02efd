"""Thin command line: parse flags (the options table) into Settings, run the same doit graph or a step, map
failures to exit codes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bceval import __version__
from bceval.agents import live
from bceval.cli.parser import Parser, add_command, settings_flags
from bceval.config import load_settings
from bceval.config.commands import COMMON
from bceval.config.options import OPTIONS
from bceval.errors import EXIT_INTERRUPTED, BcevalError
from bceval.escape import console
from bceval.evaluators.base import Command
from bceval.evaluators.registry import DEFAULT, all_commands, commands_for, evaluator, registered
from bceval.steps.init import init_corpus

# the subcommands that are the frame's own; every other one is an evaluator's (`--evaluator`, default review)
FRAME_COMMANDS = ("bench", "ci", "compare", "experiment", "evaluators", "runs", "init")


# the frame's subcommands in the order --help lists them: the evaluators' come after these, then the last ones
COMMAND_TEXTS = {
    "validate": "check the manifest and corpus conventions",
    "prepare": "validate, then write neutral model requests",
    "answer": "answer the prepared requests into a run with an adapter",
    "score": "score a run against the strict gate (exit 1 when it fails)",
    "publish": "score, then add the run to the committed scorecard page",
    "runs": "list the runs of an output directory with their numbers",
    "evaluators": "list the registered evaluators: name, where it comes from, what it evaluates",
    "bench": "measure prepare and score on synthetic corpora of several sizes",
    "init": "write a starter manifest (and, with --doit, dodo.py and [tool.bceval]) into a corpus",
    "prompt": "print what the agent of a run is given for one case (runs no agent)",
    "view": "write a static viewer of the runs, experiments and guidance runs (out/view/)",
}
LAST_TEXTS = {"compare": "compare two runs or scorecards case by case (markdown on stdout)"}


def _parser(commands: dict[str, Command] | None = None, only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand (`commands`: the evaluators', None: all of them), or of `only` (a frame
    subcommand or one of `commands`): a command builds just its own, so it loads no module it does not run."""
    common = ", ".join(OPTIONS[name].flags[-1] for name in COMMON) + " may also come before COMMAND."
    parser = Parser(prog="bceval", description="Evaluate BCQuality-style AL review guidance.", epilog=common)
    parser.add_argument("--version", action="version", version=f"bceval {__version__}")
    subparsers = parser.add_subparsers(dest="subcommand", required=True, metavar="COMMAND", parser_class=Parser)
    for name, text in COMMAND_TEXTS.items():
        if only in (None, name):
            add_command(subparsers, name, text)
    for evaluator_command in (all_commands() if commands is None else commands).values():
        evaluator_command.add(subparsers)
    if only in (None, "experiment"):
        # not at the top: start-up time (its experiment models take 75 ms), and it reads the evaluator registry
        from bceval.cli import experiment

        experiment.add_parser(subparsers)
    if only in (None, "ci"):
        from bceval.steps.ci import add_ci_parser  # not at the top: start-up time (the scorecard's models)

        add_ci_parser(subparsers)
    for name, text in LAST_TEXTS.items():
        if only in (None, name):
            add_command(subparsers, name, text)
    return parser


def _common_last(given: list[str]) -> list[str]:
    """The command line with the common options given before the subcommand moved after it (to the end, so an
    experiment mode's parser reads them too)."""
    flags = {flag: OPTIONS[name] for name in COMMON for flag in OPTIONS[name].flags}
    moved: list[str] = []
    while given and given[0].split("=")[0] in flags:
        count = 1 if "=" in given[0] or flags[given[0]].kind == "switch" else 2
        moved += given[:count]
        given = given[count:]
    return given + moved


def _subcommand(given: list[str]) -> tuple[str | None, dict[str, Command]]:
    """The subcommand named first when it is known without loading every evaluator, and the evaluator subcommands
    to offer (all of them when it is not, or when bceval's own --help or --version comes first)."""
    name = given[0] if given and not given[0].startswith("-") else None
    if name in COMMAND_TEXTS or name in LAST_TEXTS or name in FRAME_COMMANDS:
        return name, {}
    commands = commands_for(name) if name is not None else all_commands()
    return (name if name in commands else None), commands


def main(argv: list[str] | None = None) -> int:
    try:
        given = _common_last(sys.argv[1:] if argv is None else argv)
        only, commands = _subcommand(given)
        for command in commands.values():
            shown = command.help_for(given) if command.help_for is not None else None
            if shown is not None:  # as argparse's own --help: print, then exit 0
                sys.stdout.write(shown)
                raise SystemExit(0)
        args = _parser(commands, only).parse_args(given)
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
        from bceval.bench import bench_command  # not at the top: start-up time, it loads the viewer's models (110 ms)

        corpus = Path(args.bench_corpus) if args.bench_corpus else None
        texts = {name: getattr(args, f"bench_{name}") for name in ("live", "experiment", "api", "view")}
        return bench_command(args.bench_sizes, args.bench_repeat, Path(args.bench_out), corpus, texts)
    if args.subcommand == "compare":
        from bceval.steps.runs import print_comparison  # not at the top: start-up time (the scorecard takes 75 ms)

        out = load_settings(out=args.out).out
        return print_comparison(args.old, args.new, out, args.allow_different_inputs, args.fail_on_regression)
    if args.subcommand == "experiment":
        from bceval.cli import experiment  # not at the top: see _parser

        return experiment.run(args)
    if args.subcommand == "evaluators":
        return print_evaluators()
    if args.subcommand == "ci":
        from bceval.steps.ci import run_ci  # not at the top: as add_ci_parser

        return run_ci(args, main)
    if args.subcommand == "runs":
        from bceval.steps.runs import print_runs  # not at the top: as print_comparison

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
