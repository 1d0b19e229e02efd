"""The output folder's layout as objects: every file name bceval writes under `out/` is spelled here, once
(docs/ shows the tree). Part of the foundation: only plain paths and names, and the result-file listing."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.ordering import sort_key


class _Below:
    """A path a fixed way below a folder's own, declared once: `results = _Below("results")` is `<path>/results`."""

    def __init__(self, *parts: str) -> None:
        self.parts = parts

    def __get__(self, folder: Any, owner: Any = None) -> Path:
        return folder.path.joinpath(*self.parts)


class _Named(_Below):
    """A file named after a value, declared once: `prompt = _Named("{}.txt".format, "prompts")` makes
    `prompt(sha)` `<path>/prompts/<sha>.txt`; a report's value is its suffix (`report()`: report.json)."""

    def __init__(self, name: Callable[[str], str], *parts: str) -> None:
        super().__init__(*parts)
        self.name = name

    def __get__(self, folder: Any, owner: Any = None) -> Callable[..., Path]:
        return lambda value="json": folder.path.joinpath(*self.parts, self.name(value))


# --- result files ------------------------------------------------------------------------------------------------

CASE_PATTERN = "result-case-*.json"
ANY_PATTERN = "result-*.json"
INFRA_PATTERN = "infra-case-*.json"
result_name = "result-{}.json".format  # of a model id
infra_name = "infra-{}.json".format


def _files(directory: Path) -> list[Path]:
    """The files of `directory` (through symbolic links), sorted by name; none if it is not there."""
    try:
        with os.scandir(directory) as entries:  # its file types come with the listing: no stat per file
            files = [directory / entry.name for entry in entries if entry.is_file()]
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    return sorted(files, key=lambda path: sort_key(path.name))


def _matching(files: list[Path], pattern: str) -> list[Path]:
    return [path for path in files if fnmatch.fnmatch(path.name, pattern)]


def run_entries(directory: Path) -> tuple[list[Path], list[Path]]:
    """(result_files, infra_files) of a run's results folder, from one listing; no result files is [] here."""
    if not directory.is_dir():
        raise BcevalError(f"{directory}: results directory does not exist")
    files = _files(directory)
    return _matching(files, CASE_PATTERN) or _matching(files, ANY_PATTERN), _matching(files, INFRA_PATTERN)


def result_files(directory: Path) -> list[Path]:
    """`result-case-*.json` when any exist, else every `result-*.json`; sorted, never empty."""
    found = run_entries(directory)[0]
    if not found:
        raise BcevalError(f"{directory}: no result files ({CASE_PATTERN} or {ANY_PATTERN})")
    return found


def infra_files(directory: Path) -> list[Path]:
    return _matching(_files(directory), INFRA_PATTERN)


# --- the prepare directory ---------------------------------------------------------------------------------------

MARKER_NAME = ".bcquality-evaluation"  # claims the folder as bceval's
INCOMPLETE_NAME = ".bceval-incomplete"  # present while a prepare run has not finished
KNOWLEDGE_INDEX = "knowledge-index.json"
REVIEW_REQUEST = "review-request.json"
# Top-level names a prepare run owns inside a marked directory (the reference's wildcards).
OWNED_PATTERNS = ("case*.al", REVIEW_REQUEST, "request-*.json", KNOWLEDGE_INDEX, "index-*.json")


domain_index_name = "index-{}.json".format
domain_request_name = "request-{}.json".format
case_request_name = "request-{}.json".format  # `request-case-<hash>.json`: one ranked case (review and guidance)
# case_request_name of a model id (`case-` and 8 hex digits, bceval.evaluators.review.neutral.model_id)
CASE_REQUEST = re.compile(r"request-case-[0-9a-f]{8}\.json")
case_file_name = "{}.al".format


@dataclass(frozen=True)
class GuidancePrepareDir:
    """A guidance preparation (`<out>/guidance/`, or a guidance run's requests/): the knowledge index and one
    request per case, nothing else; a review preparation (PrepareDir) holds these too."""

    path: Path
    knowledge_index = _Below(KNOWLEDGE_INDEX)
    case_request = _Named(case_request_name)

    @staticmethod
    def owns(name: str) -> bool:
        """Whether a file of this name is one a guidance preparation writes."""
        return name == KNOWLEDGE_INDEX or CASE_REQUEST.fullmatch(name) is not None


@dataclass(frozen=True)
class PrepareDir(GuidancePrepareDir):
    marker = _Below(MARKER_NAME)
    incomplete = _Below(INCOMPLETE_NAME)
    review_request = _Below(REVIEW_REQUEST)
    domain_index = _Named(domain_index_name)
    domain_request = _Named(domain_request_name)
    case_file = _Named(case_file_name)

    @staticmethod
    def owns(name: str) -> bool:
        """Whether a file of this name is one a review preparation writes (any letter case)."""
        lowered = name.lower()
        return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in OWNED_PATTERNS)

    @staticmethod
    def expected_names(domains: list[str], model_ids: list[str]) -> set[str]:
        """The exact file set of a finished prepare directory (besides the marker)."""
        names = {KNOWLEDGE_INDEX, REVIEW_REQUEST}
        for domain in domains:
            names |= {domain_index_name(domain), domain_request_name(domain)}
        for model_id in model_ids:
            names |= {case_file_name(model_id), case_request_name(model_id)}
        return names


# --- the build directory -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildDir:
    """`<out>/.build/`: review/ holds what prepare derives (cases, rows, candidates)."""

    path: Path
    FOLDERS = ("rows", "cases", "domains")  # the review folders whose files are pruned when their group vanishes
    review = _Below("review")
    cases = _Below("review", "cases.json")
    domain_cases = _Named("{}.json".format, "review", "cases")
    domain_articles = _Named("{}.json".format, "review", "domains")

    def rows(self, group: str) -> Path:
        return self.review / "rows" / (group.replace("/", "__") + ".json")


# --- runs --------------------------------------------------------------------------------------------------------

RUN_RECORD = "run.json"
TRANSCRIPTS = "transcripts"


@dataclass(frozen=True)
class RunDir:
    """One run (a review run under `runs/<run>/`, or a guidance run directory): nothing else writes here."""

    path: Path
    record = _Below(RUN_RECORD)
    results = _Below("results")
    # what bceval wrote into results/ since run.json last took it in, one line per file (runs.record.note_written)
    written_journal = _Below(".written.log")
    transcripts = _Below(TRANSCRIPTS)
    prompts = _Below("prompts")  # the prompts a live agent was sent, each once, named by its SHA-256
    requests = _Below("requests")  # a guidance or development run's prepared requests
    score = _Below("score.json")
    transcript = _Named("{}.json".format, TRANSCRIPTS)
    prompt = _Named("{}.txt".format, "prompts")  # by the prompt's SHA-256
    scorecard = _Named("scorecard.{}".format)


# --- guidance preparations and runs ------------------------------------------------------------------------------


GUIDANCE_RUN = re.compile(r"run-(\d+)")  # a guidance run directory: run-0001, run-0002, ...


@dataclass(frozen=True)
class GuidanceRunDir(RunDir):
    """One guidance run: run.json (its verdict), requests/, evidence/baseline.json, results/, transcripts/."""

    baseline = _Below("evidence", "baseline.json")
    result = _Named(result_name, "results")

    @property
    def prepared(self) -> GuidancePrepareDir:
        return GuidancePrepareDir(self.requests)

    @staticmethod
    def next_in(base: Path) -> GuidanceRunDir:
        """`run-0001`, `run-0002`, ...: one past the highest number under `base`, so no run is reused."""
        names = [entry.name for entry in base.iterdir()] if base.is_dir() else []
        numbers = [int(match.group(1)) for name in names if (match := GUIDANCE_RUN.fullmatch(name))]
        return GuidanceRunDir(base / f"run-{max(numbers, default=0) + 1:04d}")


# --- development runs ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DevelopmentCaseDir:
    """One case of a development run: `development/<model id>/` (spec §11.9)."""

    path: Path

    request = _Below("request.json")
    base = _Below("base.json")
    agent = _Below("agent")
    result = _Below("result.json")
    patch = _Below("diff.patch")
    changed_paths = _Below("changed-paths.json")
    checks = _Below("checks")
    evidence = _Below("evidence.json")
    verdict = _Below("verdict.json")
    workspace = _Below("workspace")  # kept when the case did not pass
    check_log = _Named("{}.log".format, "checks")


@dataclass(frozen=True)
class DevelopmentRunDir(RunDir):
    """A development run: run.json, requests/ (a development preparation), results/ (the wrappers, as report
    mode scores them), transcripts/, and development/<model id>/ per case."""

    def case(self, model_id: str) -> DevelopmentCaseDir:
        return DevelopmentCaseDir(self.path / "development" / model_id)


# --- experiments -------------------------------------------------------------------------------------------------

EXPORT_DONE = ".bceval-export"  # written last into a corpus export: one without it was interrupted


@dataclass(frozen=True)
class ExperimentDir:
    path: Path
    file = _Below("experiment.yaml")  # the experiment file `experiment ab` writes
    # what the experiment's answers cost, one JSON line per paid answer: its budget (maxCost) reads it
    cost_ledger = _Below("cost-ledger.jsonl")
    report = _Named("report.{}".format)
    # a development experiment's secondary outcomes per arm (bceval.evaluators.development.arms)
    development_summary = _Named("development-summary.{}".format)

    def variant(self, name: str) -> OutDir:
        """A prepare variant: an output folder of its own, shared by the arms reading the same corpus and manifest."""
        return OutDir(self.path / "variants" / name)

    def guidance_runs(self, variant: str, arm: str, epoch: int) -> Path:
        """Where a guidance arm's epoch keeps its run directories."""
        return self.variant(variant).guidance / f"{arm}-e{epoch}"

    def budget_stop(self, variant: str, arm: str, epoch: int) -> Path:
        """Beside a guidance arm's epoch runs: the note that the experiment's budget stopped it before it started."""
        return self.guidance_runs(variant, arm, epoch) / "not-started-budget.json"


# --- the output folder -------------------------------------------------------------------------------------------


def cached_answer(cache: Path, key: str) -> Path:
    """One live answer in the answer cache (`<out>/cache/answers/` unless an experiment shares another)."""
    return cache / f"{key}.json"


@dataclass(frozen=True)
class OutDir:
    path: Path
    doit_db = _Below(".bceval.doit.db")
    lock = _Below(".bceval.lock")  # held while a graph runs on this folder
    runs = _Below("runs")
    answer_cache = _Below("cache", "answers")
    bench_report = _Below("bench.json")  # `doit bench`'s report
    # the default guidance preparation (a GuidancePrepareDir); an experiment variant's guidance runs
    guidance = _Below("guidance")
    guidance_runs = _Below("guidance-runs")  # `doit guidance`'s runs: guidance-runs/<manifest>/run-NNNN
    guidance_demo = _Below("guidance-demo")  # the demo checkout, workspaces and maps of `doit guidance`
    experiments = _Below("experiments")
    development = _Below("development")  # `doit development_prepare`'s development preparation
    development_runs = _Below("development-runs")  # `doit development`'s runs: development-runs/run-NNNN
    view = _Below("view")  # `bceval view`'s static site
    health = _Named("health.{}".format)
    coverage = _Named("coverage.{}".format)  # `doit coverage`'s report (JSON) and its table (md)

    @property
    def prepare(self) -> PrepareDir:
        return PrepareDir(self.path / "review")

    @property
    def build(self) -> BuildDir:
        return BuildDir(self.path / ".build")

    def run(self, name: str) -> RunDir:
        return RunDir(self.runs / name)

    def experiment(self, name: str) -> ExperimentDir:
        return ExperimentDir(self.experiments / name)

    @property
    def own_folders(self) -> tuple[Path, ...]:
        """The folders bceval makes under <out>/ and owns entirely (its top-level files are its own too)."""
        names = ("review", ".build", "runs", "cache", "guidance", "guidance-runs", "guidance-demo", "experiments")
        return tuple(self.path / name for name in (*names, "corpora"))

    def corpus_export(self, commit: str, subdir: str) -> Path:
        """Where the corpus at `commit` is exported (once per commit and folder, shared by experiments)."""
        suffix = "-" + hashlib.sha256(subdir.encode("utf-8")).hexdigest()[:8] if subdir else ""
        return self.path / "corpora" / f"{commit}{suffix}"
