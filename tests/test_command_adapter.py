"""The live command adapter, end to end through the real CLI, against a fake agent CLI written into tmp_path.

The fake agent reads the prompt from stdin (or the request file named by a `{request}` argument), logs every
call as one JSON line, and behaves as its FAKE_* environment variables say: FAKE_MODE for every case, or a
FAKE_MODES file mapping case ids to modes. Its `oracle` mode answers with the findings of the real oracle
adapter (FAKE_ANSWERS), so a run that goes well passes the strict gate.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from conftest import DEMO_CORPUS

from bceval.adapters.base import CaseInput
from bceval.adapters.command import CONTRACT, CommandAdapter, extract_json_object
from bceval.adapters.run import prune_vanished, shard_cases
from bceval.cli import main
from bceval.config import parse_shard
from bceval.errors import BcevalError
from bceval.review.cases import ReviewCase
from bceval.review.scoring import read_infra_file

CASES = 16
TIMEOUT = "10"  # generous for the well-behaved modes; the hang test uses 1 s
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (case-[0-9a-f]{8}) (answered|infrastructure failure: [a-z-]+)$")
ENV_KEYS = (
    "BCEVAL_LIVE",
    "BCEVAL_MODEL",
    "BCEVAL_COMMAND",
    "BCEVAL_ADAPTER",
    "BCEVAL_RESULTS",
    "BCEVAL_RESULTS_PATH",
    "BCEVAL_JOBS",
    "BCEVAL_TIMEOUT",
    "BCEVAL_RETRIES",
    "BCEVAL_SHARD",
    "BCEVAL_CORPUS",
    "BCEVAL_MANIFEST",
    "BCEVAL_OUT",
    "SOURCE_DATE_EPOCH",
    "FAKE_MODE",
    "FAKE_MODES",
    "FAKE_ANSWERS",
    "FAKE_LOG",
    "FAKE_STATE",
    "FAKE_PIDS",
    "FAKE_VERSION",
)

FAKE_AGENT = r'''#!{python}
"""A fake agent CLI for bceval's command adapter tests."""
import json
import os
import subprocess
import sys
import time


def log(entry):
    path = os.environ.get("FAKE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--version"]:
        if os.environ.get("FAKE_VERSION") == "fail":
            return 1
        print("fake-agent 1.2.3")
        print("built from a fake tree (this second line is not the version)")
        return 0
    stdin = sys.stdin.read()
    paths = [arg for arg in argv if arg.endswith(".json") and os.path.isfile(arg)]
    if paths:
        with open(paths[0], encoding="utf-8") as handle:
            request = json.load(handle)
    else:
        start = stdin.index("\n", stdin.index("=== request ")) + 1
        request = json.loads(stdin[start:stdin.index("\n=== file ", start)])
    case_id = request["cases"][0]["id"]
    modes = {}
    if os.environ.get("FAKE_MODES"):
        with open(os.environ["FAKE_MODES"], encoding="utf-8") as handle:
            modes = json.load(handle)
    mode = modes.get(case_id, os.environ.get("FAKE_MODE", "oracle"))
    log({"event": "start", "case": case_id, "mode": mode, "argv": argv, "stdin": stdin, "time": time.time()})

    findings = []
    answers = os.environ.get("FAKE_ANSWERS")
    if answers and os.path.isfile(os.path.join(answers, "result-" + case_id + ".json")):
        with open(os.path.join(answers, "result-" + case_id + ".json"), encoding="utf-8") as handle:
            findings = json.load(handle)["cases"][0]["findings"]
    answer = json.dumps({"cases": [{"id": case_id, "findings": findings}]})

    if mode == "garbage":
        print("I read the code carefully and it looks fine to me. No issues worth reporting.")
        return 0
    if mode == "empty":
        return 0
    if mode == "shapeless":
        print(json.dumps({"verdict": "looks good", "issues": 0}))
        return 0
    if mode == "badutf8":
        sys.stdout.buffer.write(b"\xff\xfe not utf-8 \xff\n")
        return 0
    if mode == "crash":
        print(answer)  # a valid answer does not rescue a non-zero exit
        print("agent: fatal error", file=sys.stderr)
        return 3
    if mode == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        with open(os.environ["FAKE_PIDS"], "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {child.pid}\n")
        time.sleep(30)
        print(answer)
        return 0
    if mode == "huge":
        print("x" * 20000)
        print(answer)
        return 0
    if mode == "flaky":
        marker = os.path.join(os.environ["FAKE_STATE"], case_id)
        if not os.path.exists(marker):
            open(marker, "w").close()
            return 1
    if mode == "slow":
        time.sleep(0.25)
    if mode == "fenced":
        print("```json\n" + json.dumps(json.loads(answer), indent=2) + "\n```")
    elif mode == "chatty":
        print("loading model...")
        print("{ thinking about case " + case_id)
        print(answer)
        print("done in 0.1 s")
    else:
        print(answer)
    log({"event": "end", "case": case_id, "time": time.time()})
    return 0


sys.exit(main())
'''


class FakeAgent:
    """The fake agent's files and the knobs a test turns."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, answers: Path) -> None:
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        self.write_script("fake-agent", FAKE_AGENT.replace("{python}", sys.executable))
        self.log = root / "agent-log.jsonl"
        self.modes_file = root / "modes.json"
        self.state = root / "state"
        self.state.mkdir()
        self.pids = root / "pids.txt"
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setenv("BCEVAL_LIVE", "1")
        monkeypatch.setenv("FAKE_LOG", str(self.log))
        monkeypatch.setenv("FAKE_ANSWERS", str(answers))
        monkeypatch.setenv("FAKE_STATE", str(self.state))
        monkeypatch.setenv("FAKE_PIDS", str(self.pids))

    def write_script(self, name: str, text: str) -> Path:
        path = self.bin / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
        return path

    def mode(self, mode: str) -> None:
        self.monkeypatch.setenv("FAKE_MODE", mode)

    def modes(self, modes: dict[str, str]) -> None:
        self.modes_file.write_text(json.dumps(modes), encoding="utf-8")
        self.monkeypatch.setenv("FAKE_MODES", str(self.modes_file))

    def calls(self) -> list[dict]:
        if not self.log.is_file():
            return []
        entries = [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]
        return [entry for entry in entries if entry["event"] == "start"]

    def entries(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="module")
def oracle_answers(tmp_path_factory) -> Path:
    """The oracle adapter's result files for the demo corpus (the fake agent's right answers)."""
    out = tmp_path_factory.mktemp("oracle") / "out"
    with pytest.MonkeyPatch.context() as patch:
        for key in ENV_KEYS:
            patch.delenv(key, raising=False)
        assert main(["prepare", "--corpus", str(DEMO_CORPUS), "--out", str(out)]) == 0
        assert main(["answer", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "oracle"]) == 0
    results = out / "results" / "oracle"
    assert len(list(results.glob("result-case-*.json"))) == CASES
    return results


@pytest.fixture
def agent(tmp_path, monkeypatch, oracle_answers) -> FakeAgent:
    return FakeAgent(tmp_path / "agent", monkeypatch, oracle_answers)


def run_cli(capsys, *argv: str) -> tuple[int, list[str]]:
    """(exit code, stderr lines after the corpus line, then stdout lines: progress first, results last)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    if err and err[0].startswith("bceval: corpus "):
        err = err[1:]
    return code, err + captured.out.strip().splitlines()


def prepare(capsys, out: Path) -> list[str]:
    """Prepare the demo corpus into out; returns the 16 model ids."""
    code, err = run_cli(capsys, "prepare", "--corpus", str(DEMO_CORPUS), "--out", str(out))
    assert code == 0, err
    ids = sorted(p.stem.removeprefix("request-") for p in (out / "review").glob("request-case-*.json"))
    assert len(ids) == CASES
    return ids


def answer(capsys, out: Path, *flags: str, command: str | None = "fake-agent") -> tuple[int, list[str]]:
    command_flags = ["--command", command] if command is not None else []
    return run_cli(
        capsys,
        "answer",
        "--corpus",
        str(DEMO_CORPUS),
        "--out",
        str(out),
        "--adapter",
        "command",
        *command_flags,
        *flags,
    )


def score(capsys, out: Path, results: Path) -> tuple[int, list[str]]:
    return run_cli(capsys, "score", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--results", str(results))


def progress(err: list[str]) -> list[tuple[int, int, str, str]]:
    found = [PROGRESS.match(line) for line in err]
    return [(int(m[1]), int(m[2]), m[3], m[4]) for m in found if m]


def result_ids(results: Path) -> set[str]:
    return {p.stem.removeprefix("result-") for p in results.glob("result-case-*.json")}


def infra_ids(results: Path) -> set[str]:
    return {p.stem.removeprefix("infra-") for p in results.glob("infra-case-*.json")}


def snapshot(results: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(results.iterdir())}


# --- refusal -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("live", [None, "0", "true", "yes"])
def test_refuses_without_bceval_live_1(agent, tmp_path, capsys, monkeypatch, live):
    out = tmp_path / "out"
    prepare(capsys, out)
    if live is None:
        monkeypatch.delenv("BCEVAL_LIVE")
    else:
        monkeypatch.setenv("BCEVAL_LIVE", live)
    code, err = answer(capsys, out, "--timeout", TIMEOUT)
    assert code == 2
    assert len(err) == 1 and "BCEVAL_LIVE=1" in err[0]
    assert not (out / "results").exists()
    assert not agent.log.exists()  # not even a --version probe


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("no-such-agent-4711 -p", "'no-such-agent-4711' was not found on PATH"),
        ("", "needs --command"),
        ("fake-agent 'unbalanced", "cannot split"),
    ],
)
def test_refuses_a_command_that_cannot_run(agent, tmp_path, capsys, command, expected):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, err = answer(capsys, out, "--timeout", TIMEOUT, command=command)
    assert code == 2
    assert len(err) == 1 and expected in err[0]
    assert not (out / "results").exists()
    assert agent.calls() == []


def test_refuses_results_inside_the_prepare_directory(agent, tmp_path, capsys):
    out = tmp_path / "out"
    prepare(capsys, out)
    before = sorted(p.name for p in (out / "review").iterdir())
    code, err = answer(capsys, out, "--results", str(out / "review"))
    assert code == 2
    assert len(err) == 1 and "must not go into the prepare directory" in err[0]
    assert sorted(p.name for p in (out / "review").iterdir()) == before
    assert agent.calls() == []


# --- success -------------------------------------------------------------------------------------------------


def test_answers_every_case_records_the_agent_and_scores(agent, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    monkeypatch.setenv("BCEVAL_MODEL", "claude-test-1")
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--retries", "0", "--jobs", "2")
    assert code == 0, err
    results = out / "results" / "command"
    assert result_ids(results) == set(ids)
    assert infra_ids(results) == set()
    answered_by = {
        "adapter": "command",
        "command": "fake-agent",
        "model": "claude-test-1",
        "version": "fake-agent 1.2.3",
        "pinned": True,
    }
    for model_id in ids:
        document = json.loads((results / f"result-{model_id}.json").read_text(encoding="utf-8"))
        assert document["answeredBy"] == answered_by
        assert [case["id"] for case in document["cases"]] == [model_id]

    lines = progress(err)
    assert len(lines) == CASES
    assert sorted(k for k, _, _, _ in lines) == list(range(1, CASES + 1))
    assert {n for _, n, _, _ in lines} == {CASES}
    assert sorted(case for _, _, case, _ in lines) == ids
    assert {status for _, _, _, status in lines} == {"answered"}
    assert err[-1] == f"Answered {CASES} case(s) with the command adapter into {results}."

    # one fresh process per case, the prompt on stdin: contract, the request file verbatim, the neutral case file
    calls = agent.calls()
    assert sorted(call["case"] for call in calls) == ids
    for call in calls:
        model_id, stdin = call["case"], call["stdin"]
        assert call["argv"] == []
        request_text = (out / "review" / f"request-{model_id}.json").read_text(encoding="utf-8")
        case_text = (out / "review" / f"{model_id}.al").read_text(encoding="utf-8")
        assert stdin == (
            f"{CONTRACT}\n\n=== request request-{model_id}.json ===\n{request_text}\n"
            f"=== file {model_id}.al ===\n{case_text}"
        )
        assert "-bad" not in stdin and "-good" not in stdin  # no manifest id leaks into the prompt

    code, err = score(capsys, out, results)
    assert code == 0, err
    assert err[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."
    report = json.loads((out / "score.json").read_text(encoding="utf-8"))
    assert report["answeredBy"] == [answered_by]
    assert report["infrastructureFailures"] == 0


def test_score_adapter_command_with_matching_environment_reuses_the_answers(agent, tmp_path, capsys, monkeypatch):
    """With the answer settings in the environment, `score --adapter command` scores without new agent calls."""
    out = tmp_path / "out"
    prepare(capsys, out)
    for key, value in (("BCEVAL_COMMAND", "fake-agent"), ("BCEVAL_TIMEOUT", TIMEOUT), ("BCEVAL_RETRIES", "0")):
        monkeypatch.setenv(key, value)
    code, err = answer(capsys, out, "--jobs", "2", command=None)
    assert code == 0, err
    assert len(agent.calls()) == CASES
    code, err = run_cli(capsys, "score", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command")
    assert code == 0, err
    assert err[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."
    assert len(agent.calls()) == CASES


def test_readme_flow_answer_with_flags_then_score_adapter_command(agent, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    prepare(capsys, out)
    monkeypatch.setenv("BCEVAL_MODEL", "claude-test-1")
    code, err = answer(capsys, out, "--jobs", "2", "--timeout", TIMEOUT)
    assert code == 0, err
    monkeypatch.delenv("BCEVAL_LIVE")
    monkeypatch.delenv("BCEVAL_MODEL")
    code, err = run_cli(capsys, "score", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command")
    assert (code, err[-1:]) == (0, ["Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."])
    assert len(agent.calls()) == CASES


@pytest.mark.parametrize(
    ("env_model", "flag_model", "model", "pinned"),
    [
        (None, None, "unpinned", False),
        ("env-model", "flag-model", "flag-model", True),
    ],
)
def test_model_is_recorded_pinned_or_unpinned(
    agent, tmp_path, capsys, monkeypatch, env_model, flag_model, model, pinned
):
    out = tmp_path / "out"
    prepare(capsys, out)
    if env_model:
        monkeypatch.setenv("BCEVAL_MODEL", env_model)
    flags = ["--model", flag_model] if flag_model else []
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4", *flags)
    assert code == 0, err
    documents = [json.loads(p.read_text(encoding="utf-8")) for p in (out / "results" / "command").glob("result-*")]
    assert len(documents) == CASES
    assert {json.dumps(d["answeredBy"], sort_keys=True) for d in documents} == {
        json.dumps(
            {
                "adapter": "command",
                "command": "fake-agent",
                "model": model,
                "version": "fake-agent 1.2.3",
                "pinned": pinned,
            },
            sort_keys=True,
        )
    }


def test_describe_probes_the_version_once_and_falls_back_to_unknown(agent, tmp_path, monkeypatch):
    adapter = CommandAdapter("fake-agent -p", "m1", tmp_path / "cache")
    assert adapter.describe() == {
        "adapter": "command",
        "command": "fake-agent -p",
        "model": "m1",
        "version": "fake-agent 1.2.3",
        "pinned": True,
    }
    monkeypatch.setenv("FAKE_VERSION", "fail")
    assert adapter.describe()["version"] == "fake-agent 1.2.3"  # probed once per adapter
    fresh = CommandAdapter("fake-agent", None, tmp_path / "cache")
    assert fresh.describe() == {
        "adapter": "command",
        "command": "fake-agent",
        "model": "unpinned",
        "version": "unknown",
        "pinned": False,
    }


def test_adapter_reads_the_environment_it_is_given(agent, tmp_path):
    environ = {"PATH": os.environ["PATH"]}
    with pytest.raises(BcevalError, match="BCEVAL_LIVE=1"):
        CommandAdapter("fake-agent", None, tmp_path / "cache", environ=environ)
    with pytest.raises(BcevalError, match="not found on PATH"):
        CommandAdapter("fake-agent", None, tmp_path / "cache", environ={"BCEVAL_LIVE": "1", "PATH": str(tmp_path)})
    adapter = CommandAdapter("fake-agent", None, tmp_path / "cache", environ={**environ, "BCEVAL_LIVE": "1"})
    assert adapter.executable == str(agent.bin / "fake-agent")


def test_jobs_run_cases_concurrently_within_the_limit(agent, tmp_path, capsys):
    out = tmp_path / "out"
    prepare(capsys, out)
    agent.mode("slow")
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4")
    assert code == 0, err
    entries = agent.entries()
    events = sorted((entry["time"], 1 if entry["event"] == "start" else -1) for entry in entries)
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert 2 <= peak <= 4
    assert len(result_ids(out / "results" / "command")) == CASES


def test_request_placeholder_passes_the_path_and_an_empty_stdin(agent, tmp_path, capsys):
    out = tmp_path / "out with space"  # the path is substituted after splitting: no quoting needed
    ids = prepare(capsys, out)
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "2", command="fake-agent --json {request}")
    assert code == 0, err
    calls = agent.calls()
    assert sorted(call["case"] for call in calls) == ids
    for call in calls:
        assert call["argv"] == ["--json", str(out / "review" / f"request-{call['case']}.json")]
        assert call["stdin"] == ""
    results = out / "results" / "command"
    assert result_ids(results) == set(ids)
    code, err = score(capsys, out, results)
    assert code == 0, err


@pytest.mark.parametrize("mode", ["fenced", "chatty"])
def test_answers_wrapped_in_fences_or_log_lines_are_accepted(agent, tmp_path, capsys, mode):
    out = tmp_path / "out"
    prepare(capsys, out)
    agent.mode(mode)
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4", "--retries", "0")
    assert code == 0, err
    results = out / "results" / "command"
    assert len(result_ids(results)) == CASES and infra_ids(results) == set()
    code, err = score(capsys, out, results)
    assert code == 0, err


# --- infrastructure failures ---------------------------------------------------------------------------------


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
        monkeypatch.setattr("bceval.adapters.command.MAX_JSON_BYTES", 4096)
    started = time.monotonic()
    code, err = answer(capsys, out, "--timeout", "1" if mode == "hang" else TIMEOUT, "--retries", "0", "--jobs", "4")
    elapsed = time.monotonic() - started
    assert code == 0, err
    assert elapsed < 10  # a hung agent is killed at the timeout, not waited for (it sleeps 30 s)

    results = out / "results" / "command"
    assert infra_ids(results) == {failed}
    assert result_ids(results) == set(ids) - {failed}  # never a result file for the failed case
    record = read_infra_file(results / f"infra-{failed}.json")
    assert (record.id, record.kind, record.attempts) == (failed, kind, 1)
    assert record.answeredBy is not None and record.answeredBy["adapter"] == "command"
    assert (k := [line for line in progress(err) if line[2] == failed]) and k[0][3] == f"infrastructure failure: {kind}"
    assert err[-1].endswith(", 1 infrastructure failure(s) (rerun to retry).")

    if mode == "hang":
        (pid_line,) = agent.pids.read_text(encoding="utf-8").splitlines()
        pids = [int(pid) for pid in pid_line.split()]
        deadline = time.monotonic() + 3
        while not all(_process_gone(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_process_gone(pid) for pid in pids), "the agent and its child must be killed as a group"

    code, err = score(capsys, out, results)
    assert code == 1
    report = json.loads((out / "score.json").read_text(encoding="utf-8"))
    verdict = next(case for case in report["cases"] if case["modelId"] == failed)
    assert verdict["answered"] is False and verdict["infrastructureFailure"].startswith(f"{kind} after 1 attempt(s): ")
    assert report["infrastructureFailures"] == 1
    infra_lines = [line for line in err if ": infrastructure failure (" in line]
    assert infra_lines == [f"  - {verdict['id']}: infrastructure failure ({verdict['infrastructureFailure']})"]
    assert err[-1] == "  - 1 case(s) had infrastructure failures, not model misses; rerun to retry"
    assert not any("missing expected finding" in line or "Results missing case" in line for line in err)
    assert not any("unexpected finding" in line or "produced finding" in line for line in err)


def test_spawn_error_is_retried_and_recorded_with_its_attempts(agent, tmp_path, capsys):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    agent.write_script("broken-agent", "#!/nonexistent/interpreter\nprint('never')\n")
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--retries", "2", "--jobs", "4", command="broken-agent")
    assert code == 0, err
    results = out / "results" / "command"
    assert infra_ids(results) == set(ids) and result_ids(results) == set()
    for model_id in ids:
        record = read_infra_file(results / f"infra-{model_id}.json")
        assert (record.kind, record.attempts) == ("spawn-error", 3)
        assert record.answeredBy["version"] == "unknown"
    assert err[-1].endswith(f", {CASES} infrastructure failure(s) (rerun to retry).")


# --- cache ---------------------------------------------------------------------------------------------------


def test_answers_are_cached_by_request_case_command_and_model(agent, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    prepare(capsys, out)
    monkeypatch.setenv("BCEVAL_MODEL", "model-a")
    results = out / "results" / "command"
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4")
    assert code == 0, err
    assert len(agent.calls()) == CASES
    assert len(list((out / "cache" / "answers").glob("*.json"))) == CASES
    first = snapshot(results)

    shutil.rmtree(results)  # `answer` is up to date otherwise
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4")
    assert code == 0, err
    assert len(agent.calls()) == CASES  # zero new agent calls
    assert snapshot(results) == first  # identical result files
    assert [status for _, _, _, status in progress(err)] == ["answered"] * CASES

    monkeypatch.setenv("BCEVAL_MODEL", "model-b")  # another model misses the cache
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4")
    assert code == 0, err
    assert len(agent.calls()) == 2 * CASES

    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4", command="fake-agent --variant")
    assert code == 0, err
    assert len(agent.calls()) == 3 * CASES  # so does another command line
    assert len(list((out / "cache" / "answers").glob("*.json"))) == 3 * CASES


def test_changed_request_misses_the_cache_for_that_case_only(agent, tmp_path, capsys):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "4")
    assert code == 0, err
    adapter = CommandAdapter("fake-agent", None, out / "cache" / "answers")
    case = CaseInput(ids[0], out / "review" / f"request-{ids[0]}.json", out / "review" / f"{ids[0]}.al")
    key = adapter.cache_key(case)
    assert (out / "cache" / "answers" / f"{key}.json").is_file()
    case.case_path.write_text(case.case_path.read_text(encoding="utf-8") + "\n// edited\n", encoding="utf-8")
    assert adapter.cache_key(case) != key
    assert CommandAdapter("fake-agent", "m", out / "cache" / "answers").cache_key(case) != adapter.cache_key(case)
    before = len(agent.calls())
    assert adapter.answer(case)[0].id == ids[0]
    assert len(agent.calls()) == before + 1
    assert adapter.answer(case)[0].id == ids[0]
    assert len(agent.calls()) == before + 1


def test_failures_are_not_cached_and_a_rerun_retries_only_them(agent, tmp_path, capsys):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    agent.modes({ids[0]: "crash", ids[5]: "garbage"})
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--retries", "0", "--jobs", "4")
    assert code == 0, err
    results = out / "results" / "command"
    assert infra_ids(results) == {ids[0], ids[5]}
    assert len(list((out / "cache" / "answers").glob("*.json"))) == CASES - 2
    assert len(agent.calls()) == CASES

    agent.modes({})  # the agent behaves now
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--retries", "0", "--jobs", "4")
    assert code == 0, err
    assert sorted(call["case"] for call in agent.calls()[CASES:]) == sorted([ids[0], ids[5]])
    assert infra_ids(results) == set()  # the stale infra records are gone
    assert result_ids(results) == set(ids)
    code, err = score(capsys, out, results)
    assert code == 0, err


# --- retries -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("retries", [0, 1])
def test_flaky_agent_is_retried(agent, tmp_path, capsys, retries):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    agent.mode("flaky")
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--retries", str(retries), "--jobs", "4")
    assert code == 0, err
    results = out / "results" / "command"
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


# --- shards --------------------------------------------------------------------------------------------------


def test_shards_share_one_results_directory_and_score_the_union(agent, tmp_path, capsys):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    shared = tmp_path / "shared"
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "2", "--shard", "1/2", "--results", str(shared))
    assert code == 0, err
    first = result_ids(shared)
    assert len(first) == CASES // 2
    assert {n for _, n, _, _ in progress(err)} == {CASES // 2}

    code, err = score(capsys, out, shared)
    assert code == 1
    missing = sorted(line for line in err if "Results missing case" in line)
    assert len(missing) == CASES // 2

    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--jobs", "2", "--shard", "2/2", "--results", str(shared))
    assert code == 0, err
    second = result_ids(shared) - first
    assert len(second) == CASES // 2
    assert first.isdisjoint(second) and first | second == set(ids)
    assert result_ids(shared) == set(ids)  # the second shard kept the first shard's files
    assert sorted(call["case"] for call in agent.calls()) == ids  # every case answered exactly once

    code, err = score(capsys, out, shared)
    assert code == 0, err
    assert not any("Results missing case" in line for line in err)
    assert err[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."


@pytest.mark.parametrize("shard", ["0/2", "3/2", "x"])
def test_bad_shard_is_one_line_exit_2(agent, tmp_path, capsys, shard):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, err = answer(capsys, out, "--timeout", TIMEOUT, "--shard", shard)
    assert code == 2
    assert len(err) == 1 and "--shard" in err[0] and shard in err[0]
    assert agent.calls() == []


@pytest.mark.parametrize("shard", ["0/2", "3/2", "x"])
def test_bad_shard_exits_2_without_answering(agent, tmp_path, capsys, shard):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, _ = answer(capsys, out, "--timeout", TIMEOUT, "--shard", shard)
    assert code == 2
    assert agent.calls() == []
    assert not (out / "results").exists()


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
    cases = [_case(n) for n in (7, 3, 11, 1, 5)]
    assert shard_cases(cases, None) == cases
    parts = [shard_cases(list(reversed(cases)), f"{k}/3") for k in (1, 2, 3)]
    assert [[c.modelId for c in part] for part in parts] == [
        ["case-00000001", "case-00000007"],
        ["case-00000003", "case-0000000b"],
        ["case-00000005"],
    ]
    assert shard_cases(cases, "1/3") == parts[0]  # input order does not matter
    assert shard_cases(cases, "9/9") == []


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


# --- extract_json_object -------------------------------------------------------------------------------------

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
    code, err = run_cli(capsys, "validate", "--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "out"))
    assert not any("Traceback" in line for line in err)
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
