"""Synthetic corpora for `bceval bench`, seeded: three layers, overridden leaves and slugs, paired and unpaired
articles and manifest overrides; and the small corpora of the live measurements."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

SEED = 20261129
_WORDS = (
    "record loop filter key table page field flow sum calc lock commit modify delete insert buffer cache "
    "event publisher subscriber handled error label text token secret permission api query report upgrade "
    "install tag company item ledger entry customer vendor posting journal dimension currency amount date"
).split()


def _domain_count(articles: int) -> int:
    return max(5, min(40, articles // 16))


def _article(domain: str, slug: str, keyword: str, rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(40)]
    description = " ".join(words[:18]).capitalize() + f" using {keyword}. " + " ".join(words[18:30]) + "."
    body = "\n\n".join(" ".join(rng.choice(_WORDS) for _ in range(45)).capitalize() + "." for _ in range(3))
    return (
        "---\n"
        "bc-version: [all]\n"
        f"domain: {domain}\n"
        f"keywords: [{keyword}, theme{len(slug) % 13}, {words[2]}-area]\n"
        "technologies: [al]\n"
        "countries: [w1]\n"
        "application-area: [all]\n"
        "---\n\n"
        f"# {slug.replace('-', ' ').capitalize()}\n\n## Description\n\n{description}\n\n"
        f"## Best Practice\n\n{body}\n\nSee sample: `{slug}.good.al`.\n\n"
        f"## Anti Pattern\n\n{body[:400]}\n\nSee sample: `{slug}.bad.al`.\n"
    )


def _sample(keyword: str, kind: str, number: int, rng: random.Random) -> str:
    lines = [f'codeunit {50000 + number % 49000} "Bench {number} {kind.capitalize()}"', "{"]
    for procedure in range(3):
        lines += [
            f"    procedure {rng.choice(_WORDS).capitalize()}{procedure}()",
            "    var",
            f'        {keyword.capitalize()}: Record "{rng.choice(_WORDS).capitalize()} Entry";',
            "    begin",
            f"        // {' '.join(rng.choice(_WORDS) for _ in range(6))}",
            f'        {keyword.capitalize()}.SetRange("{rng.choice(_WORDS).capitalize()}", {procedure});',
            f"        if {keyword.capitalize()}.FindSet() then;",
            "    end;",
        ]
    return "\n".join([*lines, "}"]) + "\n"


def generate_corpus(root: Path, articles: int, seed: int = SEED) -> dict[str, Any]:
    """Write a synthetic corpus of `articles` knowledge articles; returns what it contains."""
    rng = random.Random(seed)
    domains = [f"{rng.choice(_WORDS)}-{index:02d}" for index in range(_domain_count(articles))]
    slugs: dict[str, list[str]] = {domain: [] for domain in domains}
    for domain in domains:
        leaf = f"# AL {domain} review\n\nReview changes for {domain} guidance.\n\n## Output\n\nFindings as JSON.\n"
        (root / "microsoft/skills/review").mkdir(parents=True, exist_ok=True)
        (root / f"microsoft/skills/review/al-{domain}-review.md").write_text(leaf, encoding="utf-8")
    for domain in domains[::8]:  # some leaves overridden by the community layer
        (root / "community/skills/review").mkdir(parents=True, exist_ok=True)
        (root / f"community/skills/review/al-{domain}-review.md").write_text(f"# Community {domain}\n", "utf-8")
    for number in range(articles):
        domain = domains[number % len(domains)]
        draw = rng.random()
        layer = "microsoft" if draw < 0.8 else "community" if draw < 0.92 else "custom"
        slug = f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}-{number:05d}"
        overriding = layer != "microsoft" and bool(slugs[domain]) and rng.random() < 0.25
        if overriding:  # a higher layer overrides a microsoft slug (paired, or the gate would hide it)
            slug = slugs[domain].pop(rng.randrange(len(slugs[domain])))
        elif layer == "microsoft":
            slugs[domain].append(slug)
        keyword = f"bench{number:05d}kw"
        folder = root / layer / "knowledge" / domain
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{slug}.md").write_text(_article(domain, slug, keyword, rng), encoding="utf-8")
        if overriding or rng.random() < 0.9:
            (folder / f"{slug}.good.al").write_text(_sample(keyword, "good", number, rng), encoding="utf-8")
            (folder / f"{slug}.bad.al").write_text(_sample(keyword, "bad", number, rng), encoding="utf-8")
    overrides: dict[str, Any] = {}
    for index, domain in enumerate(domains[:6]):
        paired = sorted(
            p.name[: -len(".md")]
            for layer in ("microsoft", "community", "custom")
            for p in (root / layer / "knowledge" / domain).glob("*.md")
            if p.with_name(p.name[:-3] + ".bad.al").exists() and p.with_name(p.name[:-3] + ".good.al").exists()
        )
        if len(paired) < 4:
            continue
        overrides[domain] = [
            {"article": paired[1], "context": "The table holds a few million rows."},
            {"additionalArticles": paired[2:4]},
            {"context": "Runs in a background session."},
        ][index % 3]
    manifest = {
        "version": 2,
        "selection": "first-paired-al-article",
        "minimumExpectedRecall": 1.0,
        "minimumCleanRate": 1.0,
        "overrides": overrides,
    }
    (root / "evaluation").mkdir(parents=True, exist_ok=True)
    (root / "evaluation/review-fixtures.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return {"articles": articles, "domains": len(domains)}


VIEW_FILES = 12  # request, case file, leaf and nine candidate articles: the size of a typical real view


def generate_live_corpus(root: Path, cases: int, view_files: int = VIEW_FILES) -> None:
    """`cases` cases (two per domain, one paired article each), and unpaired notes so each view holds `view_files`
    files of a realistic size."""
    notes = max(0, view_files - 4)
    for number in range(cases // 2):
        domain = f"area-{number:04d}"
        (root / "microsoft/skills/review").mkdir(parents=True, exist_ok=True)
        (root / f"microsoft/skills/review/al-{domain}-review.md").write_text(f"# Review {domain}\n", "utf-8")
        folder = root / "microsoft/knowledge" / domain
        folder.mkdir(parents=True)
        keyword = f"live{number:04d}kw"
        article = f"---\ndomain: {domain}\nkeywords: [{keyword}]\n---\n\n# Rule {number}\n\n{keyword}.\n"
        (folder / "rule.md").write_text(article, "utf-8")
        for kind in ("good", "bad"):
            (folder / f"rule.{kind}.al").write_text(f'codeunit {50000 + number} "R {kind}"\n{{ {keyword} }}\n', "utf-8")
        for note in range(notes):
            body = " ".join(_WORDS[(note * 7 + step) % len(_WORDS)] for step in range(240))
            text = f"---\ndomain: {domain}\nkeywords: [note{note}kw]\n---\n\n# Note {note} of {domain}\n\n{body}.\n"
            (folder / f"note-{note}.md").write_text(text, "utf-8")
