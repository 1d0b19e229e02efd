"""The case page shows what THAT run's agent was asked (not today's request after an article edit), the agent's
error first on an infrastructure failure, the case code with its indentation and the view's file sizes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agents import clean_environment
from viewer_site import PAYLOAD_CASE

from bceval.cli import main
from bceval.layout import OutDir, RunDir
from bceval.viewer.html import esc
from bceval.viewer.site import build_site

REPO = Path(__file__).resolve().parent.parent
ARTICLE = "microsoft/knowledge/error-handling/error-text-in-labels.md"
OLD_TITLE = "Raise errors from Label constants with placeholders"
NEW_TITLE = "Raise errors from labels, edited after the run"


def _case_page(out: Path, run: str, case: str = PAYLOAD_CASE) -> str:
    return (OutDir(out).view / "runs" / run / "cases" / f"{case}.html").read_text(encoding="utf-8")


@pytest.fixture
def edited(tmp_path, monkeypatch, capsys):
    """Run `baseline` scored, then the article's title edited and run `oracle` scored on the edited corpus."""
    clean_environment(monkeypatch)
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    shutil.copytree(REPO / "evaluation" / "demo-corpus", corpus)
    flags = ["--corpus", str(corpus), "--out", str(out), "--no-gate"]
    assert main(["score", *flags, "--adapter", "baseline"]) == 0
    article = corpus / ARTICLE
    article.write_text(article.read_text(encoding="utf-8").replace(OLD_TITLE, NEW_TITLE), encoding="utf-8")
    assert main(["score", *flags, "--adapter", "oracle"]) == 0
    return out


def test_an_older_run_shows_what_it_was_asked_not_todays_request(edited):
    build_site(edited, OutDir(edited).view)
    old, new = _case_page(edited, "baseline"), _case_page(edited, "oracle")
    assert OLD_TITLE in old and NEW_TITLE not in old
    assert NEW_TITLE in new and OLD_TITLE not in new


def test_a_run_whose_request_set_is_kept_nowhere_says_so(edited):
    for kept in (OutDir(edited).path / "cache" / "requests").iterdir():
        shutil.rmtree(kept)  # as a run scored before request sets were kept
    build_site(edited, OutDir(edited).view)
    old = _case_page(edited, "baseline")
    assert NEW_TITLE not in old and "What this run was asked is kept nowhere" in old
    assert NEW_TITLE in _case_page(edited, "oracle")  # the prepare folder still holds the set it was asked


def test_an_infrastructure_failure_opens_with_the_agents_error(viewer_out, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(viewer_out / "runs" / "command", out / "runs" / "command")
    shutil.copytree(viewer_out / "review", out / "review")
    score = out / "runs" / "command" / "score.json"
    document = json.loads(score.read_text(encoding="utf-8"))
    error = "timeout after 2 attempt(s): no answer within 30 s <b>"
    document["cases"][0].update(passed=False, answered=False, findings=[], infrastructureFailure=error)
    score.write_text(json.dumps(document), encoding="utf-8")
    build_site(out, OutDir(out).view)
    page = _case_page(out, "command", document["cases"][0]["modelId"])
    main_part = page[page.index("<main>") :]
    assert main_part.index(esc(error)) < main_part.index("Verdict")  # the error first
    assert '<span class="badge none">' not in main_part and '<span class="badge infra">' in main_part
    run_page = (OutDir(out).view / "runs" / "command" / "index.html").read_text(encoding="utf-8")
    assert "infra failure" in run_page and esc(f"infrastructure failure: {error}") in run_page


def test_the_view_table_names_every_files_size(viewer_out):
    run = RunDir(OutDir(viewer_out).run("command").path)
    transcript = json.loads(run.transcript(PAYLOAD_CASE).read_text(encoding="utf-8"))
    page = _case_page(viewer_out, "command")
    for entry in transcript["view"]["files"]:
        assert f"<td><code>{esc(entry['path'])}</code></td><td>{entry['size']}</td>" in page


def test_the_case_code_keeps_its_indentation(viewer_out):
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    code = (OutDir(viewer_out).prepare.path / f"{PAYLOAD_CASE}.al").read_text(encoding="utf-8").splitlines()
    indented = next(line for line in code if line.startswith("    ") and line.strip())
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto((OutDir(viewer_out).view / "runs" / "command" / "cases" / f"{PAYLOAD_CASE}.html").as_uri())
            shown = page.locator("table.code code").all_inner_texts()
            assert indented in shown  # leading spaces kept, as the browser renders them
            assert page.locator("table.code code").first.evaluate("e => getComputedStyle(e).whiteSpace") == "pre"
        finally:
            browser.close()
