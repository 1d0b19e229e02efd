"""Many answers in one build task: which are up to date, and the workers that give the rest.

doit keeps one task for an experiment's answering, not one per answer: ten thousand tasks cost seconds to
create, check and save on every command, and a state file that grows with every answer. Instead each answer is
a unit with a `state`, the digest of everything it depends on (its view's bytes, the arm's agent settings, the
answer key where the agent reads it). A unit is up to date while its result file exists and its state is the
one the journal holds; the journal gains a line the moment a unit is answered, so an interrupted answering keeps
what it finished.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.agents import live
from bceval.jsonio import append_text, read_regular_text, write_atomic
from bceval.layout import result_name


@dataclass(frozen=True)
class Unit:
    name: str  # unique within its journal
    state: str  # see unit_state_maker
    target: str  # the result file: while it is missing the unit is answered again
    answer: Callable[[], None]
    after: str | None = None  # the unit whose answer this one shares: it is answered first


def unit_state_maker(identity: dict[str, Any]) -> Callable[[str, Any, Any], str]:
    """The state of many units of one run: its identity (JSON values) is encoded once, then each unit adds its
    view's digest, the answer key it may read and its note."""
    fixed = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def state(view: str, expected: Any = None, note: Any = None) -> str:
        own = json.dumps([view, expected, note], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(f"{fixed}\n{own}".encode()).hexdigest()[:32]

    return state


class Journal:
    """Unit name -> the state it was last answered under, one `<state> <name>` line per answer (the last line
    of a name wins; a partial line from a killed run is skipped)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.states: dict[str, str] = {}
        try:
            text = read_regular_text(path, "utf-8")
        except (OSError, ValueError):
            text = ""
        for line in text.split("\n"):
            state, _, name = line.partition(" ")
            if len(state) == 32 and name:
                self.states[name] = state

    def add(self, unit: Unit) -> None:
        with self._lock:
            self.states[unit.name] = unit.state
            line = f"{unit.state} {unit.name}\n"
            try:
                append_text(self.path, line)
            except FileNotFoundError:  # the first answer of this journal (asking every time costs a syscall)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                append_text(self.path, line)

    def compact(self) -> None:
        """Rewrite the journal with one line per unit (it only ever grew while answering)."""
        with self._lock:
            text = "".join(f"{state} {name}\n" for name, state in sorted(self.states.items()))
            write_atomic(self.path, text)


def stale(units: Iterable[Unit], journal: Journal, changed: Callable[[], None] | None = None) -> Iterator[Unit]:
    """The units to answer, in their order, as they come: no result, or one given under another state
    (`changed` is told of each of those: a caller that counted the missing results up front counts it too)."""
    states = journal.states
    for unit in units:
        if not os.path.isfile(unit.target):
            yield unit
        elif states.get(unit.name) != unit.state:
            if changed is not None:
                changed()
            yield unit


def missing_results(results_dir: Path, model_ids: Iterable[str]) -> int:
    """How many of these cases have no result in `results_dir` yet (one listing, not a stat per case)."""
    present = set(os.listdir(results_dir)) if results_dir.is_dir() else set()
    return sum(result_name(model_id) not in present for model_id in model_ids)


def counted(units: Iterable[Unit], journal: Journal, progress: Any, missing: int) -> Iterator[Unit]:
    """`stale(units, journal)` for an answering whose progress lines count `missing` answers up front (those
    without a result) and one more for each result given under another state."""
    progress.total = missing

    def changed() -> None:
        progress.total += 1

    return stale(units, journal, changed)


def up_to_date(units: Iterable[Unit], journal: Journal) -> bool:
    """No unit to answer: made only as far as the first that is stale."""
    return next(stale(units, journal), None) is None


def answer_units(units: Iterable[Unit], jobs: int, journal: Journal) -> None:
    """Answer `units` (all stale; taken from the iterable as workers get free, so the first agent starts as soon
    as the first unit is known), `jobs` at a time, each noted in the journal once it has a result. A unit that
    shares another's answer waits for that one (taken earlier, since it came first). The first error stops the
    handing out of units; the ones under way finish, the journal is compacted, and the error is raised."""
    errors: list[BaseException] = []
    finished: dict[str, threading.Event] = {}
    lock = threading.Lock()
    pending = iter(units)
    taken = 0

    def take() -> Unit | None:
        nonlocal taken
        with lock:
            if errors:
                return None
            try:
                unit = next(pending, None)
            except BaseException as exc:  # noqa: BLE001 - making the next unit failed: raised below
                errors.append(exc)
                return None
            if unit is not None:
                finished[unit.name] = threading.Event()
                taken += 1
            return unit

    def one(unit: Unit) -> None:
        owner = finished.get(unit.after) if unit.after is not None else None
        if owner is not None:
            live.end_turn()  # the owner's worker may need the turn to finish
            owner.wait()  # taken earlier by some worker: it finishes
        try:
            if errors:
                return  # woken by a failure, not by an answer: ask nothing
            unit.answer()
            if os.path.isfile(unit.target):  # an infrastructure failure has no result: it is asked again
                journal.add(unit)
        finally:
            finished[unit.name].set()

    def worker() -> None:
        live.taking_turns(jobs > 1)  # side by side, workers take turns from an agent's exit to the next's start
        try:
            while (unit := take()) is not None:
                try:
                    one(unit)
                except BaseException as exc:  # noqa: BLE001 - raised again below, in the calling thread
                    with lock:
                        errors.append(exc)
                        events = list(finished.values())
                    for event in events:  # nobody waits for an answer that will not come
                        event.set()
        finally:
            live.taking_turns(False)

    # What exists by now (modules, the build graph, the cases) outlives the answering: a full collection would
    # walk all of it again while the answers are given, for nothing to free (20-50 ms each). After, it is
    # collectable as before (a process that answers many times, as the tests do, keeps no garbage for good),
    # unless objects were frozen for good before or meanwhile (api.load_openai's): unfreezing would undo that.
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        if jobs <= 1:
            worker()  # in the calling thread, in order: what a serial build always did
        else:
            threads = [threading.Thread(target=worker, daemon=True) for _ in range(jobs)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        if frozen_before == 0 and gc.get_freeze_count() <= frozen:  # only this freeze (objects freed since count less)
            gc.unfreeze()
        if taken:
            journal.compact()
    if errors:
        raise errors[0]
