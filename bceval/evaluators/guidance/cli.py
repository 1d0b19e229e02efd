"""`bceval guidance MODE`: validate (default) | prepare | capture | score, one mode per call (spec §0), plus `run`
and `demo-workspaces`. The flags come from the options table; bceval.evaluators.guidance.modes runs the mode."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from bceval.agents.registry import capabilities
from bceval.cli.parser import Parser, options_later, settings_flags
from bceval.config import CORPUS_SHAPE, DEMO_CORPUS, DEMO_NAME, GUIDANCE_MANIFEST_RELATIVE, NOT_FOUND, load_settings
from bceval.config import agent_settings as from_settings
from bceval.config.commands import GUIDANCE_MODES
from bceval.evaluators.base import Command
from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.modes import Options, run_mode
from bceval.steps.ci import write_guidance_junit


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "guidance",
        help="plan- and implementation-guidance evaluators with read-only evidence",
        description="Evaluate plan and implementation guidance with read-only evidence.",
        epilog="Modes: validate a guidance manifest, prepare requests, capture the pre-run baseline, score "
        "results against it, run all of it with an answer adapter (run), or create the demo workspaces "
        "(demo-workspaces). Exit 0 when the mode passes, 1 otherwise.",
    )
    options_later(parser, "guidance")
    return parser


def mode_help(argv: list[str]) -> str | None:
    """`bceval guidance MODE --help`: that mode's own description and options (None: not such a call)."""
    if argv[:1] != ["guidance"] or not {"-h", "--help"} & set(argv):
        return None
    mode = next((arg for arg in argv[1:] if arg in GUIDANCE_MODES), None)
    if mode is None:
        return None
    text = GUIDANCE_MODES[mode][0]
    parser = Parser(prog=f"bceval guidance {mode}", description=text[0].upper() + text[1:] + ".")
    options_later(parser, f"guidance {mode}")
    return parser.format_help()


def agent_settings(args: argparse.Namespace) -> tuple[Any, float | None]:
    """The live agent's settings and the run's --max-cost: these flags, else BCEVAL_* and [tool.bceval], as the
    review commands read them."""
    settings = load_settings(**settings_flags(args))
    if capabilities(args.guidance_adapter or "").endpoint:  # bceval's own agent: its endpoint, no command
        return from_settings(replace(settings, adapter=args.guidance_adapter)), settings.max_cost
    if not settings.command:
        raise GuidanceError("run --adapter command needs --command (or BCEVAL_COMMAND), the agent command line")
    return from_settings(settings), settings.max_cost


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def options_from(args: argparse.Namespace) -> Options:
    mode = args.guidance_mode
    if mode == "demo-workspaces" and args.guidance_manifest:
        raise GuidanceError("one mode per call: demo-workspaces does not take --manifest (it uses both demo manifests)")
    if args.guidance_root == DEMO_NAME:
        root, source = DEMO_CORPUS, "--root demo: bceval's demo corpus"
    elif args.guidance_root:
        root, source = Path(args.guidance_root), "--root"
    elif mode == "demo-workspaces":
        root, source = DEMO_CORPUS, "the demo corpus"
    else:  # as the review commands do: [tool.bceval], or the corpus you stand in; the demo only when asked for
        settings = load_settings(corpus=None, out=None)
        if settings.corpus_source == NOT_FOUND:
            raise GuidanceError(
                f"no corpus in {settings.corpus} or its parents up to the git root: {CORPUS_SHAPE}; "
                "give --root PATH, or --root demo for bceval's demo corpus"
            )
        root, source = settings.corpus, settings.corpus_source
    live = mode == "run" and capabilities(args.guidance_adapter or "").live
    agent, max_cost = agent_settings(args) if live else (None, None)
    return Options(
        source=source,
        mode=mode,
        root=root,
        manifest=Path(args.guidance_manifest) if args.guidance_manifest else root / GUIDANCE_MANIFEST_RELATIVE,
        out=_path(args.guidance_out),
        workspace_map=_path(args.guidance_workspace_map),
        baseline=_path(args.guidance_baseline),
        baseline_sha256=args.guidance_baseline_sha256 or None,
        results=_path(args.guidance_results),
        adapter=getattr(args, "guidance_adapter", None) or None,
        agent=agent,
        max_cost=max_cost,
    )


def run(args: argparse.Namespace) -> int:
    mode = getattr(args, "guidance_mode", "validate")
    code = run_mode(mode, lambda: options_from(args))
    if mode == "run" and getattr(args, "junit", None) and args.guidance_out:
        write_guidance_junit(Path(args.guidance_out), Path(args.junit))
    return code


GUIDANCE_COMMAND = Command("guidance", add_parser, run, mode_help)
