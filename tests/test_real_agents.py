"""The real Claude Code and Codex CLIs as bceval's agents, each against a scripted model server on 127.0.0.1
(tests/modelservers.py), never a model service: a careful model passes the shared corpus in the default view and
under bwrap; refused reads are no read evidence; the configuration folder is in the question; a start-up crash is
one attempt with its cause; an unreachable model stops an experiment within the breaker's N cases. Each test skips
with the reason where its CLI (`npm install -g @anthropic-ai/claude-code @openai/codex`) or bwrap is missing."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from agents import clean_environment
from cliutil import run_cli
from conftest import DEMO_CORPUS, SHARED_CORPUS, requires_shared
from modelservers import SERVED, ModelServer, Script

from bceval.agents.sandbox import require_bwrap
from bceval.errors import BcevalError

MODEL = "claude-sonnet-4-5"
CLIS = {"claude-code": "claude", "codex": "codex"}
SHARED_CASES = 32


def need(agent: str) -> None:
    if shutil.which(CLIS[agent]) is None:
        pytest.skip(f"the {CLIS[agent]} CLI is not installed (npm install -g, see .ci/run)")


def need_bwrap() -> None:
    try:
        require_bwrap()
    except BcevalError as exc:
        pytest.skip(f"no working bwrap here: {exc}")


@pytest.fixture(scope="module")
def shared_answers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oracle's result files for the shared corpus: what the scripted model answers."""
    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"needs the public BCQuality corpus at {SHARED_CORPUS}")
    out = tmp_path_factory.mktemp("oracle") / "out"
    from bceval.cli import main

    with pytest.MonkeyPatch.context() as patch:
        clean_environment(patch)
        assert main(["answer", "--corpus", str(SHARED_CORPUS), "--out", str(out), "--adapter", "oracle"]) == 0
    return out / "runs" / "oracle" / "results"


class Live:
    """One real CLI pointed at one scripted server, with a configuration folder of the test's own."""

    def __init__(self, agent: str, script: Script, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        need(agent)
        clean_environment(monkeypatch)
        self.agent = agent
        self.server = ModelServer("anthropic" if agent == "claude-code" else "responses", script)
        self.config = root / "agent-config"
        self.config.mkdir()
        (root / "home").mkdir()
        monkeypatch.setenv("HOME", str(root / "home"))  # Codex runs `bash -lc`: no host dotfiles (a slow pyenv init)
        monkeypatch.setenv("BCEVAL_LIVE", "1")
        if agent == "claude-code":
            monkeypatch.setenv("ANTHROPIC_BASE_URL", self.server.url)
            monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
            monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(self.config))
        else:
            (self.config / "config.toml").write_text(
                f'model_provider = "scripted"\n[model_providers.scripted]\nname = "scripted"\n'
                f'base_url = "{self.server.url}/v1"\nwire_api = "responses"\nenv_key = "SCRIPTED_KEY"\n',
                encoding="utf-8",
            )
            monkeypatch.setenv("CODEX_HOME", str(self.config))
            monkeypatch.setenv("SCRIPTED_KEY", "dummy")

    def answer(self, capsys, out: Path, *flags: str, corpus: Path = SHARED_CORPUS):
        base = ["answer", "--corpus", str(corpus), "--out", str(out), "--agent", self.agent, "--model", MODEL]
        return run_cli(capsys, *base, "--retries", "0", "--timeout", "120", *flags)

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def live(tmp_path, monkeypatch):
    made: list[Live] = []

    def make(agent: str, script: Script) -> Live:
        made.append(Live(agent, script, tmp_path, monkeypatch))
        return made[-1]

    yield make
    for one in made:
        one.close()


def results(out: Path, kind: str = "result") -> list[dict]:
    folder = out / "runs" / f"command-{MODEL}" / "results"
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob(f"{kind}-case-*.json"))]


@requires_shared
@pytest.mark.parametrize("sandbox", ["view", "bwrap"])
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_careful_model_passes_the_shared_corpus(live, shared_answers, tmp_path, capsys, agent, sandbox):
    if sandbox == "bwrap":
        need_bwrap()
    cli = live(agent, Script(shared_answers))
    out = tmp_path / "out"
    flags = ["--jobs", "4", *(["--sandbox", "bwrap"] if sandbox == "bwrap" else [])]
    code, lines, err = cli.answer(capsys, out, *flags)
    assert code == 0, lines + err
    answered = results(out)
    assert len(answered) == SHARED_CASES and results(out, "infra") == []
    code, lines, err = run_cli(
        capsys, "score", "--corpus", str(SHARED_CORPUS), "--out", str(out), "--adapter", "command", "--model", MODEL
    )
    assert code == 0 and lines[-1].startswith("Review evaluation PASSED"), lines + err
    cited = [document["record"].get("agentTrace", {}) for document in answered if document["cases"][0]["findings"]]
    read = [trace for trace in cited if trace.get("reads")]  # it read what it cited
    assert read and len(read) == len(cited), cited
    usage = answered[0]["record"]["usage"]
    assert usage["inputTokens"] and usage["outputTokens"] and usage["turns"]
    if agent == "codex":
        assert usage["cacheReadTokens"]
    else:
        transcript = out / "runs" / f"command-{MODEL}" / answered[0]["record"]["transcript"]
        assert json.loads(transcript.read_text())["attempts"][-1]["servedModel"] == SERVED


@requires_shared
def test_refused_reads_give_zero_read_evidence(live, shared_answers, tmp_path, capsys):
    cli = live("claude-code", Script(shared_answers))
    out = tmp_path / "out"
    refusing = "claude -p --output-format stream-json --verbose --disallowedTools Read --model {model}"
    base = ["answer", "--corpus", str(SHARED_CORPUS), "--out", str(out), "--adapter", "command"]
    code, lines, err = run_cli(
        capsys, *base, "--command", refusing, "--model", MODEL, "-k", "*security*", "--jobs", "4"
    )
    assert code == 0, lines + err
    traced = [d["record"] for d in results(out) if d["cases"][0]["findings"]]
    assert traced and all(record["agentTrace"]["reads"] == [] for record in traced)
    # a disabled tool: "Read exists but is not enabled in this context"
    assert all({read["status"] for read in record["agentTrace"]["notRead"]} == {"refused"} for record in traced)
    score = ["score", "--corpus", str(SHARED_CORPUS), "--out", str(out), "--adapter", "command", "--model", MODEL]
    run_cli(capsys, *score)
    report = json.loads((out / "runs" / f"command-{MODEL}" / "score.json").read_text(encoding="utf-8"))
    assert all(case["reads"]["opened"] == [] for case in report["cases"] if "reads" in case)
    assert cli.server.script.requests  # the model was asked, and its reads were refused


@requires_shared
def test_a_claude_md_in_the_configuration_changes_the_question(live, shared_answers, tmp_path, capsys):
    cli = live("claude-code", Script(shared_answers))
    out = tmp_path / "out"
    code, lines, err = cli.answer(capsys, out, "--case", results_ids(shared_answers)[0])
    assert code == 0, lines + err
    (before,) = results(out)
    (cli.config / "CLAUDE.md").write_text("MARKER-7f3a: review like a pessimist.\n", encoding="utf-8")
    code, lines, err = cli.answer(capsys, out, "--case", results_ids(shared_answers)[0], "--run", "with-memory")
    assert code == 0, lines + err
    folder = out / "runs" / "with-memory" / "results"
    (after,) = [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("result-case-*.json")]
    assert after["record"]["cached"] is False and "agentConfig" not in before["answeredBy"]
    assert json.loads((out / "runs" / "with-memory" / "run.json").read_text())["agentConfig"]
    assert any("MARKER-7f3a" in json.dumps(body) for body in cli.server.script.requests)


def results_ids(answers: Path) -> list[str]:
    return sorted(path.stem.removeprefix("result-") for path in answers.glob("result-case-*.json"))


def test_a_start_up_crash_is_one_attempt_with_its_cause(tmp_path, capsys, monkeypatch):
    need("codex")
    clean_environment(monkeypatch)
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "nowhere"))
    out = tmp_path / "out"
    base = ["answer", "--corpus", "demo", "--out", str(out), "--adapter", "command", "--command", "codex exec --json -"]
    code, lines, err = run_cli(capsys, *base, "--case", "performance-bad", "--retries", "2", "--retry-wait", "0.01")
    (failure,) = [json.loads(p.read_text()) for p in (out / "runs" / "command" / "results").glob("infra-*.json")]
    assert failure["attempts"] == 1 and failure["kind"] == "crash"
    assert "before any output" in failure["detail"] and "CODEX_HOME" in failure["detail"]


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_an_unreachable_model_stops_an_experiment_within_the_breakers_cases(tmp_path, capsys, monkeypatch, agent):
    need(agent)
    clean_environment(monkeypatch)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    config = tmp_path / "config"
    config.mkdir()
    if agent == "claude-code":
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy")
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    else:
        (config / "config.toml").write_text(
            f'model_provider = "s"\n[model_providers.s]\nname = "s"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
            'wire_api = "responses"\nenv_key = "SCRIPTED_KEY"\n',
            encoding="utf-8",
        )
        monkeypatch.setenv("CODEX_HOME", str(config))
        monkeypatch.setenv("SCRIPTED_KEY", "dummy")
    file = tmp_path / "x.yaml"
    file.write_text(  # 2 arms x 2 epochs x the 16 demo cases: 64 answers
        f"name: x\nepochs: 2\ndefaults:\n  corpus: {DEMO_CORPUS}\n  agent: {agent}\narms:\n  - name: a\n    model: m1\n"
        "  - name: b\n    model: m2\n",
        encoding="utf-8",
    )
    flags = ["--retries", "0", "--timeout", "8", "--jobs", "4"]
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", tmp_path / "out", *flags)
    assert code == 1
    assert any("stopped after 5 answers in a row failed the same way" in line for line in lines + err), lines + err
    failed = list((tmp_path / "out" / "experiments" / "x").rglob("infra-case-*.json"))
    assert 5 <= len(failed) <= 8  # the breaker's 5, and those under way when it stopped
