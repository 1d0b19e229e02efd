"""`bceval prepare` (and an experiment's variant prepare) without planning the graph when it would find nothing
to do: the last prepare that finished was made from the very inputs there are now and left its outputs as
they are (bceval.steps.prepare.prepared_unchanged). This module loads no doit: a no-op of 25,000 articles is
mostly the stat of every file, and doit's own start-up and the planning of 300 tasks would double it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from bceval.config import NOTHING_REBUILT, Settings, context_line
from bceval.errors import BcevalError
from bceval.graph.inputs import GraphInputs
from bceval.outdir import OutputLock, sweep_temp_files
from bceval.steps.prepare import note_prepared, prepared_unchanged


def prepare_graph(
    settings: Settings, args: list[str], namespace: Callable[[Settings, GraphInputs], dict[str, Any]]
) -> int:
    """`doit <args>` of the prepare task, unless it is up to date as a whole (see up_to_date); `namespace`
    builds the graph (graph.loader.build_namespace) from these settings and the inputs read here."""
    inputs = GraphInputs(settings)
    digest = inputs.prepared_inputs()  # before anything is read: an edit after this is a difference next time
    if digest is not None and up_to_date(settings, digest):
        return 0
    from bceval.graph.doitlib import run_namespace

    return noting_the_prepare(settings, digest, lambda: run_namespace(namespace(settings, inputs), args))


def noting_the_prepare(
    settings: Settings, digest: str | None, run: Callable[[], int], unchanged: list[Any] | None = None
) -> int:
    """`run()`, a graph that holds the prepare stage, and the note of the prepare it leaves (made from inputs of
    `digest`, taken before anything was read): none while it runs (a run that does not finish leaves none), the
    note once it finished. `unchanged`: the prepared folders' states (steps.prepare.prepared_trees) when the
    prepare was up to date as it started and the graph does not run it; the note then holds whatever the rest
    of the graph returns (its doit records change doit's state file, one of the outputs the note covers), with
    those states for the folders the graph did not write."""
    if unchanged is None:
        note_prepared(settings, None)
    code = run()
    if unchanged is not None or code == 0:
        note_prepared(settings, digest, unchanged)
    return code


def up_to_date(settings: Settings, digest: str) -> bool:
    """What a run of the prepare graph that finds nothing to do does, when the last prepare was made from inputs
    of `digest` and left its outputs as they are: its corpus line, the output lock, the sweep and the "up to
    date" line (doitlib.BcevalReporter's). False, having done nothing but look, when it was not, or when the
    lock is another run's (the graph's run says so)."""
    lock = OutputLock(settings.out)
    try:
        lock.acquire()
    except BcevalError:
        return False
    try:
        if not prepared_unchanged(settings, digest):
            return False
        sys.stderr.write(context_line(settings) + "\n")
        sweep_temp_files(settings.out)
        sys.stderr.write(NOTHING_REBUILT + "\n")
        return True
    finally:
        lock.release()
