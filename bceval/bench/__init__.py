"""`bceval bench`: how the cost of prepare and score grows with the corpus, against the I/O floor, and the live
lines against the plain launcher. This module checks the arguments of `bceval bench` and `doit bench`, runs the
measurements and writes the report."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bceval.bench.corpora import generate_corpus as generate_corpus
from bceval.bench.live import measure_api, measure_experiment, measure_live
from bceval.bench.measure import measure, measured_environment, warm_bytecode
from bceval.bench.table import render_table
from bceval.bench.viewer import measure_view
from bceval.errors import BcevalError
from bceval.jsonio import dumps, write_atomic


def parse_numbers(text: str, flag: str, count: int) -> Any:
    """A comma-separated tuple of numbers (the last may be fractional), or None for 'none'."""
    if text.strip().lower() == "none":
        return None
    parts = text.split(",")
    try:
        if len(parts) != count:
            raise ValueError
        return (*(int(part) for part in parts[:-1]), float(parts[-1]))
    except ValueError:
        raise BcevalError(f"{flag} needs {count} comma-separated numbers or none, got '{text}'") from None


def parse_live(text: str) -> list[tuple[int, int, float]] | None:
    """One or more ANSWERS,JOBS,SECONDS measurements joined by '+', or None for 'none'."""
    if text.strip().lower() == "none":
        return None
    try:
        points = [parse_numbers(part, "--live", 3) for part in text.split("+")]
    except BcevalError:
        points = [None]
    if None in points:
        raise BcevalError(
            f"--live must be ANSWERS,JOBS,SECONDS (e.g. 256,16,0.2), several joined by '+', or none, got '{text}'"
        )
    return points


def parse_view(text: str, flag: str) -> tuple[int, int, int] | None:
    """ARMS,EPOCHS,CASES of the viewer's synthetic experiment, or None for 'none'."""
    if text.strip().lower() == "none":
        return None
    try:
        arms, epochs, cases = (int(part) for part in text.split(","))
    except ValueError:
        raise BcevalError(f"{flag} must be ARMS,EPOCHS,CASES (e.g. 4,5,500) or none, got '{text}'") from None
    if arms < 2 or epochs < 1 or cases < 1:
        raise BcevalError(f"{flag} needs at least 2 arms, 1 epoch and 1 case")
    return arms, epochs, cases


def bench_command(
    sizes_text: str,
    repeat: int,
    out: Path,
    corpus: Path | None,
    live_text: str,
    experiment_text: str,
    api_text: str = "none",
    view_text: str = "none",
    from_environment: bool = False,
) -> int:
    """`bceval bench` and `doit bench`: check the arguments (flags, or BCEVAL_BENCH_* variables), measure, print
    the table."""

    def flag(name: str) -> str:
        return f"BCEVAL_BENCH_{name.upper()}" if from_environment else f"--{name}"

    experiment, live = parse_numbers(experiment_text, flag("experiment"), 5), parse_live(live_text)
    api = parse_numbers(api_text, flag("api"), 3)
    if api is not None and (api[0] < 2 or api[1] < 1 or api[2] < 0):
        raise BcevalError(f"{flag('api')} needs ANSWERS,JOBS,LATENCY with at least 2 answers and 1 job")
    try:
        sizes = [int(part) for part in sizes_text.split(",") if part.strip()]
    except ValueError:
        raise BcevalError(f"--sizes must be comma-separated article counts, got '{sizes_text}'") from None
    if not sizes or min(sizes) < 10 or repeat < 1:
        raise BcevalError("--sizes needs counts of at least 10 articles and --repeat at least 1")
    if corpus is not None and not corpus.is_dir():
        raise BcevalError(f"{corpus}: corpus directory does not exist")
    if live is not None and any(point[0] < 2 or point[1] < 1 or point[2] <= 0 for point in live):
        raise BcevalError("--live needs ANSWERS,JOBS,SECONDS with at least 2 answers, 1 job and a positive time")
    if experiment is not None and (min(experiment[:4]) < 1 or experiment[0] < 2 or experiment[4] <= 0):
        raise BcevalError("--experiment needs ARMS,EPOCHS,CASES,JOBS,SECONDS with 2+ arms and a positive time")
    view = parse_view(view_text, flag("view"))
    report = run_bench(sizes, repeat, out, corpus, live, experiment, api, view)
    sys.stdout.write(render_table(report))
    return 0


def bench_action(values: Mapping[str, Any], out: Path) -> None:
    """The `doit bench` action: `values` are BCEVAL_BENCH_* (bceval.config.environment_values("bench"))."""
    try:
        repeat = int(values["repeat"])
    except ValueError:
        raise BcevalError(f"BCEVAL_BENCH_REPEAT must be a whole number, got '{values['repeat']}'") from None
    sizes, live, experiment, api, view = (values[k] for k in ("sizes", "live", "experiment", "api", "view"))
    bench_command(sizes, repeat, out, None, live, experiment, api, view, from_environment=True)


def _progress(message: str) -> None:
    print(message, file=sys.stderr)


def run_bench(
    sizes: list[int],
    repeat: int,
    out_file: Path,
    corpus: Path | None,
    live: list[tuple[int, int, float]] | None,
    experiment: tuple[int, int, int, int, float] | None,
    api: tuple[int, int, float] | None,
    view: tuple[int, int, int] | None,
) -> dict[str, Any]:
    """Measure each synthetic size, or (with `corpus`) one real corpus, then the live, experiment, api and view
    lines (None skips one); write the JSON report."""
    progress = _progress
    warm_bytecode(measured_environment())
    with tempfile.TemporaryDirectory(prefix="bceval-bench-") as folder:
        scratch = Path(folder)
        if corpus is not None:
            measured = [measure(0, repeat, scratch, progress, source=corpus)]
        else:
            measured = [measure(size, repeat, scratch, progress) for size in sizes]
        report = {
            "benchVersion": 2,
            "python": sys.version.split()[0],
            "sizes": measured,
            "growth": [_growth(smaller, larger) for smaller, larger in zip(measured, measured[1:], strict=False)],
            "live": [measure_live(scratch, *point, progress, repeat) for point in live or []] or None,
            "experiment": measure_experiment(scratch, *experiment, progress, repeat) if experiment else None,
            "api": measure_api(scratch, *api, progress) if api else None,
            "view": measure_view(scratch, *view, progress) if view else None,
        }
    if report["api"] is None:
        del report["api"]
    write_atomic(out_file, dumps(report))
    return report


def _growth(smaller: dict[str, Any], larger: dict[str, Any]) -> dict[str, Any]:
    cold = [size["results"]["cold prepare"]["medianSeconds"] for size in (smaller, larger)]
    return {
        "from": smaller["articles"],
        "to": larger["articles"],
        "sizeRatio": round(larger["articles"] / smaller["articles"], 2),
        "coldPrepareRatio": round(cold[1] / cold[0], 2),
    }
