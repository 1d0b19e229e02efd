"""`bceval prepare|answer|score|publish|view --evaluator plan|implementation`: answer runs the whole evaluation in
one process (the baseline digest lives only there) into a new OUT/guidance-runs/<kind>/run-NNNN."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from bceval.agents.registry import agent_names, capabilities
from bceval.cli.parser import settings_flags
from bceval.config import Settings, agent_settings, environment_values, load_settings
from bceval.errors import BcevalError
from bceval.evaluators.guidance import MANIFESTS, GuidanceError
from bceval.evaluators.guidance.demo import demo_is_intact, demo_runs
from bceval.evaluators.guidance.steps import (
    GuidanceSettings,
    RunSettings,
    RunTarget,
    make_demo,
    prepare_guidance,
    run_target,
)
from bceval.layout import OutDir
from bceval.steps.run_verdict import print_newest_verdict
from bceval.steps.view import report_view


def guidance_verb(kind: str, verb: str, args: argparse.Namespace) -> int:
    if verb == "view":  # the site shows every evaluator's runs
        return report_view(load_settings(out=args.out).out, args.serve, args.port)
    settings = load_settings(**settings_flags(args))
    manifest = settings.manifest if args.manifest else settings.corpus / MANIFESTS[kind]
    if verb == "prepare":
        out = OutDir(settings.out).guidance / kind
        prepare_guidance(GuidanceSettings(str(settings.corpus), str(manifest), str(out.absolute()), None))
        return 0
    if verb == "answer":
        return _answer(kind, settings, manifest, args.adapter or "oracle")
    if verb == "score":
        return print_newest_verdict(OutDir(settings.out).guidance_runs / kind, "Development guidance run", kind)
    raise BcevalError(
        f"bceval {verb} --evaluator {kind}: the scorecard page holds review runs and experiments; "
        f"a {kind} run's verdict is in its run.json (bceval score --evaluator {kind}; bceval view shows it)"
    )


def _target(kind: str, settings: Settings, manifest: Path) -> tuple[RunTarget, bool]:
    """The manifest to run and its workspaces: BCEVAL_GUIDANCE_WORKSPACE_MAP's, else the corpus's demo ones."""
    given = environment_values("guidance")["workspace_map"]
    if given:
        return RunTarget(kind, str(settings.corpus), str(manifest), str(Path(given).absolute())), False
    demo = OutDir(settings.out).guidance_demo.absolute()
    if not demo_is_intact(demo):
        make_demo(str(settings.corpus), str(demo))
    run = next((run for run in demo_runs(demo) if run.kind == kind), None)
    if run is None or not run.workspace_map.is_file():
        raise GuidanceError(
            f"the corpus {settings.corpus} has no {kind} manifest with demo workspaces; "
            "set BCEVAL_GUIDANCE_WORKSPACE_MAP to run it against workspaces of your own"
        )
    return RunTarget(kind, str(run.root), str(run.manifest), str(run.workspace_map)), True


def _answer(kind: str, settings: Settings, manifest: Path, adapter: str) -> int:
    if adapter not in agent_names("guidance"):
        raise BcevalError(f"the {kind} evaluator answers with {' or '.join(agent_names('guidance'))}, not {adapter}")
    live = capabilities(adapter).live
    agent = agent_settings(replace(settings, adapter=adapter)) if live else None
    target, uses_demo = _target(kind, settings, manifest)
    runs = str(OutDir(settings.out).guidance_runs.absolute())
    demo = str(OutDir(settings.out).guidance_demo.absolute())
    limit = settings.max_cost if live else None
    run_target(RunSettings(adapter, runs, demo, (target,), uses_demo, agent=agent, max_cost=limit), target)
    return 0
