"""microsoft's `additionalArticles` case ids (upstream-2026-09.md §1) beside the Curabis scheme bceval follows by
default, the `--additional-ids` switch and what it changes in prepare."""

from __future__ import annotations

import json

import pytest
from cliutil import run_cli

from bceval.config import load_settings
from bceval.corpus.layers import scan_corpus
from bceval.evaluators.review.cases import derive_cases
from bceval.evaluators.review.manifest import check_manifest

PRIMARY = "no-pii-in-telemetry-message-string"
RETENTION = ("register-owned-log-tables-for-retention-policies", "ship-a-default-retention-policy-setup")
M2 = "additional article does not exist or lacks .good.al and .bad.al companion samples"


def derive(corpus, additional_ids: str):
    manifest = check_manifest(json.loads(corpus.manifest.read_text()), additional_ids)
    return derive_cases(scan_corpus(corpus.root), manifest, additional_ids)


@pytest.fixture
def privacy(corpus):
    """§1.7's tree: three paired articles in microsoft/knowledge/privacy, on-disk names lower case."""
    corpus.leaf("privacy")
    for slug in (PRIMARY, *RETENTION):
        corpus.article("privacy", slug)
    return corpus


def worked_example(corpus, second: str = "Ship-A-Default-Retention-Policy-Setup.md") -> None:
    corpus.overrides(
        {
            "privacy": {
                "article": PRIMARY,
                "context": "Target Business Central 28.",
                "additionalArticles": [RETENTION[0], second],
            }
        }
    )


def test_the_worked_example_gives_the_specs_microsoft_ids(privacy):
    worked_example(privacy)
    derivation = derive(privacy, "microsoft")
    assert derivation.problems == []
    assert [(case.id, case.modelId) for case in derivation.cases] == [
        ("privacy-bad", "case-9b90feb2"),
        ("privacy-good", "case-f5dc4a25"),
        ("privacy-register-owned-log-tables-for-retention-policies-bad", "case-b3bbcca0"),
        ("privacy-register-owned-log-tables-for-retention-policies-good", "case-b4ae817b"),
        ("privacy-Ship-A-Default-Retention-Policy-Setup-bad", "case-c174b65e"),
        ("privacy-Ship-A-Default-Retention-Policy-Setup-good", "case-61ffb778"),
    ]
    assert {case.context for case in derivation.cases} == {"Target Business Central 28."}
    folder = "microsoft/knowledge/privacy"
    assert [case.input for case in derivation.cases][4:] == [f"{folder}/{RETENTION[1]}.bad.al"] + [
        f"{folder}/{RETENTION[1]}.good.al"
    ]
    assert derivation.cases[4].expected == [f"{folder}/{RETENTION[1]}.md"]


def test_the_worked_example_under_curabis_is_unchanged(privacy):
    worked_example(privacy)
    derivation = derive(privacy, "curabis")
    assert derivation.problems == []
    assert [(case.id, case.modelId, case.context) for case in derivation.cases] == [
        ("privacy-bad", "case-9b90feb2", "Target Business Central 28."),
        ("privacy-good", "case-f5dc4a25", "Target Business Central 28."),
        ("privacy-bad-register-owned-log-tables-for-retention-policies", "case-807a19bc", None),
        ("privacy-good-register-owned-log-tables-for-retention-policies", "case-cd18dcc3", None),
        ("privacy-bad-ship-a-default-retention-policy-setup", "case-dfc5ea7e", None),
        ("privacy-good-ship-a-default-retention-policy-setup", "case-f16a0c87", None),
    ]


def test_the_real_manifests_lower_case_spelling(privacy):
    worked_example(privacy, RETENTION[1])
    cases = derive(privacy, "microsoft").cases[4:]
    assert [(case.id, case.modelId) for case in cases] == [
        ("privacy-ship-a-default-retention-policy-setup-bad", "case-72fbd170"),
        ("privacy-ship-a-default-retention-policy-setup-good", "case-6ef71f05"),
    ]


def test_naming_the_primary_again(privacy):
    privacy.overrides({"privacy": {"article": PRIMARY, "additionalArticles": [PRIMARY]}})
    assert derive(privacy, "microsoft").problems == [f"privacy: additional article is already selected: {PRIMARY}.md"]
    assert derive(privacy, "curabis").problems == [
        f"privacy: additionalArticles entry duplicates the selected article: {PRIMARY}"
    ]


def test_microsofts_messages_in_entry_order_duplicate_test_first(privacy):
    privacy.article("privacy", "lonely", paired=False)
    entries = [RETENTION[0], f"ui/{RETENTION[0].upper()}.md", "missing", "lonely", None, "ui/foo", RETENTION[1]]
    privacy.overrides({"privacy": {"article": PRIMARY, "additionalArticles": entries}})
    derivation = derive(privacy, "microsoft")
    assert derivation.problems == [
        f"privacy: additional article is already selected: {RETENTION[0].upper()}.md",
        f"privacy: {M2}: missing.md",
        f"privacy: {M2}: lonely.md",  # unpaired: the same message as missing
        f"privacy: {M2}: .md",  # null is the empty name
        f"privacy: {M2}: ui/foo.md",  # no .md: the name is kept whole, so it is never found
    ]
    positives = [case.id for case in derivation.cases][2::2]
    assert positives == [f"privacy-{RETENTION[0]}-bad", f"privacy-{RETENTION[1]}-bad"]


def test_a_folder_in_a_md_entry_is_dropped_and_the_case_is_kept(privacy):
    privacy.overrides({"privacy": {"article": PRIMARY, "additionalArticles": f"ui/{RETENTION[0]}.md"}})
    derivation = derive(privacy, "microsoft")
    assert derivation.problems == []
    assert derivation.cases[2].id == f"privacy-{RETENTION[0]}-bad"


def test_null_and_other_values_are_read_as_a_list(privacy):
    privacy.overrides({"privacy": {"additionalArticles": None}})
    assert derive(privacy, "microsoft").problems == [f"privacy: {M2}: .md"]
    assert derive(privacy, "curabis").problems == [
        "Override 'privacy': 'additionalArticles' must be a list of non-empty slug strings."
    ]
    privacy.overrides({"privacy": {"additionalArticles": []}})
    assert len(derive(privacy, "microsoft").cases) == 2


def test_a_cross_domain_collision_is_a_duplicate_id(corpus):
    corpus.leaf("a")
    corpus.leaf("a-b")
    corpus.article("a", "a-first")
    corpus.article("a", "b")
    corpus.article("a-b", "x")
    corpus.overrides({"a": {"additionalArticles": ["b"]}})
    assert "Duplicate case id: a-b-bad" in derive(corpus, "microsoft").problems


def test_the_switch_from_flag_environment_and_pyproject(tmp_path):
    assert load_settings(cwd=tmp_path, environ={}).additional_ids == "curabis"
    assert load_settings(cwd=tmp_path, environ={"BCEVAL_ADDITIONAL_IDS": "microsoft"}).additional_ids == "microsoft"
    (tmp_path / "pyproject.toml").write_text('[tool.bceval]\nadditional-ids = "microsoft"\n')
    assert load_settings(cwd=tmp_path, environ={}).additional_ids == "microsoft"
    assert load_settings(cwd=tmp_path, environ={}, additional_ids="curabis").additional_ids == "curabis"
    (tmp_path / "pyproject.toml").write_text('[tool.bceval]\nadditional-ids = "fork"\n')
    with pytest.raises(Exception, match=r"\[tool.bceval\] additional-ids: unknown additional_ids 'fork'"):
        load_settings(cwd=tmp_path, environ={})


def test_prepare_follows_the_switch(privacy, tmp_path, capsys):
    worked_example(privacy)
    out = tmp_path / "out"
    code, stdout, _ = run_cli(capsys, "prepare", "--corpus", privacy.root, "--out", out)
    assert code == 0 and stdout[-1] == "Review fixture validation PASSED: 6 cases cover 1 leaf domains."
    cases = json.loads((out / ".build" / "review" / "cases.json").read_text())["cases"]
    assert cases[2]["id"] == f"privacy-bad-{RETENTION[0]}" and "context" not in cases[2]
    code, _, _ = run_cli(capsys, "prepare", "--corpus", privacy.root, "--out", out, "--additional-ids", "microsoft")
    assert code == 0  # the switch alone makes the cases stale
    cases = json.loads((out / ".build" / "review" / "cases.json").read_text())["cases"]
    assert cases[2]["id"] == f"privacy-{RETENTION[0]}-bad" and cases[2]["context"] == "Target Business Central 28."
    request = json.loads((out / "review" / "request-case-b3bbcca0.json").read_text())
    assert request["cases"] == [{"id": "case-b3bbcca0", "file": "case-b3bbcca0.al", "context": cases[2]["context"]}]
    assert not (out / "review" / "request-case-807a19bc.json").exists()  # the curabis case's request is gone
