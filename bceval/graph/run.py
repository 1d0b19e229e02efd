"""Run tasks of the bceval build graph through doit, as the CLI and the tests do."""

from __future__ import annotations

from typing import Any

from bceval.config import Settings
from bceval.graph.doitlib import run_namespace
from bceval.graph.inputs import GraphInputs
from bceval.graph.loader import build_namespace
from bceval.steps.output import open_output


def run_graph(
    settings: Settings, tasks: list[str], force: bool = False, verbose: bool = False, listing: Any = None
) -> int:
    """Run tasks through doit; doit's 'error before running' (3) becomes usage (2). `listing`: the corpus's, when
    the caller scanned it already."""
    open_output(settings)
    args = ["run", *(["--always-execute"] if force else []), *(["--verbosity", "2"] if verbose else []), *tasks]
    return run_namespace(build_namespace(settings, GraphInputs(settings, listing), tasks), args)
