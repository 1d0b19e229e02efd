"""`bceval guidance`, once its arguments are read: the argument gate of spec §0, one mode per call, and the one
line it prints (a PASSED/captured line on stdout, or the failure on stderr). Only bceval's own messages are
printed, so no file, JSON or model text can reach the console. Every failure exits 1.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.config.commands import GUIDANCE_MODES
from bceval.errors import EXIT_FAILED, BcevalError
from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.demo import create_demo, workspace_count
from bceval.evaluators.guidance.evidence import capture, load_baseline, protected_roots
from bceval.evaluators.guidance.manifest import load_manifest, load_workspace_map
from bceval.evaluators.guidance.paths import check_separation
from bceval.evaluators.guidance.prepare import prepare
from bceval.evaluators.guidance.runner import print_reads, run_from_files
from bceval.evaluators.guidance.scoring import score

TITLES = {
    "validate": "fixture validation",
    "prepare": "preparation",
    "capture": "baseline capture",
    "score": "scoring",
    "run": "run",
    "demo-workspaces": "demo workspaces",
}
UNSAFE = "the input could not be read safely"


@dataclass(frozen=True)
class Options:
    mode: str
    root: Path
    manifest: Path
    out: Path | None
    workspace_map: Path | None
    baseline: Path | None
    baseline_sha256: str | None
    results: Path | None
    adapter: str | None = None
    agent: Any = None  # run --adapter command: bceval.agents.settings.AgentSettings
    max_cost: float | None = None  # run with a live agent: no new case starts once the run's known cost reaches it
    source: str = "--root"  # how the knowledge checkout was chosen, for the line every command prints

    def context_line(self) -> str:
        out = f"; out {self.out}" if self.out else ""
        return f"bceval: corpus {self.root} ({self.source}); manifest {self.manifest}{out}"


def check_arguments(opts: Options) -> None:
    """The argument gate of §0 in its order, then bceval's one-mode-per-call rule."""
    capturing, scoring = opts.mode == "capture", opts.mode == "score"
    if capturing and (opts.results or opts.out):
        raise GuidanceError("Baseline capture is a separate pre-run operation: do not combine it with --results/--out")
    if (capturing or scoring) and not opts.baseline:
        raise GuidanceError("capture and score require BaselinePath (--baseline FILE)")
    if scoring and not opts.baseline_sha256:
        raise GuidanceError("score requires the runner-retained pre-run BaselineSha256 (--baseline-sha256 HEX)")
    if capturing and not opts.workspace_map:
        raise GuidanceError("capture requires the runner-owned WorkspaceMapPath (--workspace-map MAP)")
    if scoring and (opts.workspace_map or opts.out):
        raise GuidanceError("score binds workspaces from the recorded workspace map of the baseline only")
    if opts.mode in ("prepare", "demo-workspaces") and not opts.out:
        raise GuidanceError(f"{opts.mode} requires --out DIR (a new or empty directory)")
    if opts.mode == "run":
        if not opts.workspace_map:
            raise GuidanceError("run requires the runner-owned WorkspaceMapPath (--workspace-map MAP)")
        if not opts.out:
            raise GuidanceError("run requires --out RUN (a new run directory)")
        if not opts.adapter:
            raise GuidanceError("run requires --adapter NAME (oracle)")
    names = ("out", "workspace_map", "baseline", "baseline_sha256", "results", "adapter")
    refused = {name for name in names if getattr(opts, name)} - set(GUIDANCE_MODES[opts.mode][1])
    if refused:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in sorted(refused))
        raise GuidanceError(f"one mode per call: {opts.mode} does not take {flags}")


def execute(opts: Options) -> str:
    """Run one mode; returns the success line or raises (GuidanceError, ScoringFailed)."""
    check_arguments(opts)
    if opts.mode == "demo-workspaces":
        return _demo_workspaces(opts)
    if opts.mode == "run":
        return _run(opts)
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
        digest, count = capture(manifest, workspaces or {}, opts.baseline)
        return f"Development guidance baseline captured for {count} case(s); baseline SHA-256: {digest}"
    if opts.mode == "prepare":
        directory = prepare(manifest, workspaces, opts.out)
        return f"Development guidance preparation PASSED: {count} case(s) prepared in {directory}"
    if opts.mode == "score":
        outcome = score(manifest, baseline, opts.results)
        if not outcome.passed:
            raise ScoringFailed(outcome.problems)
        return f"Development guidance scoring PASSED: {count} case(s)"
    return f"Development guidance fixture validation PASSED: {count} case(s)"


def _demo_workspaces(opts: Options) -> str:
    runs = create_demo(opts.root, opts.out)
    lines = [
        f"Development guidance demo workspaces created: {workspace_count(runs)} workspace(s) in {runs[0].root.parent}",
        f"  knowledge checkout: {runs[0].root}",
    ]
    for run in runs:
        lines.append(f"  {run.kind} workspace map: {run.workspace_map}")
    for run in runs:
        lines.append(
            f"  try: bceval guidance run --root {run.root} --manifest {run.manifest} "
            f"--workspace-map {run.workspace_map} --adapter oracle --out RUN"
        )
    return "\n".join(lines)


def _run(opts: Options) -> str:
    assert opts.workspace_map and opts.out and opts.adapter  # check_arguments
    manifest, outcome = run_from_files(
        opts.root, opts.manifest, opts.workspace_map, opts.out, opts.adapter, opts.agent, max_cost=opts.max_cost
    )
    print_reads(outcome)
    if not outcome.passed:
        raise ScoringFailed(outcome.problems)
    return f"Development guidance run PASSED: {len(manifest.cases)} case(s) in {opts.out}"


class ScoringFailed(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


def run_mode(mode: str, read_options: Callable[[], Options]) -> int:
    """Read the options (which may fail like any mode) and run the mode; returns the exit code."""
    title = TITLES.get(mode, "run")
    try:
        options = read_options()
        print(options.context_line(), file=sys.stderr)
        line = execute(options)
    except ScoringFailed as exc:
        header = f"Development guidance {title} FAILED with {len(exc.problems)} problem(s):"
        print("\n".join([header, *(f"  - {problem}" for problem in exc.problems)]), file=sys.stderr)
        return EXIT_FAILED
    except (GuidanceError, BcevalError) as exc:  # both are bceval's own one-line words, never an agent's
        print(f"Development guidance {title} FAILED: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except Exception:  # noqa: BLE001 - never a traceback, never foreign text
        print(f"Development guidance {title} FAILED: {UNSAFE}", file=sys.stderr)
        return EXIT_FAILED
    print(line)
    return 0
