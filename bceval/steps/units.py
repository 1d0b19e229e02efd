"""Many answers in one build task: which are up to date, and the workers that give the rest.

doit keeps one task for an experiment's answering, not one per answer: ten thousand tasks cost seconds to
create, check and save on every command, and a state file that grows with every answer. Instead each answer is
a unit with a `state`, the digest of everything it depends on (its view's bytes, the arm's agent settings, the
answer key where the agent reads it). A unit is up to date while its result file exists and its state is the
one the journal holds; the journal gains a line the moment a unit is answered, so an interrupted answering keeps
what it finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.jsonio import read_regular_text, write_atomic


@dataclass(frozen=True)
class Unit:
    name: str  # unique within its journal
    state: str  # see unit_state
    target: str  # the result file: while it is missing the unit is answered again
    answer: Callable[[], None]
    after: str | None = None  # the unit whose answer this one shares: it is answered first


def unit_state(values: dict[str, Any]) -> str:
    """The digest of what an answer depends on (JSON values)."""
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


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
            if not self.path.parent.is_dir():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(f"{unit.state} {unit.name}\n")

    def compact(self) -> None:
        """Rewrite the journal with one line per unit (it only ever grew while answering)."""
        with self._lock:
            text = "".join(f"{state} {name}\n" for name, state in sorted(self.states.items()))
            write_atomic(self.path, text)


def stale(units: Iterable[Unit], journal: Journal) -> list[Unit]:
    """The units to answer, in their order: no result, or one given under another state."""
    states = journal.states
    return [unit for unit in units if states.get(unit.name) != unit.state or not os.path.isfile(unit.target)]


def answer_units(units: list[Unit], jobs: int, journal: Journal) -> None:
    """Answer `units` (all stale), `jobs` at a time, each noted in the journal once it has a result. A unit that
    shares another's answer waits for that one. The first error stops the handing out of units; the ones under
    way finish, the journal is compacted, and the error is raised."""
    errors: list[BaseException] = []
    finished = {unit.name: threading.Event() for unit in units}
    lock = threading.Lock()
    pending = iter(units)

    def one(unit: Unit) -> None:
        if unit.after is not None and unit.after in finished:
            finished[unit.after].wait()  # taken earlier by some worker: it finishes
        try:
            if errors:
                return  # woken by a failure, not by an answer: ask nothing
            unit.answer()
            if os.path.isfile(unit.target):  # an infrastructure failure has no result: it is asked again
                journal.add(unit)
        finally:
            finished[unit.name].set()

    def worker() -> None:
        while True:
            with lock:
                unit = None if errors else next(pending, None)
            if unit is None:
                return
            try:
                one(unit)
            except BaseException as exc:  # noqa: BLE001 - raised again below, in the calling thread
                with lock:
                    errors.append(exc)
                for event in finished.values():  # nobody waits for an answer that will not come
                    event.set()

    try:
        if jobs <= 1:
            worker()  # in the calling thread, in order: what a serial build always did
        else:
            threads = [threading.Thread(target=worker, daemon=True) for _ in range(min(jobs, len(units)))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        if units:
            journal.compact()
    if errors:
        raise errors[0]
