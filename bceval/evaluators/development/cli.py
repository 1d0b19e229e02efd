"""`bceval development`: validate (default) | prepare | score, the upstream evaluator's phases (spec §2), and
`run`, bceval as the runner (spec §11). The flags come from the options table; the package's steps module
checks them, runs the mode and prints."""

from __future__ import annotations

import argparse
from pathlib import Path

from bceval.cli.parser import add_command, options_later, settings_flags
from bceval.config import DEMO_CORPUS, find_corpus, load_settings
from bceval.evaluators.base import Command
from bceval.evaluators.development.config import development_pyproject
from bceval.evaluators.development.evidence_cli import run_validator
from bceval.evaluators.development.runner import RunOptions, api_settings, run_development
from bceval.evaluators.development.steps import Options, run_mode

API_SETTINGS = ("base_url", "api_key_env", "temperature", "max_turns", "max_output_tokens", "seed")
RUN_SETTINGS = ("command", "model", "epoch", "timeout", "sandbox", "sandbox_allow", *API_SETTINGS)


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "development",
        help="development fixtures: AL authoring tasks, scored from reports or run by bceval",
        description="Evaluate AL development fixtures: validate, prepare, score reports, or run agents.",
        epilog="Modes: validate the manifest and capability file, prepare requests (--out), score implementation "
        "reports (--results), or run every case in a fresh copy of its starting repository with runner-owned "
        "gates (run --workspace-map MAP --out RUN). Exit 0 when the mode passes, 1 when it fails, 2 on bad input.",
    )
    options_later(parser, "development")
    return parser


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def root_of(args: argparse.Namespace) -> Path:
    if args.development_root:
        return Path(args.development_root)
    return find_corpus(Path.cwd().resolve()) or DEMO_CORPUS


PYPROJECT_FLAGS = ("root", "manifest", "capabilities", "workspace_map", "checks", "adapter", "guidance")


def with_pyproject(args: argparse.Namespace) -> dict:
    """[tool.bceval.development] fills every flag that was not given (a flag wins); returns what it read."""
    project = development_pyproject(Path.cwd())
    for key in PYPROJECT_FLAGS:
        if getattr(args, f"development_{key}") is None and key in project:
            setattr(args, f"development_{key}", str(project[key]))
    if not args.development_fail_on_overclaim and project.get("fail_on_overclaim"):
        args.development_fail_on_overclaim = True
    return project


def run(args: argparse.Namespace) -> int:
    project = with_pyproject(args)
    mode = args.development_mode
    if mode == "run":
        settings = load_settings(**settings_flags(args, RUN_SETTINGS))
        # the api adapter is bceval's own agent: its endpoint settings, no command line
        agent = api_settings(settings) if args.development_adapter == "api" else None
        return run_development(RunOptions.from_args(args, root_of(args), settings, agent, project))
    return run_mode(
        Options(
            mode,
            root_of(args),
            _path(args.development_manifest),
            _path(args.development_capabilities),
            _path(args.development_out),
            _path(args.development_results),
        )
    )


DEVELOPMENT_COMMAND = Command("development", add_parser, run)
EVIDENCE_COMMAND = Command(
    "evidence",
    lambda commands: add_command(
        commands, "evidence", "check an al-knowledge answer against its question, corpus and read evidence"
    ),
    run_validator,
)
