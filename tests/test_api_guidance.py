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
        # the guide cites the oracle's articles without ever opening one: bceval's evidence says so
        assert set(record["readEvidence"]) == set(record["reads"]["cases"]) and len(record["reads"]["cases"]) == 4
        summary = record["reads"]["summary"]
        assert summary["citationsBacked"] == 0 and summary["citations"] > 0 and summary["meanOpened"] == 0
        for reads in record["reads"]["cases"].values():
            assert reads["source"] == "bceval" and reads["opened"] == []
            assert reads["citedWithoutCompleteRead"] == reads["cited"]
        line = next(line for line in err if line.startswith("Reads: "))
        assert line.startswith(f"Reads: 0 of {summary['citations']} citations backed by a complete read (0%)")
        for path in run.rglob("*"):
            if path.is_file():
                assert b"sk-guidance-sentinel" not in path.read_bytes()


def test_a_guide_that_reads_what_it_cites_has_every_citation_backed_in_the_run_record(tmp_path, monkeypatch, capsys):
    demo = Demo(tmp_path, monkeypatch, capsys)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-guidance-sentinel")
    with ChatServer({}) as server:
        for path in demo.answers["plan"].glob("result-*.json"):
            server.guidance[json.loads(path.read_text())["caseId"]] = path.read_text()
        run = tmp_path / "run-careful"
        flags = ["--adapter", "api", "--model", "careful-guide", "--base-url", server.base_url, "--out", run]
        code, out, err = cli(capsys, "run", *demo.base("plan"), *flags)
        assert code == 0, err
    record = json.loads((run / "run.json").read_text())
    summary = record["reads"]["summary"]
    assert summary["citations"] > 0 and summary["citationsBacked"] == summary["citations"]
    assert summary["backedShare"] == 1.0 and summary["casesWithEvidence"] == 4
    for case_id, reads in record["reads"]["cases"].items():
        assert reads["opened"] == sorted(reads["cited"]) and reads["citedWithoutCompleteRead"] == []
        evidence = record["readEvidence"][case_id]
        assert evidence["readBy"] == "bceval" and evidence["readEvidence"]["runId"] == run.name
        assert all(read["complete"] for read in evidence["readEvidence"]["reads"])
    backed = f"Reads: {summary['citations']} of {summary['citations']} citations backed"
    assert any(line.startswith(backed) for line in err)


def test_only_a_complete_read_matching_the_checkouts_article_backs_a_citation(tmp_path):
    import hashlib

    from bceval.evaluators.guidance.runner import case_reads

    text = b"# an article\n"
    (tmp_path / "a").mkdir()
    for name in ("whole.md", "partial.md", "changed.md", "unread.md"):
        (tmp_path / "a" / name).write_bytes(text)
    digest = hashlib.sha256(text).hexdigest()

    def read(name, complete=True, sha=digest):
        return {"path": f"knowledge/a/{name}", "complete": complete, "bytes": len(text), "sha256": sha}

    evidence = {
        "reads": [
            {"path": "knowledge/knowledge-index.json", "complete": True, "bytes": 2, "sha256": "0"},
            read("whole.md"),
            read("partial.md", complete=False),
            read("changed.md", sha="f" * 64),  # not the article the checkout holds
            read("extra.md", complete=False),
            {"path": "workspace/app.al", "complete": True, "bytes": 1, "sha256": "0"},
        ]
    }
    cited = ["a/whole.md", "a/partial.md", "a/changed.md", "a/unread.md", "../escape.md"]
    reads = case_reads(tmp_path, evidence, cited)
    assert reads.opened == ["a/changed.md", "a/extra.md", "a/partial.md", "a/whole.md"]
    assert reads.citedWithoutCompleteRead == ["a/partial.md", "a/changed.md", "a/unread.md", "../escape.md"]
    assert reads.readNotCited == ["a/extra.md"]


def priced_demo(tmp_path, monkeypatch, capsys):
    """The demo workspaces and a price table that makes every response of the `guide` model cost 0.001 USD."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-guidance-sentinel")
    prices = tmp_path / "prices.yaml"
    prices.write_text("prices:\n  guide: {input: 1, output: 0}\n", encoding="utf-8")  # 1,000 input tokens each
    return Demo(tmp_path, monkeypatch, capsys), prices


def guide_server(demo: Demo) -> ChatServer:
    """The chat server, its `guide` model answering the demo's plan cases as the oracle does."""
    server = ChatServer({})
    for path in demo.answers["plan"].glob("result-*.json"):
        server.guidance[json.loads(path.read_text())["caseId"]] = path.read_text()
    return server


def test_an_experiments_budget_stops_whole_guidance_runs_and_a_larger_one_runs_only_the_rest(
    tmp_path, monkeypatch, capsys
):
    from cliutil import run_cli

    demo, prices = priced_demo(tmp_path, monkeypatch, capsys)
    with guide_server(demo) as server:

        def run(budget: str) -> dict:
            file = tmp_path / "g.yaml"
            file.write_text(
                f"name: g\nmaxCost: {budget}\nepochs: 2\ndefaults:\n  corpus: {demo.knowledge}\n  evaluator: plan\n"
                f"  workspaceMap: {demo.dir / 'workspace-map.plan.json'}\n  adapter: api\n  model: guide\n"
                f"  baseUrl: {server.base_url}\narms:\n  - name: a\n  - name: b\n",
                encoding="utf-8",
            )
            code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", tmp_path / "out", "--prices", prices)
            assert code in (0, 1), lines + err
            return json.loads((tmp_path / "out" / "experiments" / "g" / "report.json").read_text())

        report = run("0.01")  # one run of 4 cases x 3 responses costs 0.012: the other three never start
        assert len(server.requests("guide")) == 12
        arms = {arm["name"]: arm for arm in report["arms"]}
        assert arms["a"]["answered"] == 4 and arms["a"]["notStarted"] == 4 and arms["b"]["notStarted"] == 8
        assert report["partial"] is True and report["budget"]["reached"] is True
        assert report["budget"]["knownCost"] == pytest.approx(0.012)

        report = run("1")
        assert len(server.requests("guide")) == 4 * 12  # the three runs not started, and no other
        assert report["partial"] is False and all(arm["notStarted"] == 0 for arm in report["arms"])
        assert report["budget"]["knownCost"] == pytest.approx(0.048)


def test_a_guidance_runs_budget_starts_no_case_once_reached_and_leaves_the_run_unscored(tmp_path, monkeypatch, capsys):
    demo, prices = priced_demo(tmp_path, monkeypatch, capsys)
    with guide_server(demo) as server:
        api = ["--adapter", "api", "--model", "guide", "--base-url", server.base_url, "--retries", "0"]

        # each case costs 3 responses = 0.003 USD: the second brings the known cost to 0.006, past 0.005
        run = tmp_path / "run-budget"
        code, out, err = cli(
            capsys, "run", *demo.base("plan"), *api, "--prices", prices, "--max-cost", "0.005", "--out", run
        )
        assert code == 1 and out == ""
        assert len(server.requests("guide")) == 6
        (line,) = [line for line in err if "FAILED" in line]
        assert "not started: the run's known cost 0.0060 USD reached --max-cost 0.005" in line
        assert "2 of 4 case(s) answered, so the run is partial and unscored" in line
        assert not (run / "run.json").exists() and len(list((run / "results").glob("*.json"))) == 2

        # no price for the model and no cost in the responses: said before the run, and once when the first comes
        run = tmp_path / "run-unpriced"
        code, out, err = cli(capsys, "run", *demo.base("plan"), *api, "--max-cost", "0.005", "--out", run)
        assert code == 0, err
        assert out.strip() == f"Development guidance run PASSED: 4 case(s) in {run}"
        up_front = [line for line in err if line.startswith("bceval: warning: --max-cost 0.005 cannot be enforced")]
        per_answer = [line for line in err if "an answer reported no cost" in line]
        assert len(up_front) == 1 and len(per_answer) == 1
