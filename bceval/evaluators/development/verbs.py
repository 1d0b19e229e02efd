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

from bceval.cli.parser import settings_flags
from bceval.config import DEMO_CORPUS, load_settings
from bceval.errors import BcevalError
from bceval.evaluators.development.cli import RUN_SETTINGS, run
from bceval.evaluators.development.tasks import DEMO_AGENT
from bceval.layout import GuidanceRunDir, OutDir
from bceval.steps.run_verdict import print_newest_verdict
from bceval.steps.view import report_view

FLAGS = ("root", "manifest", "capabilities", "out", "results", "workspace_map", "checks", "adapter", "guidance")


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
        return print_newest_verdict(out.development_runs, "Development run", "development")
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
    values.update({name: getattr(args, name, None) for name in RUN_SETTINGS})
    return argparse.Namespace(**values)
