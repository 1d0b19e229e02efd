"""The prepare graph's incremental rules, driven through doit and checked by executed tasks and bytes."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from graphutil import mtimes, run_graph, settings_for, snapshot


@pytest.fixture
def graph_corpus(small_corpus):
    small_corpus.leaf("ui", layer="custom")
    small_corpus.article("ui", "delta-caption", layer="custom", keywords=["caption"])
    small_corpus.article("ui", "epsilon-tooltip", keywords=["tooltip"])
    return small_corpus


def cold_snapshot(corpus_root: Path, tmp_path: Path) -> dict[str, bytes]:
    out = tmp_path / f"cold-{time.monotonic_ns()}"
    code, _ = run_graph(settings_for(corpus_root, out), "prepare")
    assert code == 0
    files = snapshot(out / "review")
    shutil.rmtree(out)
    return files


def test_cold_run_writes_reference_file_set_and_rerun_executes_nothing(graph_corpus, tmp_path):
    settings = settings_for(graph_corpus.root, tmp_path / "out")
    code, executed = run_graph(settings, "prepare")
    assert code == 0
    assert {"cases", "index", "domain:performance", "domain:security", "domain:ui", "prepare"} <= set(executed)
    names = sorted(snapshot(settings.prepare_dir))
    assert names[0] == ".bcquality-evaluation"
    assert len([n for n in names if n.startswith("case-")]) == 6
    assert len([n for n in names if n.startswith("request-case-")]) == 6
    assert {"knowledge-index.json", "review-request.json", "index-ui.json", "request-ui.json"} <= set(names)
    assert len(names) == 1 + 2 + 6 + 6 + 3 + 3

    code, executed = run_graph(settings, "prepare")
    assert (code, executed) == (0, [])


def test_editing_one_article_reruns_its_folder_rows_index_and_domain_only(graph_corpus, tmp_path):
    settings = settings_for(graph_corpus.root, tmp_path / "out")
    run_graph(settings, "prepare")
    before = mtimes(settings.prepare_dir)
    md = graph_corpus.root / "community/knowledge/security/gamma-secret.md"
    md.write_text(md.read_text().replace("Does a thing.", "Does another thing."))

    code, executed = run_graph(settings, "prepare")
    assert code == 0
    # prepare: the cheap finishing step that clears the incomplete marker the writers set
    assert set(executed) == {"rows:community/knowledge/security", "index", "domain:security", "prepare"}
    after = mtimes(settings.prepare_dir)
    changed = {name for name in after if after[name] != before.get(name)}
    assert "index-security.json" in changed and "knowledge-index.json" in changed
    assert not {n for n in changed if "performance" in n or "ui" in n}
    assert snapshot(settings.prepare_dir) == cold_snapshot(graph_corpus.root, tmp_path)


def test_editing_one_sample_rereads_its_folder_and_reruns_only_its_domain(graph_corpus, tmp_path):
    settings = settings_for(graph_corpus.root, tmp_path / "out")
    run_graph(settings, "prepare")
    before = mtimes(settings.prepare_dir)
    sample = graph_corpus.root / "microsoft/knowledge/performance/alpha-check.good.al"
    sample.write_text(sample.read_text() + "// trailing note\n    Count := 1;\n")

    code, executed = run_graph(settings, "prepare")
    # the folder's rows task re-reads its samples (they must be UTF-8) and finds its rows unchanged
    assert (code, executed) == (0, ["rows:microsoft/knowledge/performance", "domain:performance", "prepare"])
    after = mtimes(settings.prepare_dir)
    # With no more than 10 candidates nothing is ranked, so only the neutral file itself changes.
    assert {name for name in after if after[name] != before[name]} == {"case-7f25e261.al"}


def test_body_edit_that_leaves_the_row_unchanged_stops_at_the_row(graph_corpus, tmp_path):
    settings = settings_for(graph_corpus.root, tmp_path / "out")
    run_graph(settings, "prepare")
    md = graph_corpus.root / "microsoft/knowledge/ui/epsilon-tooltip.md"
    md.write_text(md.read_text() + "\nMore best-practice prose.\n")
    code, executed = run_graph(settings, "prepare")
    assert (code, executed) == (0, ["rows:microsoft/knowledge/ui"])


def _edits(corpus):
    root = corpus.root
    yield "add article", lambda: corpus.article("performance", "aardvark-first", keywords=["aardvark"])
    yield (
        "remove article",
        lambda: [
            (root / f"microsoft/knowledge/performance/aardvark-first{ext}").unlink()
            for ext in (".md", ".bad.al", ".good.al")
        ],
    )
    yield (
        "rename article",
        lambda: [
            (root / f"microsoft/knowledge/performance/beta-loop{ext}").rename(
                root / f"microsoft/knowledge/performance/beta-loops{ext}"
            )
            for ext in (".md", ".bad.al", ".good.al")
        ],
    )
    yield (
        "higher layer overrides slug",
        lambda: corpus.article("performance", "alpha-check", layer="custom", keywords=["isempty", "count"]),
    )
    yield "override leaf in community", lambda: corpus.leaf("security", layer="community", body="# Community\n")
    yield (
        "article moves to another domain",
        lambda: corpus.article("ui", "epsilon-tooltip", keywords=["tooltip"], frontmatter_domain="security"),
    )
    yield (
        "manifest context and additional",
        lambda: corpus.overrides({"performance": {"context": "Big tables.", "additionalArticles": ["beta-loops"]}}),
    )

    def remove_domain() -> None:
        shutil.rmtree(root / "custom/knowledge/ui")
        (root / "custom/skills/review/al-ui-review.md").unlink()
        (root / "microsoft/knowledge/ui").rename(root / "microsoft/knowledge/ux")

    yield "remove a whole domain", remove_domain
    yield "new layer", lambda: (corpus.leaf("events", layer="community"), corpus.article("events", "zeta", "community"))
    yield "manifest back to plain", lambda: corpus.overrides({})


def test_any_sequence_of_edits_matches_a_cold_run_byte_for_byte(graph_corpus, tmp_path):
    settings = settings_for(graph_corpus.root, tmp_path / "out")
    foreign = settings.prepare_dir / "result-case-0ad1f118.json"
    assert run_graph(settings, "prepare")[0] == 0
    foreign.write_text('{"cases": []}\n')
    for label, edit in _edits(graph_corpus):
        edit()
        code, _ = run_graph(settings, "prepare")
        assert code == 0, label
        incremental = snapshot(settings.prepare_dir)
        assert incremental.pop(foreign.name) == b'{"cases": []}\n', label  # results are never deleted
        assert incremental == cold_snapshot(graph_corpus.root, tmp_path), label
        assert run_graph(settings, "prepare") == (0, []), label


def test_full_rebuild_reexecutes_everything_with_identical_bytes(graph_corpus, tmp_path):
    settings = settings_for(graph_corpus.root, tmp_path / "out")
    run_graph(settings, "prepare")
    first = snapshot(settings.prepare_dir)
    code, executed = run_graph(settings, "--always-execute", "prepare")
    assert code == 0
    assert {"cases", "index", "prepare", "domain:ui"} <= set(executed)
    assert snapshot(settings.prepare_dir) == first


def test_source_date_epoch_sets_generated_at(graph_corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    settings = settings_for(graph_corpus.root, tmp_path / "out")
    run_graph(settings, "prepare")
    index = (settings.prepare_dir / "knowledge-index.json").read_text()
    assert '"generatedAt":"2026-01-01T00:00:00.0000000Z"' in index


def test_planning_follows_the_listing_and_manifest(graph_corpus, tmp_path):
    from bceval.graph.loader import build_namespace

    settings = settings_for(graph_corpus.root, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0

    def planned_ids() -> list[str]:
        namespace = build_namespace(settings)
        return [task["name"] for task in namespace["task_domain"]()]

    assert planned_ids() == ["performance", "security", "ui"]
    graph_corpus.leaf("events", layer="community")
    graph_corpus.article("events", "zeta", "community")
    assert "events" in planned_ids()


def test_a_damaged_rows_file_fails_the_index_in_one_line(graph_corpus, tmp_path, capsys):
    settings = settings_for(graph_corpus.root, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    rows = next((settings.build_dir / "review" / "rows").glob("*.json"))
    rows.write_bytes(rows.read_bytes() + b'"x"\t{}\n')
    code, executed = run_graph(settings, "prepare")
    assert code != 0 and "index" in executed
    err = capsys.readouterr().err
    assert f"{rows}: out of date or damaged; run prepare with --force" in err
    assert "Traceback" not in err
    assert run_graph(settings, "--always-execute", "prepare")[0] == 0


def test_a_leaf_back_after_a_failed_run_gets_current_candidates(small_corpus, tmp_path):
    settings = settings_for(small_corpus.root, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    # The security leaf goes away while its article changes, and the run fails after the index task.
    (small_corpus.root / "microsoft/skills/review/al-security-review.md").unlink()
    small_corpus.article("security", "gamma-secret", "community", keywords=["secrettext"], description="Changed.")
    small_corpus.article("performance", "alpha-check", keywords=["isempty"], frontmatter_domain="elsewhere")
    code, executed = run_graph(settings, "prepare")
    assert code != 0 and "index" in executed
    small_corpus.article("performance", "alpha-check", keywords=["isempty"])
    small_corpus.leaf("security")
    assert run_graph(settings, "prepare")[0] == 0
    assert snapshot(settings.prepare_dir) == cold_snapshot(small_corpus.root, tmp_path)


def test_files_of_domains_dropped_after_a_failed_run_are_pruned(small_corpus, tmp_path):
    small_corpus.article("ui", "caption", keywords=["caption"])
    small_corpus.article("aa", "bad-one", keywords=["x"], frontmatter_domain="elsewhere")
    settings = settings_for(small_corpus.root, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    small_corpus.leaf("ui")
    small_corpus.leaf("aa")  # its article is no candidate of its own: the gate fails
    code, _ = run_graph(settings, "--continue", "prepare")
    assert code != 0 and (settings.prepare_dir / "index-ui.json").is_file()
    for domain in ("ui", "aa"):  # every input the last success saw is back as it was
        (small_corpus.root / f"microsoft/skills/review/al-{domain}-review.md").unlink()
    assert run_graph(settings, "prepare")[0] == 0
    assert snapshot(settings.prepare_dir) == cold_snapshot(small_corpus.root, tmp_path)
    assert run_graph(settings, "prepare") == (0, [])


def test_prepare_removes_request_files_no_case_produces_even_when_inputs_are_unchanged(small_corpus, tmp_path):
    settings = settings_for(small_corpus.root, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    # what a failed run can leave behind for cases and domains that are gone again
    for name in ("request-case-0badcafe.json", "case-0badcafe.al", "index-gone.json"):
        (settings.prepare_dir / name).write_text("{}\n")
    (settings.prepare_dir / "notes.txt").write_text("mine\n")
    stale_rows = settings.build_dir / "review" / "rows" / "microsoft__knowledge__gone.json"
    stale_rows.write_text("x\n")
    code, executed = run_graph(settings, "prepare")
    assert (code, executed) == (0, ["prepare"])
    assert not (settings.prepare_dir / "index-gone.json").exists() and not stale_rows.exists()
    assert (settings.prepare_dir / "notes.txt").read_text() == "mine\n"
    assert run_graph(settings, "prepare") == (0, [])


def test_an_answer_graph_holds_only_the_prepare_and_answer_stages(graph_corpus, tmp_path):
    from bceval.graph.loader import build_namespace

    settings = settings_for(graph_corpus.root, tmp_path / "out")
    whole = [name for name in build_namespace(settings) if name.startswith("task_")]
    answering = [name for name in build_namespace(settings, None, ["answered"]) if name.startswith("task_")]
    assert {"task_prepare", "task_run_record", "task_answer", "task_answered"} <= set(answering)
    assert "task_score_json" in whole and "task_summary" in whole and whole[-1] == "task_summary"
    assert not {"task_score_json", "task_summary", "task_score"} & set(answering)
    assert answering == [name for name in whole if name in answering]  # the same tasks, in the same order


def test_a_prepare_depends_on_the_manifest_a_link_names(graph_corpus, tmp_path):
    from dataclasses import replace

    kept = tmp_path / "manifests" / "fixtures.json"
    kept.parent.mkdir()
    kept.write_bytes((graph_corpus.root / "evaluation" / "review-fixtures.json").read_bytes())
    link = tmp_path / "manifest-link.json"
    link.symlink_to(kept)
    settings = replace(settings_for(graph_corpus.root, tmp_path / "out"), manifest=link)
    assert run_graph(settings, "prepare")[0] == 0 and run_graph(settings, "prepare") == (0, [])
    kept.write_text(kept.read_text() + "\n")  # the file the link names changes; the link itself does not
    code, executed = run_graph(settings, "prepare")
    assert code == 0 and "cases" in executed


def test_a_group_signature_changes_with_every_file_of_its_folders_and_only_those(tmp_path):
    from bceval.corpus.layers import scan_corpus
    from bceval.steps.prepare import group_folders, group_signatures

    ui, deeper, other = (tmp_path / "microsoft" / "knowledge" / rel for rel in ("ui", "ui/deeper", "posting"))
    for folder in (ui, deeper, other):
        folder.mkdir(parents=True)
        (folder / "a.md").write_text("text\n", encoding="utf-8")
    (ui / "a.good.al").write_text("code\n", encoding="utf-8")
    groups = ["microsoft/knowledge/ui", "microsoft/knowledge/posting"]

    def signatures() -> dict[str, str]:
        listing = scan_corpus(tmp_path)
        folders = group_folders(listing)
        return group_signatures(tmp_path, listing, {g: folders[g] for g in groups})

    first = signatures()
    assert signatures() == first and len(set(first.values())) == 2  # stable, and one per group
    seen = {first["microsoft/knowledge/ui"]}
    changes = [
        lambda: (ui / "a.md").write_text("longer text\n", encoding="utf-8"),  # a size
        lambda: os.utime(ui / "a.good.al", ns=(1, 1)),  # a sample's time
        lambda: (deeper / "b.md").write_text("text\n", encoding="utf-8"),  # an added file, one folder down
        lambda: (deeper / "b.md").rename(deeper / "c.md"),  # a rename
        lambda: (ui / "a.good.al").unlink(),  # a removal
    ]
    for change in changes:
        change()
        now = signatures()
        assert now["microsoft/knowledge/posting"] == first["microsoft/knowledge/posting"]  # not this group's file
        seen.add(now["microsoft/knowledge/ui"])
    assert len(seen) == len(changes) + 1


def test_a_listed_file_gone_before_its_stat_has_a_state_of_its_own(tmp_path):
    from bceval.corpus.layers import scan_corpus
    from bceval.steps.prepare import group_signatures

    folder = tmp_path / "microsoft" / "knowledge" / "ui"
    folder.mkdir(parents=True)
    for name in ("a.md", "b.md"):
        (folder / name).write_text("text\n", encoding="utf-8")
    groups = {"microsoft/knowledge/ui": ["microsoft/knowledge/ui"]}
    listing = scan_corpus(tmp_path)
    present = group_signatures(tmp_path, listing, groups)
    (folder / "a.md").unlink()  # listed, then gone
    gone = group_signatures(tmp_path, listing, groups)
    assert gone != present and gone != group_signatures(tmp_path, scan_corpus(tmp_path), groups)


def test_bcevals_graph_reads_no_doit_configuration_of_the_working_folder(tmp_path, monkeypatch):
    from bceval.graph.doitlib import run_namespace

    monkeypatch.chdir(tmp_path)
    (tmp_path / "doit.cfg").write_text("[GLOBAL]\ndep_file = from-the-folder.db\n")
    (tmp_path / "pyproject.toml").write_text('[tool.doit]\ndep_file = "from-pyproject.db"\n')
    done = tmp_path / "done"
    namespace = {  # no dep_file of its own: doit's default, unless a configuration file of the folder set one
        "DOIT_CONFIG": {"backend": "json", "verbosity": 0},
        "task_one": lambda: {"actions": [lambda: done.write_text("x") and None], "targets": [str(done)]},
    }
    assert run_namespace(namespace, ["run"]) == 0
    assert done.is_file() and (tmp_path / ".doit.db").is_file()
    assert not (tmp_path / "from-the-folder.db").exists() and not (tmp_path / "from-pyproject.db").exists()


def test_doits_state_is_one_sqlite_database_and_nothing_is_left_beside_it(tmp_path):
    import sqlite3

    from bceval.graph import doitlib
    from bceval.outdir import SQLITE_HEADER

    state = tmp_path / "state.db"
    done = tmp_path / "done"
    namespace = {
        "DOIT_CONFIG": {"backend": "sqlite3", "dep_file": str(state), "verbosity": 0},
        "task_one": lambda: {"actions": [lambda: done.write_text("x") and None], "targets": [str(done)]},
    }
    assert doitlib.run_namespace(namespace, ["run"]) == 0
    assert state.read_bytes().startswith(SQLITE_HEADER)  # saved in one transaction: whole or not at all
    with sqlite3.connect(state) as db:
        assert [row[0] for row in db.execute("select task_id from doit")] == ["one"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["done", "state.db"]


def test_an_answer_after_a_prepare_runs_none_of_the_prepare_stage_until_an_input_changes(graph_corpus, tmp_path):
    """What a prepare depends on leaves out who answers and which cases: an answer with any agent settings after a
    prepare executes none of its tasks; an edited article is prepared before answering."""
    from dataclasses import replace

    settings = settings_for(graph_corpus.root, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    prepare_stage = {"cases", "prepare_dir", "rows", "index", "domain", "review_request", "prepare"}
    answering = replace(settings, adapter="oracle", jobs=2, cases=("ui-bad",), run="r")
    code, executed = run_graph(answering, "answered")
    assert code == 0 and not prepare_stage & {name.split(":")[0] for name in executed}, executed
    assert len(list(answering.results_dir.glob("result-case-*.json"))) == 1
    article = graph_corpus.root / "microsoft/knowledge/ui/epsilon-tooltip.md"
    article.write_text(article.read_text() + "\nEdited after the prepare.\n")
    code, executed = run_graph(answering, "answered")
    assert code == 0 and "rows:microsoft/knowledge/ui" in executed  # the edit is prepared before answering


def test_a_prepare_with_nothing_to_do_says_so(tmp_path):
    import subprocess
    import sys

    from conftest import DEMO_CORPUS

    script = (
        "import sys; from bceval.cli import main;"
        " sys.exit(main(['prepare', '--corpus', sys.argv[1], '--out', sys.argv[2]]))"
    )
    args = [sys.executable, "-c", script, str(DEMO_CORPUS), str(tmp_path / "out")]
    subprocess.run(args, cwd=tmp_path, check=True, capture_output=True)
    again = subprocess.run(args, cwd=tmp_path, check=True, capture_output=True, text=True)
    assert "nothing was rebuilt" in again.stderr
    assert again.stdout.split() == []
