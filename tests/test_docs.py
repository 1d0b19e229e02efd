"""The documentation holds: docs/settings.md is the options table as it is, and every link of README.md and
docs/*.md resolves to a file (and heading) inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from bceval.config.table import settings_page, settings_table

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


def _anchors(page: Path) -> set[str]:
    """GitHub's anchor for each heading: lower case, punctuation dropped, spaces to hyphens."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    headings = re.findall(r"^#+\s+(.*)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_the_settings_page_is_the_options_table():
    page = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    assert settings_page(page) == page, "docs/settings.md drifted: python -m bceval.config.table docs/settings.md"
    assert settings_table() in page


def test_every_link_resolves_inside_the_repository():
    assert len(PAGES) > 5
    for page in PAGES:
        for link in _links(page):
            where = f"{page.relative_to(REPO)}: {link}"
            assert "://" not in link and not link.startswith("mailto:"), f"link leaves the repository: {where}"
            path, _, anchor = link.partition("#")
            target = (page.parent / path).resolve() if path else page
            assert target.is_relative_to(REPO), f"link leaves the repository: {where}"
            assert target.exists(), f"link to nothing: {where}"
            if anchor and target.suffix == ".md":
                assert anchor in _anchors(target), f"no such heading: {where}"


def test_the_link_check_sees_what_it_must(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A title, here\n[a](x.md) ![img](y.png) [b](../shared/spec.md#s)\n```\n[c](z.md)\n```\n")
    assert _links(page) == ["x.md", "../shared/spec.md#s"]
    assert _anchors(page) == {"a-title-here"}
