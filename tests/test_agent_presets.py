"""`--agent claude-code` and `--agent codex` (and `agent:` in an experiment arm): the command line, output format,
permissions and environment each CLI needs, recorded as the run's command."""

from __future__ import annotations

import json
import sys

import pytest
from agents import clean_environment
from cliutil import run_cli
from conftest import DEMO_CORPUS

from bceval.agents.presets import preset_command
from bceval.config import load_settings
from bceval.errors import BcevalError

# A stand-in CLI: logs its argv and the preset's variable, answers every case with no findings in the envelope the
# real one prints (Claude Code's stream-json, Codex's --json events).
STAND_IN = r"""#!{python}
import json, os, sys
if sys.argv[1:2] == ["--version"]:
    print("9.9.9 (stand-in)")
    sys.exit(0)
prompt = sys.stdin.read()
start = prompt.index("\n", prompt.index("=== request ")) + 1
request = json.loads(prompt[start:prompt.index("\n=== file ", start)])
answer = json.dumps({"cases": [{"id": request["cases"][0]["id"], "findings": []}]})
traffic = os.environ.get("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")
config = os.environ.get("CLAUDE_CONFIG_DIR") or os.environ.get("CODEX_HOME")
memory = os.path.join(config or ".", "CLAUDE.md")
said = open(memory).read() if config and os.path.isfile(memory) else None
if config:  # what the real CLIs do: leave their state in the configuration folder
    os.makedirs(os.path.join(config, "projects", "x"), exist_ok=True)
with open(os.environ["STAND_IN_LOG"], "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "traffic": traffic, "config": config, "said": said}) + "\n")
if os.path.basename(sys.argv[0]) == "codex":
    print(json.dumps({"type": "thread.started", "thread_id": "t"}))
    print(json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": answer}}))
    usage = {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 2}
    print(json.dumps({"type": "turn.completed", "usage": usage}))
else:
    print(json.dumps({"type": "system", "subtype": "init", "model": "asked"}))
    text = {"type": "text", "text": answer}
    print(json.dumps({"type": "assistant", "message": {"model": "served-1", "content": [text]}}))
    result = {"type": "result", "subtype": "success", "is_error": False, "result": answer, "modelUsage": {"asked": {}}}
    print(json.dumps(result))
"""


@pytest.fixture
def stand_ins(tmp_path, monkeypatch):
    clean_environment(monkeypatch)
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("claude", "codex"):
        path = folder / name
        path.write_text(STAND_IN.replace("{python}", sys.executable), encoding="utf-8")
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    monkeypatch.setenv("STAND_IN_LOG", str(tmp_path / "log.jsonl"))
    return tmp_path / "log.jsonl"


def test_presets_expand_to_the_command_line_and_pin_a_given_model(tmp_path):
    settings = load_settings(cwd=tmp_path, environ={}, agent="claude-code", model="m1")
    assert settings.adapter == "command" and settings.command.startswith("claude -p --output-format stream-json")
    assert "--verbose" in settings.command and settings.command.endswith("--model {model}")
    codex = load_settings(cwd=tmp_path, environ={}, agent="codex")
    assert codex.command == "codex exec --json --skip-git-repo-check --sandbox danger-full-access --color never -"
    assert preset_command("codex", "m", None).endswith("-m {model} -")
    with pytest.raises(BcevalError, match="--agent codex and --command are two agents: give one of them"):
        load_settings(cwd=tmp_path, environ={}, agent="codex", command="x")
    with pytest.raises(BcevalError, match="drop --adapter api"):
        load_settings(cwd=tmp_path, environ={}, agent="codex", adapter="api")


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_a_preset_run_answers_records_its_command_and_reads_its_envelope(stand_ins, tmp_path, capsys, name):
    out = tmp_path / "out"
    base = ["answer", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--agent", name, "--model", "m1"]
    code, lines, err = run_cli(capsys, *base, "--case", "performance-bad")
    assert code == 0, lines + err
    (result,) = (out / "runs" / "command-m1" / "results").glob("result-*.json")
    document = json.loads(result.read_text(encoding="utf-8"))
    assert document["answeredBy"]["command"] == preset_command(name, "m1", None)
    assert document["answeredBy"]["pinned"] is True
    (called,) = [json.loads(line) for line in stand_ins.read_text(encoding="utf-8").splitlines()]
    assert "m1" in called["argv"]
    model_id = result.stem.removeprefix("result-")
    attempt = json.loads((out / "runs" / "command-m1" / "transcripts" / f"{model_id}.json").read_text())["attempts"][0]
    if name == "claude-code":
        assert called["traffic"] == "1" and attempt["format"] == "stream-json"
        assert attempt["servedModel"] == "served-1"  # not the init line's or modelUsage's "asked"
    else:
        assert attempt["format"] == "codex-json"
        assert (attempt["usage"]["inputTokens"], attempt["usage"]["cacheReadTokens"]) == (10, 4)


def test_an_experiment_arm_names_its_agent(stand_ins, tmp_path, capsys):
    file = tmp_path / "x.yaml"
    file.write_text(
        f"name: x\ncases: [performance-bad]\ndefaults:\n  corpus: {DEMO_CORPUS}\n  model: m1\narms:\n"
        "  - name: a\n    agent: claude-code\n  - name: b\n    agent: codex\n",
        encoding="utf-8",
    )
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", tmp_path / "out")
    assert code == 0, lines + err
    argv = [json.loads(line)["argv"] for line in stand_ins.read_text(encoding="utf-8").splitlines()]
    assert sorted(call[0] for call in argv) == ["-p", "exec"]
    report = json.loads((tmp_path / "out" / "experiments" / "x" / "report.json").read_text(encoding="utf-8"))
    commands = {arm["name"]: arm["settings"]["command"] for arm in report["arms"]}
    assert commands == {"a": preset_command("claude-code", "m1", None), "b": preset_command("codex", "m1", None)}


def answer_one(capsys, out, run="command-m1"):
    base = ["answer", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--agent", "claude-code", "--model", "m1"]
    code, lines, err = run_cli(capsys, *base, "--case", "performance-bad", "--run", run)
    assert code == 0, lines + err
    (result,) = (out / "runs" / run / "results").glob("result-*.json")
    return json.loads(result.read_text(encoding="utf-8"))


def test_the_agents_configuration_is_an_input_of_the_question(stand_ins, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    empty = answer_one(capsys, out)  # no configuration: an empty folder of its own, the question as it always was
    assert "agentConfig" not in empty["answeredBy"]
    (call,) = [json.loads(line) for line in stand_ins.read_text(encoding="utf-8").splitlines()]
    assert call["config"] and call["said"] is None

    user = tmp_path / "claude-config"
    (user / "projects" / "old").mkdir(parents=True)  # the CLI's own state: never copied, never in the digest
    (user / "CLAUDE.md").write_text("Always cite two articles.\n", encoding="utf-8")
    (user / ".credentials.json").write_text("{}", encoding="utf-8")  # copied, not in the digest
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(user))
    first = answer_one(capsys, out)
    assert first["record"]["cached"] is False  # a new question: a new answer, not the empty configuration's
    digest = first["answeredBy"]["agentConfig"]
    calls = [json.loads(line) for line in stand_ins.read_text(encoding="utf-8").splitlines()]
    assert calls[-1]["said"] == "Always cite two articles.\n" and calls[-1]["config"] != str(user)
    assert sorted(p.name for p in user.iterdir()) == [".credentials.json", "CLAUDE.md", "projects"]
    assert list((user / "projects").iterdir()) == [user / "projects" / "old"]  # the user's folder is untouched
    model_id = first["cases"][0]["id"]
    attempt = json.loads((out / "runs" / "command-m1" / "transcripts" / f"{model_id}.json").read_text())["attempts"][0]
    assert attempt["agentConfig"] == {
        "variable": "CLAUDE_CONFIG_DIR",
        "source": str(user),
        "sha256": digest,
        "files": ["CLAUDE.md"],
    }
    (user / ".credentials.json").write_text('{"token": "new"}', encoding="utf-8")
    assert answer_one(capsys, out, "again")["answeredBy"]["agentConfig"] == digest
    (user / "CLAUDE.md").write_text("Cite one article.\n", encoding="utf-8")
    changed = answer_one(capsys, out, "changed")
    assert changed["answeredBy"]["agentConfig"] != digest and changed["record"]["cached"] is False
    record = json.loads((out / "runs" / "changed" / "run.json").read_text(encoding="utf-8"))
    assert record["agentConfig"] == changed["answeredBy"]["agentConfig"]  # in the run's identity too
