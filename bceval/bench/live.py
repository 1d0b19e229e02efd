"""The live measurements of `bceval bench`: throughput of `bceval answer` with a fixed-time agent and with the api
agent over a local endpoint, and the overhead of an experiment, each beside the plainest launcher's floor."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

from bceval.bench.chat import RESPONSES_PER_CASE, BenchServer
from bceval.bench.corpora import generate_live_corpus
from bceval.bench.measure import BCEVAL, Run, measured_environment, progress, run_process, settle
from bceval.layout import CASE_PATTERN, OutDir

# A fake agent for throughput: it drains its prompt, marks when the first agent started, waits a fixed time and
# answers the one case of its view. A shell script, so its own start-up costs next to nothing.
FIXED_TIME_AGENT = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "fixed-time-agent 1"; exit 0; fi
(set -C; : > '{mark}') 2>/dev/null
cat > /dev/null
sleep {seconds}
for request in request-case-*.json; do case=${{request#request-}}; case=${{case%.json}}; done
printf '{{"cases":[{{"id":"%s","findings":[]}}]}}\\n' "$case"
"""

# The floor: the same agent launched `answers` times, `jobs` at a time, by the plainest launcher Python has.
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
    corpus: Path  # the cases it answers


def _fixed_time_agent(where: Path, cases: int, seconds: float) -> Agent:
    """A live corpus of `cases` cases in `where`, the fixed-time agent, and the environment that lets bceval run it."""
    generate_live_corpus(where / "corpus", cases)
    settle()
    tools = where / "bin"
    tools.mkdir()
    agent, mark = tools / "fixed-time-agent", tools / "first-agent"
    agent.write_text(FIXED_TIME_AGENT.format(seconds=seconds, mark=mark), encoding="utf-8")
    agent.chmod(0o755)
    env = {**measured_environment(), "BCEVAL_LIVE": "1", "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"}
    return Agent(agent, mark, env, where / "corpus")


def _floor(agent: Agent, scratch: Path, prepared: Path, answers: int, jobs: int) -> Run:
    """The plain launcher (see _LAUNCHER) over the same agent, given a prompt of the size bceval gives it."""
    folder = scratch / "floor-view"
    if not folder.is_dir():
        folder.mkdir()
        request, case = _a_prepared_case(prepared)
        shutil.copy(request, folder / request.name)
        (scratch / "floor-prompt").write_bytes(request.read_bytes() + case.read_bytes())
    args = [sys.executable, "-c", _LAUNCHER, str(agent.path), str(answers), str(jobs), str(folder)]
    return run_process([*args, str(scratch / "floor-prompt")], agent.env)


def _a_prepared_case(prepared: Path) -> tuple[Path, Path]:
    """The request and the code file of one prepared case (the first by name), wherever under `prepared` it is."""
    request = min(prepared.rglob("request-case-*.json"))
    return request, request.parent / (request.stem.removeprefix("request-") + ".al")


def _throughput(runs: list[Run], floors: list[Run], answers: int, answered: int, jobs: int, seconds: float) -> dict:
    """Wall time (median of the rounds) against the ideal (answers / jobs x seconds) and the floor of the same
    rounds, and CPU per answer beside the floor's."""
    ideal = answers / jobs * seconds
    wall = median([r.seconds for r in runs])
    floor = median([r.seconds for r in floors])
    cpu = round(median([r.cpu_seconds for r in runs]) / answers, 5)
    floor_cpu = round(median([r.cpu_seconds for r in floors]) / answers, 5)
    return {
        "answered": answered,
        "jobs": jobs,
        "secondsPerAnswer": seconds,
        "idealSeconds": round(ideal, 3),
        "wallSeconds": round(wall, 3),
        "runsSeconds": [round(r.seconds, 3) for r in runs],
        "floorSeconds": round(floor, 3),
        "floorRunsSeconds": [round(r.seconds, 3) for r in floors],
        "ratioToIdeal": round(wall / ideal, 3),
        "floorRatioToIdeal": round(floor / ideal, 3),
        "ratioToFloor": round(wall / floor, 3),
        "overheadPerAnswerSeconds": round((wall - ideal) * jobs / answers, 4),
        "peakRssMb": max(r.peak_rss_mb for r in runs),
        "cpuPerAnswerSeconds": cpu,
        "floorCpuPerAnswerSeconds": floor_cpu,
        "ownCpuPerAnswerSeconds": round(cpu - floor_cpu, 5),  # of the two rounded numbers, so the three add up
    }


def measure_live(scratch: Path, answers: int, jobs: int, seconds: float, repeat: int = 1) -> dict[str, Any]:
    """`bceval answer` with a fixed-time agent, each round in a fresh output folder, beside the floor."""
    where = scratch / f"live-{answers}-{jobs}"
    agent = _fixed_time_agent(where, answers, seconds)
    runs, floors, answered = [], [], 0
    for round_number in range(repeat):
        out = where / f"out-{round_number}"
        args = ["--corpus", str(agent.corpus), "--out", str(out)]
        run_process([*BCEVAL, "prepare", *args], agent.env)
        progress(
            f"bench: {answers} live answers at --jobs {jobs}, {seconds:g} s each, round {round_number + 1}/{repeat}"
        )
        floors.append(_floor(agent, where, OutDir(out).prepare.path, answers, jobs))
        command = [*BCEVAL, "answer", *args, "--adapter", "command", "--command", agent.path.name, "--jobs", str(jobs)]
        runs.append(run_process([*command, "--retries", "0", "--timeout", str(seconds * 20 + 10)], agent.env))
        answered = len(list(OutDir(out).run("command").results.glob(CASE_PATTERN)))
    return {"answers": answers, **_throughput(runs, floors, answers, answered, jobs, seconds)}


def _experiment_file(path: Path, name: str, agent: Agent, arms: int, epochs: int, domains: int | None) -> Path:
    """An experiment of `arms` arms (each its own command, so nothing is shared) over the cases of the first
    `domains` domains (None: all)."""
    lines = [f"name: {name}", f"epochs: {epochs}"]
    if domains is not None:
        tens, rest = divmod(domains, 10)
        globs = [f"area-{ten:03d}?" for ten in range(tens)] + ([f"area-{tens:03d}[0-{rest - 1}]"] if rest else [])
        lines += ["k:", *(f"  - '{glob}'" for glob in globs)]
    lines += ["defaults:", f"  corpus: {agent.corpus}", "  adapter: command", "arms:"]
    for number in range(1, arms + 1):
        lines += [f"  - name: arm{number}", f"    command: {agent.path.name} --arm {number}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# The api line's floor: the same conversations through the plainest openai client, `jobs` threads, a fresh process.
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


def measure_api(scratch: Path, answers: int, jobs: int, latency: float) -> dict[str, Any]:
    """`bceval answer --adapter api` against a local endpoint answering after `latency` seconds, three responses a
    case, beside the floor (_API_FLOOR)."""
    if importlib.util.find_spec("openai") is None:
        return {"answers": answers, "skipped": "the openai package is not installed (pip install 'bceval[api]')"}
    agent = _fixed_time_agent(scratch / "api", answers, latency)  # its corpus and environment; the agent is idle
    out, env = scratch / "api" / "out", {**agent.env, "BENCH_KEY": "bench-key-not-secret"}
    where = ["--corpus", str(agent.corpus), "--out", str(out)]
    run_process([*BCEVAL, "prepare", *where], env)
    progress(f"bench: {answers} api answers at --jobs {jobs}, {latency:g} s latency, two tool calls each")
    request, case = _a_prepared_case(OutDir(out).prepare.path)  # asked as bceval asks it
    prompt = scratch / "api" / "floor-prompt"
    prompt.write_text(
        f"=== request {request.name} ===\n{request.read_text(encoding='utf-8')}\n"
        f"=== file {case.name} ===\n{case.read_text(encoding='utf-8')}",
        encoding="utf-8",
    )
    with BenchServer(latency) as server:
        floor = run_process(
            [sys.executable, "-c", _API_FLOOR, server.base_url, str(answers), str(jobs), str(prompt)], env
        )
        api = ["--adapter", "api", "--model", "bench", "--base-url", server.base_url, "--api-key-env", "BENCH_KEY"]
        command = [*BCEVAL, "answer", *where, *api, "--jobs", str(jobs), "--retries", "0"]
        run = run_process([*command, "--timeout", str(latency * 40 + 10)], env)
    answered = len(list(OutDir(out).run("api-bench").results.glob(CASE_PATTERN)))
    measured = _throughput([run], [floor], answers, answered, jobs, latency * RESPONSES_PER_CASE)
    cpu = round(run.cpu_seconds / answers * 1000, 2)
    return {"answers": answers, "latencySeconds": latency, **measured, "cpuMsPerAnswer": cpu}


def measure_experiment(
    scratch: Path, arms: int, epochs: int, cases: int, jobs: int, seconds: float, repeat: int = 1
) -> dict[str, Any]:
    """`bceval experiment run` with a fixed-time agent, each round in a fresh output folder (prepared first), beside
    the floor; per round also the first agent's start, a no-op rerun and doit's state. Then `experiment report`
    alone on a quarter, a half and all of the cases."""
    where = scratch / "experiment"
    agent = _fixed_time_agent(where, cases, seconds)
    experiment = _experiment_file(where / "bench.yaml", "bench", agent, arms, epochs, None)
    units = arms * epochs * cases
    runs, floors, first, noop, state = [], [], [], [], []

    def bceval(verb: str, path: Path, out: Path, *extra: str) -> Run:
        return run_process([*BCEVAL, "experiment", verb, str(path), "--out", str(out), *extra], agent.env)

    for round_number in range(repeat):
        out = where / f"out-{round_number}"
        bceval("report", experiment, out)
        progress(
            f"bench: experiment of {arms} arms x {epochs} epochs x {cases} cases at --jobs {jobs}, {seconds:g} s "
            f"each, round {round_number + 1}/{repeat}"
        )
        floors.append(_floor(agent, where, out, units, jobs))
        agent.mark.unlink(missing_ok=True)
        runs.append(bceval("run", experiment, out, "--jobs", str(jobs), "--retries", "0"))
        first.append(round(agent.mark.stat().st_mtime - runs[-1].started, 3) if agent.mark.exists() else None)
        noop.append(bceval("run", experiment, out, "--jobs", str(jobs), "--retries", "0").seconds)
        db = OutDir(out).doit_db  # doit's state, with any file its backend keeps beside it
        state.append(sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file()))
    report = json.loads(OutDir(out).experiment("bench").report().read_text(encoding="utf-8"))
    answered = sum(arm["answered"] for arm in report["arms"])
    sizes = []  # (name, answers, experiment file) of a quarter, a half and all of the cases
    for share in (4, 2):
        domains = max(1, cases // share // 2)  # two cases a domain
        name = f"bench-{2 * domains}"
        path = _experiment_file(where / f"{name}.yaml", name, agent, arms, epochs, domains)
        bceval("run", path, out, "--jobs", str(jobs), "--retries", "0")
        sizes.append((name, arms * epochs * 2 * domains, path))
    sizes.append(("bench", units, experiment))
    # the three sizes take turns, so a change in the machine's speed moves all of them alike
    timed: dict[str, list[float]] = {name: [] for name, _, _ in sizes}
    for round_number in range(repeat):
        counts = ", ".join(f"{answers:,}" for _, answers, _ in sizes)
        progress(f"bench: experiment report of {counts} answers, round {round_number + 1}/{repeat}")
        for name, _, path in sizes:
            timed[name].append(bceval("report", path, out).seconds)
    reports = []
    for name, answers, path in sizes:
        # and once without the verdicts an earlier report kept (moved away, not deleted: see bench/measure.py)
        for number, kept in enumerate(sorted(OutDir(out).experiment(name).path.glob("variants/*/.build/epochs"))):
            kept.rename(where / f"kept-verdicts-{name}-{number}")
        cold = bceval("report", path, out).seconds
        reports.append(
            {"answers": answers, "medianSeconds": round(median(timed[name]), 3), "coldSeconds": round(cold, 3)}
        )
    for smaller, larger in zip(reports, reports[1:], strict=False):
        larger["growth"] = round(larger["medianSeconds"] / smaller["medianSeconds"], 2)
    shape = {"arms": arms, "epochs": epochs, "cases": cases, "units": units}
    starts = [value for value in first if value is not None]
    return {
        **shape,
        **_throughput(runs, floors, units, answered, jobs, seconds),
        "firstAgentSeconds": round(median(starts), 3) if starts else None,
        "noOpRerunSeconds": round(median(noop), 3),
        "stateBytesPerAnswer": round(median(state) / units, 1),
        "report": reports,
    }
