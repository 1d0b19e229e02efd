"""`bceval experiment run|report|publish|plan|ab`: the experiment commands (the graph does the work)."""

from __future__ import annotations

import argparse
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from bceval.cli.parser import add_options, sentence, settings_flags
from bceval.config import MANIFEST_RELATIVE, Settings, load_settings
from bceval.errors import BcevalError
from bceval.experiment.model import ExperimentFile
from bceval.experiment.plan import load_plan, resolve
from bceval.experiment.sequential import until_decided
from bceval.graph.loader import run_graph
from bceval.jsonio import write_atomic
from bceval.layout import OutDir
from bceval.outdir import ensure_output_dir
from bceval.steps.ci import experiment_outputs
from bceval.steps.experiment import publish_report, write_report
from bceval.steps.experiment_report import plan_experiment, selected_cases
from bceval.steps.experiment_sequential import simulate_experiment

AGENT_FLAGS = ("adapter", "command", "model", "isolation", "sandbox", "sandbox_allow", "sandbox_allow_rw")


def _settings(args: argparse.Namespace, experiment: Path) -> Settings:
    settings = load_settings(**{**settings_flags(args), "experiment": str(experiment)})
    # --case and -k replace the file's cases and k; BCEVAL_CASES, BCEVAL_K and pyproject.toml do not
    selection = {name: getattr(settings, name) if getattr(args, name, None) else () for name in ("cases", "patterns")}
    until = bool(getattr(args, "until_decided", False))
    return replace(settings, no_share=bool(getattr(args, "no_share", False)), until_decided=until, **selection)


def _ab_experiment(args: argparse.Namespace, settings: Settings) -> tuple[ExperimentFile, Path]:
    """The two arms `experiment ab` runs, the corpus at --base against the corpus at --head, and where its file goes
    (written once it resolves, so report and publish can name it like any other); a value its flags gave that no
    arm may have is one line naming the flag."""
    if args.epochs < 1:
        raise BcevalError("--epochs must be at least 1")
    defaults: dict[str, Any] = {name: getattr(args, name, None) for name in AGENT_FLAGS}
    defaults["sandboxAllow"] = defaults.pop("sandbox_allow")
    defaults["sandboxAllowRw"] = defaults.pop("sandbox_allow_rw")
    defaults["corpus"] = str(settings.corpus)
    # The corpus's own manifest is each ref's own (a ref without one is evaluated by convention); only a manifest
    # named by --manifest or BCEVAL_MANIFEST is pinned for both arms.
    if settings.manifest is not None and settings.manifest != settings.corpus / MANIFEST_RELATIVE:
        manifest = settings.manifest.resolve()
        try:  # inside the corpus: each arm reads its own ref's version of it
            defaults["manifest"] = manifest.relative_to(settings.corpus.resolve()).as_posix()
        except ValueError:  # elsewhere: both arms read this one file
            defaults["manifest"] = str(manifest)
    document = {
        "name": args.name or re.sub(r"[^A-Za-z0-9._-]+", "-", f"ab-{args.base}-{args.head}").strip("-.")[:100] or "ab",
        "epochs": args.epochs,
        "cases": args.cases or [],
        "k": args.patterns or [],
        "defaults": {k: v for k, v in defaults.items() if v is not None},
        "arms": [{"name": "base", "ref": args.base}, {"name": "head", "ref": args.head}],
    }
    try:
        experiment = ExperimentFile.model_validate(document)
        if args.until_decided:  # the file says so: its report and reruns hold to the same design
            experiment = until_decided(experiment)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = first["loc"]
        name = str(location[1] if location[0] == "defaults" and len(location) > 1 else location[0])
        flag = "--" + re.sub(r"([A-Z])", r"-\1", name).lower()  # sandboxAllow: --sandbox-allow
        raise BcevalError(f"{flag}: {first['msg'].removeprefix('Value error, ')}") from None
    return experiment, OutDir(settings.out).experiment(experiment.name).file


def _write_ab_file(experiment: Any, path: Path) -> None:
    """The `ab` experiment's file: its name and epochs, and the fields that differ from their defaults. One that
    exists already must have been run with these settings: its runs and report would otherwise mix two agents (as
    runs refuse other agent settings)."""
    now = {"name": experiment.name, "epochs": experiment.epochs}
    now.update(experiment.model_dump(mode="json", exclude_defaults=True))
    try:
        before = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError):  # none yet (or none bceval wrote)
        before = None
    # more (or fewer) epochs and cases only add (or leave out) runs of the same arms; anything else makes other arms
    same = {"epochs": None, "cases": None, "k": None}
    old = {**before, **(before.get("defaults") or {}), **same} if isinstance(before, dict) else None
    new = {**now, **now.get("defaults", {}), **same}
    if old is not None and old != new:
        keys = sorted(set(old) | set(new))
        differs = next((key for key in keys if key != "defaults" and old.get(key) != new.get(key)), "defaults")
        was, changed = (
            ("the default" if value is None else repr(value)) for value in (old.get(differs), new.get(differs))
        )
        raise BcevalError(
            f"{path.parent}: experiment '{experiment.name}' was run with another {differs} ({was}, now {changed}); "
            "name this one with --name, or remove that folder"
        )
    write_atomic(path, "# written by `bceval experiment ab`\n" + yaml.safe_dump(now, sort_keys=False))


MODES = {  # mode: (its one line in `experiment --help`, its description where that is not the line itself)
    "run": (
        "answer every (arm, epoch, case) still missing, then report",
        "Answer every (arm, epoch, case) still missing, then write the report.",
    ),
    "report": ("write the report from the answers there are (e.g. merged shards)", None),
    "publish": ("add the experiment's report to the committed page", None),
    "plan": (
        "how many cases and epochs find a given difference (a seeded simulation)",
        "How many cases and epochs find a given mean per-case difference, from a seeded simulation of the "
        "report's verdict (using the control's pass rates of the experiment's last report, if there is one).",
    ),
    "simulate": (
        "how many answers stopping once the verdict is clear saves (a seeded simulation)",
        "Simulate the file's design (its stop, else stop's defaults) under no effect and under its planned effect, "
        "beside the fixed design of the same power, and write expected answers, power and type-I error as JSON.",
    ),
    "ab": ("two arms without a file: the corpus at --base against the corpus at --head", None),
}


def add_parser(commands: Any) -> None:
    """The `experiment` subcommand and its modes."""
    text = "run matched arms over repeated epochs and compare them case by case"
    experiment = commands.add_parser("experiment", help=text, description=sentence(text))
    modes = experiment.add_subparsers(dest="experiment_mode", required=True, metavar="MODE")
    for mode, (text, description) in MODES.items():
        parser = modes.add_parser(mode, help=text, description=description or sentence(text))
        add_options(parser, f"experiment {mode}")


def run(args: argparse.Namespace) -> int:
    """One experiment command; BcevalError from here is one line in bceval.cli.main."""
    if args.experiment_mode == "ab":
        base = load_settings(**settings_flags(args, ("corpus", "out", "manifest")))
        experiment, file = _ab_experiment(args, base)
        settings = _settings(args, file)
        flags = {("arms", 0, "ref"): "--base", ("arms", 1, "ref"): "--head"}
        # refs and arms are checked before anything is written
        plan = resolve(experiment, settings, None, lambda location: flags.get(location, "experiment ab"))
        ensure_output_dir(settings.out)  # its .gitignore first: the file below would make the folder
        _write_ab_file(experiment, file)
        plan = replace(plan, source=file)
    else:
        settings = _settings(args, Path(args.file))
        plan = load_plan(settings)
    if args.experiment_mode == "publish":
        page = Path(args.page).resolve() if args.page else (Path.cwd() / "evaluation" / "experiments.md").resolve()
        publish_report(plan, page)
        return 0
    if args.experiment_mode == "plan":
        plan_experiment(plan, args.effect, args.power)
        return 0
    verbose = getattr(args, "verbose", False)
    if args.experiment_mode == "simulate":  # the cases it covers are known once its variants are prepared
        code = run_graph(settings, ["experiment_prepare"], verbose=verbose)
        if not code:
            cases = len(selected_cases(plan, settings)[plan.control.name])
            simulate_experiment(plan, cases, args.seeds, Path(args.json), args.base_rates)
        return code
    report = args.experiment_mode == "report" or getattr(args, "report", False)
    if report:  # the report from the answers there are, once every variant is prepared
        code = run_graph(settings, ["experiment_prepare"], verbose=verbose)
        if code:
            return code
        write_report(settings, lambda: plan, lambda: selected_cases(plan, settings))
    else:
        code = run_graph(settings, ["experiment"], verbose=verbose)
    junit = getattr(args, "junit", None)
    return experiment_outputs(plan.folder.path, code, Path(junit) if junit else None, report)
