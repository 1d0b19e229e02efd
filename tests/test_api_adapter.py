"""bceval's own `api` agent, end to end through the real CLI and the real `openai` client, against a
chat-completions server on 127.0.0.1 with scripted models (tests/apiserver.py). No model is ever called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents import clean_environment
from apiserver import SERVED_SUFFIX, ChatServer, answers_from
from cliutil import run_cli
from conftest import DEMO_CORPUS

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
