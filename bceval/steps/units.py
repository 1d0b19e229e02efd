"""Many answers in one build task, `--jobs` at a time: one doit task per answer costs seconds per command at ten
thousand cases. The task is up to date while what every answer depends on is unchanged and every answer has its
result; else it answers every case again through the answer cache, so only a changed question asks an agent."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from bceval.layout import result_name


@dataclass(frozen=True)
class Unit:
    name: str  # unique within its answering
    answer: Callable[[], None]
    after: str | None = None  # the unit whose answer this one shares: it is answered first


def missing_results(results_dir: Path, model_ids: Iterable[str]) -> int:
    """How many of these cases have no result in `results_dir` yet (one listing, not a stat per case)."""
    present = set(os.listdir(results_dir)) if results_dir.is_dir() else set()
    return sum(result_name(model_id) not in present for model_id in model_ids)


def answer_units(units: Iterable[Unit], jobs: int) -> None:
    """Answer `units` in their order, `jobs` at a time. A unit that shares another's answer waits for that one
    (taken earlier, since it came first). The first error stops the handing out of units; the ones under way
    finish, and the error is raised."""
    errors: list[BaseException] = []
    finished: dict[str, threading.Event] = {}
    lock = threading.Lock()
    pending = iter(units)

    def take() -> Unit | None:
        with lock:
            unit = None if errors else next(pending, None)
            if unit is not None:
                finished[unit.name] = threading.Event()
            return unit

    def one(unit: Unit) -> None:
        owner = finished.get(unit.after) if unit.after is not None else None
        if owner is not None:
            owner.wait()  # taken earlier by some worker: it finishes
        try:
            if not errors:  # else woken by a failure, not by an answer: ask nothing
                unit.answer()
        finally:
            finished[unit.name].set()

    def worker() -> None:
        while (unit := take()) is not None:
            try:
                one(unit)
            except BaseException as exc:  # noqa: BLE001 - raised again below, in the calling thread
                with lock:
                    errors.append(exc)
                    events = list(finished.values())
                for event in events:  # nobody waits for an answer that will not come
                    event.set()

    if jobs <= 1:
        worker()  # in the calling thread, in order: what a serial build always did
    else:
        threads = [threading.Thread(target=worker, daemon=True) for _ in range(jobs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]
