"""Replay issue 20's whole catalogue and print one line per attempt, then the totals the issue asks for.

    python tests/replay_catalogue.py [SUBSTRING ...]

Each attempt runs in a scratch folder of its own (removed afterwards). Exit 0 only when every attempt held and
no traceback, hang, file changed outside bceval's own, escape or orphan was seen; 1 otherwise.
"""

from __future__ import annotations

import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalogue import Outcome, load_attempts  # noqa: E402


def main(argv: list[str]) -> int:
    attempts = [a for a in load_attempts() if not argv or any(text in a.id for text in argv)]
    totals = dict.fromkeys(
        (
            "attempts",
            "held",
            "clean one-line errors",
            "tracebacks",
            "hangs",
            "files changed outside",
            "escapes",
            "orphans",
        ),
        0,
    )
    started = time.monotonic()
    for attempt in attempts:
        began = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=f"catalogue-{attempt.id}-") as scratch:
            try:
                outcome = attempt.run(Path(scratch))
            except Exception:  # the attempt's own code failed: count it, show where, keep replaying
                last = traceback.format_exc().strip().splitlines()[-1]
                outcome = Outcome(held=False, detail=f"the attempt itself raised: {last}")
        totals["attempts"] += 1
        totals["held"] += outcome.held
        totals["clean one-line errors"] += outcome.clean_error
        totals["tracebacks"] += outcome.traceback
        totals["hangs"] += outcome.hang
        totals["files changed outside"] += outcome.changed_outside
        totals["escapes"] += outcome.escapes
        totals["orphans"] += outcome.orphans
        verdict = "held  " if outcome.held else "FAILED"
        print(f"{verdict} {attempt.id} ({time.monotonic() - began:.1f} s): {outcome.detail}", flush=True)
    print(f"in {time.monotonic() - started:.1f} s: " + ", ".join(f"{name} {count}" for name, count in totals.items()))
    bad = ("tracebacks", "hangs", "files changed outside", "escapes", "orphans")
    return 0 if totals["held"] == totals["attempts"] and not any(totals[name] for name in bad) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
