"""The viewer in a real browser: Debian's chromium driven by Playwright for Python (its own browser download cannot
work here, so `executable_path` names the system's). One browser for the module. The tests click through as a
user would, prove that none of the planted payloads runs, and keep one screenshot per page type under
out/screenshots/ (not committed). Without Playwright or chromium they skip and say why."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from viewer_site import CASE_ID_PAYLOAD, FLAKY_CASE, IMG, PAYLOAD_CASE, SCRIPT, TITLE_PAYLOAD

from bceval.layout import OutDir

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (pip: playwright)")
CHROMIUM = next((found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium)")
SHOTS = Path(__file__).resolve().parent.parent / "out" / "screenshots"


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    problems: list[str] = []
    opened.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.problems = problems  # type: ignore[attr-defined]
    yield opened
    context.close()


def index_url(out: Path) -> str:
    return (OutDir(out).view / "index.html").as_uri()


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def assert_nothing_ran(page) -> None:
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("script").count() == 1  # the page's own filter script, nothing injected
    assert page.locator("img").count() == 0
    assert page.problems == []


def test_index_to_a_failed_case_to_expected_against_got_to_the_conversation(viewer_out, page):
    page.goto(index_url(viewer_out))
    shot(page, "index")
    rows = page.locator("table.index tbody tr")
    page.fill("#filter-text", "planted")
    assert page.locator("table.index tbody tr:visible").count() == 1 < rows.count()
    page.fill("#filter-text", "command")  # the runs command and planted, and the experiment with its command arm
    assert page.locator("table.index tbody tr:visible").count() == 3
    page.get_by_role("link", name="command", exact=True).click()
    assert page.title() == "Run command"
    page.check("#filter-failed")
    visible = page.locator("table.cases tbody tr:visible")
    assert visible.count() == 2  # the payload case and the flaky case's wrong first answer
    shot(page, "run")
    visible.filter(has_text="error-handling-bad").locator("a.case-link").click()
    assert page.url.endswith(f"/cases/{PAYLOAD_CASE}.html")
    expected = page.locator("table.expected")
    assert "error-text-in-labels.md" in expected.inner_text() and IMG in expected.inner_text()  # shown as text
    assert TITLE_PAYLOAD in page.locator("table.candidates").inner_text()
    page.get_by_text("stderr", exact=True).first.click()
    assert SCRIPT in page.locator("pre.stderr").first.inner_text()
    assert "assistant" in page.locator("table.events").first.inner_text()
    shot(page, "case")
    assert_nothing_ran(page)


def test_run_a_against_run_b_to_a_regressed_case(viewer_out, page):
    page.goto(index_url(viewer_out))
    page.get_by_role("link", name="baseline → command").click()
    regressed = page.locator("table.compare tbody tr.regressed")
    assert regressed.count() == 1 and "error-handling-bad" in regressed.inner_text()
    assert page.locator("svg[data-plot='Pass rate per domain']").count() == 1
    shot(page, "compare")
    regressed.get_by_role("link", name="new answer").click()
    assert page.title() == "Case error-handling-bad"
    assert page.locator(".badge.fail").count() >= 1
    page.go_back()
    regressed.get_by_role("link", name="old answer").click()
    assert page.locator(".badge.pass").count() >= 1
    assert_nothing_ran(page)


def test_the_experiment_page_to_a_flaky_cell(viewer_out, page):
    page.goto(index_url(viewer_out))
    page.get_by_role("link", name="viewer", exact=True).click()
    assert page.title() == "Experiment viewer"
    assert page.locator("svg[data-plot]").count() >= 2  # the forest plot and pass rate per epoch (and cost)
    flaky = page.locator("li.flaky")
    assert "events-bad" in flaky.inner_text()
    shot(page, "experiment")
    flaky.locator("a[data-cell='agent|1']").click()
    assert page.url.endswith(f"/runs/agent-e1/cases/{FLAKY_CASE}.html")
    assert page.locator(".badge.fail").count() >= 1
    page.go_back()
    page.locator("li.flaky a[data-cell='agent|2']").click()
    assert page.locator(".badge.pass").count() >= 1
    assert_nothing_ran(page)


def test_the_guidance_run_page_and_a_guidance_case(viewer_out, page):
    page.goto(index_url(viewer_out))
    page.get_by_role("link", name="plan/run-0001").click()
    rows = page.locator("table.cases tbody tr")
    assert rows.count() == 4 and "untouched" in rows.first.inner_text()
    shot(page, "guidance-run")
    rows.first.locator("a.case-link").click()
    assert page.title().startswith("Guidance case ")
    assert "Expected against the report" in page.inner_text("main")
    assert_nothing_ran(page)


def test_no_planted_payload_runs_on_any_page_that_shows_one(viewer_out, page):
    view = OutDir(viewer_out).view
    planted = view / "runs" / "planted" / "index.html"
    pages = [
        view / "index.html",
        planted,
        view / "runs" / "command" / "index.html",
        view / "runs" / "command" / "cases" / f"{PAYLOAD_CASE}.html",
        view / "compare" / "baseline--command.html",
        view / "compare" / "command--planted.html",
        view / "experiments" / "viewer" / "index.html",
    ]
    for path in pages:
        page.goto(path.as_uri())
        assert_nothing_ran(page)
    page.goto(planted.as_uri())
    assert CASE_ID_PAYLOAD in page.locator("table.cases").inner_text()  # the case id, as text
    page.locator("table.cases a.case-link").first.click()
    assert CASE_ID_PAYLOAD in page.title()
    assert_nothing_ran(page)
