"""An output folder for the viewer's tests, made by bceval itself and then planted with hostile text.

- a copy of the demo corpus whose `error-text-in-labels` article has a title with a <script> and an onerror=;
- run `baseline` (the lexical baseline) and run `command` (a fake live agent, stream-json envelopes): the agent
  answers the oracle's findings, except for PAYLOAD_CASE, where it cites a finding id that is an <img onerror>
  payload and writes a <script> to stderr (so the case regressed from baseline to command);
- an experiment (baseline control, the fake agent as treatment, two epochs) where FLAKY_CASE fails only in the
  agent's first epoch: a flaky cell;
- a guidance run of the demo plan manifest, answered by the oracle;
- run `planted`: a copy of run `command` whose score.json names a case with a payload id.

Every payload sets `window.__pwned` if it ever runs.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from bceval.cli import main

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "evaluation" / "demo-corpus"
PAYLOAD_CASE = "case-a89b289f"  # error-handling-bad: the baseline passes it
FLAKY_CASE = "case-fa4d2558"  # events-bad
SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=1">'
TITLE_PAYLOAD = f"Raise errors {SCRIPT} from labels {IMG}"
CASE_ID_PAYLOAD = f"planted-{IMG}-case"

AGENT = r"""#!{python}
import json, os, sys
argv = sys.argv[1:]
if argv[:1] == ["--version"]:
    print("viewer-agent 1.0")
    sys.exit(0)
stdin = sys.stdin.read()
start = stdin.index("\n", stdin.index("=== request ")) + 1
request = json.loads(stdin[start:stdin.index("\n=== file ", start)])
case_id = request["cases"][0]["id"]
with open(os.path.join(os.environ["VIEWER_ANSWERS"], "result-" + case_id + ".json"), encoding="utf-8") as handle:
    findings = json.load(handle)["cases"][0]["findings"]
if case_id == os.environ["VIEWER_PAYLOAD_CASE"]:
    findings = [{"id": os.environ["VIEWER_IMG"]}]
    sys.stderr.write("agent log " + os.environ["VIEWER_SCRIPT"] + "\n")
marker = os.path.join(os.environ["VIEWER_STATE"], case_id)
if case_id == os.environ["VIEWER_FLAKY_CASE"] and not os.path.exists(marker):
    open(marker, "w").close()
    findings = []
answer = json.dumps({"cases": [{"id": case_id, "findings": findings}]})
print(json.dumps({"type": "system", "subtype": "init", "tools": ["Read"]}))
said = {"type": "text", "text": "Reading " + os.environ["VIEWER_SCRIPT"]}
print(json.dumps({"type": "assistant", "message": {"content": [said]}}))
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": answer, "num_turns": 2,
                  "total_cost_usd": 0.01, "usage": {"input_tokens": 100, "output_tokens": 20}}))
"""

EXPERIMENT = """name: viewer
epochs: 2
seed: 7
defaults:
  corpus: {corpus}
  adapter: baseline
arms:
  - name: baseline
  - name: agent
    adapter: command
    command: viewer-agent
"""


def _cli(*args: str) -> None:
    code = main(list(args))
    assert code in (0, 1), args


def build_output(root: Path, oracle_answers: Path, patch) -> Path:  # noqa: ANN001 - a pytest MonkeyPatch
    """Make the output folder under `root` (returns it)."""
    corpus = root / "corpus"
    shutil.copytree(DEMO, corpus)
    article = corpus / "microsoft" / "knowledge" / "error-handling" / "error-text-in-labels.md"
    text = article.read_text(encoding="utf-8")
    article.write_text(
        text.replace("# Raise errors from Label constants with placeholders", f"# {TITLE_PAYLOAD}"), encoding="utf-8"
    )
    out = root / "out"
    bin_dir = root / "bin"
    bin_dir.mkdir()
    agent = bin_dir / "viewer-agent"
    agent.write_text(AGENT.replace("{python}", sys.executable), encoding="utf-8")
    agent.chmod(0o755)
    state = root / "state"
    state.mkdir()
    patch.setenv("PATH", f"{bin_dir}:{__import__('os').environ.get('PATH', '')}")
    patch.setenv("BCEVAL_LIVE", "1")
    for key, value in {
        "VIEWER_ANSWERS": str(oracle_answers),
        "VIEWER_PAYLOAD_CASE": PAYLOAD_CASE,
        "VIEWER_FLAKY_CASE": FLAKY_CASE,
        "VIEWER_STATE": str(state),
        "VIEWER_SCRIPT": SCRIPT,
        "VIEWER_IMG": IMG,
    }.items():
        patch.setenv(key, value)
    base = ["--corpus", str(corpus), "--out", str(out)]
    _cli("score", *base, "--adapter", "baseline", "--no-gate")
    _cli("answer", *base, "--adapter", "command", "--command", "viewer-agent", "--jobs", "4", "--timeout", "30")
    _cli("score", *base, "--adapter", "command", "--no-gate")
    # the experiment's agent epoch 1 is the `command` run's question (a cache hit of its wrong answer); epoch 2 is
    # asked anew and answers right: a flaky case
    experiment = root / "viewer.yaml"
    experiment.write_text(EXPERIMENT.format(corpus=corpus), encoding="utf-8")
    _cli("experiment", "run", str(experiment), "--out", str(out), "--jobs", "4", "--timeout", "30")
    demo = root / "guidance-demo"
    _cli("guidance", "demo-workspaces", "--out", str(demo))
    _cli(
        "guidance",
        "run",
        "--adapter",
        "oracle",
        "--root",
        str(demo / "knowledge"),
        "--workspace-map",
        str(demo / "workspace-map.plan.json"),
        "--out",
        str(out / "guidance-runs" / "plan" / "run-0001"),
    )
    planted = out / "runs" / "planted"
    shutil.copytree(out / "runs" / "command", planted)
    score = json.loads((planted / "score.json").read_text(encoding="utf-8"))
    score["cases"][0]["id"] = CASE_ID_PAYLOAD
    (planted / "score.json").write_text(json.dumps(score), encoding="utf-8")
    return out
