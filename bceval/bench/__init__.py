"""`bceval bench`: how the cost of prepare and score grows with the corpus, against the I/O floor, and the live
lines against the plain launcher. This module checks the arguments of `bceval bench` and `doit bench`, runs the
measurements, writes the report and prints its table."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bceval.bench.corpora import generate_corpus as generate_corpus
from bceval.bench.live import measure_api, measure_experiment, measure_live
from bceval.bench.measure import measure, measured_environment, warm_bytecode
from bceval.bench.viewer import measure_view
from bceval.errors import BcevalError
from bceval.jsonio import dumps, write_atomic

# Each measurement flag: its numbers (whole, but for a timed one's last), an example, and the least each may be
# ("> 0": above 0)
SHAPES = {
    "live": ("ANSWERS,JOBS,SECONDS", "256,16,0.2", (">= 2", ">= 1", "> 0")),
    "experiment": ("ARMS,EPOCHS,CASES,JOBS,SECONDS", "4,5,512,32,0.2", (">= 2", ">= 1", ">= 1", ">= 1", "> 0")),
    "api": ("ANSWERS,JOBS,LATENCY", "256,16,0.2", (">= 2", ">= 1", ">= 0")),
    "view": ("ARMS,EPOCHS,CASES", "4,5,500", (">= 2", ">= 1", ">= 1")),
}


def parse_points(text: str, name: str, flag: str) -> list[tuple[Any, ...]] | None:
    """The measurements of one flag (several joined by '+' for --live), or None for 'none'."""
    if text.strip().lower() == "none":
        return None
    form, example, least = SHAPES[name]
    several = ", several joined by '+'," if name == "live" else ""
    points = []
    for part in text.split("+") if name == "live" else [text]:
        numbers = part.split(",")
        try:
            if len(numbers) != len(least):
                raise ValueError
            point = tuple(float(n) if i == len(least) - 1 and name != "view" else int(n) for i, n in enumerate(numbers))
        except ValueError:
            raise BcevalError(f"{flag} must be {form} (e.g. {example}){several} or none, got '{text}'") from None
        bounds = (limit.split() for limit in least)
        if any(n < float(low) or (n == float(low) and op == ">") for n, (op, low) in zip(point, bounds, strict=True)):
            limits = ", ".join(f"{n} {limit}" for n, limit in zip(form.split(","), least, strict=True))
            raise BcevalError(f"{flag} needs {limits}, got '{text}'")
        points.append(point)
    return points


def bench_command(
    sizes_text: str, repeat: int, out: Path, corpus: Path | None, texts: Mapping[str, str], from_env: bool = False
) -> int:
    """`bceval bench` and `doit bench`: check the arguments (flags, or BCEVAL_BENCH_* variables), measure each
    synthetic size, or (with `corpus`) one real corpus, then the live, experiment, api and view lines (`texts`, by
    the names of SHAPES; 'none' skips one); write the JSON report and print the table."""
    points = {
        name: parse_points(texts[name], name, f"BCEVAL_BENCH_{name.upper()}" if from_env else f"--{name}")
        for name in SHAPES
    }
    try:
        sizes = [int(part) for part in sizes_text.split(",") if part.strip()]
    except ValueError:
        raise BcevalError(f"--sizes must be comma-separated article counts, got '{sizes_text}'") from None
    if not sizes or min(sizes) < 10 or repeat < 1:
        raise BcevalError("--sizes needs counts of at least 10 articles and --repeat at least 1")
    if corpus is not None and not corpus.is_dir():
        raise BcevalError(f"{corpus}: corpus directory does not exist")
    experiment, api, view = (points[name][0] if points[name] else None for name in ("experiment", "api", "view"))
    warm_bytecode(measured_environment())
    with tempfile.TemporaryDirectory(prefix="bceval-bench-") as folder:
        scratch = Path(folder)
        if corpus is not None:
            measured = [measure(0, repeat, scratch, source=corpus)]
        else:
            measured = [measure(size, repeat, scratch) for size in sizes]
        report = {
            "benchVersion": 2,
            "python": sys.version.split()[0],
            "sizes": measured,
            "growth": [_growth(smaller, larger) for smaller, larger in zip(measured, measured[1:], strict=False)],
            "live": [measure_live(scratch, *point, repeat) for point in points["live"] or []] or None,
            "experiment": measure_experiment(scratch, *experiment, repeat) if experiment else None,
            "api": measure_api(scratch, *api) if api else None,
            "view": measure_view(scratch, *view) if view else None,
        }
    if report["api"] is None:
        del report["api"]
    write_atomic(out, dumps(report))
    sys.stdout.write(render_table(report))
    return 0


def bench_action(values: Mapping[str, Any], out: Path) -> None:
    """The `doit bench` action: `values` are BCEVAL_BENCH_* (bceval.config.environment_values("bench"))."""
    try:
        repeat = int(values["repeat"])
    except ValueError:
        raise BcevalError(f"BCEVAL_BENCH_REPEAT must be a whole number, got '{values['repeat']}'") from None
    bench_command(values["sizes"], repeat, out, None, values, from_env=True)


def _growth(smaller: dict[str, Any], larger: dict[str, Any]) -> dict[str, Any]:
    cold = [size["results"]["cold prepare"]["medianSeconds"] for size in (smaller, larger)]
    return {
        "from": smaller["articles"],
        "to": larger["articles"],
        "sizeRatio": round(larger["articles"] / smaller["articles"], 2),
        "coldPrepareRatio": round(cold[1] / cold[0], 2),
    }


def render_table(report: dict[str, Any]) -> str:
    header = "| measurement | " + " | ".join(f"{s['articles']:,} articles" for s in report["sizes"]) + " |"
    lines = [header, "|---|" + "---|" * len(report["sizes"])]
    for name in report["sizes"][0]["results"]:
        cells = []
        for size in report["sizes"]:
            result = size["results"][name]
            rss = f", {result['peakRssMb']:.0f} MB" if result["peakRssMb"] is not None else ""
            cells.append(f"{result['medianSeconds']:.3f} s{rss}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| cold / I/O floor | " + " | ".join(f"{s['coldToFloorRatio']}×" for s in report["sizes"]) + " |")
    lines.append("| touch / cold | " + " | ".join(f"{s['touchToColdRatio']:.1%}" for s in report["sizes"]) + " |")
    for step in report["growth"]:
        lines.append(
            f"\nGrowth {step['from']:,} → {step['to']:,} articles ({step['sizeRatio']}×): cold prepare "
            f"{step['coldPrepareRatio']}×"
        )
    for live in report.get("live") or []:
        lines.append(f"\nLive throughput: {live['answered']} of {live['answers']} answers {_throughput_text(live)}")
    experiment = report.get("experiment")
    if experiment:
        lines.append(
            f"\nExperiment: {experiment['arms']} arms × {experiment['epochs']} epochs × {experiment['cases']} "
            f"cases = {experiment['units']} answers ({experiment['answered']} answered) {_throughput_text(experiment)}"
        )
        first = experiment["firstAgentSeconds"]
        lines.append(
            f"Experiment: first agent after {first:.2f} s; no-op rerun {experiment['noOpRerunSeconds']:.2f} s; doit "
            f"state {experiment['stateBytesPerAnswer']:,.0f} bytes per answer"
            if first is not None
            else f"Experiment: no-op rerun {experiment['noOpRerunSeconds']:.2f} s"
        )
        steps = [
            f"{step['answers']:,} answers {step['medianSeconds']:.2f} s"
            + (f" ({step['growth']}×)" if "growth" in step else "")
            + (f", {step['coldSeconds']:.2f} s judging every result again" if "coldSeconds" in step else "")
            for step in experiment["report"]
        ]
        lines.append("Experiment report alone: " + ", ".join(steps))
    api = report.get("api")
    if api and api.get("skipped"):
        lines.append(f"API agent throughput: skipped: {api['skipped']}")
    elif api:
        lines.append(
            f"API agent throughput: {api['answered']} of {api['answers']} answers over a local endpoint "
            f"({api['latencySeconds']:g} s a response, 3 responses a case; the floor: the same conversations "
            f"through the bare openai client) {_throughput_text(api)}"
        )
    view = report.get("view")
    if view:
        loads = view["loadMilliseconds"]
        load = (
            loads["skipped"]
            if "skipped" in loads
            else f"index loads in {loads['index']:.0f} ms, the experiment page in {loads['experiment']:.0f} ms"
        )
        lines.append(
            f"Viewer: {view['arms']} arms × {view['epochs']} epochs × {view['cases']} cases = {view['answers']} "
            f"answers, {view['pages']} pages built in {view['coldBuildSeconds']:.2f} s (unchanged rebuild "
            f"{view['unchangedRebuildSeconds']:.2f} s); {load} (index {view['indexBytes'] / 1024:.0f} KiB, experiment "
            f"page {view['experimentPageBytes'] / 1024:.0f} KiB)"
        )
    return "\n".join(lines) + "\n"


def _throughput_text(measured: dict[str, Any]) -> str:
    """How a throughput measurement (see live._throughput) reads in the table."""
    return (
        f"at --jobs {measured['jobs']}, {measured['secondsPerAnswer']:g} s each: {measured['wallSeconds']:.2f} s, "
        f"the plain launcher's floor {measured['floorSeconds']:.2f} s, the ideal {measured['idealSeconds']:.2f} s: "
        f"{measured['ratioToFloor']:.3f}× the floor, {measured['ratioToIdeal']:.3f}× the ideal (the floor "
        f"{measured['floorRatioToIdeal']:.3f}×)"
        f"; CPU per answer {measured['cpuPerAnswerSeconds'] * 1000:.1f} ms, the floor's "
        f"{measured['floorCpuPerAnswerSeconds'] * 1000:.1f} ms: bceval's own "
        f"{measured['ownCpuPerAnswerSeconds'] * 1000:.1f} ms"
    )
