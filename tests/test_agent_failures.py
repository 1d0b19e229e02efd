"""Failures that explain themselves: a start-up failure is one attempt with its cause, an agent's error carries its
own words (escaped, cut), a network the sandbox removed is named, and an agent's own retries are counted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from agents import clean_environment
from cliutil import run_cli
from conftest import DEMO_CORPUS

from bceval.agents.sandbox import require_bwrap
from bceval.errors import BcevalError

RUN = "command"

# An agent that answers every case with no findings, after the stream events FAKE_EVENTS holds (JSON lines).
STREAM_AGENT = r"""#!{python}
import json, os, sys
prompt = sys.stdin.read()
start = prompt.index("\n", prompt.index("=== request ")) + 1
request = json.loads(prompt[start:prompt.index("\n=== file ", start)])
answer = json.dumps({"cases": [{"id": request["cases"][0]["id"], "findings": []}]})
print(json.dumps({"type": "system", "subtype": "init", "cwd": os.getcwd(), "model": "m"}))
sys.stdout.write(os.environ.get("FAKE_EVENTS", ""))
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": answer}))
"""


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


def answer(capsys, out: Path, command: str, *flags: str):
    base = ["answer", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command", "--command", command]
    return run_cli(capsys, *base, "--retries", "2", "--retry-wait", "0.01", "--timeout", "20", *flags)


def documents(out: Path, kind: str) -> dict[str, dict]:
    results = out / "runs" / RUN / "results"
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(results.glob(f"{kind}-case-*.json"))}


def transcript(out: Path, name: str) -> dict:
    model_id = name.removeprefix("infra-").removeprefix("result-").removesuffix(".json")
    return json.loads((out / "runs" / RUN / "transcripts" / f"{model_id}.json").read_text(encoding="utf-8"))


def test_a_start_up_failure_is_one_attempt_and_its_cause_is_in_the_one_line(agent, tmp_path, capsys):
    cause = 'Error finding codex home: CODEX_HOME points to "/nowhere", but that path does not exist'
    agent.write_script("startup-crash", f"#!/bin/sh\necho 'starting' >&2\necho '{cause}' >&2\nexit 1\n")
    code, lines, err = answer(capsys, tmp_path / "out", "startup-crash", "--case", "performance-bad")
    failures = documents(tmp_path / "out", "infra")
    assert len(failures) == 1
    ((name, failure),) = failures.items()
    assert failure["kind"] == "crash" and failure["attempts"] == 1
    assert failure["detail"].endswith(f"before any output: {cause}")
    assert len(transcript(tmp_path / "out", name)["attempts"]) == 1
    said = [line for line in err if line.startswith("bceval: case-") and "failed (crash)" in line]
    assert len(said) == 1 and cause in said[0]


def test_a_crash_without_a_cause_is_still_retried(agent, tmp_path, capsys):
    agent.write_script("silent-crash", "#!/bin/sh\nexit 1\n")
    answer(capsys, tmp_path / "out", "silent-crash", "--case", "performance-bad")
    (failure,) = documents(tmp_path / "out", "infra").values()
    assert failure["kind"] == "crash" and failure["attempts"] == 3


def test_an_agent_error_carries_its_result_text_escaped_and_cut(agent, tmp_path, capsys):
    said = "API Error: Unable to connect to API (ConnectionRefused)\x1b[31m" + "x" * 400
    envelope = {"type": "result", "subtype": "success", "is_error": True, "result": said}
    data = agent.data / "envelope.json"
    data.write_text(json.dumps(envelope), encoding="utf-8")
    agent.write_script("erring", f"#!/bin/sh\ncat '{data}'\nexit 1\n")
    answer(capsys, tmp_path / "out", "erring", "--case", "performance-bad", "--retries", "0")
    (failure,) = documents(tmp_path / "out", "infra").values()
    detail = failure["detail"]
    assert detail.startswith("the agent reported an error (success, is_error): API Error: Unable to connect to API")
    assert "\\x1b[31m" in detail and "\x1b" not in detail and len(detail) < 300


def test_the_agents_own_retries_are_counted_into_the_answer_record(agent, tmp_path, capsys, monkeypatch):
    agent.write_script("retrying", STREAM_AGENT.replace("{python}", sys.executable))
    retry = {"type": "system", "subtype": "api_retry", "attempt": 1, "retry_delay_ms": 600.5, "error_status": 529}
    monkeypatch.setenv("FAKE_EVENTS", "".join(json.dumps({**retry, "attempt": n}) + "\n" for n in (1, 2)))
    code, lines, err = answer(capsys, tmp_path / "out", "retrying", "--case", "performance-bad")
    assert code == 0, lines + err
    ((name, result),) = documents(tmp_path / "out", "result").items()
    assert result["record"]["agentRetries"] == {"count": 2, "waitSeconds": 1.201}
    assert transcript(tmp_path / "out", name)["attempts"][0]["agentRetries"] == {"count": 2, "waitSeconds": 1.201}


def test_a_network_the_sandbox_removed_is_named_as_the_cause(agent, tmp_path, capsys):
    try:
        require_bwrap()
    except BcevalError as exc:
        pytest.skip(f"no working bwrap here: {exc}")
    envelope = {"type": "result", "subtype": "success", "is_error": True, "result": "Unable to connect to API"}
    agent.write_script("offline", f"#!/bin/sh\necho '{json.dumps(envelope)}'\nexit 1\n")
    flags = ("--case", "performance-bad", "--retries", "0", "--sandbox", "bwrap", "--sandbox-network", "none")
    answer(capsys, tmp_path / "out", "offline", *flags)
    (failure,) = documents(tmp_path / "out", "infra").values()
    assert "Unable to connect to API; the sandbox removed the network (--sandbox-network none)" in failure["detail"]


# --- the circuit breaker ---------------------------------------------------------------------------------------


def case_ids(out: Path) -> list[str]:
    return sorted(p.stem.removeprefix("request-") for p in (out / "review").glob("request-case-*.json"))


def test_the_breaker_stops_a_run_whose_first_answers_all_fail_alike(agent, tmp_path, capsys):
    agent.mode("crash")
    code, lines, err = answer(capsys, tmp_path / "out", "fake-agent", "--retries", "0")
    assert code == 1
    stop = [line for line in lines + err if "stopped after 5 answers in a row failed the same way" in line]
    assert len(stop) == 1 and "(crash: exit code 3 after" in stop[0] and "check that the command answers" in stop[0]
    assert len(documents(tmp_path / "out", "infra")) == 5  # what was answered is kept; nothing more was asked
    assert len(agent.calls()) == 5


def counted(agent, name: str, body: str) -> None:
    """An agent script that knows which answer it gives ($n, from 1; the --version probe is not counted)."""
    counter = agent.data / f"{name}.count"
    head = '#!/bin/sh\n[ "$1" = --version ] && exec fake-agent "$@"\n'
    agent.write_script(
        name, f'{head}n=$(cat "{counter}" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "{counter}"\n{body}\n'
    )


def test_the_breaker_stops_n_failures_in_a_row_later_and_keeps_the_answers(agent, tmp_path, capsys):
    counted(agent, "sixth-fails", '[ $n -gt 6 ] && { echo "some output"; exit 3; }\nexec fake-agent "$@"')
    out = tmp_path / "out"
    code, lines, err = answer(capsys, out, "sixth-fails", "--retries", "0", "--breaker", "3")
    assert code == 1 and any("stopped after 3 answers in a row" in line for line in err)
    assert len(documents(out, "result")) == 6 and len(documents(out, "infra")) == 3


def test_different_causes_or_no_breaker_answer_every_case(agent, tmp_path, capsys):
    odd = '[ $((n % 2)) = 1 ] && { echo "some output"; exit 3; }\nFAKE_MODE=max-turns exec fake-agent "$@"'
    counted(agent, "two-ways", odd)
    code, lines, err = answer(capsys, tmp_path / "out", "two-ways", "--retries", "0")
    assert not any("stopped after" in line for line in err) and len(documents(tmp_path / "out", "infra")) == 16
    agent.mode("crash")
    code, lines, err = answer(capsys, tmp_path / "out2", "fake-agent", "--retries", "0", "--no-breaker")
    assert not any("stopped after" in line for line in err) and len(documents(tmp_path / "out2", "infra")) == 16


def test_the_breaker_stops_an_experiment_whose_agent_cannot_answer(agent, tmp_path, capsys):
    agent.mode("crash")
    file = tmp_path / "x.yaml"
    file.write_text(
        f"name: x\nepochs: 2\ndefaults:\n  corpus: {DEMO_CORPUS}\n  adapter: command\narms:\n"
        "  - name: a\n    command: fake-agent --arm a\n  - name: b\n    command: fake-agent --arm b\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out, "--retries", "0", "--jobs", "2")
    assert code == 1 and any("stopped after 5 answers in a row failed the same way (crash:" in x for x in lines + err)
    assert 5 <= len(agent.calls()) <= 6  # of 64: the ones under way when it stopped finish
    kept = list((out / "experiments" / "x").rglob("infra-case-*.json"))
    assert len(kept) == len(agent.calls())


def test_the_breaker_stops_the_api_agent_whose_endpoint_is_unreachable(tmp_path, capsys, monkeypatch):
    pytest.importorskip("openai")
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    monkeypatch.setenv("OPENAI_API_KEY", "dummy")
    out = tmp_path / "out"
    base = ["answer", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "api", "--model", "m"]
    code, lines, err = run_cli(capsys, *base, "--base-url", f"http://127.0.0.1:{port}/v1", "--retries", "0")
    stop = [line for line in lines + err if "stopped after 5 answers in a row failed the same way" in line]
    assert code == 1 and len(stop) == 1 and "cannot reach the endpoint" in stop[0]
    assert len(list((out / "runs").rglob("infra-case-*.json"))) == 5
