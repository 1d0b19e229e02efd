"""The uniform verbs for the development evaluator: `bceval prepare|answer|score|publish --evaluator development`,
with the review commands' flags (--corpus, --manifest, --out, --adapter, the live agent's flags).

prepare writes the requests into OUT/development/; answer is a whole runner-mode run (every case in a fresh copy of
its starting repository, the agent, then runner-owned gates) into a new OUT/development-runs/run-NNNN, with the
gate configuration and workspaces of [tool.bceval.development] or the corpus's checks file; score prints the
verdict of the newest run again; view writes the site of every run; publish refuses (the scorecard page holds
review runs and experiments).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bceval.cli.parser import settings_flags
from bceval.config import DEMO_CORPUS, load_settings
from bceval.errors import EXIT_FAILED, BcevalError
from bceval.evaluators.development.cli import API_SETTINGS, run
from bceval.evaluators.development.runner import DEMO_AGENT
from bceval.jsonio import read_regular_text
from bceval.layout import GuidanceRunDir, OutDir
from bceval.steps.view import report_view

FLAGS = ("root", "manifest", "capabilities", "out", "results", "workspace_map", "checks", "adapter", "guidance")
_SHARED = ("command", "model", "epoch", "timeout", "sandbox", "sandbox_allow", *API_SETTINGS)


def development_verb(verb: str, args: argparse.Namespace) -> int:
    if verb == "view":  # the site shows every evaluator's runs
        return report_view(load_settings(out=args.out).out, args.serve, args.port)
    settings = load_settings(**settings_flags(args))
    out = OutDir(settings.out)
    if verb == "prepare":
        return run(_namespace(args, "prepare", str(settings.corpus), str(out.development)))
    if verb == "answer":
        runs = out.development_runs
        directory = GuidanceRunDir.next_in(runs).path
        given = _namespace(args, "run", str(settings.corpus), str(directory), adapter=args.adapter)
        if not settings.command and settings.corpus.resolve() == DEMO_CORPUS.resolve():
            given.command = DEMO_AGENT  # as `doit development`: the demo's scripted agent, when no command is given
        return run(given)
    if verb == "score":
        return _score(out.development_runs)
    raise BcevalError(
        f"bceval {verb} --evaluator development: the scorecard page holds review runs and experiments; a "
        "development run's verdict is in its run.json (bceval score --evaluator development; bceval view shows it)"
    )


def _namespace(
    args: argparse.Namespace, mode: str, root: str, out: str, adapter: str | None = None
) -> argparse.Namespace:
    """The `bceval development MODE` flags these uniform flags stand for (the rest as if not given)."""
    values = {f"development_{flag}": None for flag in FLAGS}
    values.update(development_mode=mode, development_root=root, development_out=out, development_adapter=adapter)
    values["development_manifest"] = str(args.manifest) if args.manifest else None
    values["development_fail_on_overclaim"] = False
    values.update({name: getattr(args, name, None) for name in _SHARED})
    return argparse.Namespace(**values)


def _score(runs: Path) -> int:
    """The newest run's verdict, from its run.json (a runner-mode run is scored where it ran)."""
    found = sorted(runs.glob("run-*")) if runs.is_dir() else []
    if not found:
        raise BcevalError(f"{runs}: no development run yet; run bceval answer --evaluator development first")
    record = GuidanceRunDir(found[-1]).record
    try:
        problems = json.loads(read_regular_text(record, "utf-8"))["problems"]
    except (OSError, ValueError, KeyError, TypeError):
        raise BcevalError(f"{record}: not a readable run record") from None
    if problems:
        print(f"Development run FAILED with {len(problems)} problem(s): {found[-1]}")
        for problem in problems:
            print(f"  {problem}")
        return EXIT_FAILED
    print(f"Development run PASSED: {found[-1]}")
    return 0
