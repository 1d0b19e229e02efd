"""`bceval bench`: how the cost of prepare and score grows with the corpus, against the I/O floor.

Synthetic corpora (`corpora`), the measurements (`measure`) and the table (`table`); this module checks the
arguments of `bceval bench` and `doit bench` and runs them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bceval.bench.corpora import SEED, generate_corpus, generate_live_corpus
from bceval.bench.measure import (
    MEASUREMENTS,
    measure,
    measure_experiment,
    measure_live,
    measured_environment,
    run_bench,
)
from bceval.bench.table import render_table

__all__ = [
    "MEASUREMENTS",
    "SEED",
    "bench_action",
    "bench_command",
    "generate_corpus",
    "generate_live_corpus",
    "measure",
    "measure_experiment",
    "measure_live",
    "measured_environment",
    "parse_live",
    "parse_numbers",
    "print_bench",
    "render_table",
    "run_bench",
]


def parse_numbers(text: str, flag: str, count: int) -> Any:
    """A comma-separated tuple of numbers (the last may be fractional), or None for 'none'."""
    from bceval.errors import BcevalError

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
    from bceval.errors import BcevalError

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


def bench_command(
    sizes_text: str,
    repeat: int,
    out: Path,
    corpus: Path | None,
    live_text: str,
    experiment_text: str,
    experiment_flag: str = "--experiment",
    api_text: str = "none",
    api_flag: str = "--api",
    view_text: str = "none",
    view_flag: str = "--view",
) -> str:
    """`bceval bench` and `doit bench`: check the arguments, measure, and return the table to print."""
    from bceval.errors import BcevalError

    experiment, live = parse_numbers(experiment_text, experiment_flag, 5), parse_live(live_text)
    api = parse_numbers(api_text, api_flag, 3)
    if api is not None and (api[0] < 2 or api[1] < 1 or api[2] < 0):
        raise BcevalError(f"{api_flag} needs ANSWERS,JOBS,LATENCY with at least 2 answers and 1 job")
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
    view = parse_view(view_text, view_flag)
    return render_table(
        run_bench(sizes, repeat, out, corpus=corpus, live=live, experiment=experiment, api=api, view=view)
    )


def parse_view(text: str, flag: str) -> tuple[int, int, int] | None:
    """ARMS,EPOCHS,CASES of the viewer's synthetic experiment, or None for 'none'."""
    from bceval.errors import BcevalError

    if text.strip().lower() == "none":
        return None
    try:
        arms, epochs, cases = (int(part) for part in text.split(","))
    except ValueError:
        raise BcevalError(f"{flag} must be ARMS,EPOCHS,CASES (e.g. 4,5,500) or none, got '{text}'") from None
    if arms < 2 or epochs < 1 or cases < 1:
        raise BcevalError(f"{flag} needs at least 2 arms, 1 epoch and 1 case")
    return arms, epochs, cases


def print_bench(
    sizes_text: str,
    repeat: int,
    out: Path,
    corpus: Path | None,
    live_text: str,
    experiment_text: str,
    api_text: str = "none",
    view_text: str = "none",
) -> int:
    """`bceval bench`: measure, and print the table."""
    sys.stdout.write(
        bench_command(
            sizes_text, repeat, out, corpus, live_text, experiment_text, api_text=api_text, view_text=view_text
        )
    )
    return 0


def bench_action(values: Mapping[str, Any], out: Path) -> None:
    """The `doit bench` action: `values` are BCEVAL_BENCH_* (bceval.config.environment_values("bench")); the table
    goes to stdout, as `bceval bench` prints it."""
    from bceval.errors import BcevalError

    try:
        repeat = int(values["repeat"])
    except ValueError:
        raise BcevalError(f"BCEVAL_BENCH_REPEAT must be a whole number, got '{values['repeat']}'") from None
    sys.stdout.write(
        bench_command(
            values["sizes"],
            repeat,
            out,
            None,
            values["live"],
            values["experiment"],
            "BCEVAL_BENCH_EXPERIMENT",
            values.get("api", "none"),
            "BCEVAL_BENCH_API",
            values["view"],
            "BCEVAL_BENCH_VIEW",
        )
    )
