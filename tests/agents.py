"""Fake agent command lines for the live adapter's tests: one that answers (well, badly, slowly, wrapped in
Claude Code envelopes, ...) as FAKE_* variables say, and two that cheat by looking for the answer key.

They are Python scripts run by this interpreter (a pyenv build, not /usr), written into a test's tmp_path.
The well-behaved agent reads the prompt from stdin (or the request file a `{request}` argument names),
logs every call as one JSON line (FAKE_LOG), and answers with the oracle's findings (FAKE_ANSWERS, a folder
of result files) so a run that goes well passes the strict gate.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

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


def envelope(result, subtype="success", is_error=False):
    return {
        "type": "result", "subtype": subtype, "is_error": is_error, "duration_ms": 1500, "num_turns": 2,
        "result": result, "total_cost_usd": 0.0125, "session_id": "s-1",
        "usage": {"input_tokens": 1000, "output_tokens": 200, "cache_creation_input_tokens": 30,
                  "cache_read_input_tokens": 40},
    }


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
    read = []
    if mode == "read-view":  # a careful reviewer: opens its leaf and every candidate article first
        for path in [request["skill"]] + [row["path"] for row in request["candidateArticles"]]:
            with open(path, encoding="utf-8") as handle:
                read.append((path, len(handle.read())))
    log({"event": "start", "case": case_id, "mode": mode, "argv": argv, "stdin": stdin, "time": time.time(),
         "cwd": os.getcwd(), "env": sorted(os.environ), "read": read})

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
    if mode == "noisy":  # a long stderr log: the transcript keeps its head and marks the cut
        sys.stderr.write("log line\n" * 200000)
    if mode == "flaky":
        marker = os.path.join(os.environ["FAKE_STATE"], case_id)
        if not os.path.exists(marker):
            open(marker, "w").close()
            return 1
    if mode == "slow":
        time.sleep(float(os.environ.get("FAKE_SLEEP", "0.25")))
    if mode == "json":
        print(json.dumps(envelope(answer)))
    elif mode == "stream-json":
        print(json.dumps({"type": "system", "subtype": "init", "cwd": os.getcwd(), "tools": ["Read"]}))
        print(json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": answer}]}}))
        print(json.dumps(envelope(answer)))
    elif mode == "json-tokens":  # an envelope with tokens and its model but no cost (a price table prices it)
        tokens_only = envelope(answer)
        del tokens_only["total_cost_usd"]
        tokens_only["modelUsage"] = {"fake-model-1": {"inputTokens": 1000, "outputTokens": 200}}
        print(json.dumps(tokens_only))
    elif mode == "stream-json-reads":  # a stream whose assistant asks the Read tool for its candidate articles
        print(json.dumps({"type": "system", "subtype": "init", "cwd": os.getcwd(), "tools": ["Read"]}))
        for number, row in enumerate(request["candidateArticles"]):
            use = {"type": "tool_use", "id": f"toolu_{number}", "name": "Read",
                   "input": {"file_path": os.path.abspath(row["path"])}}
            print(json.dumps({"type": "assistant", "message": {"content": [use]}}))
            result = {"type": "tool_result", "tool_use_id": f"toolu_{number}", "content": "(the article)"}
            print(json.dumps({"type": "user", "message": {"content": [result]}}))
        print(json.dumps({"type": "assistant", "message": {"content": [{"type": "text", "text": answer}]}}))
        print(json.dumps(envelope(answer)))
    elif mode == "not-logged-in":  # what Claude Code prints without a login: exit 1, is_error with "success"
        print(json.dumps(envelope("Not logged in", subtype="success", is_error=True)))
        return 1
    elif mode == "max-turns":
        print(json.dumps(envelope("", subtype="error_max_turns", is_error=True)))
        return 0
    elif mode == "odd-envelope":
        print(json.dumps({"type": "message", "content": answer}))
    elif mode == "fenced":
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

# A cheat that never reviews: it looks for the sample the case file was made from. It searches its working
# directory and every path its prompt names; with --roam it also walks up from there to the root, and
# searches every existing path in its environment. Self-contained: it cannot import bceval inside a sandbox.
CHEAT = r'''#!{python}
import json
import os
import re
import sys

ROAM = "--roam" in sys.argv
SKIP = {"/proc", "/sys", "/dev", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/run", "/boot"}
WORD = re.compile(r"\b(?:Good|Bad|Eval)\b", re.IGNORECASE)


def shape(text):
    """The lines that survive neutralization, with the words it changes blanked out."""
    lines = []
    for line in text.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("//"):
            lines.append(WORD.sub("_", stripped))
    return lines


def samples(start, seen, budget):
    for folder, dirs, files in os.walk(start):
        if folder in SKIP or budget[0] <= 0:
            dirs[:] = []
            continue
        real = os.path.realpath(folder)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        for name in files:
            budget[0] -= 1
            if name.endswith((".good.al", ".bad.al")):
                yield os.path.join(folder, name)


def article_of(sample):
    parts = sample.split(os.sep)
    if "knowledge" not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index("knowledge")
    rel = "/".join(parts[at - 1:])
    return re.sub(r"\.bad\.al$", ".md", rel)


def main():
    prompt = sys.stdin.read()
    start = prompt.index("\n", prompt.index("=== request ")) + 1
    request = json.loads(prompt[start:prompt.index("\n=== file ", start)])
    case_id = request["cases"][0]["id"]
    code = prompt[prompt.index("\n", prompt.index("=== file ")) + 1:]
    wanted = shape(code)
    places = ["."]
    places += [token for token in re.findall(r"[\w./-]{3,}", prompt) if os.path.exists(token)]
    if ROAM:
        here = os.getcwd()
        while True:
            places.append(here)
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        places += [value for value in os.environ.values() if os.path.isabs(value) and os.path.isdir(value)]
        places += [token for token in re.findall(r"/[\w./-]+", prompt) if os.path.isdir(token)]
    findings, seen, budget = [], set(), [2_000_000]
    for place in places:
        for sample in samples(place, seen, budget):
            try:
                with open(sample, encoding="utf-8-sig") as handle:
                    text = handle.read()
            except (OSError, UnicodeDecodeError):
                continue
            if shape(text) == wanted:
                if sample.endswith(".bad.al") and article_of(sample):
                    findings = [article_of(sample)]
                break
        else:
            continue
        break
    print(json.dumps({"cases": [{"id": case_id, "findings": findings}]}))


main()
'''


class FakeAgent:
    """The fake agents' files and the knobs a test turns. Everything the agents write (their log, the flaky
    agent's state) lives in `data`, which a sandboxed run must grant with --sandbox-allow-rw."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch, answers: Path | None = None) -> None:
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        self.data = root / "data"
        self.data.mkdir()
        self.write_script("fake-agent", FAKE_AGENT.replace("{python}", sys.executable))
        self.write_script("cheat-agent", CHEAT.replace("{python}", sys.executable))
        self.log = self.data / "agent-log.jsonl"
        self.modes_file = self.data / "modes.json"
        self.state = self.data / "state"
        self.state.mkdir()
        self.pids = self.data / "pids.txt"
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setenv("BCEVAL_LIVE", "1")
        monkeypatch.setenv("FAKE_LOG", str(self.log))
        if answers is not None:
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


ENV_PREFIXES = ("BCEVAL_", "FAKE_")


def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith(ENV_PREFIXES) or key == "SOURCE_DATE_EPOCH":
            monkeypatch.delenv(key)
