"""Shared fixtures: small corpora built in temporary directories, paths to the shared corpus, and the fake agents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_CORPUS = REPO.parent / "shared" / "corpus" / "bcquality-841b4e7"
DEMO_CORPUS = REPO / "evaluation" / "demo-corpus"


@pytest.fixture(scope="session")
def oracle_answers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oracle's result files for the demo corpus: the fake agents' right answers (only ever read)."""
    from agents import clean_environment

    from bceval.cli import main

    out = tmp_path_factory.mktemp("oracle") / "out"
    with pytest.MonkeyPatch.context() as patch:
        clean_environment(patch)
        assert main(["answer", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "oracle"]) == 0
    results = out / "runs" / "oracle" / "results"
    assert len(list(results.glob("result-case-*.json"))) == 16
    return results


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, oracle_answers: Path) -> Any:
    """The fake agents on PATH (tests/agents.py), answering with the demo corpus's oracle findings."""
    from agents import FakeAgent

    return FakeAgent(tmp_path / "agent", monkeypatch, oracle_answers)


@pytest.fixture(params=["memory", "disk"])
def view_root(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where agent views go for the test: the memory-backed folder bceval prefers (skipped where there is none),
    or the system temp dir it uses when TMPDIR is set. The isolation tests run on both."""
    import tempfile

    from bceval.agents import view

    if request.param == "memory":
        monkeypatch.delenv("TMPDIR", raising=False)
        if view.view_parent() != view.MEMORY_FOLDER:
            pytest.skip("no writable memory-backed folder (/dev/shm) here")
        return view.MEMORY_FOLDER
    monkeypatch.setenv("TMPDIR", tempfile.gettempdir())
    root = Path(tempfile.gettempdir())
    assert view.view_parent() == root
    return root


def article_text(domain: str, title: str, keywords: list[str], description: str = "Does a thing.") -> str:
    return (
        "---\n"
        "bc-version: [all]\n"
        f"domain: {domain}\n"
        f"keywords: [{', '.join(keywords)}]\n"
        "technologies: [al]\n"
        "countries: [w1]\n"
        "application-area: [all]\n"
        "---\n\n"
        f"# {title}\n\n## Description\n\n{description}\n\n## Best Practice\n\nDo it well.\n"
    )


class CorpusBuilder:
    """Writes a tiny layered corpus: leaves, articles with samples, and a manifest."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.manifest_data: dict = {
            "version": 2,
            "selection": "first-paired-al-article",
            "minimumExpectedRecall": 1.0,
            "minimumCleanRate": 1.0,
        }
        self.write_manifest()

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8", newline="")
        return path

    def leaf(self, domain: str, layer: str = "microsoft", body: str | None = None) -> Path:
        text = body if body is not None else f"# AL {domain} review\n\nReview {domain}.\n\n## Output\n\nJSON.\n"
        return self.write(f"{layer}/skills/review/al-{domain}-review.md", text)

    def article(
        self,
        domain: str,
        slug: str,
        layer: str = "microsoft",
        keywords: list[str] | None = None,
        paired: bool = True,
        bad: str | None = None,
        good: str | None = None,
        frontmatter_domain: str | None = None,
        description: str = "Does a thing.",
    ) -> Path:
        folder = f"{layer}/knowledge/{domain}"
        md = self.write(
            f"{folder}/{slug}.md",
            article_text(frontmatter_domain or domain, slug.replace("-", " ").title(), keywords or [slug], description),
        )
        if paired:
            self.write(f"{folder}/{slug}.bad.al", bad or f'codeunit 50100 "{slug} Bad"\n{{\n    // the flaw\n}}\n')
            self.write(f"{folder}/{slug}.good.al", good or f'codeunit 50101 "{slug} Good"\n{{\n}}\n')
        return md

    def overrides(self, overrides: dict) -> None:
        self.manifest_data["overrides"] = overrides
        self.write_manifest()

    def write_manifest(self, data: dict | None = None) -> Path:
        if data is not None:
            self.manifest_data = data
        return self.write("evaluation/review-fixtures.json", json.dumps(self.manifest_data, indent=2))

    @property
    def manifest(self) -> Path:
        return self.root / "evaluation" / "review-fixtures.json"


@pytest.fixture
def corpus(tmp_path: Path) -> CorpusBuilder:
    """A fresh empty corpus with a valid manifest and no leaves yet."""
    return CorpusBuilder(tmp_path / "corpus")


@pytest.fixture
def small_corpus(corpus: CorpusBuilder) -> CorpusBuilder:
    """Two leaf domains across layers, every case valid."""
    corpus.leaf("performance")
    corpus.leaf("security")
    corpus.article("performance", "alpha-check", keywords=["isempty"])
    corpus.article("performance", "beta-loop", keywords=["findset"])
    corpus.article("security", "gamma-secret", layer="community", keywords=["secrettext"])
    return corpus


requires_shared = pytest.mark.skipif(
    not SHARED_CORPUS.is_dir(),
    reason=f"needs the public BCQuality corpus at {SHARED_CORPUS} (see README, Tests: a checkout of "
    "microsoft/BCQuality at commit 841b4e7 in that folder)",
)


@pytest.fixture(scope="session")
def viewer_out(tmp_path_factory: pytest.TempPathFactory, oracle_answers: Path) -> Path:
    """An output folder with runs, an experiment and a guidance run, planted with payloads (tests/viewer_site.py),
    and its site built under out/view/."""
    from agents import clean_environment
    from viewer_site import build_output

    from bceval.cli import main

    with pytest.MonkeyPatch.context() as patch:
        clean_environment(patch)
        out = build_output(tmp_path_factory.mktemp("viewer"), oracle_answers, patch)
    assert main(["view", "--out", str(out)]) == 0
    return out
