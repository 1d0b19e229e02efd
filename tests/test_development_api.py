"""`bceval development run --adapter api`: bceval's own agent in the copy, against the local chat-completions
server (tests/apiserver.py) with scripted models. It reads with the read-only tools, writes with write_file and
edit_file, and every write path that leaves the copy is refused, recorded, and never written. Knowledge recall and
precision come from bceval's read evidence, and a knowledge entry without a complete read fails its case (§11.8)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from apiserver import ChatServer, calls
from conftest import DEMO_CORPUS
from development_util import passing_report
from test_development_run import RATING, assert_schemas, one_case

from bceval.cli import main

pytest.importorskip("openai", reason="the api adapter's tests need the openai package (pip install 'bceval[api]')")

CHECKS_DIR = DEMO_CORPUS / "evaluation"
GOOD = CHECKS_DIR / "development-demo" / "patches" / RATING / "good" / "src"
REQUIRED = [
    "microsoft/knowledge/ui/tooltips-on-page-fields.md",
    "microsoft/knowledge/ui/set-applicationarea-on-controls.md",
]
CASE_ID = "case-" + hashlib.sha256(RATING.encode()).hexdigest()[:8]
RATING_LINE = (
    "        field(3; Rating; Integer) { MinValue = 0; MaxValue = 5; "
    "ToolTip = 'Specifies the courier rating from 0 to 5.'; }\n"
)
NAME_LINE = "        field(2; Name; Text[100]) { ToolTip = 'Specifies the courier name.'; }\n"


def report(knowledge: list[str]) -> dict:
    """An honest report of the known-good patch (the controlled passing report, fitted to this case)."""
    document = passing_report({"expectedKind": "feature", "requiredKnowledge": knowledge})
    document["changes"] = [
        {"path": "src/Courier.Table.al", "action": "modified", "purpose": "the Rating field"},
        {"path": "src/CourierList.Page.al", "action": "modified", "purpose": "the Rating control"},
    ]
    return document


def the_patch() -> dict:
    """The known-good patch through both write tools: an edit of the table, the whole page written anew."""
    return calls(
        ("edit_file", {"path": "workspace/src/Courier.Table.al", "old": NAME_LINE, "new": NAME_LINE + RATING_LINE}),
        (
            "write_file",
            {"path": "workspace/src/CourierList.Page.al", "content": (GOOD / "CourierList.Page.al").read_text()},
        ),
    )


def develop(tmp_path: Path, capsys, monkeypatch, script: list[dict], *extra: str):
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-development-sentinel")
    out = tmp_path / "run"
    with ChatServer({}) as server:
        server.authors[CASE_ID] = script
        args = ["development", "run", "--root", str(DEMO_CORPUS), "--out", str(out), "--adapter", "api"]
        args += ["--model", "author", "--base-url", server.base_url, *one_case(tmp_path), *extra]
        code = main(args)
        log = server.requests("author")
    printed = capsys.readouterr()
    return code, printed.out, printed.err, out, log


def case_files(out: Path) -> tuple[dict, dict, dict]:
    folder = out / "development" / CASE_ID
    verdict = json.loads((folder / "verdict.json").read_text())
    evidence = json.loads((folder / "evidence.json").read_text())
    transcript = json.loads((out / "transcripts" / f"{CASE_ID}.json").read_text())
    return verdict, evidence, transcript


def test_a_good_author_reads_then_writes_the_known_good_patch_and_passes_the_gates(tmp_path, capsys, monkeypatch):
    reads = calls(
        ("list_files", {}),
        *[("read_file", {"path": f"knowledge/{p}"}) for p in REQUIRED],
        ("read_file", {"path": "workspace/src/Courier.Table.al"}),
    )
    script = [reads, the_patch(), {"content": json.dumps(report(REQUIRED))}]
    code, printed, err, out, log = develop(tmp_path, capsys, monkeypatch, script)
    assert code == 0, printed + err
    assert printed.splitlines()[-1].startswith("Development run PASSED: 1 passed, 0 failed, 0 error(s)")
    verdict, evidence, transcript = case_files(out)
    assert verdict["verdict"] == "pass" and verdict["gatesPassed"] and verdict["problems"] == []
    assert verdict["measures"] == {
        "knowledgeRecall": 1.0,
        "knowledgePrecision": 1.0,
        "knowledgeEvidence": "read",
        "claimedKnowledgeRecall": 1.0,
        "claimedKnowledgePrecision": 1.0,
    }
    # the diff is the good patch, byte for byte
    folder = out / "development" / CASE_ID
    assert json.loads((folder / "changed-paths.json").read_text()) == [
        "src/Courier.Table.al",
        "src/CourierList.Page.al",
    ]
    patch = (folder / "diff.patch").read_text()
    assert (
        "+" + RATING_LINE in patch and "+                field(Rating; Rec.Rating) { ApplicationArea = All; }" in patch
    )
    # bceval's read evidence: the two articles, complete, with the live bytes; keyed by the run and the request
    record = evidence["readEvidence"]
    assert record["runId"] == "run"
    assert record["requestSha256"] == hashlib.sha256((folder / "request.json").read_bytes()).hexdigest()
    assert [r["path"] for r in record["reads"]] == sorted(REQUIRED)
    for read in record["reads"]:
        live = (DEMO_CORPUS / read["path"]).read_bytes()
        assert read["complete"] and read["bytes"] == len(live) and read["sha256"] == hashlib.sha256(live).hexdigest()
    assert [w["path"] for w in transcript["writes"]] == [
        "workspace/src/Courier.Table.al",
        "workspace/src/CourierList.Page.al",
    ]
    assert transcript["answeredBy"]["adapter"] == "api" and transcript["readBy"] == "bceval"
    assert transcript["usage"]["inputTokens"] == 3 * 1000
    # the model saw both folders (and no answer key, no git internals) and the write tools
    listed = log[1]["body"]["messages"][3]["content"].splitlines()
    assert "workspace/src/Courier.Table.al" in listed and f"knowledge/{REQUIRED[0]}" in listed
    assert not any(f.startswith("knowledge/evaluation/") or "/.git/" in f for f in listed)
    assert {t["function"]["name"] for t in log[0]["body"]["tools"]} >= {"read_file", "write_file", "edit_file"}
    assert_schemas(out)
    for path in out.rglob("*"):
        if path.is_file():
            assert b"sk-development-sentinel" not in path.read_bytes()


def test_claimed_knowledge_it_never_read_fails_the_read_evidence_check(tmp_path, capsys, monkeypatch):
    script = [
        calls(("read_file", {"path": f"knowledge/{REQUIRED[0]}"})),
        the_patch(),
        {"content": json.dumps(report(REQUIRED))},
    ]
    code, printed, _, out, _ = develop(tmp_path, capsys, monkeypatch, script)
    assert code == 1
    verdict, _, _ = case_files(out)
    assert verdict["verdict"] == "fail" and verdict["gatesPassed"]
    assert verdict["problems"] == [f"{RATING}: no complete read evidence for knowledge entry '{REQUIRED[1]}'."]
    measures = verdict["measures"]
    assert measures["knowledgeEvidence"] == "read" and measures["knowledgeRecall"] == 0.5
    assert measures["knowledgePrecision"] == 0.5 and measures["claimedKnowledgeRecall"] == 1.0
    assert f"  - {RATING}: no complete read evidence for knowledge entry '{REQUIRED[1]}'." in printed


def test_writes_outside_the_copy_are_refused_recorded_and_never_written(tmp_path, capsys, monkeypatch):
    # a starting repository with a link out of it, so a write through the link would land outside
    outside = tmp_path / "outside"
    outside.mkdir()
    start = tmp_path / "start"
    shutil.copytree(CHECKS_DIR / "development-workspaces" / RATING, start)
    (start / "escape").symlink_to(outside, target_is_directory=True)
    (tmp_path / "map.json").write_text(json.dumps({RATING: str(start)}))
    corpus_before = {p: p.read_bytes() for p in DEMO_CORPUS.rglob("*") if p.is_file()}
    attempts = [
        "workspace/../outside/escaped.txt",
        str(outside / "absolute.txt"),
        "workspace/escape/through-link.txt",
        f"knowledge/{REQUIRED[0]}",
        "workspace/.git/hooks/post-commit",
    ]
    script = [
        calls(*[("write_file", {"path": p, "content": "escaped\n"}) for p in attempts]),
        calls(("edit_file", {"path": f"knowledge/{REQUIRED[0]}", "old": "a", "new": "b"})),
        calls(*[("read_file", {"path": f"knowledge/{p}"}) for p in REQUIRED]),
        the_patch(),
        {"content": json.dumps(report(REQUIRED))},
    ]
    code, printed, err, out, log = develop(
        tmp_path, capsys, monkeypatch, script, "--workspace-map", str(tmp_path / "map.json")
    )
    assert code == 0, printed + err
    assert list(outside.iterdir()) == []
    assert {p: p.read_bytes() for p in DEMO_CORPUS.rglob("*") if p.is_file()} == corpus_before
    verdict, evidence, transcript = case_files(out)
    assert evidence["refusedOutside"] == [*attempts, f"knowledge/{REQUIRED[0]}"]
    assert f"{RATING}: 6 write(s) outside the copy were refused and not written." in verdict["diagnostics"]
    refused = [c for c in transcript["toolCalls"] if not c["ok"]]
    assert len(refused) == 6 and transcript["refused"] == 6
    assert "leaves workspace/" in refused[0]["error"] and "absolute" in refused[1]["error"]
    assert "link" in refused[2]["error"] and "read-only" in refused[3]["error"] and ".git" in refused[4]["error"]
    # the model was told each time (the tool results of the first turn are errors)
    results = [m["content"] for m in log[1]["body"]["messages"] if m["role"] == "tool"]
    assert len(results) == 5 and all(r.startswith("error: ") for r in results)
    assert json.loads((out / "development" / CASE_ID / "changed-paths.json").read_text()) == [
        "src/Courier.Table.al",
        "src/CourierList.Page.al",
    ]
    assert json.loads((out / "run.json").read_text())["knowledgeCheckout"]["unchanged"]


def test_the_api_adapter_is_opt_in_and_checked_before_any_copy(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("BCEVAL_LIVE", raising=False)
    out = tmp_path / "run"
    code = main(
        [
            "development",
            "run",
            "--root",
            str(DEMO_CORPUS),
            "--out",
            str(out),
            "--adapter",
            "api",
            "--model",
            "m",
            *one_case(tmp_path),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "BCEVAL_LIVE=1" in err
    assert not (out / "development").exists()
