"""The static site `bceval view` writes (docs/viewer.md): every page of an output folder under `out/view/`, then
the pages of an earlier build that no longer have a source are removed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bceval.jsonio import write_atomic
from bceval.viewer.collect import GuidanceRun, ReviewRun, collect
from bceval.viewer.html import safe_name
from bceval.viewer.pages.common import case_href
from bceval.viewer.pages.experiment import CASES_PER_PAGE, experiment_cases_page, experiment_page
from bceval.viewer.pages.guidance import guidance_case_page, guidance_page
from bceval.viewer.pages.index import index_page
from bceval.viewer.pages.review import case_page, compare_page, run_page

ALL_PAIRS_UP_TO = 8  # with at most this many runs every pair gets a compare page; beyond, each run and the next


@dataclass(frozen=True)
class Built:
    pages: int
    written: int  # pages whose bytes changed
    removed: int


def _run_pairs(runs: list[ReviewRun]) -> list[tuple[ReviewRun, ReviewRun]]:
    """Older → newer pairs of the scored runs (by their scorecards' dates)."""
    dated = sorted((run for run in runs if run.cases), key=lambda run: (run.date, run.name))
    if len(dated) <= ALL_PAIRS_UP_TO:
        return [(a, b) for i, a in enumerate(dated) for b in dated[i + 1 :]]
    return list(zip(dated, dated[1:], strict=False))


def build_site(out: Path, dest: Path) -> Built:
    """Write the site of `out` into `dest`; pages nothing renders now go."""
    site = collect(out)
    changed: dict[Path, bool] = {}  # every page written: whether its bytes changed (identical ones are left alone)

    def write(relative: str, text: str) -> None:
        changed[dest / relative] = write_atomic(dest / relative, text)

    run_compares: dict[str, list[tuple[str, str, str]]] = {}
    all_compares: list[tuple[str, str, str]] = []
    for old, new in _run_pairs(site.runs):
        href = f"compare/{safe_name(old.name)}--{safe_name(new.name)}.html"
        write(href, compare_page(old, new, "compare", f"Compare {old.name} → {new.name}"))
        entry = (old.name, new.name, href)
        all_compares.append(entry)
        run_compares.setdefault(old.key, []).append(entry)
        run_compares.setdefault(new.key, []).append(entry)
    for run in site.runs:
        _write_run(write, run, run_compares.get(run.key, []))
    for experiment in site.experiments:
        key = f"experiments/{safe_name(experiment.name)}"
        compares = []
        arms = [str(a.get("name")) for a in experiment.report.get("arms") or []]
        for arm in arms[1:]:
            for epoch in range(1, int(experiment.report.get("epochs") or 1) + 1):
                old, new = experiment.runs.get((arms[0], epoch)), experiment.runs.get((arm, epoch))
                if isinstance(old, ReviewRun) and isinstance(new, ReviewRun):
                    folder = f"compare/{safe_name(experiment.name)}"
                    href = f"{folder}/{safe_name(arm)}-e{epoch}.html"
                    title = f"Experiment {experiment.name}: {arms[0]} → {arm}, epoch {epoch}"
                    write(href, compare_page(old, new, folder, title))
                    compares.append((f"{arms[0]} epoch {epoch}", f"{arm} epoch {epoch}", href))
        cases = experiment.report.get("cases") or []
        count = max(1, -(-len(cases) // CASES_PER_PAGE))
        write(f"{key}/index.html", experiment_page(experiment, key, count, compares))
        for number in range(2, count + 1):
            write(f"{key}/cases-{number}.html", experiment_cases_page(experiment, key, number, count))
        for run in experiment.runs.values():
            _write_run(write, run, [])
    for run in site.guidance:
        _write_run(write, run, [])
    write("index.html", index_page(site, all_compares))
    removed = _prune(dest, set(changed))
    return Built(len(changed), sum(changed.values()), removed)


def _write_run(
    write: Callable[[str, str], None], run: ReviewRun | GuidanceRun, compares: list[tuple[str, str, str]]
) -> None:
    review = isinstance(run, ReviewRun)
    write(f"{run.key}/index.html", run_page(run, compares) if review else guidance_page(run))
    for case in run.cases:
        write(case_href(run.key, case.model_id), case_page(run, case) if review else guidance_case_page(run, case))


def _prune(dest: Path, keep: set[Path]) -> int:
    """Pages of an earlier build that nothing produced now (a removed run or case), and folders left empty."""
    gone = [path for path in dest.rglob("*.html") if path not in keep]  # dest holds the index just written
    for path in gone:
        path.unlink()
    for folder in sorted((p for p in dest.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    return len(gone)
