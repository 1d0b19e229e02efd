"""The viewer without a browser: which pages it writes, that hostile text is escaped in every one of them, that
stale pages go, that `doit view` is a no-op until an input changes; the live agent's prompts kept once per run;
and the CI outputs (JUnit XML, the job summary)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from agents import clean_environment
from viewer_site import FLAKY_CASE, IMG, PAYLOAD_CASE, SCRIPT, TITLE_PAYLOAD

from bceval.cli import main
from bceval.layout import OutDir, RunDir
from bceval.scorecard.junit import TestCase as JunitCase
from bceval.scorecard.junit import render
from bceval.viewer import markdown
from bceval.viewer.html import SCRIPT as OWN_SCRIPT
from bceval.viewer.html import esc, safe_name
from bceval.viewer.site import build_site


class Tags(HTMLParser):
    """Every start tag and its attributes, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)
            self._in_script = False


def pages(out: Path) -> list[Path]:
    return sorted(OutDir(out).view.rglob("*.html"))


def test_the_site_has_every_page_type(viewer_out):
    view = OutDir(viewer_out).view
    assert (view / "index.html").is_file()
    for run in ("baseline", "command", "planted"):
        assert (view / "runs" / run / "index.html").is_file()
        assert len(list((view / "runs" / run / "cases").glob("case-*.html"))) == 16
    assert (view / "compare" / "baseline--command.html").is_file()
    assert (view / "experiments" / "viewer" / "index.html").is_file()
    assert (view / "compare" / "viewer" / "agent-e1.html").is_file()
    for epoch in (1, 2):
        assert len(list((view / "experiments" / "viewer" / "runs" / f"agent-e{epoch}" / "cases").glob("*.html"))) == 16
    assert len(list((view / "guidance" / "plan" / "run-0001" / "cases").glob("*.html"))) == 4


def test_no_page_holds_markup_that_a_model_or_the_corpus_wrote(viewer_out):
    seen_payload = 0
    for path in pages(viewer_out):
        text = path.read_text(encoding="utf-8")
        parser = Tags()
        parser.feed(text)
        names = [tag for tag, _ in parser.tags]
        assert names.count("script") == 1 and parser.scripts == [OWN_SCRIPT], path
        assert "img" not in names, path
        handlers = [name for _, attrs in parser.tags for name in attrs if name.startswith("on")]
        assert handlers == [], path
        assert SCRIPT not in text and IMG not in text, path
        seen_payload += esc(SCRIPT) in text or esc(IMG) in text
    assert seen_payload >= 5  # the payloads are shown, as text, on the case, run, compare and index pages


def test_the_case_page_shows_the_question_the_answer_and_the_conversation(viewer_out):
    page = (OutDir(viewer_out).view / "runs" / "command" / "cases" / f"{PAYLOAD_CASE}.html").read_text("utf-8")
    assert esc(TITLE_PAYLOAD) in page  # the candidate table, its title escaped
    assert "microsoft/knowledge/error-handling/error-text-in-labels.md" in page and "reported, not expected" in page
    assert 'class="code"' in page and '<td class="ln">1</td>' in page  # the case code, numbered
    assert "You are reviewing Business Central AL code" in page  # the prompt text itself, from prompts/
    assert "Agent events" in page and "assistant" in page  # the stream-json events, parsed
    assert "View digest" in page


def test_a_live_run_keeps_each_prompt_once_under_its_hash(viewer_out):
    run = RunDir(OutDir(viewer_out).run("command").path)
    stored = {path.stem: path.read_bytes() for path in run.prompts.glob("*.txt")}
    assert len(stored) == 16
    for transcript in run.transcripts.glob("*.json"):
        attempts = json.loads(transcript.read_text(encoding="utf-8"))["attempts"]
        digest = attempts[0]["promptSha256"]
        import hashlib

        assert hashlib.sha256(stored[digest]).hexdigest() == digest


def test_the_experiment_page_has_the_report_plots_and_a_link_for_every_cell(viewer_out):
    page = (OutDir(viewer_out).view / "experiments" / "viewer" / "index.html").read_text("utf-8")
    report_md = OutDir(viewer_out).experiment("viewer").report("md").read_text(encoding="utf-8")
    for heading in [line[3:] for line in report_md.splitlines() if line.startswith("## ")]:
        assert f"<h3>{esc(heading)}</h3>" in page  # every section of report.md
    assert page.count('data-plot="') == 2 + ("Cost against score" in page)
    assert page.count("data-cell=") >= 16 * 2 * 2 + 2  # every (arm, epoch, case) cell, the flaky ones twice
    assert 'class="flaky"' in page and "events-bad" in page
    assert f"runs/agent-e2/cases/{FLAKY_CASE}.html" in page


def test_a_rebuild_removes_pages_of_runs_that_are_gone(viewer_out, tmp_path):
    out = tmp_path / "out"
    (out / "runs").mkdir(parents=True)
    import shutil

    shutil.copytree(viewer_out / "runs" / "baseline", out / "runs" / "baseline")
    shutil.copytree(viewer_out / "review", out / "review")
    first = build_site(out, OutDir(out).view)
    assert first.pages == 1 + 1 + 16 and first.removed == 0
    again = build_site(out, OutDir(out).view)
    assert again.written == 0  # byte-identical pages are left alone
    shutil.rmtree(out / "runs" / "baseline")
    gone = build_site(out, OutDir(out).view)
    assert gone.pages == 1 and gone.removed == 17 and not (OutDir(out).view / "runs").exists()


def test_view_prints_the_index_and_refuses_a_missing_folder(tmp_path, capsys):
    assert main(["view", "--out", str(tmp_path / "nothing")]) == 2
    assert "output directory does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["view", "--out", str(tmp_path / "empty")]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == str(tmp_path / "empty" / "view" / "index.html")
    assert "Nothing to show yet" in Path(printed).read_text(encoding="utf-8")


def test_doit_view_is_a_no_op_until_a_run_changes(viewer_out, tmp_path, capsys, monkeypatch):
    import shutil

    from bceval.config import load_settings
    from bceval.graph.loader import run_graph

    clean_environment(monkeypatch)
    out = tmp_path / "out"
    shutil.copytree(viewer_out / "runs" / "baseline", out / "runs" / "baseline")
    settings = load_settings(out=str(out))
    assert run_graph(settings, ["view"]) == 0
    assert "view: 18 page(s)" in capsys.readouterr().err
    assert run_graph(settings, ["view"]) == 0
    assert "nothing was rebuilt" in capsys.readouterr().err
    score = out / "runs" / "baseline" / "score.json"
    score.write_text(score.read_text(encoding="utf-8").replace('"passed": true', '"passed": false', 1), "utf-8")
    assert run_graph(settings, ["view"]) == 0
    assert "view: 18 page(s), 3 rewritten" in capsys.readouterr().err  # the index, the run and one case page


def test_file_names_of_any_text_are_safe_and_distinct():
    assert safe_name("case-0ad1f118") == "case-0ad1f118"
    hostile = safe_name("../<x>/index")
    assert "/" not in hostile and "<" not in hostile and hostile != safe_name("../<y>/index")
    assert safe_name("index") != "index"  # never a page's own name


def test_markdown_is_escaped_before_its_few_forms_become_markup():
    html = markdown.render("## A <b>\n\n| a | b |\n|---|---|\n| `<x>` | **y** |\n\n- <script>\n")
    assert "<h3>A &lt;b&gt;</h3>" in html and "<code>&lt;x&gt;</code>" in html and "<strong>y</strong>" in html
    assert "<li>&lt;script&gt;</li>" in html and "<script>" not in html


# --- CI outputs --------------------------------------------------------------------------------------------------


def _suite(path: Path) -> ET.Element:
    return ET.parse(path).getroot().find("testsuite")


def test_score_junit_has_one_case_per_case_with_failures_in_bcevals_words(viewer_out, tmp_path, capsys, monkeypatch):
    clean_environment(monkeypatch)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    junit = tmp_path / "junit.xml"
    corpus = viewer_out.parent / "corpus"
    flags = ["--corpus", str(corpus), "--out", str(viewer_out), "--adapter", "baseline", "--junit", str(junit)]
    code = main(["score", *flags])
    assert code == 1
    suite = _suite(junit)
    assert suite.get("tests") == "16" and suite.get("failures") == "8" and suite.get("errors") == "0"
    failure = next(case for case in suite if case.get("name") == "events-bad").find("failure")
    assert failure.get("message").startswith("missing expected finding(s): microsoft/knowledge/events/")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n") and "# FAILED: baseline" in text


def test_infrastructure_failures_are_errors_and_text_is_escaped():
    cases = [
        JunitCase("a", "bceval.x", "passed"),
        JunitCase("b <script>", "bceval.x", "failed", 'missing "x" & <y>', "detail\x00"),
        JunitCase("c", "bceval.x", "error", "infrastructure failure: timeout: no answer within 1 s"),
        JunitCase("d", "bceval.x", "skipped", "not answered"),
    ]
    root = ET.fromstring(render("suite", cases).encode("utf-8"))
    suite = root.find("testsuite")
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("1", "1", "1")
    b = suite[1]
    assert b.get("name") == "b <script>" and b.find("failure").get("message") == 'missing "x" & <y>'
    assert b.find("failure").text == "detail"  # a character XML cannot hold is dropped
    assert suite[2].find("error") is not None and suite[3].find("skipped") is not None


def test_experiment_junit_has_a_case_per_arm_epoch_and_case(viewer_out, tmp_path, capsys, monkeypatch):
    clean_environment(monkeypatch)
    junit = tmp_path / "experiment.xml"
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    experiment = viewer_out.parent / "viewer.yaml"
    assert main(["experiment", "report", str(experiment), "--out", str(viewer_out), "--junit", str(junit)]) == 0
    suite = _suite(junit)
    assert suite.get("tests") == str(2 * 2 * 16)
    names = {case.get("name") for case in suite}
    assert "events-bad [agent epoch 1]" in names and "events-bad [agent epoch 2]" in names
    flaky = {case.get("name"): case for case in suite}
    assert flaky["events-bad [agent epoch 1]"].find("failure") is not None
    assert flaky["events-bad [agent epoch 2]"].find("failure") is None
    assert summary.read_text(encoding="utf-8").startswith("# Experiment viewer")


def test_guidance_run_junit(viewer_out, tmp_path, capsys, monkeypatch):
    clean_environment(monkeypatch)
    demo = viewer_out.parent / "guidance-demo"
    junit = tmp_path / "guidance.xml"
    run = tmp_path / "run"
    code = main(
        [
            "guidance",
            "run",
            "--adapter",
            "oracle",
            "--root",
            str(demo / "knowledge"),
            "--workspace-map",
            str(demo / "workspace-map.plan.json"),
            "--out",
            str(run),
            "--junit",
            str(junit),
        ]
    )
    assert code == 0
    suite = _suite(junit)
    assert suite.get("tests") == "4" and suite.get("failures") == "0"


@pytest.mark.parametrize("flag", ["--junit"])
def test_junit_of_an_unscored_run_is_not_written(tmp_path, capsys, flag, monkeypatch):
    clean_environment(monkeypatch)
    junit = tmp_path / "j.xml"
    code = main(["score", "--out", str(tmp_path / "out"), "--results", str(tmp_path / "none"), flag, str(junit)])
    assert code == 2 and not junit.exists()


def test_the_evidence_names_the_files_that_changed_in_a_workspace(tmp_path):
    import hashlib

    from bceval.viewer.collect import workspace_changes

    (tmp_path / "a.al").write_text("one", encoding="utf-8")
    (tmp_path / "b.al").write_text("two", encoding="utf-8")
    files = [
        {"path": name, "kind": "file", "sha256": hashlib.sha256(text.encode()).hexdigest()}
        for name, text in (("a.al", "one"), ("b.al", "two"), ("gone.al", "x"))
    ]
    snapshot = {"root": str(tmp_path), "files": files}
    (tmp_path / "a.al").write_text("edited", encoding="utf-8")
    (tmp_path / "scratch.txt").write_text("left behind", encoding="utf-8")
    assert workspace_changes(snapshot) == ["modified: a.al", "added: scratch.txt", "removed: gone.al"]
    assert workspace_changes({"root": str(tmp_path / "missing"), "files": files}) == []


def test_the_site_is_served_on_the_loopback_interface_only(viewer_out):
    import threading
    import urllib.request

    from bceval.steps.view import site_server

    server = site_server(OutDir(viewer_out).view, 0)
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as response:
            assert b"Runs, experiments and guidance runs" in response.read()
    finally:
        server.shutdown()
        server.server_close()
    taken = site_server(OutDir(viewer_out).view, 0)
    try:
        with pytest.raises(Exception, match="cannot listen on 127.0.0.1"):
            site_server(OutDir(viewer_out).view, taken.server_address[1])
    finally:
        taken.server_close()


def test_a_transcript_of_another_agent_kind_is_shown_field_by_field(tmp_path):
    """An api agent's transcript (turns, tool calls, tool result sizes and hashes, read evidence) renders without
    the viewer knowing its names, every value escaped."""
    from bceval.viewer.pages.transcript import conversation

    transcript = {
        "schemaVersion": 1,
        "answeredBy": {"adapter": "api", "model": "m<1>"},
        "reads": [{"path": "a.md", "complete": True, "bytes": 120, "sha256": "ab" * 32}],
        "attempts": [
            {
                "attempt": 1,
                "outcome": "answered",
                "turns": [
                    {"role": "assistant", "toolCalls": [{"tool": "read", "path": "<a.md>"}]},
                    {"role": "tool", "resultBytes": 120, "resultSha256": "cd" * 32},
                ],
            }
        ],
    }
    html = conversation(transcript, RunDir(tmp_path))
    assert "<h3>reads</h3>" in html and "a.md" in html and "ab" * 32 in html
    assert "<h4>turns</h4>" in html and "resultBytes" in html and "cd" * 32 in html
    assert "&lt;a.md&gt;" in html and "m&lt;1&gt;" in html and "<a.md>" not in html


def test_a_large_experiment_grid_is_split_into_pages(tmp_path):
    from bceval.bench.viewer import generate_site_input
    from bceval.viewer.pages.experiment import CASES_PER_PAGE

    out = tmp_path / "out"
    generate_site_input(out, 2, 1, CASES_PER_PAGE + 10)
    built = build_site(out, OutDir(out).view)
    folder = OutDir(out).view / "experiments" / "bench-view"
    first, second = (folder / "index.html").read_text("utf-8"), (folder / "cases-2.html").read_text("utf-8")
    assert first.count("data-cell=") >= 2 * CASES_PER_PAGE and 'href="cases-2.html"' in first
    assert 'href="runs/arm1-e1/cases/case-00000000.html"' in first  # cells link relative to the page
    assert second.count('class="cell"') == 10 and not (folder / "cases-3.html").exists()
    assert built.pages == 1 + 2 + 2 * (1 + CASES_PER_PAGE + 10) + 1  # index, grid pages, runs, one comparison


def test_bench_view_needs_three_numbers(capsys):
    assert main(["bench", "--sizes", "50", "--view", "lots"]) == 2
    assert "--view must be ARMS,EPOCHS,CASES" in capsys.readouterr().err
