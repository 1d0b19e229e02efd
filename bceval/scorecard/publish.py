"""The committed scorecard page: latest run replaced, history rows added at the top; only the text between
bceval's marker comments is rewritten, and a page whose markers are missing, repeated or out of order is refused."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bceval.errors import BcevalError
from bceval.escape import markdown_cell, markdown_code
from bceval.jsonio import read_regular_bytes, write_atomic
from bceval.scorecard.model import Scorecard
from bceval.scorecard.render import render_markdown

LATEST_BEGIN = "<!-- bceval:latest:begin -->"
LATEST_END = "<!-- bceval:latest:end -->"
HISTORY_BEGIN = "<!-- bceval:history:begin -->"
HISTORY_END = "<!-- bceval:history:end -->"
MARKERS = (LATEST_BEGIN, LATEST_END, HISTORY_BEGIN, HISTORY_END)
MAX_HISTORY_ROWS = 100


def history_row(card: Scorecard) -> str:
    model = card.adapter.model if card.adapter.pinned else f"{card.adapter.model} (unpinned)"
    commit = card.corpus.commit[:12] + ("+dirty" if card.corpus.dirty else "")
    cells = [
        card.createdAt[:10],
        markdown_cell(card.adapter.name),
        markdown_code(model),
        str(card.recall.total + card.cleanRate.total),
        f"{card.recall.value:.4g}",
        f"{card.cleanRate.value:.4g}",
        card.verdict,
        markdown_code(commit),
        markdown_code(card.runId[:16]),
    ]
    return "| " + " | ".join(cells) + " |"


@dataclass(frozen=True)
class PageFormat:
    """A published page: its four marker comments, a new page's text above them, its history header (which
    begins with "| Date |", so it is never mistaken for a history row)."""

    markers: tuple[str, str, str, str]  # latest begin, latest end, history begin, history end
    intro: str
    header: str


@dataclass(frozen=True)
class Entry:
    """One published thing: its latest section, its history row, and the marks that recognise it there."""

    latest: str
    row: str
    latest_mark: str  # text the latest section holds when this entry is the latest
    row_mark: str  # text its history row holds


SCORECARD_PAGE = PageFormat(
    MARKERS,
    "# bceval scorecard\n\nPublished with `bceval publish` from each run's `out/runs/<run>/scorecard.json`. Text "
    "outside bceval's marker\ncomments is yours to edit; the latest-run section and the history rows are maintained "
    "by bceval.",
    "| Date | Adapter | Model | Cases | Recall | Clean rate | Verdict | Corpus commit | Run |\n"
    "|---|---|---|---|---|---|---|---|---|",
)


def _split(page: str, where: Path, markers: tuple[str, ...]) -> list[str]:
    """The page cut at the four markers: before, latest, between, history, after."""
    positions = []
    for marker in markers:
        count = page.count(marker)
        if count != 1:
            state = "missing" if count == 0 else f"repeated {count} times"
            raise BcevalError(f"{where}: marker {marker} is {state}; fix the page by hand (nothing was changed)")
        positions.append(page.index(marker))
    if positions != sorted(positions):
        raise BcevalError(f"{where}: bceval's markers are out of order; fix the page by hand (nothing was changed)")
    return re.split("|".join(re.escape(marker) for marker in markers), page)


def _history_rows(section: str) -> list[str]:
    """The table rows of the history section, without its header and rule."""
    lines = (line.strip() for line in section.splitlines())
    return [row for row in lines if row.startswith("|") and not row.startswith("| Date |") and set(row) - set("|-: ")]


def update_entry(page: str | None, entry: Entry, form: PageFormat, where: Path) -> str:
    """The new page text; pure, so it can be tested without files."""
    begin, end, history_begin, history_end = form.markers
    if page is None:
        history = f"## History\n\nNewest first; at most {MAX_HISTORY_ROWS} rows."
        page = f"{form.intro}\n\n{begin}\n{end}\n\n{history}\n\n{history_begin}\n{history_end}\n"
    elif not any(marker in page for marker in form.markers):
        raise BcevalError(f"{where}: page has no bceval markers, so it is not ours; choose another --page")
    before, latest_now, between, history, after = _split(page, where, form.markers)
    rows = _history_rows(history)
    if entry.latest_mark in latest_now and any(entry.row_mark in row for row in rows):
        return page  # already published and shown as the latest: nothing to do
    if not any(entry.row_mark in row for row in rows):
        rows = [entry.row, *rows][:MAX_HISTORY_ROWS]
    table = "\n".join([form.header, *rows])
    return f"{before}{begin}\n{entry.latest}{end}{between}{history_begin}\n{table}\n{history_end}{after}"


def publish_entry(page_path: Path, entry: Entry, form: PageFormat) -> bool:
    """Update the page in place (atomically); returns whether it changed."""
    if page_path.exists() and not page_path.is_file():
        raise BcevalError(f"{page_path}: not a file")
    try:
        current = read_regular_bytes(page_path).decode("utf-8") if page_path.exists() else None
    except UnicodeDecodeError:
        raise BcevalError(f"{page_path}: not valid UTF-8, so not a page bceval wrote; nothing was changed") from None
    return write_atomic(page_path, update_entry(current, entry, form, page_path))


def _entry(card: Scorecard) -> Entry:
    run = markdown_code(card.runId[:16])
    return Entry(render_markdown(card, heading="###"), history_row(card), f"run `{card.runId[:12]}`", run)


def update_page(page: str | None, card: Scorecard, where: Path) -> str:  # for the tests
    return update_entry(page, _entry(card), SCORECARD_PAGE, where)


def publish(page_path: Path, card: Scorecard) -> bool:
    return publish_entry(page_path, _entry(card), SCORECARD_PAGE)
