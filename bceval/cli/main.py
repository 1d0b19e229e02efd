"""Thin command line: parse flags into Settings, run the same doit graph, map failures to exit codes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bceval import __version__
from bceval.cli import experiment as experiment_cli
from bceval.cli import guidance as guidance_cli
from bceval.cli.parser import Parser, add_options, settings_flags
from bceval.config import Settings, check_inputs, load_settings
from bceval.errors import EXIT_INTERRUPTED, BcevalError
from bceval.graph.run import run_graph


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="bceval", description="Evaluate BCQuality-style AL review guidance.")
    parser.add_argument("--version", action="version", version=f"bceval {__version__}")
    commands = parser.add_subparsers(dest="subcommand", required=True, metavar="COMMAND", parser_class=Parser)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        """A subcommand whose --help starts with its one-line description."""
        return commands.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")

    for name, text in (
        ("validate", "check the manifest and corpus conventions"),
        ("prepare", "validate, then write neutral model requests"),
        ("answer", "answer the prepared requests into a run with an adapter"),
        ("score", "score a run against the strict gate (exit 1 when it fails)"),
        ("publish", "score, then add the run to the committed scorecard page"),
        ("runs", "list the runs of an output directory with their numbers"),
        ("health", "coverage, ranking margins and answer-leak audit of the corpus"),
        ("bench", "measure prepare and score on synthetic corpora of several sizes"),
        ("init", "write a starter manifest (and, with --doit, dodo.py and [tool.bceval]) into a corpus"),
    ):
        add_options(command(name, text), name)
    guidance_cli.add_parser(commands)
    experiment_cli.add_parser(commands, command)
    add_options(command("compare", "compare two runs or scorecards case by case (markdown on stdout)"), "compare")
    return parser


def check_results(settings: Settings) -> None:
    """Results the user named must exist before any work is done."""
    from bceval.layout import result_files

    if settings.results is not None:
        result_files(settings.results)
    if settings.results_path is not None and not settings.results_path.is_file():
        raise BcevalError(f"{settings.results_path}: results file not found")


def run_health(settings: Settings, strict: bool, verbose: bool = False) -> int:
    """Build the health report through the graph, then print its verdict and its errors and warnings."""
    from bceval.health.model import HealthReport
    from bceval.health.report import summary_line
    from bceval.jsonio import load_own_json

    if settings.changed_paths is not None and not settings.changed_paths.is_file():
        raise BcevalError(f"{settings.changed_paths}: changed-paths file not found")
    code = run_graph(settings, ["health"], verbose=verbose)
    if code:  # validation or preparation failed (it said why); report what can be read anyway
        from bceval.steps.health import write_health_despite_failures

        print("bceval: the corpus does not prepare cleanly; health reports what it can read", file=sys.stderr)
        write_health_despite_failures(settings)
    report = HealthReport.model_validate(load_own_json(settings.out / "health.json"))
    for finding in report.findings:
        if finding.severity != "info":
            print(f"  {finding.severity}: {finding.message}")
    print(summary_line(report, str(settings.out / "health.md")))
    if code:
        return code  # the corpus itself fails validation or preparation, whatever the findings say
    return 1 if strict and report.errors else 0


def scorecard_path(name: str, out: Path) -> Path:
    """A scorecard named by its path, or by the name of a run in the output directory."""
    path = Path(name)
    if path.is_file() or path.suffix == ".json":
        return path
    run = out / "runs" / name / "scorecard.json"
    if run.is_file():
        return run
    if (out / "runs" / name).is_dir():
        raise BcevalError(f"{out / 'runs' / name}: the run has no scorecard yet; score it: bceval score --run {name}")
    raise BcevalError(f"{name}: no such scorecard file, and no run of that name in {out / 'runs'}")


def run_compare(args: argparse.Namespace) -> int:
    from bceval.scorecard.compare import compare, render_comparison
    from bceval.scorecard.model import read_scorecard

    out = load_settings(out=args.out).out
    old, new = read_scorecard(scorecard_path(args.old, out)), read_scorecard(scorecard_path(args.new, out))
    result = compare(old, new, allow_different_inputs=args.allow_different_inputs)
    sys.stdout.write(render_comparison(old, new, result))
    return 1 if args.fail_on_regression and result.regressed else 0


def run_bench_command(args: argparse.Namespace) -> int:
    from bceval.bench import bench_command

    corpus = Path(args.bench_corpus) if args.bench_corpus else None
    sys.stdout.write(
        bench_command(
            args.bench_sizes, args.bench_repeat, Path(args.bench_out), corpus, args.bench_live, args.bench_experiment
        )
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.subcommand == "guidance":
            return guidance_cli.run(args)
        return dispatch(args)
    except BcevalError as exc:
        print(f"bceval: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:  # atomic writes leave no partial file; the next run sweeps any temporary one
        if "bceval.agents.live" in sys.modules:  # agents run in sessions of their own: stop them
            sys.modules["bceval.agents.live"].stop_all()
        print("bceval: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def dispatch(args: argparse.Namespace) -> int:
    """Run one subcommand; BcevalError from here becomes one line on stderr in `main`."""
    if args.subcommand == "bench":
        return run_bench_command(args)
    if args.subcommand == "compare":
        return run_compare(args)
    if args.subcommand == "experiment":
        return experiment_cli.run(args)
    if args.subcommand == "runs":
        from bceval.runs.record import list_runs, render_runs

        out = load_settings(out=args.out).out
        sys.stdout.write(render_runs(list_runs(out), out))
        return 0
    settings = load_settings(**settings_flags(args))
    if args.subcommand == "init":
        from bceval.steps.init import init_corpus

        print("\n".join(init_corpus(settings, args.doit)))
        return 0
    check_inputs(settings)
    verbose = getattr(args, "verbose", False)
    if args.subcommand in ("score", "publish"):
        check_results(settings)
    if args.subcommand == "prepare":
        return run_graph(settings, ["prepare"], force=args.force, verbose=verbose)
    if args.subcommand == "health":
        return run_health(settings, args.strict, verbose)
    if args.subcommand == "answer":
        from bceval.steps.answer import preflight

        for warning in preflight(settings):  # nothing is written unless the whole command line makes sense
            print(warning, file=sys.stderr)
        return run_graph(settings, ["answered"], verbose=verbose)
    if args.subcommand == "score" and args.no_gate:
        return run_graph(settings, ["summary"], verbose=verbose)
    return run_graph(settings, [args.subcommand], verbose=verbose)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
