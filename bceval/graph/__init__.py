"""The doit build graph: the loader, doit helpers and one module of task generators per stage."""

from __future__ import annotations

import sys
import types
from typing import Any

METADATA = "importlib.metadata"


def import_doit() -> None:
    """Import doit without importing importlib.metadata along with it.

    doit's plugin module imports importlib.metadata (and with it email, zipfile, csv and importlib.resources:
    about 30 ms, a tenth of a command's start) only to look up entry points, and bceval's graphs never look any up
    (doitlib._no_doit_plugins). While doit is imported, a stand-in holds the module's place whose
    `entry_points` imports the real module when it is first called; the stand-in is gone once doit is in,
    so any later `import importlib.metadata` is the real one. Where doit or the module is in already (the
    `doit` command, a test run) nothing is done. Called where a command first needs doit (graph.run and
    graph.uptodate, before they import doitlib): a prepare with nothing to do loads no doit at all."""
    if "doit" in sys.modules or METADATA in sys.modules:
        return
    stand_in = types.ModuleType(METADATA, "importlib.metadata, until doit's plugin lookup first asks for it")

    def entry_points(**selection: Any) -> Any:
        from importlib.metadata import entry_points as real  # the stand-in is out of sys.modules by now

        return real(**selection)

    stand_in.entry_points = entry_points  # type: ignore[attr-defined]
    sys.modules[METADATA] = stand_in
    try:
        import doit  # noqa: F401
    finally:
        if sys.modules.get(METADATA) is stand_in:
            del sys.modules[METADATA]
