"""Runner-owned read-only evidence through the real CLI (spec §5, §6 items 4-33, 71-74, 79-82).

Each test builds its own git repositories under tmp_path and removes them afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from guidance_util import (
    SENTINEL,
    Scenario,
    assert_fails,
    assert_passes,
    build_target,
    commit_all,
    git,
    hashed,
    init_repo,
    manifest,
    plan_case,
    plan_report,
    remove,
    write,
)


@pytest.fixture
def run(tmp_path):
    scenario = Scenario(tmp_path / "run", manifest([plan_case()]))
    yield scenario
    remove(tmp_path / "run")


@pytest.fixture
def captured(run):
    assert_passes(run.capture(), "captured")
    run.write_result(plan_report())
    return run


@pytest.fixture
def two(tmp_path):
    scenario = Scenario(tmp_path / "two", manifest([plan_case(), plan_case("second-case")]))
    assert_passes(scenario.capture(), "captured")
    scenario.write_result(plan_report())
    scenario.write_result(plan_report("second-case"), "second-case")
    yield scenario
    remove(tmp_path / "two")


def test_capture_prints_the_uppercase_digest_of_the_baseline_file(run):
    result = run.capture()
    assert_passes(result, "captured")
    digest = hashlib.sha256(run.baseline.read_bytes()).hexdigest().upper()
    assert result.out.strip().endswith(digest)
    baseline = json.loads(run.baseline.read_text())
    assert list(baseline) == ["kind", "version", "root", "manifestPath", "manifestSha256", "rootSnapshot", "workspaces"]
    assert baseline["kind"] == "bcquality-guidance-runner-baseline"
    assert baseline["workspaces"]["synthetic-case"]["caseId"] == hashed("synthetic-case")
    paths = {entry["path"] for entry in baseline["workspaces"]["synthetic-case"]["snapshot"]["files"]}
    assert {"untracked.txt", "ignored.txt", "ignored-directory/child.txt", ".git/HEAD", ".git/index"} <= paths


def test_unchanged_target_with_untracked_and_ignored_files_passes_twice(captured):
    assert_passes(captured.score())  # 4
    assert_passes(captured.score())  # 5: scoring is itself read-only


def test_git_reads_never_refresh_a_stale_index(run):
    os.utime(run.target / "tracked.al", ns=(1_000_000_000, 1_000_000_000))  # index stat info now stale
    assert_passes(run.capture(), "captured")
    run.write_result(plan_report())
    assert_passes(run.score())
    assert_passes(run.score())


def test_digest_is_compared_ignoring_case(captured):
    assert_passes(captured.score(digest=captured.digest.lower()))


def test_recapture_never_overwrites(captured):
    before = captured.baseline.read_bytes()
    assert_fails(captured.capture(), "Baseline already exists")  # 6
    assert captured.baseline.read_bytes() == before


def test_scoring_without_baseline_path_fails(captured):
    result = captured.cli("score", "--results", captured.results, "--baseline-sha256", captured.digest)
    assert_fails(result, "require BaselinePath")  # 7


def test_scoring_without_digest_fails(captured):
    result = captured.cli("score", "--results", captured.results, "--baseline", captured.baseline)
    assert_fails(result, "runner-retained pre-run BaselineSha256")  # 8


def test_scoring_with_a_zero_digest_fails(captured):
    assert_fails(captured.score(digest="0" * 64), "digest mismatch")  # 9


@pytest.mark.parametrize("digest", ["abc", "g" * 64, "0" * 63])
def test_digest_must_look_like_sha256(captured, digest):
    assert_fails(captured.score(digest=digest), "must be a SHA256 digest")


@pytest.mark.parametrize(
    ("argv", "key"),
    [
        (["capture", "--workspace-map", "M", "--baseline", "B", "--results", "R"], "separate pre-run operation"),
        (["capture", "--workspace-map", "M", "--baseline", "B", "--out", "O"], "separate pre-run operation"),
        (["capture", "--workspace-map", "M"], "require BaselinePath"),
        (["capture", "--baseline", "B"], "runner-owned WorkspaceMapPath"),
        (["score", "--results", "R", "--baseline", "B"], "runner-retained pre-run BaselineSha256"),
        (
            ["score", "--results", "R", "--baseline", "B", "--baseline-sha256", "0" * 64, "--workspace-map", "M"],
            "recorded workspace map",
        ),
        (
            ["score", "--results", "R", "--baseline", "B", "--baseline-sha256", "0" * 64, "--out", "O"],
            "recorded workspace map",
        ),
        (["prepare"], "prepare requires --out"),
        (["validate", "--results", "R"], "one mode per call"),
    ],
)
def test_argument_gate(run, argv, key):
    assert_fails(run.cli(*argv), key)
    assert not run.baseline.exists()


def test_prepare_with_workspace_map_binds_the_repository(run, tmp_path):
    out = tmp_path / "prepared"
    assert_passes(run.cli("prepare", "--out", out, "--workspace-map", run.map))  # 10
    request = json.loads((out / f"request-{hashed('synthetic-case')}.json").read_text())
    assert request["repository"] == str(run.target)
    for hidden in ("expectedOutcome", "requiredKnowledge", "optionalKnowledge", "expectedKind", "expectedUnknown"):
        assert hidden not in json.dumps(request)
    assert_fails(run.cli("prepare", "--out", out, "--workspace-map", run.map), "new or empty")  # 11


def test_prepare_refuses_a_directory_with_only_a_hidden_file(run, tmp_path):
    write(tmp_path / "prepared", ".keep", "")
    assert_fails(run.cli("prepare", "--out", tmp_path / "prepared"), "new or empty")
    assert sorted(p.name for p in (tmp_path / "prepared").iterdir()) == [".keep"]


def test_prepare_directory_inside_the_target_fails(run):
    out = run.target / "prepared"
    assert_fails(run.cli("prepare", "--out", out, "--workspace-map", run.map), "outside target workspaces")  # 12
    assert not out.exists()


def test_prepare_directory_inside_the_knowledge_checkout_fails(run):
    assert_fails(run.cli("prepare", "--out", run.root / "prepared"), "outside target workspaces")
    assert not (run.root / "prepared").exists()


def test_baseline_inside_the_target_fails(run):
    inside = run.target / "baseline.json"
    result = run.cli("capture", "--workspace-map", run.map, "--baseline", inside)
    assert_fails(result, "outside target workspaces")  # 13
    assert not inside.exists()


def test_results_inside_the_target_fail(captured):
    inside = captured.target / "results"
    assert_fails(captured.score(results=inside), "outside target workspaces")  # 14


def test_workspace_map_inside_the_target_fails(run):
    inside = write(run.target, "map.json", run.map.read_text())
    assert_fails(run.cli("capture", "--workspace-map", inside, "--baseline", run.baseline), "outside target workspaces")


def test_target_equal_to_the_knowledge_checkout_fails(run):
    write(run.evidence, "workspace-map.json", json.dumps({"synthetic-case": str(run.root)}))
    result = run.cli("capture", "--workspace-map", run.map, "--baseline", run.baseline)
    assert_fails(result, "distinct, non-overlapping roots")
    assert not run.baseline.exists()


def _edit(path, text="changed\n"):
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


MUTATIONS = {
    "uncommitted-tracked-edit": lambda t: _edit(t / "tracked.al"),
    "committed-edit": lambda t: (_edit(t / "tracked.al"), commit_all(t, "edit")),
    "empty-commit": lambda t: git(t, "commit", "-q", "--allow-empty", "-m", "empty"),
    "staged-edit": lambda t: (_edit(t / "tracked.al"), git(t, "add", "tracked.al")),
    "assume-unchanged-flag": lambda t: git(t, "update-index", "--assume-unchanged", "tracked.al"),
    "untracked-edit": lambda t: _edit(t / "untracked.txt"),
    "ignored-edit": lambda t: _edit(t / "ignored.txt"),
    "ignored-child-edit": lambda t: _edit(t / "ignored-directory" / "child.txt"),
    "new-file": lambda t: write(t, "new.txt", "new\n"),
    "deleted-untracked": lambda t: (t / "untracked.txt").unlink(),
    "new-empty-directory": lambda t: (t / "empty-directory").mkdir(),
    "new-branch": lambda t: git(t, "branch", "feature"),
    "tracked-mtime": lambda t: os.utime(
        t / "tracked.al", ns=((st := os.stat(t / "tracked.al")).st_atime_ns, st.st_mtime_ns + 5_000_000_000)
    ),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_any_target_change_after_capture_fails(captured, mutation):
    MUTATIONS[mutation](captured.target)  # 15-27
    result = captured.score()
    assert_fails(result, "identity/content changed")
    assert "  - synthetic-case: " in result.err


def test_two_cases_with_two_workspaces_pass(two):
    assert_passes(two.score())  # 28


def test_a_report_cannot_redirect_evidence_to_a_clean_workspace(two):
    _edit(two.targets["synthetic-case"] / "tracked.al")
    document = plan_report()
    document["workspaceRoot"] = str(two.targets["second-case"])
    two.write_result(document)
    result = two.score()
    assert_fails(result, "identity/content changed")  # 29
    assert "synthetic-case: target workspace identity/content changed" in result.err


def test_workspace_root_must_agree_with_the_runner_binding(two):
    document = plan_report()
    document["workspaceRoot"] = str(two.targets["second-case"])
    two.write_result(document)
    assert_fails(two.score(), "runner binding")  # 30


def test_workspace_root_equal_to_the_binding_is_tolerated(two):
    document = plan_report()
    document["workspaceRoot"] = str(two.targets["synthetic-case"])
    two.write_result(document)
    assert_passes(two.score())


def test_result_with_another_cases_id_fails(two):
    two.write_result(plan_report("second-case"))
    assert_fails(two.score(), "caseId mismatch")  # 31


def test_manifest_edited_after_capture_fails(captured):
    data = json.loads(captured.manifest.read_text())
    data["cases"][0]["expectedKind"] = "feature"
    captured.manifest.write_text(json.dumps(data))
    assert_fails(captured.score(), "root or manifest")  # 32


def test_forged_case_identity_with_a_matching_digest_fails(captured):
    baseline = json.loads(captured.baseline.read_text())
    baseline["workspaces"]["synthetic-case"]["caseId"] = "case-00000000"
    data = json.dumps(baseline).encode()
    captured.baseline.write_bytes(data)
    assert_fails(captured.score(digest=hashlib.sha256(data).hexdigest()), "case identity mismatch")  # 33


@pytest.mark.parametrize(
    ("field", "value", "key"),
    [
        ("kind", "other", "Unsupported runner baseline"),
        ("version", 2, "Unsupported runner baseline"),
        ("root", "/elsewhere", "root or manifest"),
        ("manifestSha256", "0" * 64, "root or manifest"),
        ("workspaces", {}, "case set mismatch"),
    ],
)
def test_forged_baseline_fields_fail(captured, field, value, key):
    baseline = json.loads(captured.baseline.read_text())
    baseline[field] = value
    data = json.dumps(baseline).encode()
    captured.baseline.write_bytes(data)
    assert_fails(captured.score(digest=hashlib.sha256(data).hexdigest()), key)


def test_manifest_sha_in_the_baseline_is_compared_ignoring_case(captured):
    baseline = json.loads(captured.baseline.read_text())
    baseline["manifestSha256"] = baseline["manifestSha256"].lower()
    data = json.dumps(baseline).encode()
    captured.baseline.write_bytes(data)
    assert_passes(captured.score(digest=hashlib.sha256(data).hexdigest()))


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe{}",
        b"[" * 70 + b"]" * 70,
        b'{"kind": 1, "KIND": 2}',
        b"{" + b" " * (32 * 1024 * 1024) + b"}",
    ],
    ids=["not-utf8", "too-deep", "case-duplicate", "over-32-mib"],
)
def test_unreadable_baselines_fail_strictly(captured, content):
    captured.baseline.write_bytes(content)
    assert_fails(captured.score(digest=hashlib.sha256(content).hexdigest()), "strict JSON with unique members")


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe{}", b"[" * 70 + b"]" * 70, b"{" + b" " * (32 * 1024 * 1024) + b"}"],
    ids=["not-utf8", "too-deep", "over-32-mib"],
)
def test_unreadable_results_fail_strictly(captured, content):
    captured.write_result(content)
    result = captured.score()
    assert_fails(result, "strict JSON with unique members")
    assert "synthetic-case: result file" in result.err


def test_missing_result_fails_for_that_case(captured):
    (captured.results / f"result-{hashed('synthetic-case')}.json").unlink()
    assert_fails(captured.score(), "synthetic-case: result file does not exist")


def test_symlink_inside_the_target_fails_scoring(captured, tmp_path):
    (captured.target / "link").symlink_to(tmp_path)
    assert_fails(captured.score(), "Links, junctions")  # 71


def test_capture_with_a_linked_child_fails(run, tmp_path):
    (tmp_path / "outside").mkdir()
    (run.target / "linked").symlink_to(tmp_path / "outside")
    assert_fails(run.capture(), "Links, junctions")  # 72
    assert not run.baseline.exists()


def test_prepare_directory_under_a_link_fails(run, tmp_path):
    (tmp_path / "outside").mkdir()
    (run.target / "linked").symlink_to(tmp_path / "outside")
    out = run.target / "linked" / "prepared"
    assert_fails(run.cli("prepare", "--out", out, "--workspace-map", run.map), "Links, junctions")  # 73
    assert not (tmp_path / "outside" / "prepared").exists()


def test_hard_link_to_an_outside_file_fails(captured, tmp_path):
    outside = write(tmp_path, "outside.txt", "outside\n")
    os.link(outside, captured.target / "hard.txt")
    assert_fails(captured.score(), "Links, junctions")  # 74


def test_hard_link_at_capture_fails(run, tmp_path):
    outside = write(tmp_path, "outside.txt", "outside\n")
    os.link(outside, run.target / "hard.txt")
    assert_fails(run.capture(), "Links, junctions")


def test_linked_knowledge_worktree_captures_and_scores(tmp_path):
    scenario = Scenario(tmp_path / "linked", manifest([plan_case()]), linked_knowledge=True)
    assert (scenario.root / ".git").is_file()
    assert_passes(scenario.capture(), "captured")  # 79
    scenario.write_result(plan_report())
    assert_passes(scenario.score())  # 80
    git(scenario.base / "knowledge-main", "branch", "moved")  # refs live in the main clone's storage
    assert_fails(scenario.score(), "Knowledge checkout identity/content changed")
    remove(tmp_path / "linked")


def test_linked_worktree_as_target_fails(run):
    main = run.target
    linked = run.base / "linked-target"
    git(main, "worktree", "add", "-q", "--detach", str(linked))
    write(run.evidence, "workspace-map.json", json.dumps({"synthetic-case": str(linked)}))
    assert_fails(run.capture(), "standalone repositories")  # 81


def test_knowledge_checkout_edit_after_capture_fails(captured):
    with open(captured.root / "microsoft/knowledge/performance/pair-findset-with-next-loop.md", "a") as handle:
        handle.write("\nmore\n")
    result = captured.score()
    assert_fails(result, "Knowledge checkout identity/content changed")  # 82
    assert "  - Knowledge checkout identity/content changed" in result.err


def test_submodule_in_the_target_fails(run):
    git(run.target, "update-index", "--add", "--cacheinfo", f"160000,{git(run.target, 'rev-parse', 'HEAD')},sub")
    assert_fails(run.capture(), "Submodule")


def test_sparse_entry_in_the_target_fails(run):
    git(run.target, "update-index", "--skip-worktree", "tracked.al")
    assert_fails(run.capture(), "Sparse")


def test_alternate_object_store_fails(run):
    write(run.target, ".git/objects/info/alternates", "/elsewhere/objects\n")
    assert_fails(run.capture(), "object stores")


def test_config_include_fails(run):
    _edit(run.target / ".git" / "config", "[include]\n\tpath = /elsewhere/config\n")
    assert_fails(run.capture(), "configuration includes")


def test_target_that_is_not_a_git_repository_fails(run):
    plain = run.base / "plain"
    write(plain, "app.json", "{}")
    write(run.evidence, "workspace-map.json", json.dumps({"synthetic-case": str(plain)}))
    assert_fails(run.capture(), "standalone repositories")
    assert not run.baseline.exists()


def test_target_without_a_commit_fails(run):
    empty = run.base / "empty"
    init_repo(empty)
    write(run.evidence, "workspace-map.json", json.dumps({"synthetic-case": str(empty)}))
    assert_fails(run.capture(), "Git evidence could not be read")
    assert not run.baseline.exists()


def test_subdirectory_of_a_repository_is_not_a_worktree_root(run):
    write(run.target, "sub/.git/HEAD", "ref: refs/heads/main\n")  # looks like storage but is not a repo
    write(run.evidence, "workspace-map.json", json.dumps({"synthetic-case": str(run.target / "sub")}))
    assert_fails(run.capture(), "exact Git worktree root")


@pytest.mark.parametrize(
    ("mapping", "key"),
    [
        (lambda t: {"synthetic-case": str(t), "extra-case": str(t)}, "bind exactly every manifest case"),
        (lambda t: {}, "bind exactly every manifest case"),
        (lambda t: {"other-case": str(t)}, "must be a non-empty string"),
        (lambda t: {"synthetic-case": ""}, "must be a non-empty string"),
        (lambda t: {"synthetic-case": "relative/target"}, "must be absolute"),
        (lambda t: {"synthetic-case": str(t / "missing")}, "does not exist"),
        (lambda t: [str(t)], "JSON object"),
    ],
)
def test_bad_workspace_maps_fail(run, mapping, key):
    write(run.evidence, "workspace-map.json", json.dumps(mapping(run.target)))
    assert_fails(run.capture(), key)
    assert not run.baseline.exists()


def test_workspace_map_must_be_strict_json(run):
    write(run.evidence, "workspace-map.json", '{"synthetic-case": "a", "Synthetic-Case": "b"}')
    assert_fails(run.cli("validate", "--workspace-map", run.map), "strict JSON with unique members")


def test_validate_with_a_workspace_map_checks_it(run):
    assert_passes(run.cli("validate", "--workspace-map", run.map))
    write(run.evidence, "workspace-map.json", json.dumps({"synthetic-case": "relative"}))
    assert_fails(run.cli("validate", "--workspace-map", run.map), "must be absolute")


def test_targets_may_not_nest(tmp_path):
    scenario = Scenario(tmp_path / "nest", manifest([plan_case(), plan_case("second-case")]))
    inner = build_target(scenario.target / "inner", dirty=False)
    write(
        scenario.evidence,
        "workspace-map.json",
        json.dumps({"synthetic-case": str(scenario.target), "second-case": str(inner)}),
    )
    assert_fails(scenario.capture(), "distinct, non-overlapping roots")
    remove(tmp_path / "nest")


def test_sentinel_in_a_result_never_leaks(captured):
    document = plan_report()
    document[SENTINEL] = SENTINEL
    document["guidanceReport"]["outcome"] = SENTINEL
    captured.write_result(document)
    assert_fails(captured.score(), "outcome enum")
