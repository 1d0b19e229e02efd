"""Cost and budgets beyond the api agent: a command agent's cost from its envelope or the price table, and an
experiment's one budget over all of its arms and epochs. Fake agents only (tests/agents.py); no model is called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents import clean_environment
from cliutil import run_cli
from conftest import DEMO_CORPUS

from bceval.prices import Price, PriceTable, priced
from bceval.usage import Usage

CASES = 16
# the fake agent's envelope: 1000 input, 30 cache-creation, 40 cache-read and 200 output tokens
PRICES = "prices:\n  fake-model-1: {input: 3, output: 15, cached-input: 0.3}\n"
PER_ANSWER = (1030 * 3 + 40 * 0.3 + 200 * 15) / 1e6  # 0.006102 USD


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


def answer(capsys, out: Path, *flags: str):
    base = ["answer", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command"]
    return run_cli(capsys, *base, "--command", "fake-agent", "--retry-wait", "0", *flags)


def run_files(out: Path, kind: str, run: str = "command-fake-model-1") -> dict[str, dict]:
    folder = out / "runs" / run / "results"
    return {p.stem.removeprefix(f"{kind}-"): json.loads(p.read_text()) for p in folder.glob(f"{kind}-case-*.json")}


def test_priced_takes_the_agents_cost_else_the_tables_and_never_guesses_zero():
    table = PriceTable("t", (("m", Price(3, 15, 0.3)),))
    tokens = Usage(inputTokens=1000, outputTokens=200, cacheCreationTokens=30, cacheReadTokens=40)
    assert priced(tokens, table, ("other", "m")) == (Usage(**{**tokens.as_record(), "costUsd": PER_ANSWER}), "m")
    reported = Usage(costUsd=0.5, inputTokens=10, outputTokens=1)
    assert priced(reported, table, ("m",)) == (reported, None)  # the agent's own report wins
    assert priced(tokens, table, ("unknown", None)) == (tokens, None)  # no price: unknown, not 0
    assert priced(tokens, None, ("m",)) == (tokens, None)
    assert priced(Usage(outputTokens=5), table, ("m",)) == (Usage(outputTokens=5), None)  # no input count: unknown


def test_a_command_agents_tokens_are_priced_from_the_table_and_its_budget_is_enforced(agent, tmp_path, capsys):
    out = tmp_path / "out"
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES, encoding="utf-8")
    agent.mode("json-tokens")
    code, lines, err = answer(capsys, out, "--model", "fake-model-1", "--prices", str(prices), "--max-cost", "0.03")
    assert code == 0, lines + err
    assert not any("cannot be enforced" in line for line in err)  # the table prices the model: enforced up front
    answered, skipped = run_files(out, "result"), run_files(out, "infra")
    assert len(answered) == 5 and len(skipped) == CASES - 5  # 4 answers cost 0.0244, the 5th reaches 0.03
    assert all(record["kind"] == "budget" for record in skipped.values())
    for document in answered.values():
        assert document["record"]["usage"]["costUsd"] == pytest.approx(PER_ANSWER)
    model_id = next(iter(answered))
    transcript = json.loads((out / "runs" / "command-fake-model-1" / "transcripts" / f"{model_id}.json").read_text())
    attempt = transcript["attempts"][0]
    assert attempt["costFrom"] == "prices" and attempt["pricedModel"] == "fake-model-1"

    code, lines, err = answer(capsys, out, "--model", "fake-model-1", "--prices", str(prices), "--max-cost", "1")
    assert code == 0, lines + err
    assert len(agent.calls()) == CASES  # the rerun asked only the 11 the budget had stopped
    assert len(run_files(out, "result")) == CASES and run_files(out, "infra") == {}


def test_a_command_agents_reported_cost_wins_and_an_unknown_one_says_the_budget_cannot_be_enforced(
    agent, tmp_path, capsys
):
    out = tmp_path / "out"
    prices = tmp_path / "prices.yaml"
    prices.write_text("prices:\n  fake-model-1: {input: 1000, output: 1000}\n", encoding="utf-8")
    agent.mode("json")  # reports total_cost_usd 0.0125 per answer
    code, lines, err = answer(capsys, out, "--model", "fake-model-1", "--prices", str(prices), "--max-cost", "0.05")
    assert code == 0, lines + err
    answered = run_files(out, "result")
    assert len(answered) == 4  # 4 x 0.0125 reaches 0.05
    assert all(doc["record"]["usage"]["costUsd"] == pytest.approx(0.0125) for doc in answered.values())

    out = tmp_path / "plain"
    agent.mode("oracle")  # plain text: no tokens, no cost
    code, lines, err = answer(capsys, out, "--max-cost", "0.01")
    assert code == 0, lines + err
    warning = [line for line in err if "cannot be enforced before answers report a cost" in line]
    assert len(warning) == 1 and warning[0].startswith("bceval: warning: --max-cost 0.01 cannot be enforced")
    assert "no price table was given" in warning[0]
    assert err.index(warning[0]) < min(i for i, line in enumerate(err) if line.startswith("[1/"))  # before the run
    assert len(run_files(out, "result", "command")) == CASES and run_files(out, "infra", "command") == {}


def experiment_file(tmp_path: Path, budget: str) -> Path:
    file = tmp_path / "models.yaml"
    file.write_text(
        f"name: models\n{budget}defaults:\n  corpus: {DEMO_CORPUS}\n  adapter: command\n"
        "  command: fake-agent --model {model}\narms:\n  - name: small\n    model: m1\n"
        "  - name: large\n    model: m2\n",
        encoding="utf-8",
    )
    return file


def test_an_experiments_budget_bounds_all_its_arms_and_a_larger_one_answers_only_the_rest(agent, tmp_path, capsys):
    out = tmp_path / "out"
    agent.mode("json")  # 0.0125 USD per answer, as the envelope reports it
    file = experiment_file(tmp_path, "maxCost: 0.1\n")
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out, "--retry-wait", "0")
    assert code in (0, 1), lines + err
    assert sum("maxCost 0.1 cannot be enforced before" in line for line in err) == 1  # no price table: said once
    assert len(agent.calls()) == 8  # 8 x 0.0125 reaches 0.1: no case of either arm starts after that
    folder = out / "experiments" / "models"
    ledger = [json.loads(line) for line in (folder / "cost-ledger.jsonl").read_text().splitlines()]
    assert len(ledger) == 8 and sum(entry["costUsd"] for entry in ledger) == pytest.approx(0.1)
    report = json.loads((folder / "report.json").read_text())
    arms = {arm["name"]: arm for arm in report["arms"]}
    # case by case, each for both arms in turn: the budget leaves both arms with the same four cases, comparable
    assert all(arm["answered"] == 4 and arm["notStarted"] == CASES - 4 for arm in arms.values())
    answered = {
        name: sorted(p.name for p in folder.glob(f"variants/*/runs/{name}-e1/results/result-*.json"))
        for name in ("small", "large")
    }
    assert len(answered["small"]) == 4 and answered["small"] == answered["large"]
    assert all(arm["infrastructureFailures"] == 0 and arm["missing"] == 0 for arm in arms.values())
    assert report["partial"] is True
    assert report["budget"] == {"maxCost": 0.1, "knownCost": pytest.approx(0.1), "reached": True, "notStarted": 24}
    partial = "Experiment models: partial: its known cost 0.1000 USD reached maxCost 0.1; 24 (case, epoch) answer(s)"
    assert any(line.startswith(partial) for line in lines)
    markdown = (folder / "report.md").read_text()
    assert "24 not started (budget)" in markdown and "Budget: maxCost 0.1 USD" in markdown

    file = experiment_file(tmp_path, "maxCost: 1\n")
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out, "--retry-wait", "0")
    assert code in (0, 1), lines + err
    assert len(agent.calls()) == 2 * CASES  # only the 24 not started were asked
    report = json.loads((folder / "report.json").read_text())
    assert report["partial"] is False and report["budget"]["reached"] is False
    assert report["budget"]["knownCost"] == pytest.approx(0.4)
    assert all(arm["answered"] == CASES and arm["notStarted"] == 0 for arm in report["arms"])


def test_a_budget_an_experiment_cannot_enforce_says_so_and_an_arms_maxcost_is_refused(agent, tmp_path, capsys):
    out = tmp_path / "out"
    agent.mode("oracle")  # plain output: no cost
    prices = tmp_path / "prices.yaml"
    prices.write_text("prices:\n  m1: {input: 1, output: 1}\n", encoding="utf-8")
    file = experiment_file(tmp_path, "")
    flags = ["--out", out, "--retry-wait", "0", "--max-cost", "0.01", "--prices", prices]
    code, lines, err = run_cli(capsys, "experiment", "run", file, *flags)
    assert code in (0, 1), lines + err
    warning = [line for line in err if "cannot be enforced before answers report a cost" in line]
    assert warning == [
        "bceval: warning: maxCost 0.01 cannot be enforced before answers report a cost: the price table "
        f"({prices}) has no price for 'm2'; it applies only to answers whose endpoint or agent reports what they cost"
    ]
    assert len(agent.calls()) == 2 * CASES  # nothing known was spent: nothing stopped

    file.write_text(file.read_text().replace("    model: m2\n", "    model: m2\n    maxCost: 3\n"), encoding="utf-8")
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out)
    assert code == 2 and len(err) == 1
    assert "unknown field 'arms[1].maxCost': maxCost bounds the whole experiment" in err[0]


def test_a_stream_json_agents_read_calls_are_its_own_trace_never_evidence(agent, tmp_path, capsys):
    out = tmp_path / "out"
    agent.mode("stream-json-reads")
    code, lines, err = answer(capsys, out)
    assert code == 0, lines + err
    documents = run_files(out, "result", "command")
    assert len(documents) == CASES
    for document in documents.values():
        record = document["record"]
        assert record["readBy"] == "agent-trace" and "readEvidence" not in record
        reads = [item["path"] for item in record["agentTrace"]["reads"]]
        assert reads == record["candidates"]  # relative to the agent's folder: the request's own paths
    base = ["score", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command"]
    code, lines, err = run_cli(capsys, *base)
    assert code == 0 and lines[-1].startswith("Review evaluation PASSED"), lines + err
    report = json.loads((out / "runs" / "command" / "score.json").read_text())
    traced = [case["reads"] for case in report["cases"] if "reads" in case]
    assert len(traced) == CASES and all(reads["source"] == "agent-trace" for reads in traced)
    cited = [reads for reads in traced if reads["cited"]]
    assert cited and all(reads["citedWithoutCompleteRead"] == reads["cited"] for reads in cited)  # nothing backed
    assert all(reads["opened"] and set(reads["cited"]) <= set(reads["opened"]) for reads in cited)
    assert "readEvidence" not in report  # no case has bceval's own evidence

    code, lines, err = run_cli(capsys, *base, "--require-read")
    assert code == 1
    problems = [line for line in lines + err if "agent's trace of the reads it asked for, which is no proof" in line]
    assert len(problems) == len(cited)
