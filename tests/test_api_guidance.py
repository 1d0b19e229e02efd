"""`bceval guidance run --adapter api`: the same conversation as the review agent, its tools over the case's
workspace and the knowledge view, against the local chat-completions server (tests/apiserver.py)."""

from __future__ import annotations

import json

import pytest
from apiserver import ChatServer
from test_guidance_live import Demo, cli

pytest.importorskip("openai", reason="the api adapter's tests need the openai package (pip install 'bceval[api]')")


@pytest.mark.parametrize("kind", ["plan", "implementation"])
def test_guidance_runs_through_the_api_loop_with_read_evidence(tmp_path, monkeypatch, capsys, kind):
    demo = Demo(tmp_path, monkeypatch, capsys)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-guidance-sentinel")
    with ChatServer({}) as server:
        for path in demo.answers[kind].glob("result-*.json"):
            document = json.loads(path.read_text())
            server.guidance[document["caseId"]] = path.read_text()
        run = tmp_path / f"run-{kind}"
        code, out, err = cli(
            capsys,
            "run",
            *demo.base(kind),
            "--adapter",
            "api",
            "--model",
            "guide",
            "--base-url",
            server.base_url,
            "--retries",
            "0",
            "--out",
            run,
        )
        assert code == 0, err
        assert out.strip() == f"Development guidance run PASSED: 4 case(s) in {run}"
        record = json.loads((run / "run.json").read_text())
        assert record["agent"]["adapter"] == "api" and record["agent"]["pinned"] is True
        assert record["usage"]["inputTokens"] == 4 * 3 * 1000
        for path in sorted((run / "transcripts").glob("*.json")):
            transcript = json.loads(path.read_text())
            reads = transcript["readEvidence"]["reads"]
            assert [read["path"] for read in reads] == ["knowledge/knowledge-index.json"] and reads[0]["complete"]
            assert transcript["readEvidence"]["runId"] == run.name
            errors = [call for call in transcript["attempts"][0]["toolCalls"] if not call["ok"]]
            assert len(errors) == 1 and "leaves the folder" in errors[0]["error"]
            files = server.requests("guide")[1]["body"]["messages"][-1]["content"].splitlines()
            assert any(f.startswith("workspace/") for f in files) and any(f.startswith("knowledge/") for f in files)
            assert not any("evaluation/" in f or "/.git/" in f for f in files)  # no expectations, no git internals
        for path in run.rglob("*"):
            if path.is_file():
                assert b"sk-guidance-sentinel" not in path.read_bytes()
