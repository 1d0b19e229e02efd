"""The measurements of `bceval bench`: every one runs bceval in a fresh process, as a user would, and records
wall time and peak resident memory; live throughput and experiment overhead run a fixed-time agent.

Every round keeps its output folder until the bench ends (the scratch folder goes as a whole). Removing one round's
output before the next made the next slower on a disk like this machine's: an ext4 without a journal does not reuse
a freed inode for a minute or more, and every file created meanwhile scans past the freed ones (perf put a quarter
of a live round's CPU there), a cost of the bench's own housekeeping, not of what it measures.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.bench.corpora import generate_corpus, generate_live_corpus
from bceval.errors import BcevalError
from bceval.jsonio import dumps, write_atomic
from bceval.layout import CASE_PATTERN, OutDir

MEASUREMENTS = (
    "cold prepare",
    "no-op rerun",
    "touch one article",
    "touch one leaf",
    "score cold",
    "score after one result changed",
    "I/O floor",
)


@dataclass
class Run:
    seconds: float
    peak_rss_mb: float | None
    cpu_seconds: float | None = None  # user + system time of the process and every child it waited for
    started: float = 0.0  # time.time() when it was started


def _run(args: list[str], env: dict[str, str]) -> Run:
    """One fresh process; wall time, CPU time and its own peak RSS (wait4), failing loudly on a non-zero exit."""
    # stderr goes to a file, read at the end: a live run writes a line per answer, more than a pipe holds
    errors = tempfile.TemporaryFile()
    started = time.time()
    start = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=errors, env=env)
    cpu = None
    if hasattr(os, "wait4"):
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        scale = 1024 * 1024 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
        peak = usage.ru_maxrss / scale
        cpu = usage.ru_utime + usage.ru_stime
    else:  # pragma: no cover - Windows has no wait4
        process.wait()
        elapsed, peak = time.perf_counter() - start, None
    errors.seek(0)
    error = errors.read().decode("utf-8", "replace")
    errors.close()
    if process.returncode != 0:
        step = " ".join(arg for arg in args[1:5] if not arg.startswith("-") and "/" not in arg)
        last = (error.strip().splitlines() or ["no output"])[-1]
        raise BcevalError(f"bench: {step} failed (exit {process.returncode}): {last}")
    return Run(elapsed, peak, cpu, started)


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


def _settle() -> None:
    """Write every dirty page out before a measurement starts: a freshly written corpus, and the files of the
    measurement before (an experiment leaves ~100,000), are otherwise flushed by the kernel in the middle of the
    next measurement, on one of this machine's two cores."""
    if hasattr(os, "sync"):
        os.sync()


def measured_environment() -> dict[str, str]:
    """The environment of every measured process: no BCEVAL_* settings, and Python's bytecode cache on.

    A normal installation runs bceval from cached bytecode. Where PYTHONDONTWRITEBYTECODE is set (some
    containers and CI images), an editable install would instead recompile bceval's own modules in
    every process, a constant ~0.02 s that says nothing about how bceval scales.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_") and k != "PYTHONDONTWRITEBYTECODE"}
    # BCEVAL runs `python -P`: a folder named bceval in the current directory must not stand in for this package
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(_PACKAGE_HOME), env.get("PYTHONPATH"))))
    return env


_PACKAGE_HOME = Path(__file__).resolve().parents[2]  # the folder holding the bceval package
BCEVAL = [sys.executable, "-P", "-m", "bceval"]  # -P: the current directory is not put on the module path


def warm_bytecode(env: dict[str, str]) -> None:
    """Compile bceval once so the first measured run does not pay for it (quietly: a read-only
    installation simply keeps compiling on import)."""
    package = Path(__file__).resolve().parents[1]  # the bceval package, not only bench/
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
    _settle()
    env = measured_environment()
    base = BCEVAL

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
        runs["I/O floor"].append(_run([sys.executable, "-c", _FLOOR, str(corpus), str(sizes), str(out / "floor")], env))
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

# A fake agent for throughput: it drains its prompt, notes the moment the first agent started (a shell builtin:
# the first to create the mark wins, later ones leave it as it is), waits a fixed time and answers the one case
# of its view (named by the request file there: bceval.layout.case_request_name, spelled in the script's own
# glob). A shell script, so its own start-up costs next to nothing.
FIXED_TIME_AGENT = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "fixed-time-agent 1"; exit 0; fi
(set -C; : > '{mark}') 2>/dev/null
cat > /dev/null
sleep {seconds}
for request in request-case-*.json; do case=${{request#request-}}; case=${{case%.json}}; done
printf '{{"cases":[{{"id":"%s","findings":[]}}]}}\\n' "$case"
"""

# The floor: the same agent launched `answers` times, `jobs` at a time, by the plainest launcher Python has
# (threads that each run one process with the prompt on stdin and its output captured), in one folder that
# holds a request file. Whatever bceval spends beyond this is its own.
_LAUNCHER = """
import subprocess, sys
from concurrent.futures import ThreadPoolExecutor
agent, answers, jobs, folder, prompt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
data = open(prompt, 'rb').read()
def one(_):
    done = subprocess.run([agent], input=data, cwd=folder, capture_output=True, start_new_session=True)
    if done.returncode != 0 or not done.stdout:
        raise SystemExit('the agent failed')
with ThreadPoolExecutor(jobs) as pool:
    list(pool.map(one, range(answers)))
"""


@dataclass
class Agent:
    path: Path
    mark: Path  # created by the first agent that starts
    env: dict[str, str]

    def first_start(self, run: Run) -> float | None:
        """Seconds from the start of `run` to the first agent's start (None when none started)."""
        try:
            return round(self.mark.stat().st_mtime - run.started, 3)
        except OSError:
            return None


def _fixed_time_agent(tools: Path, seconds: float) -> Agent:
    """The fixed-time agent in `tools` and the environment that lets bceval run it."""
    tools.mkdir()
    agent, mark = tools / "fixed-time-agent", tools / "first-agent"
    agent.write_text(FIXED_TIME_AGENT.format(seconds=seconds, mark=mark), encoding="utf-8")
    agent.chmod(0o755)
    env = {**measured_environment(), "BCEVAL_LIVE": "1", "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"}
    return Agent(agent, mark, env)


def _floor(agent: Agent, scratch: Path, prepared: Path, answers: int, jobs: int) -> Run:
    """The plain launcher (see _LAUNCHER) over the same agent, given a prompt of the size bceval gives it."""
    folder = scratch / "floor-view"
    if not folder.is_dir():
        folder.mkdir()
        request, case = _a_prepared_case(prepared)
        shutil.copy(request, folder / request.name)
        (scratch / "floor-prompt").write_bytes(request.read_bytes() + case.read_bytes())
    args = [sys.executable, "-c", _LAUNCHER, str(agent.path), str(answers), str(jobs), str(folder)]
    return _run([*args, str(scratch / "floor-prompt")], agent.env)


def _a_prepared_case(prepared: Path) -> tuple[Path, Path]:
    """The request and the code file of one prepared case (the first by name), wherever under `prepared` it is."""
    request = min(prepared.rglob("request-case-*.json"))
    return request, request.parent / (request.stem.removeprefix("request-") + ".al")


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _throughput(runs: list[Run], floors: list[Run], answers: int, answered: int, jobs: int, seconds: float) -> dict:
    """Wall time (median of the rounds) against the ideal (answers / jobs x seconds) and against the floor measured
    in the same rounds (no floors: no floor fields); the harness's own time per answer; its CPU per answer beyond
    the floor's."""
    ideal = answers / jobs * seconds
    wall = _median([r.seconds for r in runs])
    floor = _median([r.seconds for r in floors]) if floors else None
    measured: dict[str, Any] = {
        "answered": answered,
        "jobs": jobs,
        "secondsPerAnswer": seconds,
        "idealSeconds": round(ideal, 3),
        "wallSeconds": round(wall, 3),
        "runsSeconds": [round(r.seconds, 3) for r in runs],
        "floorSeconds": round(floor, 3) if floor is not None else None,
        "floorRunsSeconds": [round(r.seconds, 3) for r in floors],
        "ratioToIdeal": round(wall / ideal, 3),
        "floorRatioToIdeal": round(floor / ideal, 3) if floor is not None else None,
        "ratioToFloor": round(wall / floor, 3) if floor is not None else None,
        "overheadPerAnswerSeconds": round((wall - ideal) * jobs / answers, 4),
        "peakRssMb": max((r.peak_rss_mb for r in runs if r.peak_rss_mb is not None), default=None),
        "cpuPerAnswerSeconds": None,
        "floorCpuPerAnswerSeconds": None,
        "ownCpuPerAnswerSeconds": None,
    }
    if all(r.cpu_seconds is not None for r in runs):
        cpu = round(_median([r.cpu_seconds for r in runs]) / answers, 5)  # type: ignore[misc]
        measured["cpuPerAnswerSeconds"] = cpu
        if floors and all(r.cpu_seconds is not None for r in floors):
            floor_cpu = round(_median([r.cpu_seconds for r in floors]) / answers, 5)  # type: ignore[misc]
            # the difference of the two numbers the report gives, so the three always add up (rounded apart, they
            # could differ from it by 1.5e-5)
            measured.update(floorCpuPerAnswerSeconds=floor_cpu, ownCpuPerAnswerSeconds=round(cpu - floor_cpu, 5))
    return measured


def measure_live(
    scratch: Path, answers: int, jobs: int, seconds: float, progress: Any, repeat: int = 1
) -> dict[str, Any]:
    """`bceval answer` with a live agent that takes `seconds` per case, each round in a fresh output folder (so
    nothing is cached), beside the plain launcher's floor in the same round; see _throughput."""
    where = scratch / f"live-{answers}-{jobs}"
    corpus = where / "corpus"
    generate_live_corpus(corpus, answers)
    _settle()
    agent = _fixed_time_agent(where / "bin", seconds)
    base = BCEVAL
    runs, floors, answered = [], [], 0
    for round_number in range(repeat):
        out = where / f"out-{round_number}"
        args = ["--corpus", str(corpus), "--out", str(out)]
        _run([*base, "prepare", *args], agent.env)
        progress(
            f"bench: {answers} live answers at --jobs {jobs}, {seconds:g} s each, round {round_number + 1}/{repeat}"
        )
        floors.append(_floor(agent, where, OutDir(out).prepare.path, answers, jobs))
        command = [*base, "answer", *args, "--adapter", "command", "--command", agent.path.name, "--jobs", str(jobs)]
        runs.append(_run([*command, "--retries", "0", "--timeout", str(seconds * 20 + 10)], agent.env))
        answered = len(list(OutDir(out).run("command").results.glob(CASE_PATTERN)))
    return {"answers": answers, **_throughput(runs, floors, answers, answered, jobs, seconds)}


def _experiment_file(path: Path, name: str, corpus: Path, agent: Agent, arms: int, epochs: int, domains: int | None):
    """An experiment of `arms` arms (each its own command, so nothing is shared); `domains` keeps the cases of the
    first that many domains (area-0000, area-0001, ...), None keeps all."""
    lines = [f"name: {name}", f"epochs: {epochs}"]
    if domains is not None:
        tens, rest = divmod(domains, 10)
        globs = [f"area-{ten:03d}?" for ten in range(tens)] + ([f"area-{tens:03d}[0-{rest - 1}]"] if rest else [])
        lines += ["k:", *(f"  - '{glob}'" for glob in globs)]
    lines += ["defaults:", f"  corpus: {corpus}", "  adapter: command", "arms:"]
    for number in range(1, arms + 1):
        lines += [f"  - name: arm{number}", f"    command: {agent.path.name} --arm {number}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# The api line's floor: the same conversations (three responses each, two of them asking for a tool) held by the
# plainest client the openai package gives, `jobs` threads each with its own client, in a fresh process (so it pays
# the package's import as bceval does). Whatever bceval spends beyond this is its own.
_API_FLOOR = """
import json, sys, threading
import openai
base_url, answers, jobs, prompt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
user = open(prompt, encoding='utf-8').read()
turns = iter(range(answers))
lock = threading.Lock()
def client():
    http = openai.DefaultHttpxClient(verify=False, follow_redirects=False)
    return openai.OpenAI(api_key='floor', base_url=base_url, max_retries=0, http_client=http)
def conversation(talk):
    messages = [{'role': 'system', 'content': 'floor'}, {'role': 'user', 'content': user}]
    while True:
        response = talk.post('/chat/completions', body={'model': 'bench', 'messages': messages}, cast_to=object)
        message = response['choices'][0]['message']
        calls = message.get('tool_calls') or []
        if not calls:
            json.loads(message['content'])
            return
        messages.append({'role': 'assistant', 'content': None, 'tool_calls': calls})
        messages += [{'role': 'tool', 'tool_call_id': call['id'], 'content': 'x' * 2000} for call in calls]
def worker():
    talk = client()
    while True:
        with lock:
            if next(turns, None) is None:
                return
        conversation(talk)
threads = [threading.Thread(target=worker) for _ in range(jobs)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
"""


def _state_bytes(out: Path) -> int:
    """The size of what a rerun reads to know what is up to date: doit's state (with any file its backend keeps
    beside it)."""
    db = OutDir(out).doit_db
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())


def measure_api(scratch: Path, answers: int, jobs: int, latency: float, progress: Any) -> dict[str, Any]:
    """`bceval answer --adapter api` against a local endpoint that answers after `latency` seconds, two tool calls
    per case (three responses): wall time against the ideal (answers / jobs x 3 x latency) and against a floor (the
    same conversations through the bare openai client, see _API_FLOOR), and bceval's CPU time per answer and its
    own beyond the floor's (the endpoint runs in this process, so its CPU is not counted)."""
    try:
        import openai  # noqa: F401 - only to know whether the extra is there
    except ImportError:
        return {"answers": answers, "skipped": "the openai package is not installed (pip install 'bceval[api]')"}
    from bceval.bench.chat import RESPONSES_PER_CASE, BenchServer

    corpus, out = scratch / "api-corpus", scratch / "api-out"
    generate_live_corpus(corpus, answers)
    _settle()
    env = {**measured_environment(), "BCEVAL_LIVE": "1", "BENCH_KEY": "bench-key-not-secret"}
    base = [sys.executable, "-m", "bceval"]
    where = ["--corpus", str(corpus), "--out", str(out)]
    _run([*base, "prepare", *where], env)
    progress(f"bench: {answers} api answers at --jobs {jobs}, {latency:g} s latency, two tool calls each")
    request, case = _a_prepared_case(OutDir(out).prepare.path)  # asked as bceval asks it
    prompt = scratch / "api-floor-prompt"
    prompt.write_text(
        f"=== request {request.name} ===\n{request.read_text(encoding='utf-8')}\n"
        f"=== file {case.name} ===\n{case.read_text(encoding='utf-8')}",
        encoding="utf-8",
    )
    with BenchServer(latency) as server:
        floor = _run([sys.executable, "-c", _API_FLOOR, server.base_url, str(answers), str(jobs), str(prompt)], env)
        api = ["--adapter", "api", "--model", "bench", "--base-url", server.base_url, "--api-key-env", "BENCH_KEY"]
        command = [*base, "answer", *where, *api, "--jobs", str(jobs), "--retries", "0"]
        run = _run([*command, "--timeout", str(latency * 40 + 10)], env)
    answered = len(list(OutDir(out).run("api-bench").results.glob(CASE_PATTERN)))
    measured = _throughput([run], [floor], answers, answered, jobs, latency * RESPONSES_PER_CASE)
    cpu = round(run.cpu_seconds / answers * 1000, 2) if run.cpu_seconds is not None else None
    return {"answers": answers, "latencySeconds": latency, **measured, "cpuMsPerAnswer": cpu}


def measure_experiment(
    scratch: Path, arms: int, epochs: int, cases: int, jobs: int, seconds: float, progress: Any, repeat: int = 1
) -> dict[str, Any]:
    """`bceval experiment run` of `arms` arms x `epochs` x `cases` with a fixed-time agent, each round in a fresh
    output folder, beside the floor of the same round (see _throughput). The variant is prepared first (by
    `experiment report`), so the time is the answering's. Per round also: when the first agent started, a
    rerun with nothing to do, and the size of doit's state. Then `experiment report` alone, on the whole
    experiment and on ones of a quarter and half its cases (their answers come from the cache)."""
    where = scratch / "experiment"
    corpus = where / "corpus"
    generate_live_corpus(corpus, cases)
    _settle()
    agent = _fixed_time_agent(where / "bin", seconds)
    experiment = _experiment_file(where / "bench.yaml", "bench", corpus, agent, arms, epochs, None)
    base = [*BCEVAL, "experiment"]
    units = arms * epochs * cases
    runs, floors, first, noop, state = [], [], [], [], []
    out = where / "out"
    for round_number in range(repeat):
        out = where / f"out-{round_number}"
        _run([*base, "report", str(experiment), "--out", str(out)], agent.env)
        progress(
            f"bench: experiment of {arms} arms x {epochs} epochs x {cases} cases at --jobs {jobs}, {seconds:g} s "
            f"each, round {round_number + 1}/{repeat}"
        )
        floors.append(_floor(agent, where, out, units, jobs))
        agent.mark.unlink(missing_ok=True)
        command = [*base, "run", str(experiment), "--out", str(out), "--jobs", str(jobs), "--retries", "0"]
        runs.append(_run(command, agent.env))
        first.append(agent.first_start(runs[-1]))
        noop.append(_run(command, agent.env).seconds)
        state.append(_state_bytes(out))
    report = json.loads(OutDir(out).experiment("bench").report().read_text(encoding="utf-8"))
    answered = sum(arm["answered"] for arm in report["arms"])
    sizes = []  # (name, answers, experiment file) of a quarter, a half and all of the cases
    for share in (4, 2, 1):
        domains = max(1, cases // share // 2)  # two cases a domain
        size = cases if share == 1 else 2 * domains
        name = "bench" if share == 1 else f"bench-{size}"
        path = experiment
        if share != 1:
            path = _experiment_file(where / f"{name}.yaml", name, corpus, agent, arms, epochs, domains)
            _run([*base, "run", str(path), "--out", str(out), "--jobs", str(jobs), "--retries", "0"], agent.env)
        sizes.append((name, arms * epochs * size, path))
    # The three sizes take turns, round by round, so a change in the machine's speed during the measurement moves
    # all of them alike instead of showing as growth between two sizes measured minutes apart.
    timed: dict[str, list[float]] = {name: [] for name, _, _ in sizes}
    for round_number in range(repeat):
        counts = ", ".join(f"{answers:,}" for _, answers, _ in sizes)
        progress(f"bench: experiment report of {counts} answers, round {round_number + 1}/{repeat}")
        for name, _, path in sizes:
            timed[name].append(_run([*base, "report", str(path), "--out", str(out)], agent.env).seconds)
    reports = []
    for name, answers, path in sizes:
        # and once without the verdicts an earlier report kept (every result file read and judged again); they
        # are moved out of the way, not deleted: thousands of freed inodes would slow every file this and the
        # next measurements create (see the module's docstring)
        for number, kept in enumerate(sorted(OutDir(out).experiment(name).path.glob("variants/*/.build/epochs"))):
            kept.rename(where / f"kept-verdicts-{name}-{number}")
        cold = _run([*base, "report", str(path), "--out", str(out)], agent.env).seconds
        reports.append(
            {"answers": answers, "medianSeconds": round(_median(timed[name]), 3), "coldSeconds": round(cold, 3)}
        )
    for smaller, larger in zip(reports, reports[1:], strict=False):
        larger["growth"] = round(larger["medianSeconds"] / smaller["medianSeconds"], 2)
    shape = {"arms": arms, "epochs": epochs, "cases": cases, "units": units}
    starts = [value for value in first if value is not None]
    return {
        **shape,
        **_throughput(runs, floors, units, answered, jobs, seconds),
        "firstAgentSeconds": round(_median(starts), 3) if starts else None,
        "noOpRerunSeconds": round(_median(noop), 3),
        "stateBytesPerAnswer": round(_median(state) / units, 1),
        "report": reports,
    }


def run_bench(
    sizes: list[int],
    repeat: int,
    out_file: Path,
    progress: Any = None,
    corpus: Path | None = None,
    live: list[tuple[int, int, float]] | None = None,
    experiment: tuple[int, int, int, int, float] | None = None,
    api: tuple[int, int, float] | None = None,
    view: tuple[int, int, int] | None = None,
) -> dict[str, Any]:
    """Measure each synthetic size, or (with `corpus`) one real corpus, live throughput (`live`: answers, jobs,
    seconds per answer of each measurement; None skips it) and an experiment; write the JSON report."""
    progress = progress or (lambda message: print(message, file=sys.stderr))
    warm_bytecode(measured_environment())
    with tempfile.TemporaryDirectory(prefix="bceval-bench-") as scratch:
        if corpus is not None:
            measured = [measure(0, repeat, Path(scratch), progress, source=corpus)]
        else:
            measured = [measure(size, repeat, Path(scratch), progress) for size in sizes]
        live_report = [measure_live(Path(scratch), *point, progress, repeat) for point in live or []] or None
        experiment_report = measure_experiment(Path(scratch), *experiment, progress, repeat) if experiment else None
        api_report = measure_api(Path(scratch), *api, progress) if api else None
        view_report = None
        if view:
            from bceval.bench.viewer import measure_view

            view_report = measure_view(Path(scratch), *view, progress)
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
        "benchVersion": 2,
        "python": sys.version.split()[0],
        "sizes": measured,
        "growth": growth,
        "live": live_report,
        "experiment": experiment_report,
        **({"api": api_report} if api_report is not None else {}),
        "view": view_report,
    }
    write_atomic(out_file, dumps(report))
    return report
