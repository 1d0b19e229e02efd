"""The viewer's measurement: a synthetic experiment of A arms x E epochs x C cases, the site built cold and again,
and (with chromium and Playwright) how long its pages take to load from file://."""

from __future__ import annotations

import json
import random
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from bceval.jsonio import dumps
from bceval.layout import ExperimentDir, OutDir, RunDir, case_file_name, case_request_name, result_name
from bceval.viewer.site import build_site

DOMAINS = ("performance", "security", "ui", "events", "upgrade", "error-handling")
PROMPT = "You are reviewing Business Central AL code. " * 40


def _case(number: int) -> dict[str, Any]:
    domain = DOMAINS[number % len(DOMAINS)]
    kind = "positive" if number % 2 == 0 else "clean"
    expected = [f"microsoft/knowledge/{domain}/article-{number // 2}.md"] if kind == "positive" else []
    return {
        "id": f"{domain}-{kind}-{number}",
        "modelId": f"case-{number:08x}",
        "domain": domain,
        "input": f"microsoft/knowledge/{domain}/article-{number // 2}.{'bad' if kind == 'positive' else 'good'}.al",
        "expected": expected,
        "kind": kind,
    }


def _rate(passed: int, total: int, interval: bool = True) -> dict[str, Any]:
    value = passed / total if total else None
    bounds = (
        {"low": max(0.0, (value or 0) - 0.1), "high": min(1.0, (value or 0) + 0.1), "level": 0.95} if interval else None
    )
    return {"passed": passed, "total": total, "value": value, "interval": bounds}


def generate_site_input(out: Path, arms: int, epochs: int, cases: int, seed: int = 11) -> None:
    """Write the experiment `bench-view` into `out` (its report, variant, prepared cases and every answer)."""
    rng = random.Random(seed)
    where = OutDir(out).experiment("bench-view")
    variant = where.variant("v")
    records = [_case(n) for n in range(cases)]
    _write_prepared(variant, records)
    names = [f"arm{n}" for n in range(arms)]
    outcomes: dict[str, dict[str, list[bool]]] = {case["id"]: {} for case in records}
    for arm_number, arm in enumerate(names):
        skill = 0.4 + 0.15 * arm_number
        for epoch in range(1, epochs + 1):
            run = variant.run(f"{arm}-e{epoch}")
            for folder in (run.results, run.transcripts, run.prompts):
                folder.mkdir(parents=True, exist_ok=True)
            (run.prompts / ("0" * 64 + ".txt")).write_text(PROMPT, encoding="utf-8")
            run.record.write_text(
                dumps({"name": run.path.name, "adapter": "command", "epoch": epoch}), encoding="utf-8"
            )
            for case in records:
                passed = rng.random() < skill
                outcomes[case["id"]].setdefault(arm, []).append(passed)
                _write_answer(run, case, epoch, passed)
    _write_report(where, names, epochs, records, outcomes)


def _write_prepared(variant: OutDir, records: list[dict[str, Any]]) -> None:
    """The variant's prepared requests and case files, and the case list its runs are scored against."""
    prepare = variant.prepare
    prepare.path.mkdir(parents=True, exist_ok=True)
    candidates = [
        {
            "path": f"microsoft/knowledge/x/article-{n}.md",
            "title": f"Article {n}",
            "description": "A rule.",
            "keywords": ["findset", "loop"],
        }
        for n in range(10)
    ]
    for case in records:
        request = {
            "protocol": "Review this case.",
            "skill": "microsoft/skills/review/al-x-review.md",
            "leafInstructions": "Review the code." * 20,
            "candidateArticles": candidates,
            "cases": [{"id": case["modelId"], "file": case_file_name(case["modelId"])}],
        }
        (prepare.path / case_request_name(case["modelId"])).write_text(dumps(request), encoding="utf-8")
        (prepare.path / case_file_name(case["modelId"])).write_text(
            "procedure X()\nbegin\nend;\n" * 15, encoding="utf-8"
        )
    build = variant.build.cases
    build.parent.mkdir(parents=True, exist_ok=True)
    kept = [{k: v for k, v in case.items() if k != "kind"} for case in records]
    build.write_text(
        dumps({"cases": kept, "thresholds": {"minimumExpectedRecall": 1.0, "minimumCleanRate": 1.0}}), encoding="utf-8"
    )


def _write_answer(run: RunDir, case: dict[str, Any], epoch: int, passed: bool) -> None:
    """One answer as a live agent leaves it: its result file and a two-attempt transcript."""
    right = case["expected"]
    findings = right if passed else (["microsoft/knowledge/x/wrong.md"] if not right else [])
    transcript = f"transcripts/{case['modelId']}.json"
    result = {
        "cases": [{"id": case["modelId"], "findings": [{"id": f} for f in findings]}],
        "answeredBy": {"adapter": "command", "model": "bench"},
        "record": {
            "epoch": epoch,
            "cached": False,
            "transcript": transcript,
            "usage": {"wallSeconds": 1.5, "costUsd": 0.01},
        },
    }
    (run.results / result_name(case["modelId"])).write_text(dumps(result), encoding="utf-8")
    attempts = [
        {
            "attempt": n,
            "waitedSeconds": 0.0,
            "promptSha256": "0" * 64,
            "outcome": "answered",
            "exitCode": 0,
            "stdout": '{"type":"result","result":"..."}\n' * 20,
            "stderr": "log\n" * 20,
        }
        for n in (1, 2)
    ]
    described = {
        "schemaVersion": 1,
        "run": run.path.name,
        "attempts": attempts,
        "view": {"sha256": "1" * 64, "files": []},
    }
    (run.path / transcript).write_text(dumps(described), encoding="utf-8")


def _arm_report(arm: str, control: bool, epochs: int, records: list[dict[str, Any]], outcomes: dict) -> dict[str, Any]:
    per_case = [outcomes[c["id"]][arm] for c in records]
    positive = [o for o, c in zip(per_case, records, strict=True) if c["kind"] == "positive"]
    clean = [o for o, c in zip(per_case, records, strict=True) if c["kind"] == "clean"]
    per_epoch = [
        {
            "epoch": e,
            "recall": _rate(sum(o[e] for o in positive), len(positive), False),
            "clean_rate": _rate(sum(o[e] for o in clean), len(clean), False),
        }
        for e in range(epochs)
    ]
    summary = {
        "recall": _rate(sum(map(sum, positive)), epochs * len(positive)),
        "clean_rate": _rate(sum(map(sum, clean)), epochs * len(clean)),
        "per_epoch": per_epoch,
        "flaky_cases": [c["id"] for o, c in zip(per_case, records, strict=True) if 0 < sum(o) < len(o)],
    }
    return {
        "name": arm,
        "control": control,
        "evaluator": "review",
        "variant": "v",
        "settings": {"adapter": "command", "model": "bench"},
        "summary": summary,
        "usage": {"costUsd": 0.01 * epochs * len(records)},
    }


def _write_report(where: ExperimentDir, names: list[str], epochs: int, records: list[dict[str, Any]], outcomes: dict):
    """The experiment's report.json (arms, comparisons against the first arm, every case) and a short report.md."""
    comparisons = [
        {
            "arm": arm,
            "control": names[0],
            "result": {
                "verdict": "better",
                "explanation": "synthetic",
                "recall": {"difference": 0.1, "interval": {"low": 0.0, "high": 0.2}},
                "clean_rate": {"difference": 0.05, "interval": {"low": -0.05, "high": 0.15}},
            },
        }
        for arm in names[1:]
    ]
    lines = [
        {
            "id": c["id"],
            "modelId": c["modelId"],
            "domain": c["domain"],
            "kind": c["kind"],
            "outcomes": outcomes[c["id"]],
            "transcripts": {},
        }
        for c in records
    ]
    report = {
        "schemaVersion": 1,
        "name": "bench-view",
        "epochs": epochs,
        "createdAt": "2026-01-01T00:00:00Z",
        "arms": [_arm_report(arm, n == 0, epochs, records, outcomes) for n, arm in enumerate(names)],
        "comparisons": comparisons,
        "cases": lines,
    }
    where.report().write_text(json.dumps(report), encoding="utf-8")
    table = "\n".join(f"| {c['id']} | {c['kind']} |" for c in records)
    where.report("md").write_text(
        f"# Experiment bench-view\n\n## Cases\n\n| Case | Kind |\n|---|---|\n{table}\n", encoding="utf-8"
    )


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


def measure_view(scratch: Path, arms: int, epochs: int, cases: int, progress: Any) -> dict[str, Any]:
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
