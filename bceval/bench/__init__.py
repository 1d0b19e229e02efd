"""`bceval bench`: how the cost of prepare and score grows with the corpus, against the I/O floor.

Synthetic corpora are generated deterministically (seeded) with three layers, leaves (some
overridden by higher layers), paired and unpaired articles with realistic frontmatter and sample
sizes, slugs repeated across layers, and manifest overrides. Every measurement runs bceval in a fresh
process, as a user would, and records wall time and peak resident memory.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.jsonio import dumps, write_atomic

SEED = 20261129
MEASUREMENTS = (
    "cold prepare",
    "no-op rerun",
    "touch one article",
    "touch one leaf",
    "score cold",
    "score after one result changed",
    "I/O floor",
)
_WORDS = (
    "record loop filter key table page field flow sum calc lock commit modify delete insert buffer cache "
    "event publisher subscriber handled error label text token secret permission api query report upgrade "
    "install tag company item ledger entry customer vendor posting journal dimension currency amount date"
).split()


def _domain_count(articles: int) -> int:
    return max(5, min(40, articles // 16))


def _article(domain: str, slug: str, keyword: str, rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(40)]
    description = " ".join(words[:18]).capitalize() + f" using {keyword}. " + " ".join(words[18:30]) + "."
    body = "\n\n".join(" ".join(rng.choice(_WORDS) for _ in range(45)).capitalize() + "." for _ in range(3))
    return (
        "---\n"
        "bc-version: [all]\n"
        f"domain: {domain}\n"
        f"keywords: [{keyword}, theme{len(slug) % 13}, {words[2]}-area]\n"
        "technologies: [al]\n"
        "countries: [w1]\n"
        "application-area: [all]\n"
        "---\n\n"
        f"# {slug.replace('-', ' ').capitalize()}\n\n## Description\n\n{description}\n\n"
        f"## Best Practice\n\n{body}\n\nSee sample: `{slug}.good.al`.\n\n"
        f"## Anti Pattern\n\n{body[:400]}\n\nSee sample: `{slug}.bad.al`.\n"
    )


def _sample(keyword: str, kind: str, number: int, rng: random.Random) -> str:
    lines = [f'codeunit {50000 + number % 49000} "Bench {number} {kind.capitalize()}"', "{"]
    for procedure in range(3):
        lines += [
            f"    procedure {rng.choice(_WORDS).capitalize()}{procedure}()",
            "    var",
            f'        {keyword.capitalize()}: Record "{rng.choice(_WORDS).capitalize()} Entry";',
            "    begin",
            f"        // {' '.join(rng.choice(_WORDS) for _ in range(6))}",
            f'        {keyword.capitalize()}.SetRange("{rng.choice(_WORDS).capitalize()}", {procedure});',
            f"        if {keyword.capitalize()}.FindSet() then;",
            "    end;",
        ]
    return "\n".join([*lines, "}"]) + "\n"


def generate_corpus(root: Path, articles: int, seed: int = SEED) -> dict[str, Any]:
    """Write a synthetic corpus of `articles` knowledge articles; returns what it contains."""
    rng = random.Random(seed)
    domains = [f"{rng.choice(_WORDS)}-{index:02d}" for index in range(_domain_count(articles))]
    slugs: dict[str, list[str]] = {domain: [] for domain in domains}
    for domain in domains:
        leaf = f"# AL {domain} review\n\nReview changes for {domain} guidance.\n\n## Output\n\nFindings as JSON.\n"
        (root / "microsoft/skills/review").mkdir(parents=True, exist_ok=True)
        (root / f"microsoft/skills/review/al-{domain}-review.md").write_text(leaf, encoding="utf-8")
    for domain in domains[::8]:  # some leaves overridden by the community layer
        (root / "community/skills/review").mkdir(parents=True, exist_ok=True)
        (root / f"community/skills/review/al-{domain}-review.md").write_text(f"# Community {domain}\n", "utf-8")
    for number in range(articles):
        domain = domains[number % len(domains)]
        draw = rng.random()
        layer = "microsoft" if draw < 0.8 else "community" if draw < 0.92 else "custom"
        slug = f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{number:05d}"
        overriding = layer != "microsoft" and bool(slugs[domain]) and rng.random() < 0.25
        if overriding:  # a higher layer overrides a microsoft slug (paired, or the gate would hide it)
            slug = slugs[domain].pop(rng.randrange(len(slugs[domain])))
        elif layer == "microsoft":
            slugs[domain].append(slug)
        keyword = f"bench{number:05d}kw"
        folder = root / layer / "knowledge" / domain
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{slug}.md").write_text(_article(domain, slug, keyword, rng), encoding="utf-8")
        if overriding or rng.random() < 0.9:
            (folder / f"{slug}.good.al").write_text(_sample(keyword, "good", number, rng), encoding="utf-8")
            (folder / f"{slug}.bad.al").write_text(_sample(keyword, "bad", number, rng), encoding="utf-8")
    overrides: dict[str, Any] = {}
    for index, domain in enumerate(domains[:6]):
        paired = sorted(
            p.name[: -len(".md")]
            for layer in ("microsoft", "community", "custom")
            for p in (root / layer / "knowledge" / domain).glob("*.md")
            if p.with_name(p.name[:-3] + ".bad.al").exists() and p.with_name(p.name[:-3] + ".good.al").exists()
        )
        if len(paired) < 4:
            continue
        if index % 3 == 0:
            overrides[domain] = {"article": paired[1], "context": "The table holds a few million rows."}
        elif index % 3 == 1:
            overrides[domain] = {"additionalArticles": paired[2:4]}
        else:
            overrides[domain] = {"context": "Runs in a background session."}
    manifest = {
        "version": 2,
        "selection": "first-paired-al-article",
        "minimumExpectedRecall": 1.0,
        "minimumCleanRate": 1.0,
        "overrides": overrides,
    }
    (root / "evaluation").mkdir(parents=True, exist_ok=True)
    (root / "evaluation/review-fixtures.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return {"articles": articles, "domains": len(domains)}


@dataclass
class Run:
    seconds: float
    peak_rss_mb: float | None


def _run(args: list[str], env: dict[str, str]) -> Run:
    """One fresh process; wall time and its own peak RSS (wait4), failing loudly on a non-zero exit."""
    start = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if hasattr(os, "wait4"):
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
        peak = usage.ru_maxrss / scale
    else:  # pragma: no cover - Windows has no wait4
        process.wait()
        elapsed, peak = time.perf_counter() - start, None
    error = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
    if process.returncode != 0:
        raise RuntimeError(f"bench: {' '.join(args[2:4])} failed: {error.strip().splitlines()[-1:]}")
    return Run(elapsed, peak)


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
    marker = "## Description\n\n"
    if marker in text:
        path.write_text(text.replace(marker, f"{marker}Edit {round_number}. ", 1), encoding="utf-8")
    else:
        path.write_text(text + f"\nEdit {round_number}.\n", encoding="utf-8")


def measured_environment() -> dict[str, str]:
    """The environment of every measured process: no BCEVAL_* settings, and Python's bytecode cache on.

    A normal installation runs bceval from cached bytecode. Where PYTHONDONTWRITEBYTECODE is set (some
    containers and CI images), an editable install would instead recompile bceval's own modules in
    every process, a constant ~0.02 s that says nothing about how bceval scales.
    """
    return {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_") and k != "PYTHONDONTWRITEBYTECODE"}


def warm_bytecode(env: dict[str, str]) -> None:
    """Compile bceval once so the first measured run does not pay for it (quietly: a read-only
    installation simply keeps compiling on import)."""
    package = Path(__file__).resolve().parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], env=env, capture_output=True, check=False)


def measure(articles: int, repeat: int, scratch: Path, progress: Any, source: Path | None = None) -> dict[str, Any]:
    """Time every step on a synthetic corpus of `articles` articles, or on a private copy of `source`."""
    corpus = scratch / f"corpus-{articles}"
    if source is None:
        shape = generate_corpus(corpus, articles)
    else:
        shutil.copytree(source, corpus, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        articles = len(list(corpus.glob("*/knowledge/**/*.md")))
        shape = {"domains": len(list(corpus.glob("*/skills/review/al-*-review.md")))}
    if hasattr(os, "sync"):
        os.sync()  # flush the freshly written corpus now, not in the middle of the first measurement
    env = measured_environment()
    base = [sys.executable, "-m", "bceval"]

    def bceval(command: str, out: Path, *extra: str) -> Run:
        return _run([*base, command, "--corpus", str(corpus), "--out", str(out), *extra], env)

    runs: dict[str, list[Run]] = {name: [] for name in MEASUREMENTS}
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
        runs["score cold"].append(bceval("score", out, "--adapter", "oracle"))
        result = next(iter(sorted((out / "runs/oracle/results").glob("result-case-*.json"))))
        document = json.loads(result.read_text(encoding="utf-8"))
        document["cases"][0]["findings"] = [{"id": "bench/changed.md"}]
        result.write_text(json.dumps(document), encoding="utf-8")
        # the changed result fails the gate; only the time of re-judging matters
        runs["score after one result changed"].append(bceval("score", out, "--adapter", "oracle", "--no-gate"))
        sizes = out / "sizes.txt"
        sizes.write_text("\n".join(str(p.stat().st_size) for p in (out / "review").iterdir()) + "\n")
        runs["I/O floor"].append(_run([sys.executable, "-c", _FLOOR, str(corpus), str(sizes), str(out / "floor")], env))
        if round_number + 1 < repeat:
            shutil.rmtree(out)
    files = sum(1 for p in corpus.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file())
    medians = {name: statistics.median(r.seconds for r in values) for name, values in runs.items()}
    return {
        "articles": articles,
        "domains": shape["domains"],
        "files": files,
        "bytes": size,
        "repeat": repeat,
        "results": {
            name: {
                "medianSeconds": round(medians[name], 4),
                "runsSeconds": [round(r.seconds, 4) for r in values],
                "peakRssMb": max((r.peak_rss_mb for r in values if r.peak_rss_mb is not None), default=None),
            }
            for name, values in runs.items()
        },
        "coldToFloorRatio": round(medians["cold prepare"] / medians["I/O floor"], 2),
        "touchToColdRatio": round(medians["touch one article"] / medians["cold prepare"], 3),
    }


# --- live throughput: the harness's own cost around agents that take a fixed time -------------------------------

# A fake agent for throughput: it drains its prompt, waits a fixed time and answers the one case of its view
# (named by the request file there). A shell script, so its own start-up costs next to nothing.
FIXED_TIME_AGENT = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "fixed-time-agent 1"; exit 0; fi
cat > /dev/null
sleep {seconds}
for request in request-case-*.json; do case=${{request#request-}}; case=${{case%.json}}; done
printf '{{"cases":[{{"id":"%s","findings":[]}}]}}\\n' "$case"
"""


def generate_live_corpus(root: Path, cases: int) -> None:
    """`cases` cases (a positive and a clean one per domain, one paired article each) and no manifest."""
    for number in range(cases // 2):
        domain = f"area-{number:04d}"
        (root / "microsoft/skills/review").mkdir(parents=True, exist_ok=True)
        (root / f"microsoft/skills/review/al-{domain}-review.md").write_text(f"# Review {domain}\n", "utf-8")
        folder = root / "microsoft/knowledge" / domain
        folder.mkdir(parents=True)
        keyword = f"live{number:04d}kw"
        article = f"---\ndomain: {domain}\nkeywords: [{keyword}]\n---\n\n# Rule {number}\n\n{keyword}.\n"
        (folder / "rule.md").write_text(article, "utf-8")
        for kind in ("good", "bad"):
            (folder / f"rule.{kind}.al").write_text(f'codeunit {50000 + number} "R {kind}"\n{{ {keyword} }}\n', "utf-8")


def _fixed_time_agent(tools: Path, seconds: float) -> tuple[Path, dict[str, str]]:
    """The fixed-time agent in `tools` and the environment that lets bceval run it."""
    tools.mkdir()
    agent = tools / "fixed-time-agent"
    agent.write_text(FIXED_TIME_AGENT.format(seconds=seconds), encoding="utf-8")
    agent.chmod(0o755)
    env = {**measured_environment(), "BCEVAL_LIVE": "1", "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"}
    return agent, env


def _throughput(run: Run, answers: int, answered: int, jobs: int, seconds: float) -> dict[str, Any]:
    """Wall time against the ideal (answers / jobs x seconds) and the harness's own time per answer."""
    ideal = answers / jobs * seconds
    return {
        "answered": answered,
        "jobs": jobs,
        "secondsPerAnswer": seconds,
        "idealSeconds": round(ideal, 3),
        "wallSeconds": round(run.seconds, 3),
        "ratioToIdeal": round(run.seconds / ideal, 3),
        "overheadPerAnswerSeconds": round((run.seconds - ideal) * jobs / answers, 4),
        "peakRssMb": run.peak_rss_mb,
    }


def measure_live(scratch: Path, answers: int, jobs: int, seconds: float, progress: Any) -> dict[str, Any]:
    """`bceval answer` with a live agent that takes `seconds` per case: wall time against the ideal
    (answers / jobs x seconds), and the harness's overhead per answer, (wall - ideal) x jobs / answers."""
    corpus, out = scratch / "live-corpus", scratch / "live-out"
    generate_live_corpus(corpus, answers)
    agent, env = _fixed_time_agent(scratch / "live-bin", seconds)
    base = [sys.executable, "-m", "bceval"]
    where = ["--corpus", str(corpus), "--out", str(out)]
    _run([*base, "prepare", *where], env)
    progress(f"bench: {answers} live answers at --jobs {jobs}, {seconds:g} s each")
    command = [*base, "answer", *where, "--adapter", "command", "--command", agent.name, "--jobs", str(jobs)]
    run = _run([*command, "--retries", "0", "--timeout", str(seconds * 20 + 10)], env)
    answered = len(list((out / "runs" / "command" / "results").glob("result-case-*.json")))
    return {"answers": answers, **_throughput(run, answers, answered, jobs, seconds)}


def measure_experiment(
    scratch: Path, arms: int, epochs: int, cases: int, jobs: int, seconds: float, progress: Any
) -> dict[str, Any]:
    """`bceval experiment run` of `arms` arms (each its own command, so nothing is shared) x `epochs` x `cases`
    with a fixed-time agent: wall time against the ideal (units / jobs x seconds). The variant is prepared
    first (by `experiment report`), so the time is the answering's."""
    corpus, out = scratch / "exp-corpus", scratch / "exp-out"
    generate_live_corpus(corpus, cases)
    agent, env = _fixed_time_agent(scratch / "exp-bin", seconds)
    lines = ["name: bench", f"epochs: {epochs}", "defaults:", f"  corpus: {corpus}", "  adapter: command", "arms:"]
    for number in range(1, arms + 1):
        lines += [f"  - name: arm{number}", f"    command: {agent.name} --arm {number}"]
    experiment = scratch / "bench-experiment.yaml"
    experiment.write_text("\n".join(lines) + "\n", encoding="utf-8")
    base = [sys.executable, "-m", "bceval", "experiment"]
    _run([*base, "report", str(experiment), "--out", str(out)], env)
    units = arms * epochs * cases
    progress(f"bench: experiment of {arms} arms x {epochs} epochs x {cases} cases at --jobs {jobs}, {seconds:g} s each")
    run = _run([*base, "run", str(experiment), "--out", str(out), "--jobs", str(jobs), "--retries", "0"], env)
    report = json.loads((out / "experiments" / "bench" / "report.json").read_text(encoding="utf-8"))
    answered = sum(arm["answered"] for arm in report["arms"])
    shape = {"arms": arms, "epochs": epochs, "cases": cases, "units": units}
    return {**shape, **_throughput(run, units, answered, jobs, seconds)}


def run_bench(
    sizes: list[int],
    repeat: int,
    out_file: Path,
    progress: Any = None,
    corpus: Path | None = None,
    live: tuple[int, int, float] | None = (256, 16, 0.5),
    experiment: tuple[int, int, int, int, float] | None = None,
) -> dict[str, Any]:
    """Measure each synthetic size, or (with `corpus`) one real corpus, and live throughput (`live`: answers,
    jobs, seconds per answer; None skips it); write the JSON report."""
    progress = progress or (lambda message: print(message, file=sys.stderr))
    warm_bytecode(measured_environment())
    with tempfile.TemporaryDirectory(prefix="bceval-bench-") as scratch:
        if corpus is not None:
            measured = [measure(0, repeat, Path(scratch), progress, source=corpus)]
        else:
            measured = [measure(size, repeat, Path(scratch), progress) for size in sizes]
        live_report = measure_live(Path(scratch), *live, progress) if live else None
        experiment_report = measure_experiment(Path(scratch), *experiment, progress) if experiment else None
    growth = []
    for smaller, larger in zip(measured, measured[1:], strict=False):
        growth.append(
            {
                "from": smaller["articles"],
                "to": larger["articles"],
                "sizeRatio": round(larger["articles"] / smaller["articles"], 2),
                "coldPrepareRatio": round(
                    larger["results"]["cold prepare"]["medianSeconds"]
                    / smaller["results"]["cold prepare"]["medianSeconds"],
                    2,
                ),
            }
        )
    report = {
        "benchVersion": 1,
        "python": sys.version.split()[0],
        "sizes": measured,
        "growth": growth,
        "live": live_report,
        "experiment": experiment_report,
    }
    write_atomic(out_file, dumps(report))
    return report


def render_table(report: dict[str, Any]) -> str:
    names = list(report["sizes"][0]["results"])
    header = "| measurement | " + " | ".join(f"{s['articles']:,} articles" for s in report["sizes"]) + " |"
    lines = [header, "|---|" + "---|" * len(report["sizes"])]
    for name in names:
        cells = []
        for size in report["sizes"]:
            result = size["results"][name]
            rss = f", {result['peakRssMb']:.0f} MB" if result["peakRssMb"] is not None else ""
            cells.append(f"{result['medianSeconds']:.3f} s{rss}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| cold / I/O floor | " + " | ".join(f"{s['coldToFloorRatio']}×" for s in report["sizes"]) + " |")
    lines.append("| touch / cold | " + " | ".join(f"{s['touchToColdRatio']:.1%}" for s in report["sizes"]) + " |")
    for step in report["growth"]:
        lines.append(
            f"\nGrowth {step['from']:,} → {step['to']:,} articles ({step['sizeRatio']}×): cold prepare "
            f"{step['coldPrepareRatio']}×"
        )
    live = report.get("live")
    if live:
        lines.append(f"\nLive throughput: {live['answered']} of {live['answers']} answers {_throughput_text(live)}")
    experiment = report.get("experiment")
    if experiment:
        lines.append(
            f"Experiment overhead: {experiment['arms']} arms × {experiment['epochs']} epochs × {experiment['cases']} "
            f"cases = {experiment['units']} answers ({experiment['answered']} answered) {_throughput_text(experiment)}"
        )
    return "\n".join(lines) + "\n"


def _throughput_text(measured: dict[str, Any]) -> str:
    """How a throughput measurement (see _throughput) reads in the table."""
    return (
        f"at --jobs {measured['jobs']}, {measured['secondsPerAnswer']:g} s each: {measured['wallSeconds']:.2f} s "
        f"against an ideal {measured['idealSeconds']:.2f} s ({measured['ratioToIdeal']:.3f}×); harness overhead "
        f"{measured['overheadPerAnswerSeconds'] * 1000:.1f} ms per answer"
    )


def parse_numbers(text: str, flag: str, count: int) -> Any:
    """A comma-separated tuple of numbers (the last may be fractional), or None for 'none'."""
    from bceval.errors import BcevalError

    if text.strip().lower() == "none":
        return None
    parts = text.split(",")
    try:
        if len(parts) != count:
            raise ValueError
        return (*(int(part) for part in parts[:-1]), float(parts[-1]))
    except ValueError:
        raise BcevalError(f"{flag} needs {count} comma-separated numbers or none, got '{text}'") from None


def parse_live(text: str) -> tuple[int, int, float] | None:
    from bceval.errors import BcevalError

    try:
        return parse_numbers(text, "--live", 3)
    except BcevalError:
        raise BcevalError(f"--live must be ANSWERS,JOBS,SECONDS (e.g. 256,16,0.5) or none, got '{text}'") from None


def bench_command(
    sizes_text: str,
    repeat: int,
    out: Path,
    corpus: Path | None = None,
    live_text: str = "none",
    experiment_text: str = "none",
    experiment_flag: str = "--experiment",
) -> str:
    """`bceval bench` and `doit bench`: check the arguments, measure, and return the table to print."""
    from bceval.errors import BcevalError

    experiment, live = parse_numbers(experiment_text, experiment_flag, 5), parse_live(live_text)
    try:
        sizes = [int(part) for part in sizes_text.split(",") if part.strip()]
    except ValueError:
        raise BcevalError(f"--sizes must be comma-separated article counts, got '{sizes_text}'") from None
    if not sizes or min(sizes) < 10 or repeat < 1:
        raise BcevalError("--sizes needs counts of at least 10 articles and --repeat at least 1")
    if corpus is not None and not corpus.is_dir():
        raise BcevalError(f"{corpus}: corpus directory does not exist")
    if live is not None and (live[0] < 2 or live[1] < 1 or live[2] <= 0):
        raise BcevalError("--live needs ANSWERS,JOBS,SECONDS with at least 2 answers, 1 job and a positive time")
    if experiment is not None and (min(experiment[:4]) < 1 or experiment[0] < 2 or experiment[4] <= 0):
        raise BcevalError("--experiment needs ARMS,EPOCHS,CASES,JOBS,SECONDS with 2+ arms and a positive time")
    return render_table(run_bench(sizes, repeat, out, corpus=corpus, live=live, experiment=experiment))


def bench_action(sizes_text: str, repeat_text: str, live_text: str, experiment_text: str, out: Path) -> None:
    """The `doit bench` action: the table goes to stdout, as `bceval bench` prints it."""
    from bceval.errors import BcevalError

    try:
        repeat = int(repeat_text)
    except ValueError:
        raise BcevalError(f"BCEVAL_BENCH_REPEAT must be a whole number, got '{repeat_text}'") from None
    sys.stdout.write(
        bench_command(sizes_text, repeat, out, None, live_text, experiment_text, "BCEVAL_BENCH_EXPERIMENT")
    )
