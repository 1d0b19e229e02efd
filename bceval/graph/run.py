"""Run tasks of the bceval build graph through doit, as the CLI and the tests do."""

from __future__ import annotations

from typing import Any

from bceval.config import Settings


def run_graph(
    settings: Settings, tasks: list[str], force: bool = False, verbose: bool = False, listing: Any = None
) -> int:
    """Run tasks through doit; doit's 'error before running' (3) becomes usage (2). `listing`: the corpus's, when
    the caller scanned it already."""
    from bceval.steps.output import open_output
    from bceval.steps.prepare import index_state_file

    open_output(settings)
    if force:  # a full rebuild also rebuilds what the index task would otherwise keep from its last run
        index_state_file(settings).unlink(missing_ok=True)
    args = ["run", *(["--always-execute"] if force else []), *(["--verbosity", "2"] if verbose else []), *tasks]
    if tasks == ["prepare"] and not force and not verbose:  # verbose: every task's line; force: every task runs
        from bceval.graph.uptodate import prepare_graph

        return prepare_graph(settings, args, _namespace)
    from bceval.graph.doitlib import run_namespace
    from bceval.graph.inputs import GraphInputs
    from bceval.graph.loader import build_namespace  # the stages' tasks, and doit: only for a graph that runs
    from bceval.graph.uptodate import noting_the_prepare
    from bceval.steps.prepare import prepared_trees, prepared_unchanged

    inputs = GraphInputs(settings, listing)
    if tasks != ["answered"]:
        return run_namespace(build_namespace(settings, inputs, tasks), args)
    # An answer's prepare stage, up to date as a whole, is not planned (verbose: every task's line, the stage's too).
    digest = inputs.prepared_inputs()  # before anything is read, as `bceval prepare` takes it
    trees = prepared_trees(settings) if not force and not verbose else None  # walked once: see note_prepared
    prepared = trees is not None and prepared_unchanged(settings, digest, trees)

    def run() -> int:
        return run_namespace(build_namespace(settings, inputs, tasks, prepared), args)

    return noting_the_prepare(settings, digest, run, unchanged=trees if prepared else None)


def _namespace(settings: Settings, inputs: Any) -> dict[str, Any]:
    from bceval.graph.loader import build_namespace  # every stage's tasks, and doit: only for a graph that runs

    return build_namespace(settings, inputs)
