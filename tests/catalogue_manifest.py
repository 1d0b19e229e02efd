"""Catalogue attempts of issue 20 about the review manifest (see tests/catalogue.py)."""

from __future__ import annotations

import json
from pathlib import Path

from catalogue import ROOT, Outcome, attempt, run_bceval

DEMO = ROOT / "evaluation" / "demo-corpus"


@attempt(14, "additional-article-named-by-its-path")
def additional_article_named_by_its_path(scratch: Path) -> Outcome:
    """A user names an additional article by the path they see in the corpus. The reference looks entries up as
    slugs, so bceval keeps its problem ("does not exist", spec review.md §7) but must say that a slug is wanted
    and which one; a bare "does not exist" about a file that plainly exists sends the user looking for a typo."""
    slug = "limit-columns-with-setloadfields"
    manifest = scratch / "review-fixtures.json"
    data = {
        "version": 2,
        "selection": "first-paired-al-article",
        "minimumExpectedRecall": 1.0,
        "minimumCleanRate": 1.0,
        "overrides": {"performance": {"additionalArticles": [f"microsoft/knowledge/performance/{slug}.md"]}},
    }
    manifest.write_text(json.dumps(data), encoding="utf-8")
    ran = run_bceval(
        ["validate", "--corpus", str(DEMO), "--manifest", str(manifest), "--out", str(scratch / "out")], scratch
    )
    problems = [line.strip() for line in ran.stdout.splitlines() if line.strip().startswith("- performance:")]
    named = [line for line in problems if "additionalArticles entry" in line]
    held = ran.code == 1 and len(named) == 1 and "slug" in named[0] and f"'{slug}'" in named[0]
    detail = named[0] if len(named) == 1 else f"exit {ran.code}: {problems or ran.stderr.strip()[:200]!r}"
    return Outcome(held=held, detail=detail, traceback=ran.traceback, hang=ran.hang)
