"""Opening the output folder for a graph run, with the one line a repair deserves."""

from __future__ import annotations

import sys

from bceval.config import Settings, check_inputs
from bceval.outdir import ensure_output_dir, repair_doit_state


def open_output(settings: Settings) -> None:
    """Before doit opens its state file in the output directory: the inputs exist, the directory is usable,
    and a state file a killed run left half written is dropped (one line says so)."""
    check_inputs(settings)
    ensure_output_dir(settings.out)
    if repair_doit_state(settings.doit_db):
        print(
            f"bceval: {settings.doit_db} was not doit's state database (an older bceval's or damaged); rebuilding",
            file=sys.stderr,
        )
