"""`bceval guidance MODE` (spec §0): validate (default) | prepare | capture | score | run | demo-workspaces, one mode
per call. Each call prints one line, in bceval's own words only (never file, JSON or model text); failures exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from bceval.agents.registry import capabilities
from bceval.cli.parser import Parser, add_options, settings_flags
from bceval.config import CORPUS_SHAPE, DEMO_CORPUS, DEMO_NAME, NOT_FOUND, load_settings
from bceval.config import agent_settings as from_settings
from bceval.config.commands import GUIDANCE_MODES
from bceval.errors import EXIT_FAILED, BcevalError, EvaluationFailed
from bceval.evaluators.base import Command
from bceval.evaluators.guidance import DEFAULT_MANIFEST, GuidanceError
from bceval.evaluators.guidance.demo import create_demo, workspace_count
from bceval.evaluators.guidance.evidence import capture, load_baseline, protected_roots
from bceval.evaluators.guidance.manifest import load_manifest, load_workspace_map
from bceval.evaluators.guidance.paths import check_separation
from bceval.evaluators.guidance.prepare import prepare
from bceval.evaluators.guidance.runner import run_verdict
from bceval.evaluators.guidance.scoring import score
from bceval.steps.ci import write_guidance_junit

TITLES = {
    "validate": "fixture validation",
    "prepare": "preparation",
    "capture": "baseline capture",
    "score": "scoring",
    "run": "run",
    "demo-workspaces": "demo workspaces",
}
UNSAFE = "the input could not be read safely"
T = TypeVar("T")


@dataclass(frozen=True)
class Options:
    mode: str
    root: Path
    manifest: Path
    out: Path | None = None
    workspace_map: Path | None = None
    baseline: Path | None = None
    baseline_sha256: str | None = None
    results: Path | None = None
    adapter: str | None = None
    agent: Any = None  # run --adapter command: bceval.agents.settings.AgentSettings
    max_cost: float | None = None  # run with a live agent: no new case starts once the run's known cost reaches it
    source: str = "--root"  # how the knowledge checkout was chosen, for the line every command prints
    replace: bool = False  # prepare: the graph's, rewriting an earlier preparation (bceval.evaluators.guidance.prepare)


def check_arguments(opts: Options) -> None:
    """The argument gate of §0 in its order, then bceval's one-mode-per-call rule."""
    capturing, scoring = opts.mode == "capture", opts.mode == "score"
    if capturing and (opts.results or opts.out):
        raise GuidanceError("Baseline capture is a separate pre-run operation: do not combine it with --results/--out")
    if (capturing or scoring) and not opts.baseline:
        raise GuidanceError("capture and score require BaselinePath (--baseline FILE)")
    if scoring and not opts.baseline_sha256:
        raise GuidanceError("score requires the runner-retained pre-run BaselineSha256 (--baseline-sha256 HEX)")
    if opts.mode in ("capture", "run") and not opts.workspace_map:
        raise GuidanceError(f"{opts.mode} requires the runner-owned WorkspaceMapPath (--workspace-map MAP)")
    if scoring and (opts.workspace_map or opts.out):
        raise GuidanceError("score binds workspaces from the recorded workspace map of the baseline only")
    if opts.mode in ("prepare", "demo-workspaces") and not opts.out:
        raise GuidanceError(f"{opts.mode} requires --out DIR (a new or empty directory)")
    if opts.mode == "run" and not opts.out:
        raise GuidanceError("run requires --out RUN (a new run directory)")
    if opts.mode == "run" and not opts.adapter:
        raise GuidanceError("run requires --adapter NAME (oracle)")
    names = ("out", "workspace_map", "baseline", "baseline_sha256", "results", "adapter")
    refused = {name for name in names if getattr(opts, name)} - set(GUIDANCE_MODES[opts.mode][1])
    if refused:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in sorted(refused))
        raise GuidanceError(f"one mode per call: {opts.mode} does not take {flags}")


def execute(opts: Options) -> str:
    """Run one mode; returns the success line or raises (GuidanceError, EvaluationFailed)."""
    check_arguments(opts)
    if opts.mode == "demo-workspaces":
        runs = create_demo(opts.root, opts.out)
        made = f"{workspace_count(runs)} workspace(s) in {runs[0].root.parent}"
        lines = [f"Development guidance demo workspaces created: {made}", f"  knowledge checkout: {runs[0].root}"]
        lines += [f"  {run.name} workspace map: {run.workspace_map}" for run in runs]
        lines += [
            f"  try: bceval guidance run --root {run.root} --manifest {run.manifest} "
            f"--workspace-map {run.workspace_map} --adapter oracle --out RUN"
            for run in runs
        ]
        return "\n".join(lines)
    if opts.mode == "run":
        assert opts.workspace_map and opts.out and opts.adapter  # check_arguments
        return run_verdict(
            opts.root, opts.manifest, opts.workspace_map, opts.out, opts.adapter, opts.agent, opts.max_cost
        )
    manifest = load_manifest(opts.root, opts.manifest)
    workspaces = load_workspace_map(opts.workspace_map, manifest) if opts.workspace_map else None
    baseline = None
    if opts.mode == "score":
        baseline = load_baseline(opts.baseline, opts.baseline_sha256 or "", manifest)
        workspaces = baseline.workspaces
    check_separation(
        protected_roots(manifest, workspaces),
        [
            (f"Baseline path {opts.baseline}", opts.baseline),
            (f"Workspace map path {opts.workspace_map}", opts.workspace_map),
            (f"Prepare directory {opts.out}", opts.out),
            (f"Results directory {opts.results}", opts.results),
        ],
    )
    count = len(manifest.cases)
    if opts.mode == "capture":
        digest = capture(manifest, workspaces or {}, opts.baseline)
        return f"Development guidance baseline captured for {count} case(s); baseline SHA-256: {digest}"
    if opts.mode == "prepare":
        directory = prepare(manifest, workspaces, opts.out, opts.replace)
        return f"Development guidance preparation PASSED: {count} case(s) prepared in {directory}"
    if opts.mode == "score":
        outcome = score(manifest, baseline, opts.results)
        if not outcome.passed:
            title = f"Development guidance scoring FAILED with {len(outcome.problems)} problem(s):"
            raise EvaluationFailed(title, outcome.problems)
        return f"Development guidance scoring PASSED: {count} case(s)"
    return f"Development guidance fixture validation PASSED: {count} case(s)"


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "guidance",
        help="plan- and implementation-guidance evaluators with read-only evidence",
        description="Evaluate plan and implementation guidance with read-only evidence.",
        epilog="Modes: validate a guidance manifest, prepare requests, capture the pre-run baseline, score "
        "results against it, run all of it with an answer adapter (run), or create the demo workspaces "
        "(demo-workspaces). Exit 0 when the mode passes, 1 otherwise.",
    )
    add_options(parser, "guidance")
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
    add_options(parser, f"guidance {mode}")
    return parser.format_help()


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
    agent, max_cost = None, None
    if mode == "run" and capabilities(args.guidance_adapter or "").live:
        settings = load_settings(**settings_flags(args))  # these flags, else BCEVAL_* and [tool.bceval], as for review
        endpoint = capabilities(args.guidance_adapter).endpoint  # bceval's own agent: its endpoint, no command
        if not endpoint and not settings.command:
            raise GuidanceError("run --adapter command needs --command (or BCEVAL_COMMAND), the agent command line")
        agent = from_settings(replace(settings, adapter=args.guidance_adapter) if endpoint else settings)
        max_cost = settings.max_cost
    given = {name: getattr(args, f"guidance_{name}") for name in ("out", "workspace_map", "baseline", "results")}
    return Options(
        mode,
        root,
        Path(args.guidance_manifest) if args.guidance_manifest else root / DEFAULT_MANIFEST,
        **{name: Path(value) if value else None for name, value in given.items()},
        baseline_sha256=args.guidance_baseline_sha256 or None,
        adapter=getattr(args, "guidance_adapter", None) or None,
        agent=agent,
        max_cost=max_cost,
        source=source,
    )


def guarded(title: str, work: Callable[[], T], caught: type[BcevalError] = GuidanceError) -> T:
    """Run one guidance step; only bceval's own one-line message (of a `caught` error) can leave it."""
    try:
        return work()
    except EvaluationFailed:  # a run's problems, each in bceval's words
        raise
    except caught as exc:
        raise EvaluationFailed(f"{title} FAILED: {exc}", verdict=False) from None
    except Exception:  # noqa: BLE001 - never a traceback or foreign text
        raise EvaluationFailed(f"{title} FAILED: {UNSAFE}", verdict=False) from None


def _announced(args: argparse.Namespace) -> str:
    options = options_from(args)  # which may fail like any mode
    out = f"; out {options.out}" if options.out else ""
    print(f"bceval: corpus {options.root} ({options.source}); manifest {options.manifest}{out}", file=sys.stderr)
    return execute(options)


def run(args: argparse.Namespace) -> int:
    """Read the options and run the mode; returns the exit code."""
    mode = getattr(args, "guidance_mode", "validate")
    code = EXIT_FAILED
    try:
        line = guarded(f"Development guidance {TITLES.get(mode, 'run')}", lambda: _announced(args), BcevalError)
    except EvaluationFailed as exc:
        print(exc.render(), file=sys.stderr)
    else:
        print(line)
        code = 0
    if mode == "run" and getattr(args, "junit", None) and args.guidance_out:
        write_guidance_junit(Path(args.guidance_out), Path(args.junit))
    return code


GUIDANCE_COMMAND = Command("guidance", add_parser, run, mode_help)
