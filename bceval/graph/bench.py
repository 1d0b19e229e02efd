"""The bench task: `bceval bench` through doit."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from bceval.config import Settings
from bceval.graph.doitlib import action


def bench_tasks(settings: Settings) -> dict[str, Callable[[], Any]]:
    def task_bench() -> dict:
        """`bceval bench` through doit: sizes from BCEVAL_BENCH_SIZES, repeats from BCEVAL_BENCH_REPEAT."""
        sizes = os.environ.get("BCEVAL_BENCH_SIZES", "250,2500,25000")
        repeat = os.environ.get("BCEVAL_BENCH_REPEAT", "3")
        from bceval.bench import bench_action

        return {
            "actions": [
                action(
                    bench_action,
                    sizes,
                    repeat,
                    os.environ.get("BCEVAL_BENCH_LIVE", "256,16,0.5"),
                    os.environ.get("BCEVAL_BENCH_EXPERIMENT", "none"),
                    settings.out / "bench.json",
                )
            ],
            "uptodate": [False],
            "verbosity": 2,
        }

    return {"task_bench": task_bench}
