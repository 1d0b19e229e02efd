"""`bceval development validate | prepare | score`: the lines of spec §2 and their exit codes."""

from __future__ import annotations

import sys
from pathlib import Path

from bceval.corpus.index import knowledge_index_text
from bceval.errors import EXIT_FAILED
from bceval.evaluators.development import DevelopmentError, UnreadableKnowledge
from bceval.evaluators.development.manifest import Loaded, load
from bceval.evaluators.development.prepare import write_prepared
from bceval.evaluators.development.processes import probe_workspace
from bceval.evaluators.development.report import score_results
from bceval.evaluators.development.values import number_text

VALIDATION_FAILED = "Development fixture validation FAILED ({n} problem(s)):"
SCORING_FAILED = "Development fixture scoring FAILED ({n} problem(s)):"


def console(line: str) -> str:
    """A line for the terminal: control characters (ANSI escapes, carriage returns) are shown escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in line)


def problem_block(header: str, problems: list[str]) -> str:
    return "\n".join([header.format(n=len(problems)), *(f"  - {console(p)}" for p in problems)])


def validated(root: Path, manifest: Path | None = None, capabilities: Path | None = None) -> Loaded | None:
    """The loaded manifest, or None after printing the FAILED block."""
    loaded = load(root, manifest, capabilities)
    for warning in loaded.warnings:
        print(f"bceval: warning: {console(warning)}", file=sys.stderr)
    if loaded.problems:
        print(problem_block(VALIDATION_FAILED, loaded.problems))
        return None
    return loaded


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
