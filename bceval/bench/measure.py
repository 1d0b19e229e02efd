"""The measurements of `bceval bench`: each runs bceval in a fresh process, as a user would, and records wall
time and peak memory. Every round keeps its output until the bench ends: freed inodes slow the files created next."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.bench.corpora import generate_corpus
from bceval.errors import BcevalError
from bceval.layout import CASE_PATTERN, OutDir


@dataclass
class Run:
    seconds: float
    peak_rss_mb: float
    cpu_seconds: float  # user + system time of the process and every child it waited for
    started: float = 0.0  # time.time() when it was started


def run_process(args: list[str], env: dict[str, str]) -> Run:
    """One fresh process; wall time, CPU time and its own peak RSS (wait4), failing loudly on a non-zero exit."""
    # stderr goes to a file, read at the end: a live run writes a line per answer, more than a pipe holds
    with tempfile.TemporaryFile() as errors:
        started = time.time()
        start = time.perf_counter()
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=errors, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
        errors.seek(0)
        error = errors.read().decode("utf-8", "replace")
    if process.returncode != 0:
        step = " ".join(arg for arg in args[1:5] if not arg.startswith("-") and "/" not in arg)
        last = (error.strip().splitlines() or ["no output"])[-1]
        raise BcevalError(f"bench: {step} failed (exit {process.returncode}): {last}")
    return Run(elapsed, usage.ru_maxrss / scale, usage.ru_utime + usage.ru_stime, started)


_FLOOR = """
import os, sys
corpus, outputs, target = sys.argv[1], sys.argv[2], sys.argv[3]
sizes = [int(line) for line in open(outputs)]
total = 0
for folder, _, names in os.walk(corpus):
    for name in names:
        with open(os.path.join(folder, name), 'rb') as handle:
            total += len(handle.read())
os.makedirs(target, exist_ok=True)
for number, size in enumerate(sizes):
    with open(os.path.join(target, f'{number}.out'), 'wb') as handle:
        handle.write(b'x' * size)
"""


def _touch(path: Path, round_number: int) -> None:
    text = path.read_text(encoding="utf-8")
    marker, edit = "## Description\n\n", f"Edit {round_number}."
    path.write_text(text.replace(marker, f"{marker}{edit} ", 1) if marker in text else f"{text}\n{edit}\n", "utf-8")


def settle() -> None:
    """Write every dirty page out before a measurement starts, not in the middle of it."""
    os.sync()


def measured_environment() -> dict[str, str]:
    """The environment of every measured process: no BCEVAL_* settings, and Python's bytecode cache on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_") and k != "PYTHONDONTWRITEBYTECODE"}
    # BCEVAL runs `python -P`: a folder named bceval in the current directory must not stand in for this package
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(_PACKAGE_HOME), env.get("PYTHONPATH"))))
    return env


_PACKAGE_HOME = Path(__file__).resolve().parents[2]  # the folder holding the bceval package
BCEVAL = [sys.executable, "-P", "-m", "bceval"]  # -P: the current directory is not put on the module path


def warm_bytecode(env: dict[str, str]) -> None:
    """Compile bceval once so the first measured run does not pay for it."""
    package = Path(__file__).resolve().parents[1]  # the bceval package, not only bench/
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], env=env, capture_output=True, check=False)


def progress(message: str) -> None:
    print(message, file=sys.stderr)


def measure(articles: int, repeat: int, scratch: Path, source: Path | None = None) -> dict[str, Any]:
    """Time every step on a synthetic corpus of `articles` articles, or on a private copy of `source`."""
    corpus = scratch / f"corpus-{articles}"
    if source is None:
        shape = generate_corpus(corpus, articles)
    else:
        shutil.copytree(source, corpus, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        articles = len(list(corpus.glob("*/knowledge/**/*.md")))
        shape = {"domains": len(list(corpus.glob("*/skills/review/al-*-review.md")))}
    settle()
    env = measured_environment()

    def bceval(command: str, out: Path, *extra: str) -> Run:
        return run_process([*BCEVAL, command, "--corpus", str(corpus), "--out", str(out), *extra], env)

    runs: dict[str, list[Run]] = defaultdict(list)  # the measurements in the order each round takes them
    article = next(p for p in sorted(corpus.glob("*/knowledge/*/*.md")) if p.with_suffix(".bad.al").exists())
    leaf = next(p for p in sorted(corpus.glob("*/skills/review/al-*-review.md")) if p.name != "al-code-review.md")
    for round_number in range(repeat):
        progress(f"bench: {articles} articles, round {round_number + 1}/{repeat}")
        out = scratch / f"out-{articles}-{round_number}"
        runs["cold prepare"].append(bceval("prepare", out))
        runs["no-op rerun"].append(bceval("prepare", out))
        _touch(article, round_number)
        runs["touch one article"].append(bceval("prepare", out))
        _touch(leaf, round_number)
        runs["touch one leaf"].append(bceval("prepare", out))
        bceval("answer", out, "--adapter", "oracle")
        # scored as results from outside (a run's own results may not be edited: score refuses a changed one)
        answers = out / "edited-results"
        shutil.copytree(OutDir(out).run("oracle").results, answers, dirs_exist_ok=True)
        runs["score cold"].append(bceval("score", out, "--adapter", "oracle", "--results", str(answers)))
        result = next(iter(sorted(answers.glob(CASE_PATTERN))))
        document = json.loads(result.read_text(encoding="utf-8"))
        document["cases"][0]["findings"] = [{"id": "bench/changed.md"}]
        result.write_text(json.dumps(document), encoding="utf-8")
        # the changed result fails the gate; only the time of re-judging matters
        runs["score after one result changed"].append(
            bceval("score", out, "--adapter", "oracle", "--results", str(answers), "--no-gate")
        )
        sizes = out / "sizes.txt"
        sizes.write_text("\n".join(str(p.stat().st_size) for p in OutDir(out).prepare.path.iterdir()) + "\n")
        runs["I/O floor"].append(
            run_process([sys.executable, "-c", _FLOOR, str(corpus), str(sizes), str(out / "floor")], env)
        )
    files = [p for p in corpus.rglob("*") if p.is_file()]
    medians = {name: statistics.median(r.seconds for r in values) for name, values in runs.items()}
    return {
        "articles": articles,
        "domains": shape["domains"],
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
        "repeat": repeat,
        "results": {
            name: {
                "medianSeconds": round(medians[name], 4),
                "runsSeconds": [round(r.seconds, 4) for r in values],
                "peakRssMb": max(r.peak_rss_mb for r in values),
            }
            for name, values in runs.items()
        },
        "coldToFloorRatio": round(medians["cold prepare"] / medians["I/O floor"], 2),
        "touchToColdRatio": round(medians["touch one article"] / medians["cold prepare"], 3),
    }
