"""One question identity (bceval.runs.identity): the answer cache's key, the run record's identity, the graph's
up-to-date checks and the sharing of answers between experiment arms all follow its one rule."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from bceval.config import Settings
from bceval.runs.identity import IDENTITY, asking, question

VIEW = "d" * 64


def legacy_cache_key(settings: Settings, model: str, view: str, corpus: Path, request: Path) -> str:
    """The answer cache's key as every earlier version computed it (agents/command.py, prompt version 2)."""
    unisolated = [str(corpus.resolve()), str(request.resolve())] if settings.isolation != "view" else []
    parts = [
        2,
        view,
        settings.command,
        model,
        settings.isolation,
        settings.sandbox,
        sorted(str(path) for path in settings.sandbox_allow),
        settings.epoch,
        *([settings.cache_salt] if settings.cache_salt else []),
        *unisolated,
    ]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


@pytest.fixture
def live(tmp_path) -> Settings:
    return Settings(
        corpus=tmp_path / "corpus", manifest=None, out=tmp_path / "out", adapter="command", command="a {model}"
    )


def test_the_cache_key_is_byte_identical_to_earlier_versions(live, tmp_path):
    (tmp_path / "allowed").mkdir()
    request = tmp_path / "out" / "review" / "request-case-0.json"
    variants = [
        live,
        replace(live, model="m1"),
        replace(live, isolation="none"),
        replace(live, sandbox="bwrap", sandbox_allow=(tmp_path / "allowed", tmp_path)),
        replace(live, epoch=3),
        replace(live, cache_salt="treatment"),
        replace(live, isolation="none", cache_salt="treatment", epoch=2),
    ]
    keys = set()
    for settings in variants:
        model = settings.model or "unpinned"
        asked = replace(asking("command", settings, live=True), model=model)
        key = question(asked, VIEW, settings.corpus, request).cache_key(2)
        assert key == legacy_cache_key(settings, model, VIEW, settings.corpus, request)
        keys.add(key)
    assert len(keys) == len(variants)
    # one entry pinned by value: a cache written by an earlier version must still hit
    plain = question(replace(asking("command", live, live=True), model="unpinned"), VIEW, live.corpus, request)
    assert plain.cache_key(2) == legacy_cache_key(live, "unpinned", VIEW, live.corpus, request)


def test_the_run_identity_names_the_live_settings_only_for_a_live_agent(live, tmp_path):
    oracle = replace(live, adapter="oracle", model="m1", epoch=2)
    assert asking("oracle", oracle, live=False).fields() == {
        "adapter": "oracle",
        "command": None,
        "model": None,
        "isolation": None,
        "sandbox": None,
        "sandboxAllow": [],
        "epoch": 2,
    }
    fields = asking("command", replace(live, model="m1"), live=True).fields()
    assert tuple(fields) == IDENTITY
    assert fields == {
        "adapter": "command",
        "command": "a {model}",
        "model": "m1",
        "isolation": "view",
        "sandbox": "none",
        "sandboxAllow": [],
        "epoch": 1,
    }


def test_only_an_agent_that_is_not_isolated_asks_where_it_runs(live, tmp_path):
    here, there = tmp_path / "a" / "request-case-0.json", tmp_path / "b" / "request-case-0.json"

    def keys(settings: Settings) -> tuple[str, str]:
        asked = asking(settings.adapter, settings, live=settings.live)
        return (
            question(asked, VIEW, settings.corpus, here).key("v"),
            question(asked, VIEW, tmp_path / "other", there).key("v"),
        )

    isolated = keys(live)
    assert isolated[0] == isolated[1]  # in a view, only what the view holds counts
    unisolated = keys(replace(live, isolation="none"))
    assert unisolated[0] != unisolated[1]  # without one, another corpus or request is another question
    oracle = keys(replace(live, adapter="oracle", isolation="none"))
    assert oracle[0] == oracle[1]  # isolation is a live agent's setting only


def test_the_sharing_key_changes_with_every_part_of_the_question(live, tmp_path):
    request = tmp_path / "request-case-0.json"

    def key(settings: Settings = live, view: str = VIEW, expected: object = None, version: str = "v") -> str:
        asked = asking(settings.adapter, settings, live=settings.live)
        return question(asked, view, settings.corpus, request, expected).key(version)

    variants = {
        "view": key(view="e" * 64),
        "adapter": key(replace(live, adapter="baseline")),
        "command": key(replace(live, command="b {model}")),
        "model": key(replace(live, model="m2")),
        "isolation": key(replace(live, isolation="none")),
        "epoch": key(replace(live, epoch=2)),
        "salt": key(replace(live, cache_salt="treatment")),
        "expected": key(expected=[{"id": "x"}]),
        "version": key(version="w"),
    }
    assert key() == key() and key() not in variants.values()
    assert len(set(variants.values())) == len(variants), variants
    assert key(replace(live, timeout=5.0, retries=0, jobs=4)) == key()  # limits decide how long, not what


def test_the_graphs_sharing_key_is_equal_exactly_when_the_question_key_is(live, tmp_path):
    from bceval.runs.identity import Question, key_maker

    askings = [
        asking("command", live, live=True),
        asking("command", replace(live, epoch=2), live=True),
        asking("command", replace(live, cache_salt="treatment"), live=True),
    ]
    questions = []
    for asked in askings:
        for view in ("v1", "v2"):
            for where in ((), ("/c", "/r"), ("/c", "/r2")):
                for expected in (None, [], ["a.md"], ["a.md", "b.md"]):
                    questions.append((asked, view, where, expected))
    made = {id(asked): key_maker(asked, "9.9") for asked in askings}
    for first in questions:
        for second in questions[::7]:
            same = Question(*first).key("9.9") == Question(*second).key("9.9")
            assert (made[id(first[0])](*first[1:]) == made[id(second[0])](*second[1:])) == same
