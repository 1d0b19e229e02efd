"""`--knowledge bounded` end to end: the api agent's request holds no candidate rows, a scripted reviewer finds them
with search_knowledge (paging through continuations) and reads them with get_articles, and an experiment compares
it with the embedded reviewer on the demo corpus, against the chat-completions server on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import clean_environment
from apiserver import ChatServer, answers_from, calls, final, request_of, tool_results
from cliutil import run_cli
from conftest import DEMO_CORPUS

pytest.importorskip("openai", reason="the api adapter's tests need the openai package (pip install 'bceval[api]')")

CASES = 16
BOUNDED_TOOLS = {"search_knowledge", "get_articles"}


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_environment(monkeypatch)
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    for name in ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


def seeker(server: ChatServer):
    """A reviewer that, given the bounded tools, pages through its domain's catalog, reads the articles it will cite
    (those the oracle expects that the catalog listed) and cites them; given the view's tools it is `good`."""

    def model(body: dict[str, Any]) -> Any:
        if not BOUNDED_TOOLS <= {tool["function"]["name"] for tool in body["tools"]}:
            return server.good(body)
        request = request_of(body)
        assert "candidateArticles" not in request
        case_id, results = request["cases"][0]["id"], [json.loads(text) for text in tool_results(body)]
        search = {"domain": request["knowledgeDomain"], "maxBytes": 1500}
        if not results:
            return calls(("search_knowledge", search))
        last = results[-1]
        if last["version"] == 2 and last["continuation"]:
            return calls(("search_knowledge", {**search, **last["continuation"]}))
        listed = [row["path"] for page in results if page["version"] == 2 for row in page["candidates"]]
        cited = [path for path in server.answers[case_id] if path in listed]
        if last["version"] == 2 and cited:
            return calls(("get_articles", {"paths": cited}))
        return final(case_id, cited)

    return model


@pytest.fixture
def server(oracle_answers):
    with ChatServer(answers_from(oracle_answers)) as chat:
        chat.models["seeker"] = seeker(chat)
        yield chat


def test_an_experiment_compares_a_reviewer_handed_the_candidates_with_one_that_must_find_them(tmp_path, capsys, server):
    out = tmp_path / "out"
    file = tmp_path / "knowledge.yaml"
    file.write_text(
        f"name: knowledge\ndefaults:\n  corpus: {DEMO_CORPUS}\n  adapter: api\n  model: seeker\n"
        f"  baseUrl: {server.base_url}\n  requireRead: true\n"
        "arms:\n  - name: embedded\n  - name: bounded\n    knowledge: bounded\n",
        encoding="utf-8",
    )
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out, "--jobs", "4", "--retry-wait", "0")
    assert code in (0, 1), lines + err
    report = json.loads((out / "experiments" / "knowledge" / "report.json").read_text())
    arms = {arm["name"]: arm for arm in report["arms"]}
    assert arms["embedded"]["answered"] == CASES and arms["bounded"]["answered"] == CASES
    for arm in arms.values():  # both found and read what they cited: require-read passes every case
        assert arm["summary"]["recall"]["value"] == 1.0 and arm["summary"]["clean_rate"]["value"] == 1.0
    assert report["differing"] == ["knowledge"] and arms["bounded"]["settings"]["knowledge"] == "bounded"
    assert not any("set up exactly like the control" in warning for warning in report["warnings"])
    bounded = [entry["body"] for entry in server.log if "search_knowledge" in json.dumps(entry["body"]["tools"])]
    embedded = [entry["body"] for entry in server.log if entry["body"] not in bounded]
    assert {tool["function"]["name"] for body in bounded for tool in body["tools"]} == BOUNDED_TOOLS
    assert all("candidateArticles" in request_of(body) for body in embedded)
    pages = [json.loads(text) for body in bounded for text in tool_results(body)]
    assert any(page.get("continuation") for page in pages)  # the catalog took more than one page
    assert all(len(text.encode()) <= 16000 for body in bounded for text in tool_results(body))
    transcripts = list((out / "experiments").rglob("transcripts/*.json"))
    records = [json.loads(path.read_text()) for path in transcripts]
    bodies = [r for r in records if r.get("tools") == ["search_knowledge", "get_articles"]]
    assert len(bodies) == CASES and all(r["readBy"] == "bceval" for r in bodies)
    assert any(read["complete"] for r in bodies for read in r["readEvidence"]["reads"])


def test_bounded_is_the_api_adapters_and_another_question_than_embedded(tmp_path, capsys, server):
    out = tmp_path / "out"
    base = ["answer", "--corpus", DEMO_CORPUS, "--out", out, "--adapter", "api", "--base-url", server.base_url]
    code, lines, err = run_cli(capsys, *base, "--model", "seeker", "--knowledge", "bounded", "--retry-wait", "0")
    assert code == 0, lines + err
    asked = len(server.log)
    code, lines, err = run_cli(
        capsys, "score", "--corpus", DEMO_CORPUS, "--out", out, "--run", "api-seeker", "--require-read"
    )
    assert code == 0 and lines[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8).", lines + err
    run = json.loads((out / "runs" / "api-seeker" / "run.json").read_text())
    assert run["endpoint"]["knowledge"] == "bounded"
    code, lines, err = run_cli(capsys, *base, "--model", "seeker", "--run", "again", "--knowledge", "bounded")
    assert code == 0 and len(server.log) == asked  # the same bounded question: answered from the cache
    code, lines, err = run_cli(capsys, *base, "--model", "seeker", "--run", "embedded")
    assert code == 0 and len(server.log) > asked  # embedded is another question
    command = ["answer", "--corpus", DEMO_CORPUS, "--out", out, "--adapter", "command", "--command", "true"]
    code, lines, err = run_cli(capsys, *command, "--knowledge", "bounded")
    assert code == 2 and err == ["bceval: --knowledge bounded needs --adapter api: its tools serve the knowledge"]
    code, lines, err = run_cli(capsys, *base, "--model", "seeker", "--knowledge", "sideways")
    assert code == 2 and "sideways" in err[-1]
