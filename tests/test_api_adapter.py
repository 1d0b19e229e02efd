"""bceval's own `api` agent, end to end through the real CLI and the real `openai` client, against a
chat-completions server on 127.0.0.1 with scripted models (tests/apiserver.py). No model is ever called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents import clean_environment
from apiserver import SERVED_SUFFIX, ChatServer, answers_from
from cliutil import run_cli
from conftest import DEMO_CORPUS, SHARED_CORPUS

pytest.importorskip("openai", reason="the api adapter's tests need the openai package (pip install 'bceval[api]')")

KEY = "sk-sentinel-0f9e8d7c6b5a4321"  # planted: it must never appear in any file under out/ or in any output
CASES = 16


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_environment(monkeypatch)
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for name in ("OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(oracle_answers):
    with ChatServer(answers_from(oracle_answers)) as chat:
        chat.corpus = str(DEMO_CORPUS)
        yield chat


def prepare(capsys, out: Path, corpus: Path = DEMO_CORPUS) -> list[str]:
    code, lines, err = run_cli(capsys, "prepare", "--corpus", corpus, "--out", out)
    assert code == 0, lines + err
    return sorted(p.stem.removeprefix("request-") for p in (out / "review").glob("request-case-*.json"))


def answer(capsys, out: Path, server: ChatServer, model: str, *flags, corpus: Path = DEMO_CORPUS):
    base = ["answer", "--corpus", corpus, "--out", out, "--adapter", "api", "--base-url", server.base_url]
    return run_cli(capsys, *base, "--model", model, "--retry-wait", "0", *flags)


def score(capsys, out: Path, model: str, *flags, corpus: Path = DEMO_CORPUS):
    return run_cli(capsys, "score", "--corpus", corpus, "--out", out, "--adapter", "api", "--model", model, *flags)


def run_dir(out: Path, model: str) -> Path:
    return out / "runs" / f"api-{model}"


def results(out: Path, model: str) -> dict[str, dict]:
    folder = run_dir(out, model) / "results"
    return {p.stem.removeprefix("result-"): json.loads(p.read_text()) for p in folder.glob("result-case-*.json")}


def infra(out: Path, model: str) -> dict[str, dict]:
    folder = run_dir(out, model) / "results"
    return {p.stem.removeprefix("infra-"): json.loads(p.read_text()) for p in folder.glob("infra-case-*.json")}


def transcript(out: Path, model: str, model_id: str) -> dict:
    return json.loads((run_dir(out, model) / "transcripts" / f"{model_id}.json").read_text(encoding="utf-8"))


def no_key_anywhere(out: Path, *texts) -> None:
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    for text in texts:
        assert KEY not in "\n".join(map(str, text))


def test_a_good_reviewer_reads_its_candidates_cites_what_it_read_and_passes(tmp_path, capsys, server):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    code, lines, err = answer(capsys, out, server, "good", "--jobs", "4")
    assert code == 0, lines + err
    answered = results(out, "good")
    assert sorted(answered) == ids and infra(out, "good") == {}
    for model_id, document in answered.items():
        assert document["answeredBy"]["adapter"] == "api"
        assert document["answeredBy"]["model"] == "good"
        assert document["answeredBy"]["servedModel"] == "good" + SERVED_SUFFIX
        assert document["answeredBy"]["pinned"] is True
        record = document["record"]
        evidence = record["readEvidence"]
        assert list(evidence) == ["runId", "questionSha256", "reads"] and evidence["runId"] == "api-good"
        cited = {f["id"] for f in document["cases"][0]["findings"]}
        complete = {read["path"] for read in evidence["reads"] if read["complete"]}
        assert cited <= complete
        for read in evidence["reads"]:  # bytes and hash are those of the file as it is in the corpus
            data = (DEMO_CORPUS / read["path"]).read_bytes()
            assert read["bytes"] == len(data)
        assert transcript(out, "good", model_id)["readEvidence"] == evidence
    code, lines, err = score(capsys, out, "good", "--require-read")
    assert code == 0, lines + err
    assert lines[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."
    # every request named the model and carried the tools; none asked for a shell or a write
    for entry in server.requests("good"):
        assert entry["body"]["model"] == "good"
        assert {tool["function"]["name"] for tool in entry["body"]["tools"]} == {"list_files", "read_file", "search"}
    no_key_anywhere(out, lines, err)


def test_a_lazy_reviewer_passes_without_require_read_and_fails_with_it_naming_case_and_article(
    tmp_path, capsys, server
):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, lines, err = answer(capsys, out, server, "lazy", "--jobs", "4")
    assert code == 0, lines + err
    code, lines, err = score(capsys, out, "lazy")
    assert code == 0 and lines[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8).", lines + err
    report = json.loads((run_dir(out, "lazy") / "score.json").read_text())
    summary = report["readEvidence"]
    assert summary["casesWithEvidence"] == CASES and summary["citations"] == 8 and summary["citationsBacked"] == 0
    assert summary["backedShare"] == 0 and summary["meanOpened"] == 0 and summary["requireRead"] is False
    card = json.loads((run_dir(out, "lazy") / "scorecard.json").read_text())
    assert card["readEvidence"] == summary
    markdown = (run_dir(out, "lazy") / "scorecard.md").read_text()
    assert "- Reads: 0 of 8 citations backed by a complete read (0%); 0.0 articles opened per case" in markdown
    positive = next(case for case in report["cases"] if case["kind"] == "positive")
    assert positive["reads"]["citedWithoutCompleteRead"] == positive["findings"] and positive["reads"]["opened"] == []

    code, lines, err = score(capsys, out, "lazy", "--require-read")
    assert code == 1
    text = "\n".join(lines + err)
    assert "Review evaluation FAILED" in text
    report = json.loads((run_dir(out, "lazy") / "score.json").read_text())
    for case in report["cases"]:
        if case["kind"] == "positive":
            assert case["passed"] is False
            assert f"{case['id']}: cited {case['findings'][0]} without reading it" in text
        else:
            assert case["passed"] is True  # nothing cited, nothing unbacked
    assert report["recall"] == 0 and report["readEvidence"]["requireRead"] is True


def test_a_budget_stops_the_run_half_way_and_a_larger_one_answers_only_the_rest(tmp_path, capsys, server):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    # the "priced" endpoint reports 0.002 USD per response; one response per case
    code, lines, err = answer(capsys, out, server, "priced", "--max-cost", "0.016")
    assert code == 0, lines + err
    assert any("--max-cost 0.016 cannot be enforced before answers report a cost" in line for line in err)
    answered, skipped = results(out, "priced"), infra(out, "priced")
    assert len(answered) == 8 and len(skipped) == 8 and set(answered) | set(skipped) == set(ids)
    assert all(record["kind"] == "budget" and record["attempts"] == 0 for record in skipped.values())
    assert sum(": not started (budget);" in line for line in err) == 8
    assert "8 not started (budget)" in lines[-1] and "infrastructure failure" not in lines[-1]
    assert len(server.requests("priced")) == 8
    code, lines, err = score(capsys, out, "priced")
    assert code == 1
    report = json.loads((run_dir(out, "priced") / "score.json").read_text())
    assert report["partial"] is True and report["notStarted"] == 8 and report["infrastructureFailures"] == 0
    assert sum(case["notAnswered"] == "budget" for case in report["cases"] if "notAnswered" in case) == 8
    assert any("not answered (budget)" in line for line in lines + err)
    card = json.loads((run_dir(out, "priced") / "scorecard.json").read_text())
    assert card["usage"]["costUsd"] == pytest.approx(0.016)

    code, lines, err = answer(capsys, out, server, "priced", "--max-cost", "1")
    assert code == 0, lines + err
    assert len(server.requests("priced")) == 16  # only the 8 not started were asked
    assert len(results(out, "priced")) == 16 and infra(out, "priced") == {}
    code, lines, err = score(capsys, out, "priced")
    assert code == 0 and lines[-1].startswith("Review evaluation PASSED"), lines + err
    card = json.loads((run_dir(out, "priced") / "scorecard.json").read_text())
    assert card["usage"]["costUsd"] == pytest.approx(0.032) and card["usage"]["costKnown"] == 16


def one_case(out: Path, kind: str = "positive") -> str:
    """The manifest id of one case of the demo corpus (a positive one, or a clean control)."""
    cases = json.loads((out / ".build" / "review" / "cases.json").read_text())["cases"]
    return next(case["id"] for case in cases if bool(case["expected"]) == (kind == "positive"))


def test_a_cheat_asking_outside_its_view_gets_tool_errors_recorded_and_finds_nothing(tmp_path, capsys, server):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    code, lines, err = answer(capsys, out, server, "cheat", "--jobs", "4")
    assert code == 0, lines + err
    for model_id in ids:
        record = transcript(out, "cheat", model_id)
        calls = record["attempts"][0]["toolCalls"]
        errors = [call["error"] for call in calls if not call["ok"]]
        assert len(errors) == 4 and record["attempts"][0]["refused"] == 4
        assert "leaves the folder" in errors[0]
        assert "is absolute" in errors[1] and "is absolute" in errors[2]
        assert "does not exist" in errors[3]
        assert record["readEvidence"]["reads"] == []  # nothing was read, nothing outside the view was opened
    # what the model was sent back: errors, never a byte of the manifest or of /etc/passwd
    for entry in server.requests("cheat"):
        for message in entry["body"]["messages"]:
            if message["role"] == "tool":
                assert "minimumExpectedRecall" not in message["content"] and "root:" not in message["content"]
    code, lines, err = score(capsys, out, "cheat")
    assert code == 1
    report = json.loads((run_dir(out, "cheat") / "score.json").read_text())
    assert report["recall"] == 0 and report["cleanRate"] == 1


def test_429_storms_wait_as_retry_after_says_halve_concurrency_and_every_case_is_answered(tmp_path, capsys, server):
    out = tmp_path / "out"
    ids = prepare(capsys, out)
    server.storm = 40
    code, lines, err = answer(capsys, out, server, "storm", "--jobs", "8", "--retries", "0")
    assert code == 0, lines + err
    assert sorted(results(out, "storm")) == ids and infra(out, "storm") == {}
    waits = [w for model_id in ids for w in transcript(out, "storm", model_id)["attempts"][0]["waits"]]
    limited = [w for w in waits if w["reason"] == "http-429"]
    assert len(limited) == 40
    assert all(w["retryAfter"] == 0.05 and w["seconds"] == 0.05 for w in limited)
    assert min(w["concurrency"] for w in limited) == 1  # halved down to one request in flight
    assert max(w["concurrency"] for w in limited) <= 4  # the first 429 already halved the --jobs 8
    document = results(out, "storm")[ids[0]]
    assert set(document["record"]["waits"]) == {"retries", "rateLimited", "waitedSeconds"}
    code, lines, err = score(capsys, out, "storm")
    assert code == 0, lines + err
    code, lines, err = run_cli(capsys, "runs", "--out", out)
    assert code == 0
    row = next(line for line in lines if line.startswith("| api-storm "))
    assert "40 rate-limited" in "\n".join(lines) and row


def test_malformed_tool_calls_are_errors_the_model_sees_and_it_can_recover(tmp_path, capsys, server):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, lines, err = answer(capsys, out, server, "malformed", "--case", one_case(out))
    assert code == 0, lines + err
    ((model_id, document),) = results(out, "malformed").items()
    calls = transcript(out, "malformed", model_id)["attempts"][0]["toolCalls"]
    assert [call["ok"] for call in calls] == [False, False, False]
    assert "not a JSON object" in calls[0]["error"] and "no tool 'delete_everything'" in calls[1]["error"]
    assert "path must be" in calls[2]["error"]
    second = server.requests("malformed")[1]["body"]["messages"]
    assert [m["content"][:6] for m in second if m["role"] == "tool"] == ["error:"] * 3


@pytest.mark.parametrize(
    ("model", "flags", "kind", "detail", "attempts"),
    [
        ("prose", ["--retries", "1"], "invalid-output", "holds no JSON object", 2),
        ("loop", ["--max-turns", "10", "--retries", "0"], "agent-error", "within 10 turns (--max-turns)", 1),
        ("slow", ["--timeout", "1", "--retries", "0"], "timeout", "no answer within 1 s", 1),
        # a plain-HTTP endpoint's client follows no redirect: it would lead to a host whose TLS it does not check
        ("redirect", ["--retries", "0"], "agent-error", "the endpoint answered HTTP 307", 1),
    ],
)
def test_answers_that_never_come_are_infrastructure_failures(
    tmp_path, capsys, server, model, flags, kind, detail, attempts
):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, lines, err = answer(capsys, out, server, model, "--case", one_case(out), *flags)
    assert code == 1, lines + err  # no case was answered: every one it asked failed
    ((model_id, record),) = infra(out, model).items()
    assert record["kind"] == kind and detail in record["detail"] and record["attempts"] == attempts
    assert results(out, model) == {}
    assert any("1 infrastructure failure(s)" in line for line in lines + err), lines + err
    if model == "redirect":
        assert len(server.requests("redirect")) == 1
    if model == "loop":  # ten responses of 100 tool calls each: 1,000 calls, at most 32 answered per turn
        assert len(server.requests("loop")) == 10
        calls = transcript(out, model, model_id)["attempts"][0]["toolCalls"]
        assert len(calls) == 1000 and sum(call["ok"] for call in calls) == 320


def test_an_endpoint_without_structured_output_is_read_by_the_strict_parser(tmp_path, capsys, server):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, lines, err = answer(capsys, out, server, "nostruct", "--case", one_case(out))
    assert code == 0, lines + err
    ((model_id, _),) = results(out, "nostruct").items()
    attempt = transcript(out, "nostruct", model_id)["attempts"][0]
    assert attempt["structuredOutput"] is False
    bodies = [entry["body"] for entry in server.requests("nostruct")]
    assert ["response_format" in body for body in bodies] == [True, False]


def test_the_api_key_never_reaches_a_file_or_an_output_even_when_the_server_echoes_it(tmp_path, capsys, server):
    out = tmp_path / "out"
    prepare(capsys, out)
    code, lines, err = answer(capsys, out, server, "leaky", "--case", one_case(out), "--retries", "1")
    assert code == 0, lines + err
    ((model_id, _),) = results(out, "leaky").items()
    attempts = transcript(out, "leaky", model_id)["attempts"]
    assert attempts[0]["outcome"] == "agent-error" and "[api key]" in attempts[0]["detail"]
    assert "[api key]" in attempts[1]["turns"][0]["content"]
    assert all(entry["headers"]["authorization"] == f"Bearer {KEY}" for entry in server.requests("leaky"))
    code, lines2, err2 = score(capsys, out, "leaky")
    no_key_anywhere(out, lines, err, lines2, err2)


def test_cost_is_unknown_without_a_report_or_a_price_and_comes_from_the_price_table(tmp_path, capsys, server):
    out = tmp_path / "out"
    prepare(capsys, out)
    case = one_case(out)
    code, lines, err = answer(capsys, out, server, "lazy", "--case", case)
    assert code == 0, lines + err
    ((model_id, document),) = results(out, "lazy").items()
    usage = document["record"]["usage"]
    assert usage["costUsd"] is None and usage["inputTokens"] == 1000 and usage["outputTokens"] == 100
    assert usage["cacheReadTokens"] == 200 and usage["turns"] == 1
    prices = tmp_path / "prices.yaml"
    prices.write_text("prices:\n  lazy: {input: 2.5, output: 10, cached-input: 1.25}\n", encoding="utf-8")
    code, lines, err = answer(capsys, out, server, "lazy", "--case", case, "--prices", prices, "--epoch", "2")
    assert code == 0, lines + err
    document = json.loads(next((out / "runs" / "api-lazy-e2" / "results").glob("result-*.json")).read_text())
    # 800 input tokens at 2.5, 200 cached at 1.25, 100 output at 10, per million
    assert document["record"]["usage"]["costUsd"] == pytest.approx((800 * 2.5 + 200 * 1.25 + 100 * 10) / 1e6)


@pytest.mark.parametrize(
    ("flags", "env", "expected"),
    [
        ([], {"BCEVAL_LIVE": None}, "opt-in: set BCEVAL_LIVE=1"),
        (["--model", ""], {}, "needs --model"),
        ([], {"OPENAI_API_KEY": None}, "$OPENAI_API_KEY, which is not set"),
        (["--api-key-env", "MY_KEY"], {}, "$MY_KEY, which is not set"),
        (["--sandbox", "bwrap"], {}, "takes neither --sandbox nor --isolation none"),
        (["--prices", "no-such-prices.yaml"], {}, "price file not found"),
        (["--temperature", "3"], {}, "--temperature must be at least 0 and at most 2"),
        ([], {"openai": None}, "pip install 'bceval[api]'"),
    ],
)
def test_refusals_are_one_line_exit_2_and_write_nothing(tmp_path, capsys, server, monkeypatch, flags, env, expected):
    import sys

    out = tmp_path / "out"
    prepare(capsys, out)
    for name, value in env.items():
        if name == "openai":
            monkeypatch.setitem(sys.modules, "openai", None)  # as if the extra were not installed
        elif value is None:
            monkeypatch.delenv(name, raising=False)
    model = next((flags[i + 1] for i, flag in enumerate(flags) if flag == "--model"), "good")
    rest = [flag for i, flag in enumerate(flags) if flag != "--model" and (i == 0 or flags[i - 1] != "--model")]
    monkeypatch.chdir(tmp_path)
    code, lines, err = answer(capsys, out, server, model, *rest)
    assert code == 2 and lines == [] and len(err) == 1 and expected in err[0], err
    assert not (out / "runs").exists() and server.log == []


def test_price_tables_and_require_read_come_from_pyproject_too(tmp_path, capsys, server, monkeypatch):
    out = tmp_path / "out"
    prepare(capsys, out)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.bceval]\nrequire_read = true\n\n[tool.bceval.prices."lazy"]\ninput = 1.0\noutput = 2.0\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    code, lines, err = answer(capsys, out, server, "lazy", "--case", one_case(out), "--max-cost", "5")
    assert code == 0, lines + err
    assert not any("cannot be enforced" in line for line in err)  # the table prices the model
    ((_, document),) = results(out, "lazy").items()
    assert document["record"]["usage"]["costUsd"] == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)
    code, lines, err = score(capsys, out, "lazy")
    assert code == 1 and any("without reading it" in line for line in lines + err)


def test_a_rerun_answers_from_the_cache_and_another_temperature_is_another_question(tmp_path, capsys, server):
    out = tmp_path / "out"
    prepare(capsys, out)
    case = one_case(out)
    assert answer(capsys, out, server, "good", "--case", case)[0] == 0
    asked = len(server.log)
    code, lines, err = answer(capsys, out, server, "good", "--case", case, "--run", "again")
    assert code == 0 and len(server.log) == asked and "1 from the cache" in lines[-1], lines + err
    ((_, document),) = results(out, "good").items()
    ((_, again),) = {p.stem: json.loads(p.read_text()) for p in (out / "runs/again/results").glob("*.json")}.items()
    assert again["record"]["readEvidence"]["reads"] == document["record"]["readEvidence"]["reads"]
    assert again["record"]["readEvidence"]["runId"] == "again" and again["record"]["cached"] is True
    code, lines, err = answer(capsys, out, server, "good", "--case", case, "--run", "warm", "--temperature", "0.7")
    assert code == 0 and len(server.log) > asked and "1 answered now" in lines[-1], lines + err
    assert all(entry["body"].get("temperature") == 0.7 for entry in server.log[asked:])
    code, lines, err = answer(capsys, out, server, "good", "--case", case, "--temperature", "0.7")
    assert code == 2 and "answered with another endpoint" in err[0]  # a run keeps its settings


def test_an_experiment_compares_two_models_with_the_same_knowledge_and_require_read(tmp_path, capsys, server):
    out = tmp_path / "out"
    file = tmp_path / "models.yaml"
    file.write_text(
        f"name: models\nmaxCost: 10\ndefaults:\n  corpus: {DEMO_CORPUS}\n  adapter: api\n  baseUrl: {server.base_url}\n"
        "  requireRead: true\narms:\n  - name: careful\n    model: good\n  - name: guessing\n"
        "    model: lazy\n",
        encoding="utf-8",
    )
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out, "--jobs", "4", "--retry-wait", "0")
    assert code in (0, 1), lines + err
    report = json.loads((out / "experiments" / "models" / "report.json").read_text())
    arms = {arm["name"]: arm for arm in report["arms"]}
    assert arms["careful"]["answered"] == CASES and arms["guessing"]["answered"] == CASES
    recall = {name: arm["summary"]["recall"]["value"] for name, arm in arms.items()}
    assert recall == {"careful": 1.0, "guessing": 0.0}  # the guesses were right, but never read
    assert arms["guessing"]["summary"]["clean_rate"]["value"] == 1.0
    assert arms["careful"]["settings"]["requireRead"] is True and "model" in report["differing"]
    assert {entry["body"]["model"] for entry in server.log} == {"good", "lazy"}


@pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason=f"needs the public BCQuality corpus at {SHARED_CORPUS}")
def test_a_good_reviewer_passes_the_gate_on_the_shared_corpus_with_require_read(tmp_path, capsys, monkeypatch):
    from cliutil import main

    oracle = tmp_path / "oracle"
    assert main(["answer", "--corpus", str(SHARED_CORPUS), "--out", str(oracle), "--adapter", "oracle"]) == 0
    capsys.readouterr()
    with ChatServer(answers_from(oracle / "runs" / "oracle" / "results")) as chat:
        out = tmp_path / "out"
        prepare(capsys, out, SHARED_CORPUS)
        code, lines, err = answer(capsys, out, chat, "good", "--jobs", "8", corpus=SHARED_CORPUS)
        assert code == 0, lines + err
        code, lines, err = score(capsys, out, "good", "--require-read", corpus=SHARED_CORPUS)
        assert code == 0 and lines[-1].startswith("Review evaluation PASSED"), lines + err
        summary = json.loads((run_dir(out, "good") / "score.json").read_text())["readEvidence"]
        assert summary["backedShare"] == 1 and summary["casesWithEvidence"] == 32
        no_key_anywhere(out, lines, err)


def test_a_thread_keeps_one_client_per_endpoint_address_and_key_across_runs():
    import random
    import threading

    from bceval.agents.api import Endpoint
    from bceval.agents.settings import EndpointSettings

    def endpoint(base_url: str, key: str = KEY) -> Endpoint:
        settings = EndpointSettings(base_url=base_url, jobs=4)
        return Endpoint(settings, "good", {"OPENAI_API_KEY": key}, lambda _: None, random.Random(0), 0.0)

    first, second = endpoint("http://127.0.0.1:9/v1"), endpoint("http://127.0.0.1:9/v1")  # two runs, one server
    assert first.client is second.client  # one connection pool for this thread, not one per run
    assert endpoint("http://127.0.0.1:8/v1").client is not first.client
    assert endpoint("http://127.0.0.1:9/v1", key="sk-another-key-0123456789").client is not first.client
    other: list = []
    thread = threading.Thread(target=lambda: other.append(first.client))
    thread.start()
    thread.join()
    assert other[0] is not first.client  # each thread its own: a shared pool is one lock for them all
