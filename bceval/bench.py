"""Wall-time benchmark of the prepare graph: cold, no-op rerun, and one-article touch.

Runs `python -m bceval prepare` as a user would (fresh process each time) on a private copy of the
corpus, so the corpus itself is never modified.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bceval.config import load_settings


def _prepare(corpus: Path, out: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    command = [sys.executable, "-m", "bceval", "prepare", "--corpus", str(corpus), "--out", str(out)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"bench: prepare failed: {done.stderr.strip()}")
    return elapsed


def _touch_article(corpus: Path, round_number: int) -> Path:
    """Edit the description of the first paired article so its row, the index and its domain rebuild."""
    md = next(p for p in sorted(corpus.glob("*/knowledge/*/*.md")) if p.with_suffix(".bad.al").exists())
    text = md.read_text(encoding="utf-8-sig")
    marker = "## Description\n\n"
    md.write_text(text.replace(marker, f"{marker}Edit {round_number}. ", 1), encoding="utf-8")
    return md


def run(corpus: Path, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"cold": [], "no-op": [], "touch one article": []}
    with tempfile.TemporaryDirectory(prefix="bceval-bench-") as scratch:
        copy = Path(scratch) / "corpus"
        shutil.copytree(corpus, copy, symlinks=True)
        for round_number in range(rounds):
            out = Path(scratch) / f"out-{round_number}"
            times["cold"].append(_prepare(copy, out))
            times["no-op"].append(_prepare(copy, out))
            _touch_article(copy, round_number)
            times["touch one article"].append(_prepare(copy, out))
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bceval.bench", description=__doc__)
    parser.add_argument("--corpus", help="corpus to measure (default: configured corpus)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    corpus = load_settings(corpus=args.corpus).corpus
    times = run(corpus, args.rounds)
    print(f"corpus: {corpus} ({args.rounds} rounds, seconds, fresh process per run)")
    print("| run | median | min | max |")
    print("|---|---|---|---|")
    for label, values in times.items():
        print(f"| {label} | {statistics.median(values):.3f} | {min(values):.3f} | {max(values):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
