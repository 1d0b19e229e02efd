"""Focused tests of issue 20's first-hour fixes: progress lines, where a bad value came from, what counts as a
corpus, symlink loops in a corpus listing."""

from __future__ import annotations

import pytest

from bceval.config import has_leaves, load_settings
from bceval.corpus.layers import scan_corpus
from bceval.errors import BcevalError
from bceval.steps.answer import Progress


def test_progress_counts_against_the_planned_total_and_estimates_the_time_left():
    now = [100.0]
    progress = Progress(total=4, clock=lambda: now[0])
    progress.start()
    now[0] = 110.0
    assert progress.line("arm b, epoch 2, ui-good (case-1)", "answered in 9.5 s") == (
        "[1/4] arm b, epoch 2, ui-good (case-1): answered in 9.5 s; 10 s so far, about 30 s left"
    )
    now[0] = 190.0
    assert progress.line("x (case-2)", "cached").endswith("; 1 min 30 s so far, about 1 min 30 s left")
    progress.line("x (case-3)", "cached")
    assert progress.line("x (case-4)", "cached").startswith("[4/4] ") and progress.line("y", "cached").startswith(
        "[5/5] "  # more answers than planned (a view changed under a result): the total follows
    )


def test_progress_says_done_on_the_last_answer():
    progress = Progress(total=1, clock=lambda: 0.0)
    assert progress.line("c (case-1)", "cached") == "[1/1] c (case-1): cached; 0 s so far, done"


@pytest.mark.parametrize(
    ("environ", "flags", "message"),
    [
        ({}, {"health_margin": -1}, "--margin must be at least 0, got -1.0"),
        ({}, {"patterns": []}, None),
        ({"BCEVAL_RETRIES": "11"}, {}, "BCEVAL_RETRIES must be at least 0 and at most 10, got 11"),
        ({"BCEVAL_SANDBOX": "docker"}, {}, "BCEVAL_SANDBOX: unknown sandbox 'docker'; choose one of: none, bwrap"),
    ],
)
def test_a_bad_value_names_the_flag_or_variable_it_came_from(tmp_path, environ, flags, message):
    if message is None:
        load_settings(cwd=tmp_path, environ=environ, **flags)
        return
    with pytest.raises(BcevalError) as caught:
        load_settings(cwd=tmp_path, environ=environ, **flags)
    assert str(caught.value) == message


def test_a_pyproject_value_out_of_range_names_the_file_and_key(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.bceval]\njobs = 99\n", encoding="utf-8")
    with pytest.raises(BcevalError, match=r"pyproject.toml: \[tool.bceval\] jobs must be at least 1 and at most 64"):
        load_settings(cwd=tmp_path, environ={})


def test_only_a_review_leaf_makes_a_folder_a_corpus_to_evaluate(tmp_path):
    (tmp_path / "microsoft" / "knowledge").mkdir(parents=True)
    assert not has_leaves(tmp_path)
    review = tmp_path / "community" / "skills" / "review"
    review.mkdir(parents=True)
    (review / "al-ui-review.md").write_text("# ui\n", encoding="utf-8")
    assert has_leaves(tmp_path)


def test_folders_linking_to_each_other_are_a_loop_not_a_recursion_error(tmp_path):
    knowledge = tmp_path / "microsoft" / "knowledge"
    (knowledge / "aa").mkdir(parents=True)
    (knowledge / "bb").mkdir()
    (knowledge / "aa" / "l").symlink_to("../bb")
    (knowledge / "bb" / "l").symlink_to("../aa")
    with pytest.raises(BcevalError, match="symbolic link loops back to a folder being listed"):
        scan_corpus(tmp_path)


def test_a_link_to_itself_is_one_line_naming_it(tmp_path):
    folder = tmp_path / "microsoft" / "knowledge" / "ui"
    folder.mkdir(parents=True)
    (folder / "x.md").symlink_to("x.md")
    with pytest.raises(BcevalError, match=r"x\.md: cannot be followed: Too many levels of symbolic links"):
        scan_corpus(tmp_path)


def test_a_folder_linked_twice_side_by_side_is_no_loop(tmp_path):
    knowledge = tmp_path / "microsoft" / "knowledge"
    (knowledge / "shared").mkdir(parents=True)
    (knowledge / "shared" / "a.md").write_text("# a\n", encoding="utf-8")
    (knowledge / "ui").mkdir()
    (knowledge / "ui" / "s").symlink_to("../shared")
    listing = scan_corpus(tmp_path)
    assert "a.md" in listing.names_in("microsoft/knowledge/ui/s")
