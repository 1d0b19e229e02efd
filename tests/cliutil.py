"""Running the real CLI in-process: the exit code, the stdout lines and the stderr lines (minus the one line every
command prints first, naming the corpus, manifest and output directory it uses)."""

from __future__ import annotations

import re
import signal

from bceval.cli import main

CONTEXT = re.compile(r"^bceval: corpus .+ \(.+\); manifest .+(; out .+)?$")


def run_cli(capsys, *argv) -> tuple[int, list[str], list[str]]:  # noqa: ANN001 - pytest's capsys
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    err = [line for line in captured.err.strip().splitlines() if not CONTEXT.match(line)]
    return code, captured.out.strip().splitlines(), err


def interruptible() -> None:
    """A child's preexec_fn: Ctrl-C reaches it even when this suite was started in the background (`cmd &` in a
    script starts with SIGINT ignored, and a Python child that inherits that never raises KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
