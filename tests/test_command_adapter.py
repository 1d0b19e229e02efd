"""The live command adapter, end to end through the real CLI, against fake agent CLIs (tests/agents.py).

Every answer belongs to a run (`out/runs/<run>/`): results, transcripts, run.json, score.json, scorecard.*.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import threading
import time
from pathlib import Path

import pytest
from agents import clean_environment
from cliutil import run_cli
from conftest import DEMO_CORPUS

from bceval.agents.base import case_input
from bceval.agents.command import TRANSCRIPT_CAP, CommandAgent
from bceval.agents.process import RETRY_WAIT_CAP, LiveAgent, _Attempt, backoff, extract_json_object
from bceval.agents.settings import AgentSettings
from bceval.errors import BcevalError
from bceval.evaluators.review.cases import ReviewCase
from bceval.evaluators.review.question import CONTRACT, VIEW_NOTE, ReviewShape
from bceval.evaluators.review.scoring import read_infra_file
from bceval.runs.selection import parse_shard, shard_cases
from bceval.steps.answer import prune_vanished
from bceval.usage import Usage

CASES = 16
TIMEOUT = "10"  # generous for the well-behaved modes; the hang test uses 1 s
PROGRESS = re.compile(
    r"^\[(\d+)/\d+\] [^ ]+ \((case-[0-9a-f]{8})\): (answered in [0-9.]+ s|cached|infrastructure failure: .+?); "
    r"\d+ (?:s|min|h)[^,]* so far, (?:about .+ left|done)$"
)
RUN = "command"  # the default run name without a model


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


def prepare(capsys, out: Path) -> list[str]:
    """Prepare the demo corpus into out; returns the 16 model ids."""
    code, lines, err = run_cli(capsys, "prepare", "--corpus", str(DEMO_CORPUS), "--out", str(out))
    assert code == 0, lines + err
    ids = sorted(p.stem.removeprefix("request-") for p in (out / "review").glob("request-case-*.json"))
    assert len(ids) == CASES
    return ids


def answer(capsys, out: Path, *flags: str, command: str | None = "fake-agent"):
    command_flags = ["--command", command] if command is not None else []
    base = ["answer", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command"]
    return run_cli(capsys, *base, *command_flags, *flags)


def score(capsys, out: Path, *flags: str):
    return run_cli(capsys, "score", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command", *flags)


def progress(err: list[str]) -> list[tuple[int, str, str]]:
    found = [PROGRESS.match(line) for line in err]
    return [(int(m[1]), m[2], m[3]) for m in found if m]


def result_ids(results: Path) -> set[str]:
    return {p.stem.removeprefix("result-") for p in results.glob("result-case-*.json")}


def infra_ids(results: Path) -> set[str]:
    return {p.stem.removeprefix("infra-") for p in results.glob("infra-case-*.json")}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def transcript(out: Path, model_id: str, run: str = RUN) -> dict:
    return json.loads((out / "runs" / run / "transcripts" / f"{model_id}.json").read_text(encoding="utf-8"))


# --- refusal: one line, exit 2, nothing written -------------------------------------------------------------------


@pytest.mark.parametrize("live", [None, "0", "true", "yes"])
def test_refuses_without_bceval_live_1(agent, tmp_path, capsys, monkeypatch, live):
    out = tmp_path / "out"
    prepare(capsys, out)
    if live is None:
        monkeypatch.delenv("BCEVAL_LIVE")
    else:
        monkeypatch.setenv("BCEVAL_LIVE", live)
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT)
    assert code == 2 and lines == []
    assert len(err) == 1 and "BCEVAL_LIVE=1" in err[0]
    assert not (out / "runs").exists()
    assert not agent.log.exists()  # not even a --version probe


@pytest.mark.parametrize(
    ("command", "flags", "expected"),
    [
        ("no-such-agent-4711 -p", [], "'no-such-agent-4711' was not found on PATH"),
        ("", [], "needs --command"),
        ("fake-agent 'unbalanced", [], "cannot split"),
        ("fake-agent --model {model}", [], "--command uses {model} but no model was given"),
        ("fake-agent --in {request} --temp {temperature}", ["--model", "m"], "unknown placeholder {temperature}"),
    ],
)
def test_refuses_a_command_that_cannot_run(agent, tmp_path, capsys, command, flags, expected):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, *flags, command=command)
    assert code == 2 and lines == []
    assert len(err) == 1 and expected in err[0]
    assert not (out / "runs").exists()
    assert agent.calls() == []


# --- success ------------------------------------------------------------------------------------------------------


def test_answers_every_case_into_its_run_and_scores(agent, tmp_path, capsys):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, "--retries", "0", "--jobs", "2")
    assert code == 0, lines + err
    run = out / "runs" / RUN
    results = run / "results"
    assert result_ids(results) == set(ids) and infra_ids(results) == set()
    answered_by = {
        "adapter": "command",
        "command": "fake-agent",
        "model": "unpinned",
        "version": "fake-agent 1.2.3",
        "pinned": False,
        "isolation": "view",
        "sandbox": "none",
    }
    for model_id in ids:
        document = json.loads((results / f"result-{model_id}.json").read_text(encoding="utf-8"))
        assert document["answeredBy"] == answered_by
        assert [case["id"] for case in document["cases"]] == [model_id]
        assert document["record"]["transcript"] == f"transcripts/{model_id}.json"
        assert document["record"]["epoch"] == 1 and document["record"]["cached"] is False
    record = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert (record["name"], record["adapter"], record["selection"], record["pinned"]) == (RUN, "command", None, False)

    steps = progress(err)
    assert sorted(number for number, _, _ in steps) == list(range(1, CASES + 1))
    assert sorted(case for _, case, _ in steps) == ids
    assert all(status.startswith("answered in ") for _, _, status in steps)
    assert lines == [
        f"Run {RUN}: {CASES} case(s) answered with the command adapter ({CASES} answered now, 0 from the cache); "
        f"results in {results}"
    ]

    # one fresh process per case, in its own view, the prompt on stdin: contract, view note, request, case file
    calls = agent.calls()
    assert sorted(call["case"] for call in calls) == ids
    for call in calls:
        model_id, stdin = call["case"], call["stdin"]
        assert call["argv"] == []
        request = json.loads((out / "review" / f"request-{model_id}.json").read_text(encoding="utf-8"))
        del request["knowledgeIndex"]  # the view has no domain index, so its request names none
        case_text = (out / "review" / f"{model_id}.al").read_bytes().decode("utf-8")  # as the file holds it
        head = f"{CONTRACT}\n\n{VIEW_NOTE}\n\n=== request request-{model_id}.json ===\n"
        assert stdin.startswith(head)
        assert json.loads(stdin[len(head) : stdin.index("\n=== file ")]) == request
        assert stdin.endswith(f"=== file {model_id}.al ===\n{case_text}")
        assert "-bad" not in stdin and "-good" not in stdin  # no manifest id leaks into the prompt

    code, lines, err = score(capsys, out)
    assert code == 0, lines + err
    assert lines[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."
    report = json.loads((run / "score.json").read_text(encoding="utf-8"))
    assert report["answeredBy"] == [answered_by] and report["infrastructureFailures"] == 0
    assert (report["partial"], report["selectedCases"], report["totalCases"]) == (False, CASES, CASES)
    card = json.loads((run / "scorecard.json").read_text(encoding="utf-8"))
    assert card["run"] == {"name": RUN, "epoch": 1, "selectedCases": CASES, "totalCases": CASES, "partial": False}
    assert card["usage"]["answers"] == CASES and card["usage"]["costUsd"] is None  # plain output: cost unknown
    html = (run / "scorecard.html").read_text(encoding="utf-8")
    assert all(f'<a href="transcripts/{model_id}.json">{model_id}</a>' in html for model_id in ids)
    assert len(agent.calls()) == CASES  # scoring never asks the agent


def test_score_with_the_answer_settings_in_the_environment_finds_the_run(agent, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    prepare(capsys, out)
    monkeypatch.setenv("BCEVAL_COMMAND", "fake-agent --model {model}")
    monkeypatch.setenv("BCEVAL_MODEL", "claude-test-1")
    code, lines, err = answer(capsys, out, "--jobs", "2", "--timeout", TIMEOUT, command=None)
    assert code == 0, lines + err
    monkeypatch.delenv("BCEVAL_LIVE")  # scoring needs no live opt-in
    code, lines, err = score(capsys, out)
    assert (code, lines[-1:]) == (0, ["Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."])
    assert (out / "runs" / "command-claude-test-1" / "scorecard.json").is_file()
    assert len(agent.calls()) == CASES


# --- model pinning ------------------------------------------------------------------------------------------------


def test_model_reaches_the_command_through_its_placeholder_and_is_pinned(agent, tmp_path, capsys):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, lines, err = answer(
        capsys, out, "--model", "claude-x", "--jobs", "4", "--timeout", TIMEOUT, command="fake-agent --model {model}"
    )
    assert code == 0, lines + err
    assert {tuple(call["argv"]) for call in agent.calls()} == {("--model", "claude-x")}
    assert not any("warning" in line for line in err)
    run = out / "runs" / "command-claude-x"
    assert json.loads((run / "run.json").read_text())["pinned"] is True
    score(capsys, out, "--model", "claude-x")
    card = json.loads((run / "scorecard.json").read_text())
    assert (card["adapter"]["model"], card["adapter"]["pinned"]) == ("claude-x", True)


def test_a_model_without_its_placeholder_is_a_label_unpinned_with_one_warning(agent, tmp_path, capsys):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, lines, err = answer(capsys, out, "--model", "claude-x", "--jobs", "4", "--timeout", TIMEOUT)
    assert code == 0, lines + err
    warnings = [line for line in err if "warning" in line]
    assert warnings == [
        "bceval: warning: the model 'claude-x' is only a label: the command has no {model}, so the agent uses "
        "its own default and the run is recorded as unpinned"
    ]
    assert {tuple(call["argv"]) for call in agent.calls()} == {()}  # the model never reached the agent
    run = out / "runs" / "command-claude-x"
    record = json.loads((run / "run.json").read_text())
    assert (record["pinned"], record["modelIsLabelOnly"]) == (False, True)
    score(capsys, out, "--model", "claude-x")
    card = json.loads((run / "scorecard.json").read_text())
    assert (card["adapter"]["model"], card["adapter"]["pinned"]) == ("claude-x", False)
    assert "unpinned: not reproducible" in (run / "scorecard.md").read_text()


def test_describe_probes_the_version_once_and_falls_back_to_unknown(agent, tmp_path, monkeypatch):
    hidden = {"the output directory": tmp_path / "out"}
    adapter = CommandAgent(
        AgentSettings("fake-agent -p --model {model}", "m1"), ReviewShape(tmp_path / "cache", hidden)
    )
    assert adapter.describe() == {
        "adapter": "command",
        "command": "fake-agent -p --model {model}",
        "model": "m1",
        "version": "fake-agent 1.2.3",
        "pinned": True,
        "isolation": "view",
        "sandbox": "none",
    }
    monkeypatch.setenv("FAKE_VERSION", "fail")
    assert adapter.describe()["version"] == "fake-agent 1.2.3"  # probed once per adapter
    fresh = CommandAgent(AgentSettings("fake-agent", None, isolation="none"), ReviewShape(tmp_path / "cache", hidden))
    assert fresh.describe()["version"] == "unknown" and fresh.describe()["model"] == "unpinned"
    assert fresh.describe()["isolation"] == "none"


def test_adapter_reads_the_environment_it_is_given(agent, tmp_path):
    import os

    environ = {"PATH": os.environ["PATH"]}
    settings = AgentSettings("fake-agent")
    with pytest.raises(BcevalError, match="BCEVAL_LIVE=1"):
        CommandAgent(settings, ReviewShape(tmp_path / "cache", {}), environ=environ)
    with pytest.raises(BcevalError, match="not found on PATH"):
        CommandAgent(settings, ReviewShape(tmp_path / "cache", {}), environ={"BCEVAL_LIVE": "1", "PATH": str(tmp_path)})
    adapter = CommandAgent(settings, ReviewShape(tmp_path / "cache", {}), environ={**environ, "BCEVAL_LIVE": "1"})
    assert adapter.executable == str(agent.bin / "fake-agent")


# --- concurrency and the command line -----------------------------------------------------------------------------


def test_jobs_run_cases_concurrently_within_the_limit(agent, tmp_path, capsys):
    out = tmp_path / "out"
    prepare(capsys, out)
    agent.mode("slow")
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4")
    assert code == 0, lines + err
    events = sorted((entry["time"], 1 if entry["event"] == "start" else -1) for entry in agent.entries())
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert 2 <= peak <= 4
    assert len(result_ids(out / "runs" / RUN / "results")) == CASES


def test_request_and_workdir_placeholders_name_the_view_and_leave_stdin_empty(agent, tmp_path, capsys):
    out = tmp_path / "out with space"  # paths are substituted after splitting: no quoting needed
    ids = prepare(capsys, out)
    code, lines, err = answer(
        capsys, out, "--timeout", TIMEOUT, "--jobs", "2", command="fake-agent --json {request} --in {workdir}"
    )
    assert code == 0, lines + err
    calls = agent.calls()
    assert sorted(call["case"] for call in calls) == ids
    for call in calls:
        flag, request, in_flag, workdir = call["argv"]
        assert (flag, in_flag, workdir) == ("--json", "--in", call["cwd"])
        assert request == f"{call['cwd']}/request-{call['case']}.json"
        assert call["stdin"] == ""
        assert not Path(call["cwd"]).exists()  # the view is gone once the case is answered
    assert score(capsys, out)[0] == 0


@pytest.mark.parametrize("mode", ["fenced", "chatty"])
def test_answers_wrapped_in_fences_or_log_lines_are_accepted(agent, tmp_path, capsys, mode):
    out = tmp_path / "out"
    prepare(capsys, out)
    agent.mode(mode)
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4", "--retries", "0")
    assert code == 0, lines + err
    results = out / "runs" / RUN / "results"
    assert len(result_ids(results)) == CASES and infra_ids(results) == set()
    assert score(capsys, out)[0] == 0


# --- Claude Code envelopes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["json", "stream-json"])
def test_claude_code_envelopes_give_the_answer_and_its_cost(agent, tmp_path, capsys, mode):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    agent.mode(mode)
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4", "--retries", "0")
    assert code == 0, lines + err
    assert infra_ids(out / "runs" / RUN / "results") == set()
    code, lines, err = score(capsys, out)
    assert code == 0, lines + err
    card = json.loads((out / "runs" / RUN / "scorecard.json").read_text())
    usage = card["usage"]
    assert usage["costUsd"] == pytest.approx(0.0125 * CASES) and usage["costKnown"] == CASES
    assert usage["costPerPassedCase"] == pytest.approx(0.0125)
    assert (usage["inputTokens"], usage["outputTokens"]) == (1000 * CASES, 200 * CASES)
    assert (usage["cacheCreationTokens"], usage["cacheReadTokens"], usage["turns"]) == (30 * CASES, 40 * CASES, 32)
    assert usage["agentSeconds"] == pytest.approx(1.5 * CASES) and usage["wallSeconds"] > 0
    row = next(row for row in card["cases"] if row["modelId"] == ids[0])
    assert row["usage"]["costUsd"] == pytest.approx(0.0125) and row["transcript"] == f"transcripts/{ids[0]}.json"
    assert transcript(out, ids[0])["attempts"][0]["format"] == mode
    markdown = (out / "runs" / RUN / "scorecard.md").read_text()
    assert f"Cost ${0.0125 * CASES:.4f}, $0.0125 per passed case" in markdown


@pytest.mark.parametrize(
    ("mode", "kind", "subtype", "exit_code"),
    [
        ("not-logged-in", "agent-error", "success", 1),  # is_error must be checked, not only the subtype
        ("max-turns", "agent-error", "error_max_turns", 0),
        ("odd-envelope", "invalid-output", None, 0),  # an unknown envelope is refused, not guessed at
    ],
)
def test_envelope_errors_are_infrastructure_failures_with_their_subtype(
    agent, tmp_path, capsys, mode, kind, subtype, exit_code
):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    agent.modes({ids[0]: mode})
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4", "--retries", "0")
    assert code == 0, lines + err
    record = read_infra_file(out / "runs" / RUN / "results" / f"infra-{ids[0]}.json")
    assert (record.kind, record.subtype) == (kind, subtype)
    attempt = transcript(out, ids[0])["attempts"][0]
    assert attempt["exitCode"] == exit_code and attempt["outcome"] == kind
    if kind == "agent-error":
        assert record.record["usage"]["costUsd"] == pytest.approx(0.0125)  # what a failure cost is kept too


# --- infrastructure failures and transcripts ----------------------------------------------------------------------


def _process_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in {"Z", "X"}
    except FileNotFoundError:
        return True


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("garbage", "invalid-output"),
        ("empty", "invalid-output"),
        ("shapeless", "invalid-output"),
        ("badutf8", "invalid-output"),
        ("crash", "crash"),
        ("hang", "timeout"),
        ("huge", "too-large"),
    ],
)
def test_infrastructure_failure_is_recorded_apart_from_model_misses(agent, tmp_path, capsys, monkeypatch, mode, kind):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    failed = ids[3]
    agent.modes({failed: mode})
    if mode == "huge":
        monkeypatch.setattr("bceval.agents.command.MAX_JSON_BYTES", 4096)
    started = time.monotonic()
    timeout = "1" if mode == "hang" else TIMEOUT
    code, lines, err = answer(capsys, out, "--timeout", timeout, "--retries", "0", "--jobs", "4")
    elapsed = time.monotonic() - started
    assert code == 0, lines + err
    assert elapsed < 10  # a hung agent is killed at the timeout, not waited for (it sleeps 30 s)

    results = out / "runs" / RUN / "results"
    assert infra_ids(results) == {failed}
    assert result_ids(results) == set(ids) - {failed}  # never a result file for the failed case
    record = read_infra_file(results / f"infra-{failed}.json")
    assert (record.id, record.kind, record.attempts) == (failed, kind, 1)
    assert record.answeredBy is not None and record.answeredBy["adapter"] == "command"
    step = next(status for _, case, status in progress(err) if case == failed)
    assert step == f"infrastructure failure: {kind} after 1 attempt(s)"
    assert lines[-1].endswith(f"; 1 infrastructure failure(s), rerun to retry; results in {results}")
    attempt = transcript(out, failed)["attempts"][0]  # a failure is traceable like an answer
    assert attempt["outcome"] == kind and attempt["wallSeconds"] >= 0
    if mode == "crash":
        assert attempt["exitCode"] == 3 and "agent: fatal error" in attempt["stderr"]

    if mode == "hang":
        (pid_line,) = agent.pids.read_text(encoding="utf-8").splitlines()
        pids = [int(pid) for pid in pid_line.split()]
        deadline = time.monotonic() + 3
        while not all(_process_gone(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_process_gone(pid) for pid in pids), "the agent and its child must be killed as a group"

    code, lines, err = score(capsys, out)
    assert code == 1
    report = json.loads((out / "runs" / RUN / "score.json").read_text(encoding="utf-8"))
    verdict = next(case for case in report["cases"] if case["modelId"] == failed)
    assert verdict["answered"] is False and verdict["infrastructureFailure"].startswith(f"{kind} after 1 attempt(s): ")
    assert report["infrastructureFailures"] == 1
    infra_lines = [line for line in lines if ": infrastructure failure (" in line]
    assert infra_lines == [f"  - {verdict['id']}: infrastructure failure ({verdict['infrastructureFailure']})"]
    assert lines[-1] == "  - 1 case(s) had infrastructure failures, not model misses; rerun to retry"
    assert not any("missing expected finding" in line or "Results missing case" in line for line in lines)


def test_transcripts_cap_each_stream_and_mark_the_cut(agent, tmp_path, capsys):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    agent.modes({ids[0]: "noisy"})
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4")
    assert code == 0, lines + err
    attempt = transcript(out, ids[0])["attempts"][0]
    total = len("log line\n") * 200000
    assert attempt["stderrBytes"] == total > TRANSCRIPT_CAP
    assert attempt["stderr"].endswith(f"[bceval: {total - TRANSCRIPT_CAP} more bytes were cut from this transcript]\n")
    assert len(attempt["stderr"].encode()) < TRANSCRIPT_CAP + 200
    assert attempt["stdout"].startswith('{"cases"')  # the answer itself is whole
    saw = transcript(out, ids[1])
    assert saw["view"]["files"] and all(len(f["sha256"]) == 64 for f in saw["view"]["files"])
    assert saw["isolation"] == "view" and saw["sandbox"] == "none" and len(saw["attempts"][0]["promptSha256"]) == 64
    assert not any("log line" in line for line in lines + err)  # transcripts are never printed


def test_a_command_that_cannot_start_is_refused_before_any_case(agent, tmp_path, capsys):
    out = tmp_path / "out"
    prepare(capsys, out)
    agent.write_script("broken-agent", "#!/nonexistent/interpreter\nprint('never')\n")
    code, lines, err = answer(
        capsys, out, "--timeout", TIMEOUT, "--retries", "2", "--retry-wait", "0", command="broken-agent"
    )
    assert code == 2 and lines == []
    assert err == [
        "bceval: --command: 'broken-agent' cannot start: its #! interpreter /nonexistent/interpreter does not exist "
        "or is not executable"
    ]
    assert not (out / "runs" / RUN).exists()


def test_a_spawn_error_is_not_retried():
    calls = []

    class Never(LiveAgent):
        def __init__(self) -> None:
            self.agent = AgentSettings(command="x", retries=2, retry_wait=0)
            self.rng, self.sleep = random.Random(1), lambda s: None
            self._rng_lock, self._usage_lock, self.usage = threading.Lock(), threading.Lock(), Usage()

    def attempt(number, waited):
        calls.append(number)
        return _Attempt({"attempt": number}, failure=("spawn-error", "cannot start x: No such file or directory", None))

    answer_, attempts, _ = Never().ask(attempt, lambda text: text)
    assert answer_ is None and calls == [1] and len(attempts) == 1


# --- retries with backoff -----------------------------------------------------------------------------------------


def test_backoff_doubles_from_the_first_wait_with_jitter_and_a_cap():
    rng = random.Random(7)
    waits = [backoff(attempt, 5.0, rng) for attempt in range(1, 12)]
    assert waits[0] == 0.0  # the first attempt never waits
    for attempt, wait in enumerate(waits[1:], start=2):
        base = min(RETRY_WAIT_CAP, 5.0 * 2 ** (attempt - 2))
        assert base / 2 <= wait <= base
    assert max(waits) <= RETRY_WAIT_CAP and backoff(3, 0.0, rng) == 0.0


def test_retries_wait_before_each_new_attempt_and_the_transcript_records_it(agent, tmp_path, capsys):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    slept: list[float] = []
    agent.mode("flaky")  # fails the first time it sees a case
    adapter = CommandAgent(
        AgentSettings("fake-agent", retries=3, retry_wait=5.0, timeout=10),
        ReviewShape(out / "cache", {"the output directory": out}),
        sleep=slept.append,  # an injected clock: the test never sleeps
        rng=random.Random(3),
    )
    case = ReviewCase(id="x", modelId=ids[0], domain="d", input="x.al", expected=[])
    outcome = adapter.answer(case_input(out / "review", DEMO_CORPUS, case))
    assert outcome.failure is None and len(slept) == 1 and 2.5 <= slept[0] <= 5.0
    attempts = outcome.transcript["attempts"]
    assert [a["outcome"] for a in attempts] == ["crash", "answered"]
    assert [a["waitedSeconds"] for a in attempts] == [0.0, round(slept[0], 3)]

    slept.clear()
    agent.mode("crash")  # the adapter reads its environment when it is made: make another
    adapter = CommandAgent(
        AgentSettings("fake-agent", retries=3, retry_wait=5.0, timeout=10),
        ReviewShape(out / "cache", {"the output directory": out}),
        sleep=slept.append,
        rng=random.Random(3),
    )
    case = ReviewCase(id="y", modelId=ids[1], domain="d", input="x.al", expected=[])
    outcome = adapter.answer(case_input(out / "review", DEMO_CORPUS, case))
    assert outcome.failure is not None and outcome.failure.attempts == 4
    assert all(base / 2 <= wait <= base for wait, base in zip(slept, (5, 10, 20), strict=True))  # doubling
    assert [a["waitedSeconds"] for a in outcome.transcript["attempts"]] == [0.0] + [round(w, 3) for w in slept]


@pytest.mark.parametrize("retries", [0, 1])
def test_flaky_agent_is_retried(agent, tmp_path, capsys, retries):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    agent.mode("flaky")
    flags = ["--retries", str(retries), "--retry-wait", "0.01", "--jobs", "4", "--no-breaker"]  # every case fails
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, *flags)
    assert code == (0 if retries else 1), lines + err  # a run in which no case was answered fails
    results = out / "runs" / RUN / "results"
    per_case = [call["case"] for call in agent.calls()]
    if retries:
        assert sorted(per_case) == sorted(ids * 2)  # failed once, then answered
        assert result_ids(results) == set(ids) and infra_ids(results) == set()
    else:
        assert sorted(per_case) == ids
        assert result_ids(results) == set() and infra_ids(results) == set(ids)
        for model_id in ids:
            record = read_infra_file(results / f"infra-{model_id}.json")
            assert (record.kind, record.attempts) == ("crash", 1)
            assert record.detail.startswith("exit code 1 after ")


# --- cache --------------------------------------------------------------------------------------------------------


def test_answers_are_cached_by_view_command_model_and_epoch(agent, tmp_path, capsys):
    out = tmp_path / "out"
    prepare(capsys, out)
    flags = ["--timeout", TIMEOUT, "--jobs", "4"]
    results = out / "runs" / RUN / "results"
    code, lines, err = answer(capsys, out, *flags)
    assert code == 0, lines + err
    assert len(agent.calls()) == CASES
    assert len(list((out / "cache" / "answers").glob("*.json"))) == CASES
    first = snapshot(results)

    shutil.rmtree(results)  # `answer` is up to date otherwise
    code, lines, err = answer(capsys, out, *flags)
    assert code == 0, lines + err
    assert len(agent.calls()) == CASES  # zero new agent calls
    again = snapshot(results)
    assert again.keys() == first.keys()
    for name, data in again.items():  # the same answers: this run paid for them, so they are its own, not cached
        before, after = json.loads(first[name]), json.loads(data)
        assert (after["cases"], after["answeredBy"], after["record"]["usage"]) == (
            before["cases"],
            before["answeredBy"],
            before["record"]["usage"],
        )
        assert (before["record"]["cached"], after["record"]["cached"]) == (False, False)
    assert not any(status == "cached" for _, _, status in progress(err))

    code, lines, err = answer(capsys, out, *flags, "--run", "other")  # another run asking the same questions
    assert code == 0, lines + err
    assert len(agent.calls()) == CASES  # zero new agent calls
    other = out / "runs" / "other" / "results"
    for name, data in snapshot(other).items():
        record = json.loads(data)["record"]
        assert record["cached"] is True and json.loads(first[name])["record"]["usage"] == record["usage"]
    assert [status for _, _, status in progress(err)] == ["cached"] * CASES  # a cache hit says so
    assert f"{CASES} case(s) answered with the command adapter (0 answered now, {CASES} from the cache)" in lines[-1]

    code, _, _ = answer(capsys, out, *flags, "--model", "model-b", command="fake-agent --model {model}")
    assert code == 0 and len(agent.calls()) == 2 * CASES  # another model misses the cache
    code, _, _ = answer(capsys, out, *flags, "--run", "variant", command="fake-agent --variant")
    assert code == 0 and len(agent.calls()) == 3 * CASES  # so does another command line
    code, _, _ = answer(capsys, out, *flags, "--epoch", "2")
    assert code == 0 and len(agent.calls()) == 4 * CASES  # and another epoch: a fresh sample, not a replay
    assert (out / "runs" / "command-e2" / "results").is_dir()
    assert len(list((out / "cache" / "answers").glob("*.json"))) == 4 * CASES


def test_every_part_of_what_decides_an_answer_is_in_its_cache_key(agent, tmp_path):
    from dataclasses import replace
    from types import SimpleNamespace

    from bceval.agents.base import CaseInput

    case = CaseInput("case-0", tmp_path / "prep" / "request-case-0.json", tmp_path / "prep" / "case-0.al", tmp_path)
    view = SimpleNamespace(digest="d" * 64)
    plain = AgentSettings("fake-agent --model {model}", "m1")

    def key(settings: AgentSettings = plain, view=view, case: CaseInput = case) -> str:
        adapter = CommandAgent(replace(settings, sandbox="none", sandbox_allow=()), ReviewShape(tmp_path / "cache", {}))
        adapter.agent = settings  # what the key reads; bwrap itself is not needed to compute it
        return adapter.cache_key(view, case)

    variants = {
        "view": key(view=SimpleNamespace(digest="e" * 64)),
        "command": key(replace(plain, command="fake-agent --fast --model {model}")),
        "model": key(replace(plain, model="m2")),
        "isolation": key(replace(plain, isolation="none")),
        "sandbox": key(replace(plain, sandbox="bwrap")),
        "grants": key(replace(plain, sandbox="bwrap", sandbox_allow=(tmp_path,))),
        "epoch": key(replace(plain, epoch=2)),
        "salt": key(replace(plain, cache_salt="treatment")),
    }
    assert key() == key() and key() not in variants.values()
    assert len(set(variants.values())) == len(variants), variants
    limits = replace(plain, timeout=5.0, retries=0, retry_wait=1.0)
    assert key(limits) == key()  # limits decide how long to wait, not what is asked
    elsewhere = CaseInput(case.model_id, tmp_path / "b" / "request-case-0.json", case.case_path, tmp_path / "b")
    assert key(case=elsewhere) == key()  # in a view, only its content counts
    unisolated = replace(plain, isolation="none")
    assert key(unisolated, case=elsewhere) != key(unisolated)  # without one, the agent reads the corpus it is in


def test_failures_are_not_cached_and_a_rerun_retries_only_them(agent, tmp_path, capsys):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    agent.modes({ids[0]: "crash", ids[5]: "garbage"})
    flags = ["--timeout", TIMEOUT, "--retries", "0", "--jobs", "4"]
    code, lines, err = answer(capsys, out, *flags)
    assert code == 0, lines + err
    results = out / "runs" / RUN / "results"
    assert infra_ids(results) == {ids[0], ids[5]}
    assert len(list((out / "cache" / "answers").glob("*.json"))) == CASES - 2
    assert len(agent.calls()) == CASES

    agent.modes({})  # the agent behaves now
    code, lines, err = answer(capsys, out, *flags)
    assert code == 0, lines + err
    assert sorted(call["case"] for call in agent.calls()[CASES:]) == sorted([ids[0], ids[5]])
    assert infra_ids(results) == set()  # the stale infra records are gone
    assert result_ids(results) == set(ids)
    assert score(capsys, out)[0] == 0


# --- shards -------------------------------------------------------------------------------------------------------


def test_shards_answer_into_one_run_and_score_the_union(agent, tmp_path, capsys):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    results = out / "runs" / RUN / "results"
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "2", "--shard", "1/2")
    assert code == 0, lines + err
    first = result_ids(results)
    assert len(first) == CASES // 2 and len(progress(err)) == CASES // 2

    code, lines, err = score(capsys, out)
    assert code == 1
    assert len([line for line in lines if "Results missing case" in line]) == CASES // 2

    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "2", "--shard", "2/2")
    assert code == 0, lines + err
    second = result_ids(results) - first
    assert first.isdisjoint(second) and first | second == set(ids)
    assert sorted(call["case"] for call in agent.calls()) == ids  # every case answered exactly once
    code, lines, err = score(capsys, out)
    assert code == 0, lines + err
    assert lines[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."


@pytest.mark.parametrize("shard", ["0/2", "3/2", "x"])
def test_bad_shard_is_one_line_exit_2_without_answering(agent, tmp_path, capsys, shard):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, lines, err = answer(capsys, out, "--timeout", TIMEOUT, "--shard", shard)
    assert code == 2 and lines == []
    assert len(err) == 1 and "--shard" in err[0] and shard in err[0]
    assert agent.calls() == [] and not (out / "runs").exists()


@pytest.mark.parametrize(("text", "expected"), [("1/1", (1, 1)), ("2/4", (2, 4)), ("4/4", (4, 4)), (" 1/2", (1, 2))])
def test_parse_shard_accepts_k_of_n(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/2", "3/2", "x", "1/2/3", "", "1/0", "-1/2", "1/", "a/b"])
def test_parse_shard_rejects(text):
    with pytest.raises(BcevalError, match="--shard"):
        parse_shard(text)


def _case(number: int) -> ReviewCase:
    return ReviewCase(id=f"d-{number}", modelId=f"case-{number:08x}", domain="d", input="x.al", expected=[])


def test_shard_cases_split_deterministically_without_overlap():
    cases = [_case(n) for n in range(1, 61)]
    assert shard_cases(cases, None) == cases
    parts = [shard_cases(list(reversed(cases)), f"{k}/3") for k in (1, 2, 3)]
    ids = [[c.modelId for c in part] for part in parts]
    assert sorted(sum(ids, [])) == sorted(c.modelId for c in cases)  # every case in exactly one shard
    assert all(part == sorted(part) for part in ids) and all(10 <= len(part) <= 30 for part in ids)
    assert shard_cases(cases, "1/3") == parts[0]  # input order does not matter
    # a case keeps its shard when others come and go: arms with different case sets share on one machine
    assert shard_cases(cases[::2] + [_case(99)], "1/3") == [
        c for c in shard_cases(cases + [_case(99)], "1/3") if c in cases[::2] + [_case(99)]
    ]


def test_prune_vanished_removes_only_files_of_cases_that_no_longer_exist(tmp_path):
    known = [_case(1), _case(2)]
    names = [
        "result-case-00000001.json",
        "infra-case-00000002.json",
        "result-case-000000ff.json",
        "infra-case-000000ff.json",
        "result-combined.json",
        "notes.txt",
    ]
    ours = '{"cases": [], "answeredBy": {"adapter": "command"}}'
    for name in names:
        (tmp_path / name).write_text(ours, encoding="utf-8")
    (tmp_path / "result-case-000000aa.json").write_text('{"cases": []}', encoding="utf-8")  # hand-written
    prune_vanished(tmp_path, known)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [
            "result-case-00000001.json",
            "infra-case-00000002.json",
            "result-case-000000aa.json",
            "result-combined.json",
            "notes.txt",
        ]
    )


# --- extract_json_object ------------------------------------------------------------------------------------------

ANSWER = {"cases": [{"id": "case-0000abcd", "findings": []}]}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(ANSWER),
        "\n  " + json.dumps(ANSWER, indent=2) + "\n\n",
        "```json\n" + json.dumps(ANSWER, indent=2) + "\n```",
        "```\n" + json.dumps(ANSWER) + "\n```\n",
        "loading model...\nreviewing case-0000abcd\n" + json.dumps(ANSWER),
        "{ partial thought\n" + json.dumps(ANSWER) + "\ndone in 1.2 s",
        json.dumps({"cases": []}) + "\n" + json.dumps(ANSWER),
    ],
    ids=["whole", "whole-indented", "fenced-json", "fenced-plain", "log-then-json", "json-then-log", "last-wins"],
)
def test_extract_json_object_finds_the_answer(text):
    assert extract_json_object(text) == ANSWER


@pytest.mark.parametrize(
    "text",
    [
        "I reviewed the code and found nothing to report.",
        "",
        "```json\n```",
        json.dumps([ANSWER]),
        '"just a string"',
        "42",
        "{not json at all}",
        "null",
    ],
    ids=["prose", "empty", "empty-fence", "array", "string", "number", "broken-object", "null"],
)
def test_extract_json_object_returns_none_without_an_object(text):
    assert extract_json_object(text) is None


def test_bad_shard_in_the_environment_does_not_traceback_other_commands(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BCEVAL_SHARD", "x")
    code, lines, err = run_cli(capsys, "validate", "--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "out"))
    assert not any("Traceback" in line for line in lines + err)
    assert code == 0 or (code == 2 and len(err) == 1 and "--shard" in err[0])


@pytest.mark.parametrize(
    "text",
    [
        '{"cases": ' + "[" * 100_000 + "]" * 100_000 + "}",  # deeper than any answer needs
        '{"cases": [], "cases": []}',  # duplicate keys
        '{"cases": [{"id": "a\\ud800", "findings": []}]}',  # a lone surrogate escape
    ],
    ids=["deep", "duplicate-key", "lone-surrogate"],
)
def test_extract_json_object_refuses_hostile_output(text):
    assert extract_json_object(text) is None
