"""Issue 20, part A (the answer key and the record), and the items of parts B and C that live in the agent runner:
every hostile or first-hour action replayed as an attempt with the outcome it must have (see tests/catalogue.py).

Fake agents are small Python scripts written into the attempt's scratch folder, run by this interpreter. An attempt
that needs bubblewrap raises unittest.SkipTest with the reason where it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import unittest
from pathlib import Path

from catalogue import ROOT, Outcome, Ran, attempt, refusal, run_bceval
from cliutil import interruptible

DEMO = ROOT / "evaluation" / "demo-corpus"
LIVE = {"BCEVAL_LIVE": "1"}
ESC_CHARS = ("\x1b", "\r", "\x07", "\x9b")

# The answering half every fake agent shares: the request from the prompt (or the file a {request} names), and an
# answer with no findings.
ANSWER = r"""
import json, os, sys


def request():
    paths = [arg for arg in sys.argv[1:] if arg.endswith(".json") and os.path.isfile(arg)]
    if paths:
        with open(paths[0], encoding="utf-8") as handle:
            return json.load(handle)
    text = sys.stdin.read()
    start = text.index("\n", text.index("=== request ")) + 1
    return json.loads(text[start:text.index("\n=== file ", start)])


def answer():
    case = request()["cases"][0]["id"]
    print(json.dumps({"cases": [{"id": case, "findings": []}]}))
"""


def script(folder: Path, name: str, body: str, executable: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!{sys.executable}\n{ANSWER}\n{body}\n", encoding="utf-8")
    if executable:
        path.chmod(0o755)
    return path


def corpus_copy(scratch: Path) -> Path:
    corpus = scratch / "corpus"
    shutil.copytree(DEMO, corpus)
    return corpus


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in {"Z", "X"}
    except (FileNotFoundError, ProcessLookupError):
        return False


def end_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def pids_in(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(word) for word in path.read_text(encoding="utf-8").split()]


def answer_args(corpus: Path, out: Path, command: str, *flags: str) -> list[str]:
    return ["answer", "--corpus", str(corpus), "--out", str(out), "--adapter", "command", "--command", command, *flags]


def escapes_in(ran: Ran) -> int:
    return sum((ran.stdout + ran.stderr).count(char) for char in ESC_CHARS)


def need_bwrap() -> str:
    from bceval.agents.sandbox import require_bwrap
    from bceval.errors import BcevalError

    try:
        return require_bwrap()
    except BcevalError as exc:
        raise unittest.SkipTest(f"no working bwrap here: {exc}") from None


def first_case(out: Path) -> str:
    return sorted(p.stem.removeprefix("request-") for p in (out / "review").glob("request-case-*.json"))[0]


# --- 1. the version probe --------------------------------------------------------------------------------------


@attempt(1, "version-probe-asks-in-an-empty-folder-without-the-gate")
def version_probe_is_isolated(scratch: Path) -> Outcome:
    log = scratch / "probe.json"
    agent = script(
        scratch / "bin",
        "wrapper",
        f"""
if sys.argv[1:] == ["--version"]:  # a wrapper that ignores --version and asks its model anyway
    with open({str(log)!r}, "w", encoding="utf-8") as handle:
        json.dump({{"cwd": os.getcwd(), "live": "BCEVAL_LIVE" in os.environ, "files": os.listdir(".")}}, handle)
    print(json.dumps({{"cases": [{{"id": "case-00000000", "findings": [{{"id": "x.md"}}]}}]}}))
    sys.exit(0)
answer()
""",
    )
    out = scratch / "out"
    ran = run_bceval(answer_args(DEMO, out, str(agent), "--jobs", "4"), scratch, env=LIVE)
    if not log.exists():
        return Outcome(False, f"the probe never ran (exit {ran.code})", traceback=ran.traceback, hang=ran.hang)
    seen = json.loads(log.read_text(encoding="utf-8"))
    result = next((out / "runs" / "command" / "results").glob("result-case-*.json"), None)
    version = json.loads(result.read_text(encoding="utf-8"))["answeredBy"]["version"] if result else None
    held = (
        not seen["live"]
        and seen["files"] == []
        and not Path(seen["cwd"]).resolve().is_relative_to(DEMO.resolve())
        and version == "unknown"
    )
    detail = f"probe in {seen['cwd']} (files {seen['files']}, BCEVAL_LIVE {seen['live']}); version {version!r}"
    return Outcome(held, detail, traceback=ran.traceback, hang=ran.hang)


# --- 2. no agent process outlives its case; results are what bceval wrote ---------------------------------------

DAEMON = """
import subprocess
# a session of its own (setsid): out of the agent's process group, so ending the group does not end it
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
with open({pids!r}, "a", encoding="utf-8") as handle:
    handle.write(f"{{child.pid}}\\n")
"""


def daemons_left(scratch: Path, rest: str, *flags: str) -> Outcome:
    """Run agents that each leave a setsid daemon and then do `rest`; the outcome counts daemons still alive."""
    pids = scratch / "pids"
    agent = script(scratch / "bin", "daemonizer", DAEMON.format(pids=str(pids)) + rest)
    ran = run_bceval(answer_args(DEMO, scratch / "out", str(agent), *flags), scratch, env=LIVE, timeout=90)
    started = pids_in(pids)
    left = [pid for pid in started if alive(pid)]
    end_all(left)
    held = bool(started) and not left and not ran.hang
    detail = f"{len(started)} daemon(s) started, {len(left)} alive after the run (exit {ran.code})"
    return Outcome(held, detail, orphans=len(left), traceback=ran.traceback, hang=ran.hang)


@attempt(2, "setsid-daemon-is-ended-with-its-case")
def daemon_ends_with_case(scratch: Path) -> Outcome:
    return daemons_left(scratch, "\nanswer()\n", "--jobs", "4")


@attempt(2, "daemon-of-a-timed-out-agent-is-ended")
def daemon_ends_at_timeout(scratch: Path) -> Outcome:
    flags = ("-k", "*ui*", "--timeout", "1", "--retries", "0", "--jobs", "4")
    return daemons_left(scratch, "\nimport time\ntime.sleep(30)\n", *flags)


@attempt(2, "a-result-rewritten-after-bceval-wrote-it-is-refused")
def rewritten_result_refused(scratch: Path) -> Outcome:
    out = scratch / "out"
    where = ["--corpus", str(DEMO), "--out", str(out)]
    run_bceval(["answer", *where, "--adapter", "oracle"], scratch)
    baseline = run_bceval(["answer", *where], scratch)  # the baseline fails the gate on the demo corpus
    results = out / "runs" / "baseline" / "results"
    oracle = out / "runs" / "oracle" / "results"
    victim = sorted(results.glob("result-case-*.json"))[0]
    shutil.copyfile(oracle / victim.name, victim)  # what the daemon did: a passing answer in place of the real one
    ran = run_bceval(["score", *where], scratch)
    outcome = refusal(ran, str(victim), "changed since bceval wrote it")
    if "PASSED" in ran.stdout or baseline.code != 0:
        return Outcome(False, f"scored anyway: {ran.stdout.strip()[:120]}", traceback=ran.traceback)
    # the same files given with --results are the user's own, scored as external results, as before
    mine = scratch / "mine"
    shutil.copytree(results, mine)
    external = run_bceval(["score", *where, "--results", str(mine)], scratch)
    if external.code not in (0, 1) or "changed since" in external.stderr:
        return Outcome(False, f"external results refused: {external.stderr.strip()[-120:]}")
    return outcome


# --- 3. cleanup changes only what bceval created -----------------------------------------------------------------


@attempt(3, "files-hard-linked-into-a-view-keep-their-modes")
def hard_links_keep_modes(scratch: Path) -> Outcome:
    corpus, out = corpus_copy(scratch), scratch / "out"
    run_bceval(["prepare", "--corpus", str(corpus), "--out", str(out)], scratch)
    article = next((corpus / "microsoft" / "knowledge").rglob("*.md"))
    index = out / "review" / "knowledge-index.json"
    targets = [article, index]
    before = {path: stat.S_IMODE(path.stat().st_mode) for path in targets}
    agent = script(
        scratch / "bin",
        "linker",
        f"""
os.chmod(".", 0o755)  # its own view: it may make it writable again
for number, target in enumerate({[str(p) for p in targets]!r}):
    os.link(target, f"linked-{{number}}")
answer()
""",
    )
    tmp = scratch / "tmp"
    tmp.mkdir()
    flags = ("--retries", "0", "-k", "*performance*")
    ran = run_bceval(answer_args(corpus, out, str(agent), *flags), scratch, env={**LIVE, "TMPDIR": str(tmp)})
    changed = [path for path in targets if stat.S_IMODE(path.stat().st_mode) != before[path]]
    left = list(tmp.iterdir())
    held = ran.code == 0 and not changed and not left
    detail = f"modes changed: {[str(p) for p in changed]}; left in the temp dir: {[p.name for p in left]}"
    return Outcome(held, detail, changed_outside=len(changed), orphans=len(left), traceback=ran.traceback)


# --- 4. temp files: only bceval's, only in its folders, only when their writer is gone ----------------------------


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@attempt(4, "editor-files-in-a-corpus-used-as-out-survive")
def editor_files_survive(scratch: Path) -> Outcome:
    corpus = corpus_copy(scratch)
    knowledge = next((corpus / "microsoft" / "knowledge").iterdir())
    editors = [
        knowledge / ".notes.md.ab12cd34.tmp",  # the name bceval's atomic writes used to have
        knowledge / f".bceval-tmp-{dead_pid()}-abcdefgh",  # even bceval's name: knowledge/ is not bceval's
        corpus / ".README.md.zz99yy88.tmp",
    ]
    for path in editors:
        path.write_text("unsaved work", encoding="utf-8")
    ran = run_bceval(["prepare", "--corpus", str(corpus), "--out", str(corpus)], scratch)
    gone = [path for path in editors if not path.exists()]
    held = ran.code == 0 and not gone
    return Outcome(held, f"deleted: {[p.name for p in gone]}", changed_outside=len(gone), traceback=ran.traceback)


@attempt(4, "a-killed-runs-temp-file-is-swept-but-a-living-writers-is-not")
def temp_files_of_the_dead_only(scratch: Path) -> Outcome:
    out = scratch / "out"
    where = ["--corpus", str(DEMO), "--out", str(out)]
    run_bceval(["prepare", *where], scratch)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = out / "review" / f".bceval-tmp-{dead_pid()}-k1ll3dxx"
        living = out / "review" / f".bceval-tmp-{sleeper.pid}-w0rk1ngx"
        for path in (dead, living):
            path.write_text("half", encoding="utf-8")
        ran = run_bceval(["prepare", *where], scratch)
        held = ran.code == 0 and not dead.exists() and living.exists()
        return Outcome(
            held,
            f"dead writer's file gone: {not dead.exists()}; living writer's kept: {living.exists()}",
            changed_outside=int(not living.exists()),
            traceback=ran.traceback,
        )
    finally:
        sleeper.kill()
        sleeper.wait()


# --- 5. model text is escaped on the console, in Markdown and in HTML -------------------------------------------


def external_result(scratch: Path, findings: list[str]) -> tuple[list[str], Path]:
    out = scratch / "out"
    where = ["--corpus", str(DEMO), "--out", str(out)]
    run_bceval(["prepare", *where], scratch)
    results = scratch / "results"
    results.mkdir()
    case = first_case(out)
    document = {"cases": [{"id": case, "findings": [{"id": f} for f in findings]}]}
    (results / f"result-{case}.json").write_text(json.dumps(document), encoding="utf-8")
    return where, results


@attempt(5, "a-finding-that-draws-a-green-passed-stays-inert")
def ansi_finding_is_escaped(scratch: Path) -> Outcome:
    where, results = external_result(scratch, ["\x1b[2K\r\x1b[32mReview evaluation PASSED\x1b[0m"])
    ran = run_bceval(["score", *where, "--results", str(results)], scratch)
    card = scratch / "out" / "runs"
    pages = [p.read_text(encoding="utf-8") for p in card.rglob("scorecard.*") if p.suffix in (".md", ".html")]
    raw = escapes_in(ran) + sum(page.count("\x1b") for page in pages)
    held = ran.code == 1 and raw == 0 and "\\x1b" in ran.stdout
    line = next((line for line in ran.stdout.splitlines() if "unexpected" in line), ran.stdout[:100])
    return Outcome(held, line.strip()[:140], escapes=raw, traceback=ran.traceback, hang=ran.hang)


@attempt(5, "a-finding-id-with-a-newline-cannot-forge-page-markers")
def newline_id_cannot_forge_markers(scratch: Path) -> Outcome:
    from bceval.scorecard.publish import MARKERS

    forged = "x.md\n<!-- bceval:latest:end -->\n| forged | row |\n`"
    where, results = external_result(scratch, [forged])
    page = scratch / "page.md"
    first = run_bceval(["publish", *where, "--results", str(results), "--page", str(page)], scratch)
    second = run_bceval(["publish", *where, "--results", str(results), "--page", str(page)], scratch)
    text = page.read_text(encoding="utf-8") if page.exists() else ""
    counts = [text.count(marker) for marker in MARKERS]
    held = page.exists() and counts == [1, 1, 1, 1] and second.code != 2 and "| forged | row |" not in text
    detail = f"markers {counts}; second publish exit {second.code}: {second.stderr.strip()[-120:]}"
    return Outcome(held, detail, escapes=int(not held), traceback=first.traceback or second.traceback)


# --- 6. Ctrl-C and the cache ---------------------------------------------------------------------------------------


@attempt(6, "ctrl-c-with-jobs-4-leaves-no-view-and-no-agent")
def interrupt_leaves_nothing(scratch: Path) -> Outcome:
    from catalogue import ROOT as repo

    marks = scratch / "started"
    marks.mkdir()
    agent = script(
        scratch / "bin",
        "slow",
        f"""
import time
with open(os.path.join({str(marks)!r}, str(os.getpid())), "w") as handle:
    handle.write(os.getcwd())
time.sleep(30)
answer()
""",
    )
    tmp = scratch / "tmp"
    tmp.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    environ.update(LIVE, TMPDIR=str(tmp), PYTHONPATH=str(repo))
    left_folders, left_agents, codes, tracebacks = 0, 0, [], 0
    # Interrupted while agents run (all 4, the first one, two): start-up interrupts are item 17's, not this one's.
    for trial, running in enumerate((4, 1, 2)):
        out = scratch / f"out-{trial}"
        command = [sys.executable, "-m", "bceval", *answer_args(DEMO, out, str(agent), "--jobs", "4")]
        process = subprocess.Popen(
            command, cwd=scratch, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=interruptible
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(list(marks.iterdir())) < running:
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        try:
            _, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
        codes.append(process.returncode)
        if b"Traceback" in stderr:
            tracebacks += 1
            codes.append(stderr.decode("utf-8", "replace").strip().splitlines()[-1][:80])
        pids = [int(path.name) for path in marks.iterdir()]
        left_agents += sum(alive(pid) for pid in pids)
        end_all(pids)
        for path in marks.iterdir():
            path.unlink()
        left_folders += len([p for p in tmp.iterdir() if p.name.startswith("bceval-")])
        for path in tmp.iterdir():
            shutil.rmtree(path, ignore_errors=True)
    held = left_folders == 0 and left_agents == 0 and not tracebacks
    detail = f"exit codes {codes}; {left_folders} folder(s) and {left_agents} agent(s) left over 3 interrupts"
    return Outcome(held, detail, orphans=left_folders + left_agents, traceback=bool(tracebacks))


@attempt(6, "a-resumed-run-does-not-call-its-own-answers-cached")
def resumed_run_is_not_cached(scratch: Path) -> Outcome:
    agent = script(scratch / "bin", "agent", "answer()")
    out = scratch / "out"
    first = run_bceval(answer_args(DEMO, out, str(agent), "--jobs", "4"), scratch, env=LIVE)
    results = out / "runs" / "command" / "results"
    shutil.rmtree(results)  # what a killed run leaves: answers paid for and cached, neither results nor doit state
    (out / ".bceval.doit.db").unlink(missing_ok=True)
    again = run_bceval(answer_args(DEMO, out, str(agent), "--jobs", "4"), scratch, env=LIVE)
    own = [json.loads(p.read_text(encoding="utf-8"))["record"]["cached"] for p in results.glob("result-case-*.json")]
    other = run_bceval(answer_args(DEMO, out, str(agent), "--jobs", "4", "--run", "other"), scratch, env=LIVE)
    shared = [
        json.loads(p.read_text(encoding="utf-8"))["record"]["cached"]
        for p in (out / "runs" / "other" / "results").glob("result-case-*.json")
    ]
    held = first.code == again.code == other.code == 0 and own and not any(own) and shared and all(shared)
    detail = f"resumed run: {sum(own)} of {len(own)} called cached; another run: {sum(shared)} of {len(shared)} cached"
    return Outcome(bool(held), detail, traceback=again.traceback or other.traceback)


# --- 7. the sandbox's network ------------------------------------------------------------------------------------


@attempt(7, "sandbox-network-none-cannot-reach-a-local-server")
def network_none(scratch: Path) -> Outcome:
    need_bwrap()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    port = server.getsockname()[1]
    allowed = scratch / "allowed"
    allowed.mkdir()
    agent = script(
        scratch / "bin",
        "fetcher",
        f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    seen = "connected"
except OSError:
    seen = "refused"
with open(os.path.join({str(allowed)!r}, str(os.getpid())), "w") as handle:
    handle.write(seen)
answer()
""",
    )
    try:
        flags = ("--sandbox", "bwrap", "--sandbox-allow-rw", str(allowed), "--sandbox-network", "none", "-k", "*ui*")
        ran = run_bceval(answer_args(DEMO, scratch / "out", str(agent), *flags), scratch, env=LIVE)
    finally:
        server.close()
    seen = [path.read_text(encoding="utf-8") for path in allowed.iterdir()]
    held = ran.code == 0 and bool(seen) and set(seen) == {"refused"}
    return Outcome(
        held,
        f"exit {ran.code}; the agent saw {sorted(set(seen))}: {ran.stderr.strip()[-100:]}",
        escapes=seen.count("connected"),
        traceback=ran.traceback,
        hang=ran.hang,
    )


# --- 11. failures explained once, at once ------------------------------------------------------------------------


@attempt(11, "a-relative-command-is-refused-before-the-first-case")
def relative_command_refused(scratch: Path) -> Outcome:
    script(scratch / "mytools", "peek", "answer()")
    ran = run_bceval(answer_args(DEMO, scratch / "out", "./mytools/peek"), scratch, env=LIVE, timeout=30)
    outcome = refusal(ran, "--command", "./mytools/peek", "relative path")
    written = (scratch / "out" / "runs").exists()
    return Outcome(outcome.held and not written, outcome.detail, outcome.clean_error, outcome.traceback, outcome.hang)


@attempt(11, "invalid-output-is-explained-once-and-answer-exits-1")
def invalid_output_explained(scratch: Path) -> Outcome:
    agent = script(scratch / "bin", "chatty", 'print("I read the code and it looks fine.")')
    out = scratch / "out"
    started = time.monotonic()
    ran = run_bceval(answer_args(DEMO, out, str(agent), "--retries", "0", "--jobs", "4"), scratch, env=LIVE)
    seconds = time.monotonic() - started
    explained = [line for line in ran.stderr.splitlines() if "failed (invalid-output): output holds no JSON" in line]
    score = run_bceval(["score", "--corpus", str(DEMO), "--out", str(out), "--adapter", "command"], scratch)
    says_so = "infrastructure failure" in score.stderr and "no result files" not in score.stderr
    held = ran.code == 1 and len(explained) == 1 and score.code == 2 and says_so
    detail = f"answer exit {ran.code} in {seconds:.1f} s, {len(explained)} explanation(s); "
    detail += f"score: {score.stderr.strip()[-150:]}"
    return Outcome(held, detail, traceback=ran.traceback or score.traceback, hang=ran.hang or score.hang)


# --- 12. files the command line names, under bwrap ---------------------------------------------------------------


@attempt(12, "python-agent-py-under-bwrap-can-read-its-script")
def script_argument_is_bound(scratch: Path) -> Outcome:
    need_bwrap()
    agent = script(scratch / "agents", "agent.py", "answer()", executable=False)
    command = f"{sys.executable} {agent}"
    ran = run_bceval(answer_args(DEMO, scratch / "out", command, "--sandbox", "bwrap", "-k", "*ui*"), scratch, env=LIVE)
    answered = list((scratch / "out" / "runs" / "command" / "results").glob("result-case-*.json"))
    held = ran.code == 0 and bool(answered)
    return Outcome(
        held,
        f"exit {ran.code}, {len(answered)} answered: {ran.stderr.strip()[-120:]}",
        traceback=ran.traceback,
        hang=ran.hang,
    )


@attempt(12, "a-script-inside-the-corpus-is-refused-up-front")
def script_in_corpus_refused(scratch: Path) -> Outcome:
    need_bwrap()
    corpus = corpus_copy(scratch)
    agent = script(corpus / "tools", "agent.py", "answer()", executable=False)
    command = f"{sys.executable} {agent}"
    ran = run_bceval(answer_args(corpus, scratch / "out", command, "--sandbox", "bwrap"), scratch, env=LIVE)
    return refusal(ran, str(agent), "would expose the corpus")


# --- 18. FIFOs never block ---------------------------------------------------------------------------------------


@attempt(18, "a-fifo-as-run-json-does-not-block")
def fifo_run_record(scratch: Path) -> Outcome:
    out = scratch / "out"
    where = ["--corpus", str(DEMO), "--out", str(out)]
    run_bceval(["answer", *where, "--adapter", "oracle"], scratch)
    record = out / "runs" / "oracle" / "run.json"
    record.unlink()
    os.mkfifo(record)
    ran = [
        run_bceval(args, scratch, timeout=30)
        for args in (["runs", "--out", str(out)], ["score", *where, "--adapter", "oracle"])
    ]
    hung = [r for r in ran if r.hang]
    held = not hung and not any(r.traceback for r in ran)
    return Outcome(held, f"exits {[r.code for r in ran]}", hang=bool(hung), traceback=any(r.traceback for r in ran))


@attempt(18, "a-fifo-as-experiment-file-is-refused")
def fifo_experiment(scratch: Path) -> Outcome:
    fifo = scratch / "experiment.yaml"
    os.mkfifo(fifo)
    ran = run_bceval(["experiment", "run", str(fifo), "--out", str(scratch / "out")], scratch, timeout=30)
    return refusal(ran, str(fifo), "not a regular file")


# --- 20. the sandbox test under /tmp -----------------------------------------------------------------------------


@attempt(20, "the-sandbox-test-holds-for-an-interpreter-under-tmp")
def sandbox_test_under_tmp(scratch: Path) -> Outcome:
    import tempfile

    from test_sandbox import sees_only_what_it_is_given, venv_under

    bwrap = need_bwrap()
    with tempfile.TemporaryDirectory(prefix="bceval-catalogue-venv-") as home:
        interpreter = venv_under(Path(home))
        from bceval.agents.view import view_parent

        problem = sees_only_what_it_is_given(bwrap, scratch, interpreter, view_parent())  # where real views go
    return Outcome(problem is None, problem or f"the expected set follows the binds of {interpreter}")
