"""Requests a provider can cache: the api agent sends what a leaf's cases share before the case, in the same bytes
every time, and the run's records and scorecard give the cached share of prompt tokens and the cost with and
without caching. The server emulates automatic prefix caching (tests/apiserver.py, ChatServer.cached_prefix)."""

from __future__ import annotations

import json

import pytest
from agents import clean_environment
from apiserver import ChatServer, answers_from, common_prefix
from cliutil import run_cli
from conftest import DEMO_CORPUS, SHARED_CORPUS, requires_shared

from bceval.usage import Usage, cached_share

pytest.importorskip("openai", reason="the api adapter's tests need the openai package (pip install 'bceval[api]')")

PRICES = "prices:\n  bench: {input: 2.0, output: 8.0, cached-input: 0.5}\n  lazy: {input: 2.0, output: 8.0}\n"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_environment(monkeypatch)
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    monkeypatch.setenv("OPENAI_API_KEY", "local")


def test_a_usage_record_names_the_uncached_cost_only_when_it_is_known():
    assert "uncachedCostUsd" not in Usage(costUsd=1.0).as_record()  # every other agent's record stays as it was
    assert Usage(uncachedCostUsd=2.0).as_record()["uncachedCostUsd"] == 2.0
    assert Usage.from_record(Usage(uncachedCostUsd=2.0).as_record()).uncachedCostUsd == 2.0


def test_the_cached_share_counts_each_agent_s_prompt_tokens_its_own_way():
    api = Usage(inputTokens=1000, cacheReadTokens=600)  # chat completions: the cached tokens are among the prompt's
    claude = Usage(inputTokens=100, cacheCreationTokens=300, cacheReadTokens=600)  # Claude Code: counted apart
    assert api.prompt_tokens == claude.prompt_tokens == 1000
    assert cached_share([api, claude]) == 0.6
    assert cached_share([Usage(inputTokens=5), Usage()]) is None


@requires_shared
def test_a_run_of_the_shared_corpus_has_most_of_its_prompt_tokens_cached(tmp_path, capsys):
    out, prices = tmp_path / "out", tmp_path / "prices.yaml"
    prices.write_text(PRICES, encoding="utf-8")
    corpus = ["--corpus", SHARED_CORPUS, "--out", out]
    assert run_cli(capsys, "prepare", *corpus)[0] == 0
    with ChatServer({}, prefix_cache=True) as chat:
        flags = ["--adapter", "api", "--model", "bench", "--base-url", chat.base_url, "--retry-wait", "0"]
        code, lines, err = run_cli(capsys, "answer", *corpus, *flags, "--jobs", "1", "--prices", prices)
        assert code == 0, lines + err
    code, lines, err = run_cli(capsys, "score", *corpus, "--adapter", "api", "--model", "bench", "--no-gate")
    assert code == 0, lines + err

    # the first requests of a leaf's two cases are the same bytes up to the case (the request's `cases` member),
    # or up to the first candidate row they do not share where the ranking gave them different ones
    first = {}
    for body in (entry["body"] for entry in chat.log if len(entry["body"]["messages"]) == 2):
        first.setdefault(body["messages"][0]["content"], []).append(json.dumps(body["messages"]).encode())
    assert len(first) == 16 and all(len(pair) == 2 for pair in first.values())
    reached = [common_prefix(one, other) > one.rindex(b'\\"cases\\": [') for one, other in first.values()]
    assert all(common_prefix(one, other) > one.rindex(b"candidateArticles") for one, other in first.values())
    assert sum(reached) == 12

    card = json.loads((out / "runs" / "api-bench" / "scorecard.json").read_text(encoding="utf-8"))
    usage = card["usage"]
    prompts = chat.prompts["bench"]
    served = sum(-(-len(p) // 4) for p in prompts)
    cached = sum(max((common_prefix(p, q) for q in prompts[:i]), default=0) // 4 for i, p in enumerate(prompts))
    assert (usage["inputTokens"], usage["cacheReadTokens"]) == (served, cached)
    assert usage["cachedShare"] == pytest.approx(cached / served) and usage["cachedShare"] >= 0.5
    # the cost with caching prices the cached tokens at cached-input, the cost without it at input
    outputs = 100 * len(prompts)
    assert usage["costUsd"] == pytest.approx(((served - cached) * 2.0 + cached * 0.5 + outputs * 8.0) / 1e6)
    assert usage["uncachedCostUsd"] == pytest.approx((served * 2.0 + outputs * 8.0) / 1e6)
    markdown = (out / "runs" / "api-bench" / "scorecard.md").read_text(encoding="utf-8")
    share = f"({usage['cachedShare']:.0%} of prompt tokens read from the provider's cache, "
    assert share + f"${usage['uncachedCostUsd']:.4f} without caching)" in markdown


def test_an_experiment_reports_each_arm_s_cached_share_and_its_cost_without_caching(tmp_path, capsys, oracle_answers):
    out, prices, file = tmp_path / "out", tmp_path / "prices.yaml", tmp_path / "cache.yaml"
    prices.write_text(PRICES, encoding="utf-8")  # no cached-input: cached tokens cost what the others do
    with ChatServer(answers_from(oracle_answers), prefix_cache=True) as chat:
        file.write_text(
            f"name: cache\nepochs: 2\ndefaults:\n  corpus: {DEMO_CORPUS}\n  adapter: api\n  model: lazy\n"
            f"  baseUrl: {chat.base_url}\narms:\n  - name: control\n  - name: same\n",
            encoding="utf-8",
        )
        code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out, "--prices", prices)
        assert code in (0, 1), lines + err
    control, same = json.loads((out / "experiments" / "cache" / "report.json").read_text())["arms"]
    assert same["shared"] == control["answered"]  # asked alike: its answers are the control's, paid once
    usage = control["usage"]
    assert usage["cachedShare"] > 0.5  # the second epoch asks each case's question again, byte for byte
    assert usage["cachedShare"] == pytest.approx(usage["cacheReadTokens"] / usage["inputTokens"])
    assert usage["uncachedCostUsd"] == pytest.approx(usage["costUsd"])
    markdown = (out / "experiments" / "cache" / "report.md").read_text(encoding="utf-8")
    assert f"{usage['cachedShare']:.0%} of prompt tokens cached, ${usage['costUsd']:.4f} without" in markdown
