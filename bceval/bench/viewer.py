"""The viewer's measurement: a synthetic experiment of A arms x E epochs x C cases, the site built cold and again,
and (with chromium and Playwright) how long its pages take to load from file://."""

from __future__ import annotations

import random
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from bceval.bench.measure import progress
from bceval.evaluators.registry import DEFAULT
from bceval.jsonio import dumps
from bceval.layout import OutDir, RunDir, result_name
from bceval.viewer.site import build_site

DOMAINS = ("performance", "security", "ui", "events", "upgrade", "error-handling")
PROMPT = "You are reviewing Business Central AL code. " * 40


def _case(number: int) -> dict[str, Any]:
    domain = DOMAINS[number % len(DOMAINS)]
    positive = number % 2 == 0
    article = f"microsoft/knowledge/{domain}/article-{number // 2}"
    return {
        "id": f"{domain}-{'positive' if positive else 'clean'}-{number}",
        "modelId": f"case-{number:08x}",
        "domain": domain,
        "input": f"{article}.{'bad' if positive else 'good'}.al",
        "expected": [f"{article}.md"] if positive else [],
    }


def _write(path: Path, document: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else dumps(document), encoding="utf-8")


def generate_site_input(out: Path, arms: int, epochs: int, cases: int, seed: int = 11) -> None:
    """Write the experiment `bench-view` into `out` as the viewer reads it: the variant's prepared cases, every
    answer (its result and a two-attempt transcript) and the experiment's report.json and report.md."""
    rng = random.Random(seed)
    where = OutDir(out).experiment("bench-view")
    variant = where.variant("v")
    records = [_case(n) for n in range(cases)]
    _write(
        variant.build.cases, {"cases": records, "thresholds": {"minimumExpectedRecall": 1.0, "minimumCleanRate": 1.0}}
    )
    request = {
        "protocol": "Review this case.",
        "skill": "microsoft/skills/review/al-x-review.md",
        "leafInstructions": "Review the code." * 20,
        "candidateArticles": [
            {
                "path": f"microsoft/knowledge/x/article-{n}.md",
                "title": f"Article {n}",
                "description": "A rule.",
                "keywords": ["findset", "loop"],
            }
            for n in range(10)
        ],
    }
    for case in records:
        _write(variant.prepare.case_request(case["modelId"]), request)
        _write(variant.prepare.case_file(case["modelId"]), "procedure X()\nbegin\nend;\n" * 15)
    names = [f"arm{n}" for n in range(arms)]
    outcomes: dict[str, dict[str, list[bool]]] = {case["id"]: {arm: [] for arm in names} for case in records}
    for number, arm in enumerate(names):
        for epoch in range(1, epochs + 1):
            run = variant.run(f"{arm}-e{epoch}")
            _write(run.prompt("0" * 64), PROMPT)
            _write(run.record, {"name": run.path.name, "adapter": "command", "epoch": epoch})
            for case in records:
                passed = rng.random() < 0.4 + 0.15 * number
                outcomes[case["id"]][arm].append(passed)
                _write_answer(run, case, epoch, passed)
    report = {
        "name": "bench-view",
        "epochs": epochs,
        "createdAt": "2026-01-01T00:00:00Z",
        "arms": [_arm_report(arm, epochs, records, outcomes) for arm in names],
        "comparisons": [{"arm": arm, "control": names[0], "result": COMPARISON} for arm in names[1:]],
        "cases": [{**case, "kind": _kind(case), "outcomes": outcomes[case["id"]]} for case in records],
    }
    _write(where.report(), report)
    table = "\n".join(f"| {c['id']} | {_kind(c)} |" for c in records)
    _write(where.report("md"), f"# Experiment bench-view\n\n## Cases\n\n| Case | Kind |\n|---|---|\n{table}\n")


COMPARISON = {
    "verdict": "better",
    "explanation": "synthetic",
    "recall": {"difference": 0.1, "interval": {"low": 0.0, "high": 0.2}},
    "clean_rate": {"difference": 0.05, "interval": {"low": -0.05, "high": 0.15}},
}


def _kind(case: dict[str, Any]) -> str:
    return "positive" if case["expected"] else "clean"


def _write_answer(run: RunDir, case: dict[str, Any], epoch: int, passed: bool) -> None:
    """One answer as a live agent leaves it: its result file and a two-attempt transcript."""
    findings = case["expected"] if passed else [] if case["expected"] else ["microsoft/knowledge/x/wrong.md"]
    transcript = run.transcript(case["modelId"])
    record = {"epoch": epoch, "transcript": transcript.relative_to(run.path).as_posix(), "usage": {"costUsd": 0.01}}
    result = {"cases": [{"id": case["modelId"], "findings": [{"id": f} for f in findings]}], "record": record}
    _write(run.results / result_name(case["modelId"]), result)
    attempt = {
        "promptSha256": "0" * 64,
        "outcome": "answered",
        "stdout": '{"type":"result","result":"..."}\n' * 20,
        "stderr": "log\n" * 20,
    }
    attempts = [{"attempt": n, **attempt} for n in (1, 2)]
    _write(transcript, {"run": run.path.name, "attempts": attempts, "view": {"sha256": "1" * 64, "files": []}})


def _arm_report(arm: str, epochs: int, records: list[dict[str, Any]], outcomes: dict) -> dict[str, Any]:
    """An arm's summary as the viewer reads it: passed and total of each rate, overall and per epoch."""

    def rate(kind: str, epoch: int | None = None) -> dict[str, int]:
        runs = [outcomes[c["id"]][arm] for c in records if _kind(c) == kind]
        picked = [o[epoch] for o in runs] if epoch is not None else [v for o in runs for v in o]
        return {"passed": sum(picked), "total": len(picked)}

    summary = {
        "recall": rate("positive"),
        "clean_rate": rate("clean"),
        "per_epoch": [{"recall": rate("positive", e), "clean_rate": rate("clean", e)} for e in range(epochs)],
        "flaky_cases": [c["id"] for c in records if 0 < sum(outcomes[c["id"]][arm]) < epochs],
    }
    return {
        "name": arm,
        "evaluator": DEFAULT,
        "variant": "v",
        "settings": {"adapter": "command", "model": "bench"},
        "summary": summary,
        "usage": {"costUsd": 0.01 * epochs * len(records)},
    }


def _load_times(pages: dict[str, Path]) -> dict[str, Any]:
    """Median navigation duration (ms) of each page from file:// in chromium, or why it was not measured."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:  # an optional test dependency: without it the load times are skipped
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "Playwright for Python is not installed"}
    if chromium is None:
        return {"skipped": "no chromium on PATH"}
    measured: dict[str, Any] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        for label, path in pages.items():
            times = []
            for _ in range(3):
                page.goto(path.as_uri())
                times.append(page.evaluate("performance.getEntriesByType('navigation')[0].duration"))
            measured[label] = round(statistics.median(times), 1)
        browser.close()
    return measured


def measure_view(scratch: Path, arms: int, epochs: int, cases: int) -> dict[str, Any]:
    out = scratch / "view-out"
    progress(f"bench: viewer of {arms} arms x {epochs} epochs x {cases} cases ({arms * epochs * cases} answers)")
    generate_site_input(out, arms, epochs, cases)
    view = OutDir(out).view
    started = time.perf_counter()
    built = build_site(out, view)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    build_site(out, view)
    warm = time.perf_counter() - started
    experiment = view / "experiments" / "bench-view" / "index.html"
    index = view / "index.html"
    loads = _load_times({"index": index, "experiment": experiment})
    return {
        "arms": arms,
        "epochs": epochs,
        "cases": cases,
        "answers": arms * epochs * cases,
        "pages": built.pages,
        "coldBuildSeconds": round(cold, 3),
        "unchangedRebuildSeconds": round(warm, 3),
        "indexBytes": index.stat().st_size,
        "experimentPageBytes": experiment.stat().st_size,
        "loadMilliseconds": loads,
    }
