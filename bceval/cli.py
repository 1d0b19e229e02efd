"""Thin command line: parse flags into Settings, run the same doit graph, map failures to exit codes."""

from __future__ import annotations

import argparse
import sys

from bceval import __version__
from bceval.config import check_inputs, load_settings
from bceval.errors import EXIT_USAGE, BcevalError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bceval", description="Evaluate BCQuality-style AL review guidance.")
    parser.add_argument("--version", action="version", version=f"bceval {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def corpus_flags(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--corpus", metavar="PATH", help="knowledge checkout (default: settings, else demo corpus)")
        sub.add_argument("--manifest", metavar="FILE", help="default: <corpus>/evaluation/review-fixtures.json")
        sub.add_argument("--out", metavar="DIR", help="output root (default: out/); requests go to DIR/review/")

    validate = commands.add_parser("validate", help="check the manifest and corpus conventions")
    corpus_flags(validate)
    prepare = commands.add_parser("prepare", help="validate, then write neutral model requests")
    corpus_flags(prepare)
    prepare.add_argument("--force", action="store_true", help="rebuild everything (what CI runs)")
    return parser


def run_graph(settings, tasks: list[str], force: bool = False) -> int:
    """Run tasks of the bceval graph through doit; doit's 'error before running' (3) becomes usage (2)."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    from bceval.dodo import build_namespace

    args = ["run", *(["--always-execute"] if force else []), *tasks]
    code = DoitMain(ModuleTaskLoader(build_namespace(settings))).run(args)
    return EXIT_USAGE if code == 3 else code


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings(corpus=args.corpus, manifest=args.manifest, out=args.out)
        check_inputs(settings)
    except BcevalError as exc:
        print(f"bceval: {exc}", file=sys.stderr)
        return exc.exit_code
    if args.command == "validate":
        return run_graph(settings, ["validate"])
    return run_graph(settings, ["prepare"], force=args.force)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
