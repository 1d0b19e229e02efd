"""`bceval development validate | prepare | score`: the lines of spec §2 and their exit codes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Options:
    mode: str
    root: Path
    manifest: Path | None = None
    capabilities: Path | None = None
    out: Path | None = None
    results: Path | None = None


def console(line: str) -> str:
    """A line for the terminal: control characters (ANSI escapes, carriage returns) are shown escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in line)


def problem_block(header: str, problems: list[str]) -> str:
    return "\n".join([header.format(n=len(problems)), *(f"  - {console(p)}" for p in problems)])


def validated(opts: Options) -> Loaded | None:
    """The loaded manifest, or None after printing the FAILED block."""
    loaded = load(opts.root, opts.manifest, opts.capabilities)
    for warning in loaded.warnings:
        print(f"bceval: warning: {console(warning)}", file=sys.stderr)
    if loaded.problems:
        print(problem_block(VALIDATION_FAILED, loaded.problems))
        return None
    return loaded


def run_mode(opts: Options) -> int:
    if opts.mode == "prepare" and opts.out is None:
        raise DevelopmentError("prepare needs --out DIR, the prepare directory")
    if opts.mode == "score" and opts.results is None:
        raise DevelopmentError("score needs --results DIR, the directory of result-case-<hash>.json files")
    if opts.mode == "score" and opts.results is not None and not opts.results.is_dir():
        raise DevelopmentError(f"--results {opts.results} is not a directory")
    if opts.results is not None and opts.out is not None and opts.results.resolve() == opts.out.resolve():
        # §2 tighten: prepare would delete the very results scoring reads
        raise DevelopmentError("--out and --results must be different directories (prepare deletes result files)")
    loaded = validated(opts)
    if loaded is None:
        return EXIT_FAILED
    if opts.out is not None and opts.mode in ("prepare", "score"):
        write_prepared(loaded, opts.out, knowledge_index_text(loaded.root, UnreadableKnowledge))
    if opts.mode == "score":
        scores = score_results(loaded, opts.results, probe_workspace)  # type: ignore[arg-type]
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
