"""The development evaluator's commands: `bceval development` (spec §2, §11: the lines of each mode and their exit
codes, with `[tool.bceval.development]` in pyproject.toml filling the flags not given), `bceval evidence` (§13) and
`bceval findings validate` (upstream-2026-09.md §3)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bceval.cli.parser import add_command, add_options, settings_flags
from bceval.config import DEMO_CORPUS, bceval_table, convert, find_corpus, load_settings
from bceval.config.options import OPTIONS
from bceval.corpus.index import knowledge_index_text
from bceval.errors import EXIT_FAILED, BcevalError
from bceval.evaluators.base import Command
from bceval.evaluators.development import DevelopmentError, UnreadableKnowledge, anchored
from bceval.evaluators.development.contract import LEAF, SUPER, Scope, judge
from bceval.evaluators.development.findings import findings_report_errors
from bceval.evaluators.development.knowledge_response import validate_response
from bceval.evaluators.development.prepare import write_prepared
from bceval.evaluators.development.processes import probe_workspace
from bceval.evaluators.development.report import score_results
from bceval.evaluators.development.runner import (
    DEMO_AGENT,
    RunOptions,
    console,
    problem_block,
    run_development,
    validated,
)
from bceval.evaluators.development.superskill import load_composition
from bceval.evaluators.development.values import number_text
from bceval.jsonio import decode_utf8, parse_json, read_json, read_regular_bytes
from bceval.layout import GuidanceRunDir, OutDir
from bceval.steps.run_verdict import print_newest_verdict
from bceval.steps.view import report_view

API_SETTINGS = ("base_url", "api_key_env", "temperature", "max_turns", "max_output_tokens", "seed")
RUN_SETTINGS = ("command", "model", "epoch", "timeout", "sandbox", "sandbox_allow", "sandbox_allow_rw", *API_SETTINGS)
PYPROJECT_FLAGS = ("root", "manifest", "capabilities", "workspace_map", "checks", "adapter", "guidance")
SCORING_FAILED = "Development fixture scoring FAILED ({n} problem(s)):"
PREFIX = "development_"
TABLE = "[tool.bceval.development]"


def development_pyproject(cwd: Path) -> dict[str, Any]:
    """The [tool.bceval.development] values by key (without `development_`), converted (paths relative to
    pyproject.toml's folder); {} without the table."""
    pyproject, found = bceval_table(cwd)
    table = found.get("development")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise BcevalError(f"{pyproject}: {TABLE} must be a table")
    keys = {o.name.removeprefix(PREFIX): o for o in OPTIONS.values() if o.part == "development" and o.pyproject}
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise BcevalError(f"{pyproject}: {TABLE} has unknown key '{unknown[0]}' (known: {', '.join(sorted(keys))})")
    base = pyproject.parent.resolve()
    values: dict[str, Any] = {"pyproject": pyproject.resolve()}
    for key, value in table.items():
        option, where = keys[key], f"{pyproject}: {TABLE} {key}"
        if key == "checks" and isinstance(value, dict):  # inline checks, read by the checks file's rules
            values["inline_checks"] = {"checks": value}
        elif key == "workspaces":
            if not isinstance(value, dict):
                raise BcevalError(f"{where} must be a table of manifest id -> starting repository")
            for case, source in value.items():
                if not isinstance(source, str) or not source:
                    raise BcevalError(f"{where}.{case} must be a folder or a git repository@commit")
            values[key] = {case: anchored(source, base) for case, source in value.items()}
        elif option.kind == "table":
            if not isinstance(value, dict):
                raise BcevalError(f"{where} must be a table")
            values[key] = value
        elif option.kind == "path":
            values[key] = convert(value, "path", base, where)
        elif option.kind == "switch":
            if not isinstance(value, bool):
                raise BcevalError(f"{where} must be true or false")
            values[key] = value
        else:
            allowed = option.allowed()
            if not isinstance(value, str) or (allowed is not None and value not in allowed):
                wanted = f"one of {', '.join(allowed)}" if allowed else "a string"
                raise BcevalError(f"{where} must be {wanted}")
            values[key] = value
    for key in ("toolchain", "cases"):
        if key in values and "inline_checks" not in values:
            raise BcevalError(f"{pyproject}: {TABLE} {key} applies to inline checks only (checks = {{...}})")
        if key in values:
            values["inline_checks"][key] = values.pop(key)
    return values


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "development",
        help="development fixtures: AL authoring tasks, scored from reports or run by bceval",
        description="Evaluate AL development fixtures: validate, prepare, score reports, or run agents.",
        epilog="Modes: validate the manifest and capability file, prepare requests (--out), score implementation "
        "reports (--results), or run every case in a fresh copy of its starting repository with runner-owned "
        "gates (run --workspace-map MAP --out RUN). Exit 0 when the mode passes, 1 when it fails, 2 on bad input.",
    )
    add_options(parser, "development")
    return parser


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def root_of(args: argparse.Namespace) -> Path:
    if args.development_root:
        return Path(args.development_root)
    return find_corpus(Path.cwd().resolve()) or DEMO_CORPUS


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
        return run_development(RunOptions.from_args(args, root_of(args), settings, project))
    return run_mode(
        mode,
        root_of(args),
        _path(args.development_manifest),
        _path(args.development_capabilities),
        _path(args.development_out),
        _path(args.development_results),
    )


def development_verb(verb: str, args: argparse.Namespace) -> int:
    if verb == "view":  # the site shows every evaluator's runs
        return report_view(args)
    settings = load_settings(**settings_flags(args))
    out = OutDir(settings.out)
    if verb == "prepare":
        return run(_namespace(args, "prepare", str(settings.corpus), str(out.development)))
    if verb == "answer":
        directory = GuidanceRunDir.next_in(out.development_runs).path
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
    values = {f"development_{flag}": None for flag in (*PYPROJECT_FLAGS, "results")}
    values.update(development_mode=mode, development_root=root, development_out=out, development_adapter=adapter)
    values["development_manifest"] = str(args.manifest) if args.manifest else None
    values["development_fail_on_overclaim"] = False
    values.update({name: getattr(args, name, None) for name in RUN_SETTINGS})
    return argparse.Namespace(**values)


def run_mode(
    mode: str,
    root: Path,
    manifest: Path | None = None,
    capabilities: Path | None = None,
    out: Path | None = None,
    results: Path | None = None,
) -> int:
    if mode == "prepare" and out is None:
        raise DevelopmentError("prepare needs --out DIR, the prepare directory")
    if mode == "score" and results is None:
        raise DevelopmentError("score needs --results DIR, the directory of result-case-<hash>.json files")
    if mode == "score" and results is not None and not results.is_dir():
        raise DevelopmentError(f"--results {results} is not a directory")
    if results is not None and out is not None and results.resolve() == out.resolve():
        # §2 tighten: prepare would delete the very results scoring reads
        raise DevelopmentError("--out and --results must be different directories (prepare deletes result files)")
    loaded = validated(root, manifest, capabilities)
    if loaded is None:
        return EXIT_FAILED
    if out is not None and mode in ("prepare", "score"):
        write_prepared(loaded, out, knowledge_index_text(loaded.root, UnreadableKnowledge))
    if mode == "score":
        scores = score_results(loaded, results, probe_workspace)  # type: ignore[arg-type]
        for lint in (lint for score in scores for lint in score.lints):
            print(f"bceval: warning: {console(lint)}", file=sys.stderr)
        problems = [p for score in scores for p in score.problems]
        if problems:
            print(problem_block(SCORING_FAILED, problems))
            return EXIT_FAILED
        print(f"Development fixture scoring PASSED: {len(scores)} case(s).")
        return 0
    print(
        f"Development fixture validation PASSED: {len(loaded.cases)} cases; {loaded.covered} of "
        f"{loaded.capability_count} capabilities have fixtures (minimum {number_text(loaded.minimum_coverage)})."
    )
    return 0


def _read(path: Path, what: str) -> bytes:
    try:
        return read_regular_bytes(path)
    except OSError as exc:
        raise BcevalError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None


def run_validator(args: argparse.Namespace) -> int:
    try:
        if not args.kr_response:
            raise BcevalError("evidence needs RESPONSE, the al-knowledge answer (JSON)")
        response = parse_json(_read(Path(args.kr_response), "RESPONSE"), str(args.kr_response))
        question = decode_utf8(_read(Path(args.kr_question_file), "--question-file"), str(args.kr_question_file))
        evidence = None
        if args.kr_read_evidence:
            evidence = parse_json(_read(Path(args.kr_read_evidence), "--read-evidence"), str(args.kr_read_evidence))
        root = Path(args.kr_root or ".")
        if not root.is_dir():
            raise BcevalError(f"--root {root} is not a folder")
    except BcevalError as exc:
        print(json.dumps({"valid": False, "errors": [str(exc)]}))
        return 2
    layers = [layer.strip() for layer in args.kr_enabled_layers.split(",") if layer.strip()]
    errors = validate_response(
        response, question=question, root=root, run_id=args.kr_run_id, evidence=evidence, enabled_layers=layers
    )
    print(json.dumps({"valid": not errors, "errors": errors}))
    return 1 if errors else 0


DEVELOPMENT_COMMAND = Command("development", add_parser, run)
EVIDENCE_COMMAND = Command(
    "evidence",
    lambda commands: add_command(
        commands, "evidence", "check an al-knowledge answer against its question, corpus and read evidence"
    ),
    run_validator,
)


def run_findings(args: argparse.Namespace) -> int:
    """`bceval findings validate`: the schema, then the expected composition, then the semantic checks (with
    --normalize, the bounded normalization); one line per problem and exit 1, else one line and exit 0."""
    path = Path(args.findings_report)
    report = read_json(path)
    composition = None  # read after the schema passed, as upstream does
    if args.findings_expected_composition and not findings_report_errors(report):
        if not args.findings_super:
            message = "Expected composition is supported only for super-skill reports."
            raise DevelopmentError(f"--expected-composition: {message}")
        composition = load_composition(Path(args.findings_expected_composition))
    corpus = Path(args.findings_corpus or ".")
    if not corpus.is_dir():
        raise DevelopmentError(f"--corpus {corpus} is not a folder")
    kind = SUPER if args.findings_super else LEAF
    scope = Scope(
        corpus,
        frozenset(args.findings_retrieved or ()),
        _path(args.findings_source_root),
        frozenset(args.findings_source or ()),
        kind,
        composition,
    )
    verdict = judge(report, scope, args.findings_normalize)
    if verdict.problems:
        print("\n".join(console(str(problem)) for problem in verdict.problems))  # report text, made inert
        return EXIT_FAILED
    ids, ranges = len(verdict.normalized_ids), len(verdict.removed_ranges)
    how = f", after bounded normalization of {ids} id(s) and {ranges} range(s)" if verdict.normalized else ""
    print(f"Findings-report accepted: {path} ({kind} report{how}).")
    return 0


FINDINGS_COMMAND = Command(
    "findings",
    lambda commands: add_command(
        commands, "findings", "validate a findings-report against upstream's schema and semantic contract"
    ),
    run_findings,
)
