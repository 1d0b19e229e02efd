"""Demo workspaces, so a fresh clone can watch the guidance evidence work end to end: the evidence needs standalone
git repositories, so the corpus and each case's workspace are copied and committed with a fixed author and date
(SOURCE_DATE_EPOCH, else a constant), so their ids depend only on the content."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from bceval.clock import source_date_epoch
from bceval.errors import BcevalError
from bceval.evaluators.guidance import MANIFESTS, GuidanceError
from bceval.evaluators.guidance.manifest import load_manifest
from bceval.evaluators.guidance.paths import safe_path, scan_links
from bceval.jsonio import create_exclusive, dumps, read_regular_text
from bceval.vcs import commit_folder

DEMO_KIND = "bceval-guidance-demo"
MARKER = "demo.json"
KNOWLEDGE = "knowledge"
WORKSPACES = "workspaces"
WORKSPACE_SOURCES = Path("evaluation") / "guidance-workspaces"
DEFAULT_EPOCH = 1735689600  # 2025-01-01T00:00:00Z, when SOURCE_DATE_EPOCH is not set
_AUTHOR = ("bceval demo", "demo@bceval.invalid")


def map_name(kind: str) -> str:
    return f"workspace-map.{kind}.json"


@dataclass(frozen=True)
class RunTarget:
    """One manifest to run (`bceval guidance run`, a graph subtask): its name (a demo's: its kind), checkout, manifest
    and workspace map."""

    name: str
    root: Path
    manifest: Path
    workspace_map: Path


def demo_runs(directory: Path) -> list[RunTarget]:
    """Where the demo in `directory` keeps (or will keep) each manifest and its map; no I/O."""
    knowledge = directory / KNOWLEDGE
    return [RunTarget(kind, knowledge, knowledge / rel, directory / map_name(kind)) for kind, rel in MANIFESTS.items()]


def _committed_copy(
    source: Path, destination: Path, epoch: int, message: str, skip: frozenset[Path] = frozenset()
) -> None:
    """Copy a tree's bytes (content only: new inodes, no links; not the folders in `skip`) and commit it as a new
    repository."""

    def ignored(folder: str, names: list[str]) -> list[str]:
        return [name for name in names if Path(folder, name) in skip]

    shutil.copytree(source, destination, copy_function=shutil.copyfile, ignore=ignored)
    try:
        commit_folder(destination, message, epoch, _AUTHOR)
    except BcevalError:
        raise GuidanceError(f"Demo repository {destination} could not be created with git") from None


def create_demo(corpus: Path, directory: Path, in_output: bool = False) -> list[RunTarget]:
    """Build the demo into a new or empty `directory` from `corpus` (bceval's demo corpus, or a corpus's own
    guidance manifests and workspaces). `in_output`: `directory` is in bceval's output folder, which may sit
    inside the corpus (the graph's `<out>/guidance-demo`); that folder is then left out of the copy, and an earlier
    (possibly half-built) demo there is replaced; anything foreign is refused."""
    out = safe_path(directory, f"Demo directory {directory}", missing_ok=True)
    ours = {KNOWLEDGE, WORKSPACES, MARKER, *(map_name(kind) for kind in MANIFESTS)}
    if in_output and os.path.lexists(out) and out.is_dir() and all(entry.name in ours for entry in out.iterdir()):
        shutil.rmtree(out)  # only names an earlier demo wrote: ours to replace
    if os.path.lexists(out) and (not out.is_dir() or any(out.iterdir())):
        raise GuidanceError(f"Demo directory {out} must be new or empty")
    source = safe_path(corpus, f"Demo corpus {corpus}", kind="dir")
    # A corpus of one's own holds its git folder and, usually, bceval's output folder (where the demo goes):
    # neither is part of the knowledge checkout.
    skip = frozenset({source / ".git"})
    if out.is_relative_to(source):
        inside = out.relative_to(source).parts
        if not (inside and in_output):  # only bceval's own output folder may sit inside the corpus
            raise GuidanceError(f"Demo directory {out} must be outside the demo corpus")
        skip |= {source / inside[0]}
    scan_links(source, "Demo corpus", skip)
    runs = [run for run in demo_runs(out) if (source / MANIFESTS[run.name]).is_file()]  # the manifests it has
    if not runs:
        raise GuidanceError(f"Demo corpus {source} has no guidance manifest ({', '.join(MANIFESTS.values())})")
    cases: dict[str, list[str]] = {}
    for run in runs:  # validate first, so a broken corpus writes nothing
        manifest = load_manifest(source, source / MANIFESTS[run.name])
        cases[run.name] = [case.id for case in manifest.cases]
        for case_id in cases[run.name]:
            safe_path(source / WORKSPACE_SOURCES / case_id, f"Demo workspace source for '{case_id}'", kind="dir")
    moment = source_date_epoch()  # its error is bceval's own line, as a GuidanceError's
    epoch = int(moment.timestamp()) if moment else DEFAULT_EPOCH
    out.mkdir(parents=True, exist_ok=True)
    _committed_copy(source, out / KNOWLEDGE, epoch, "bceval demo knowledge checkout", skip)
    for run in runs:
        bound = {case_id: str(out / WORKSPACES / case_id) for case_id in cases[run.name]}
        for case_id, path in bound.items():
            _committed_copy(source / WORKSPACE_SOURCES / case_id, Path(path), epoch, f"demo workspace {case_id}")
        create_exclusive(run.workspace_map, dumps(bound).encode("utf-8"))
    record = {
        "kind": DEMO_KIND,
        "version": 1,
        "knowledge": str(out / KNOWLEDGE),
        "runs": [
            {"kind": run.name, "manifest": str(run.manifest), "workspaceMap": str(run.workspace_map)} for run in runs
        ],
    }
    create_exclusive(out / MARKER, dumps(record).encode("utf-8"))  # last: a demo with a marker is complete
    return runs


def workspace_count(runs: list[RunTarget]) -> int:
    return sum(len(json.loads(read_regular_text(run.workspace_map, "utf-8"))) for run in runs)


def demo_is_intact(directory: Path) -> bool:
    """Cheap: the marker, the knowledge repository and every mapped workspace repository are there."""
    try:
        if not (directory / MARKER).is_file() or not (directory / KNOWLEDGE / ".git").is_dir():
            return False
        made = {run["kind"] for run in json.loads((directory / MARKER).read_text(encoding="utf-8"))["runs"]}
        runs = [run for run in demo_runs(directory) if run.name in made]
        for run in runs:
            bound = json.loads(read_regular_text(run.workspace_map, "utf-8"))
            if not all(isinstance(p, str) and os.path.isdir(os.path.join(p, ".git")) for p in bound.values()):
                return False
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return False
    return True
