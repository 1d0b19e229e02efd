"""The bench task: `bceval bench` through doit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bceval.bench import bench_action
from bceval.config import Settings, environment_values
from bceval.graph.doitlib import action
from bceval.layout import OutDir


def bench_tasks(settings: Settings) -> dict[str, Callable[[], Any]]:
    def task_bench() -> dict:
        """`bceval bench` through doit: sizes from BCEVAL_BENCH_SIZES, repeats from BCEVAL_BENCH_REPEAT."""
        return {
            "actions": [action(bench_action, environment_values("bench"), OutDir(settings.out).bench_report)],
            "uptodate": [False],
            "verbosity": 2,
        }

    return {"task_bench": task_bench}
