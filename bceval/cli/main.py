"""Thin command line: parse flags into Settings, run the same doit graph, map failures to exit codes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bceval import __version__
from bceval.cli import experiment as experiment_cli
from bceval.cli import guidance as guidance_cli
from bceval.config import ADAPTERS, SOURCES, Settings, check_inputs, load_settings
from bceval.errors import EXIT_INTERRUPTED, BcevalError
from bceval.graph.run import run_graph


class _Parser(argparse.ArgumentParser):
    """--help opens with the one-line description, then the usage."""

    def format_help(self) -> str:
        text = super().format_help()
        if not self.description:
            return text
        return self.description + "\n\n" + text.replace(self.description + "\n\n", "", 1)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bceval", description="Evaluate BCQuality-style AL review guidance.")
    parser.add_argument("--version", action="version", version=f"bceval {__version__}")
    commands = parser.add_subparsers(dest="subcommand", required=True, metavar="COMMAND", parser_class=_Parser)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        """A subcommand whose --help starts with its one-line description."""
        return commands.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")

    def corpus_flags(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--corpus", metavar="PATH", help="knowledge checkout (default: settings, else demo corpus)")
        sub.add_argument("--manifest", metavar="FILE", help="default: <corpus>/evaluation/review-fixtures.json")
        sub.add_argument("--out", metavar="DIR", help="output root (default: out/); requests go to DIR/review/")
        sub.add_argument("-v", "--verbose", action="store_true", help="also list every build step that runs")

    validate = command("validate", "check the manifest and corpus conventions")
    corpus_flags(validate)
    prepare = command("prepare", "validate, then write neutral model requests")
    corpus_flags(prepare)
    prepare.add_argument("--force", action="store_true", help="rebuild everything (what CI runs)")

    def run_flag(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--run", metavar="NAME", help="the run (default: the adapter, plus the model of a live agent)")

    def agent_flags(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--adapter", choices=ADAPTERS, help="oracle, baseline (default) or command (live, opt-in)")
        run_flag(sub)
        sub.add_argument("--command", help="agent command line, e.g. 'claude -p --model {model} --output-format json'")
        sub.add_argument("--model", help="the model; pinned only when the command passes it on through {model}")
        sub.add_argument("--epoch", type=int, metavar="N", help="which repeated sample this is (default 1)")
        sub.add_argument("--isolation", help="view (default: each case in a folder of its own) or none")
        sub.add_argument("--sandbox", help="none (default) or bwrap (Linux: hide the rest of the machine)")
        sub.add_argument(
            "--sandbox-allow", action="append", metavar="PATH", help="a path the sandbox shows the agent (repeatable)"
        )

    answer = command("answer", "answer the prepared requests into a run with an adapter")
    corpus_flags(answer)
    agent_flags(answer)
    answer.add_argument("--jobs", type=int, metavar="N", help="cases answered side by side (default 1)")
    answer.add_argument("--timeout", type=float, metavar="S", help="seconds per attempt before it is an infra failure")
    answer.add_argument("--retries", type=int, metavar="N", help="retries after an infrastructure failure (default 2)")
    answer.add_argument("--retry-wait", type=float, metavar="S", help="pause before a retry, doubling (default 5)")
    answer.add_argument("--shard", metavar="K/N", help="answer only shard K of N (deterministic split)")
    answer.add_argument("--case", dest="cases", action="append", metavar="ID", help="answer this case (repeatable)")
    answer.add_argument("-k", dest="patterns", action="append", metavar="PATTERN", help="cases whose id or domain fit")
    answer.add_argument("--failed-from", metavar="RUN|FILE", help="the cases that did not pass in that run or file")

    score = command("score", "score a run against the strict gate (exit 1 when it fails)")
    corpus_flags(score)
    score.add_argument("--adapter", choices=ADAPTERS, help="score this adapter's run (default: baseline)")
    run_flag(score)
    score.add_argument("--model", help="with --adapter command: the model, to find the default run name")
    source = score.add_mutually_exclusive_group()
    source.add_argument("--results", metavar="DIR", help="score these result-case-*.json or result-*.json files")
    source.add_argument("--results-path", metavar="FILE", help="score one combined result file")
    score.add_argument("--no-gate", action="store_true", help="report the verdict but exit 0 when it fails")

    publish = command("publish", "score, then add the run to the committed scorecard page")
    corpus_flags(publish)
    publish.add_argument("--adapter", choices=ADAPTERS, help="publish this adapter's run (default: baseline)")
    run_flag(publish)
    publish.add_argument("--model", help="with --adapter command: the model, to find the default run name")
    publish.add_argument("--results", metavar="DIR", help="score this results directory instead")
    publish.add_argument("--page", metavar="PATH", help="page to update (default: evaluation/scorecard.md)")

    runs = command("runs", "list the runs of an output directory with their numbers")
    runs.add_argument("--out", metavar="DIR", help="output root (default: out/)")

    health = command("health", "coverage, ranking margins and answer-leak audit of the corpus")
    corpus_flags(health)
    health.add_argument("--strict", action="store_true", help="exit 1 when any finding is an error")
    health.add_argument(
        "--margin",
        dest="health_margin",
        type=float,
        metavar="M",
        help="warn when a case's article scores less than M above the first excluded candidate",
    )
    health.add_argument("--changed-paths", metavar="FILE", help="changed files, one per line (e.g. from a PR diff)")

    bench = command("bench", "measure prepare and score on synthetic corpora of several sizes")
    bench.add_argument("--sizes", default="250,2500,25000", help="article counts, comma-separated")
    bench.add_argument("--repeat", type=int, default=3, help="runs per measurement (the median is reported)")
    bench.add_argument("--out", default="out/bench.json", metavar="FILE", help="JSON report (default out/bench.json)")
    bench.add_argument("--corpus", metavar="PATH", help="measure a private copy of this corpus instead of --sizes")
    bench.add_argument(
        "--live",
        default="256,16,0.5",
        metavar="A,J,S",
        help="live throughput: A answers at --jobs J, S seconds each (default 256,16,0.5; 'none' skips it)",
    )
    bench.add_argument(
        "--experiment",
        dest="bench_experiment",
        default="none",
        metavar="A,E,C,J,S",
        help="experiment overhead: A arms x E epochs x C cases at --jobs J, S s each (e.g. 4,5,64,16,0.5)",
    )

    init = command("init", "write a starter manifest (and, with --doit, dodo.py and [tool.bceval]) into a corpus")
    init.add_argument("--corpus", metavar="PATH", help="the corpus checkout (default: found from the current folder)")
    init.add_argument("--doit", action="store_true", help="also write dodo.py and [tool.bceval] in pyproject.toml")

    guidance_cli.add_parser(commands)
    experiment_cli.add_parser(commands, command)

    compare = command("compare", "compare two runs or scorecards case by case (markdown on stdout)")
    compare.add_argument("old", metavar="OLD", help="a run name (in --out) or a scorecard.json")
    compare.add_argument("new", metavar="NEW", help="a run name (in --out) or a scorecard.json")
    compare.add_argument("--out", metavar="DIR", help="where the named runs are (default: out/)")
    compare.add_argument("--fail-on-regression", action="store_true", help="exit 1 when any case regressed")
    compare.add_argument(
        "--allow-different-inputs", action="store_true", help="compare even when the request sets differ"
    )
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

    corpus = Path(args.corpus) if args.corpus else None
    sys.stdout.write(bench_command(args.sizes, args.repeat, Path(args.out), corpus, args.live, args.bench_experiment))
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
    settings = load_settings(**{key: value for key, value in vars(args).items() if key in SOURCES})
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
