"""The `guidance_prepare` doit task: validate + prepare as a graph task, skipped when nothing changed."""

from __future__ import annotations

import json

import pytest
from guidance_util import (
    PAIR,
    UPDLOCK,
    article,
    build_knowledge,
    hashed,
    manifest,
    plan_case,
    remove,
    run_guidance_graph,
    write,
)

from bceval.config import Settings
from bceval.evaluators.guidance.tasks import guidance_settings


@pytest.fixture
def graph(tmp_path, monkeypatch):
    root = build_knowledge(tmp_path / "k", manifest([plan_case(), plan_case("second-case")]), use_git=False)
    out = tmp_path / "out"
    for key in ("BCEVAL_GUIDANCE_MANIFEST", "BCEVAL_GUIDANCE_WORKSPACE_MAP", "BCEVAL_GUIDANCE_OUT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("BCEVAL_GUIDANCE_ROOT", str(root))
    monkeypatch.setenv("BCEVAL_GUIDANCE_MANIFEST", str(root / "evaluation/guidance-fixtures.json"))
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    settings = Settings(corpus=root, manifest=None, out=out)
    yield settings, root, out / "guidance"
    remove(tmp_path / "k")


def run_task(settings):
    return run_guidance_graph(settings, "guidance_prepare")


def test_defaults_come_from_settings_and_environment(tmp_path, monkeypatch):
    for key in (
        "BCEVAL_GUIDANCE_ROOT",
        "BCEVAL_GUIDANCE_MANIFEST",
        "BCEVAL_GUIDANCE_OUT",
        "BCEVAL_GUIDANCE_WORKSPACE_MAP",
    ):
        monkeypatch.delenv(key, raising=False)
    settings = Settings(corpus=tmp_path / "c", manifest=tmp_path / "m.json", out=tmp_path / "o")
    cfg = guidance_settings(settings)
    assert cfg.root == str(tmp_path / "c")
    assert cfg.manifest == str(tmp_path / "c/evaluation/development-guidance-fixtures.json")
    assert cfg.out == str(tmp_path / "o/guidance") and cfg.workspace_map is None


def test_prepares_once_and_reruns_only_after_a_change(graph):
    settings, root, prepared = graph
    assert run_task(settings) == (0, ["guidance_prepare"])
    names = sorted(p.name for p in prepared.iterdir())
    assert names == sorted(
        ["knowledge-index.json", f"request-{hashed('synthetic-case')}.json", f"request-{hashed('second-case')}.json"]
    )
    before = {p.name: p.read_bytes() for p in prepared.iterdir()}
    assert run_task(settings) == (0, [])  # nothing changed: skipped

    write(root, UPDLOCK, article("Edited article"))  # an indexed article changed
    assert run_task(settings) == (0, ["guidance_prepare"])
    assert run_task(settings) == (0, [])

    data = json.loads((root / "evaluation/guidance-fixtures.json").read_text())
    data["cases"] = data["cases"][:1]  # a case vanished: its request is pruned
    (root / "evaluation/guidance-fixtures.json").write_text(json.dumps(data))
    assert run_task(settings) == (0, ["guidance_prepare"])
    after = {p.name: p.read_bytes() for p in prepared.iterdir()}
    assert sorted(after) == ["knowledge-index.json", f"request-{hashed('synthetic-case')}.json"]
    assert after[f"request-{hashed('synthetic-case')}.json"] == before[f"request-{hashed('synthetic-case')}.json"]


def test_the_output_equals_a_cold_run(graph):
    settings, root, prepared = graph
    assert run_task(settings)[0] == 0
    write(root, PAIR, article("Edited"))
    assert run_task(settings)[0] == 0
    warm = {p.name: p.read_bytes() for p in prepared.iterdir()}
    remove(settings.out)  # everything below out/ was written by the task and doit
    assert run_task(settings) == (0, ["guidance_prepare"])
    assert {p.name: p.read_bytes() for p in prepared.iterdir()} == warm


def test_invalid_manifest_fails_the_task_without_writing(graph, capsys):
    settings, root, prepared = graph
    data = json.loads((root / "evaluation/guidance-fixtures.json").read_text())
    data["cases"][0]["expectedKind"] = "other"
    (root / "evaluation/guidance-fixtures.json").write_text(json.dumps(data))
    code, _ = run_task(settings)
    assert code == 1
    err = capsys.readouterr().err
    assert "Development guidance preparation FAILED" in err and "expectedKind" in err
    assert not prepared.exists()


def test_foreign_files_in_the_directory_are_never_touched(graph, capsys):
    settings, _, prepared = graph
    write(prepared, "notes.txt", "mine")
    code, _ = run_task(settings)
    assert code == 1
    assert "new or empty" in capsys.readouterr().err
    assert sorted(p.name for p in prepared.iterdir()) == ["notes.txt"]


def test_missing_manifest_does_not_break_the_generator(graph, monkeypatch, tmp_path, capsys):
    settings, _, _ = graph
    monkeypatch.setenv("BCEVAL_GUIDANCE_MANIFEST", str(tmp_path / "absent.json"))
    code, _ = run_task(settings)
    assert code == 1
    assert "does not exist" in capsys.readouterr().err
