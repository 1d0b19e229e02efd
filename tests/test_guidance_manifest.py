"""Manifest validation (spec §1), preparation (§2) and the real reference manifests (§6 items 1-3,
10, I1-I3) through the real CLI. Validation and preparation need no git: checkouts here are plain."""

from __future__ import annotations

import json
import re

import pytest
from guidance_util import (
    IMPLEMENTATION_SKILL,
    PAIR,
    PLAN_SKILL,
    REFERENCE,
    SHARED_CORPUS,
    STAND_INS,
    UPDLOCK,
    assert_fails,
    assert_passes,
    build_knowledge,
    cli,
    context,
    copy_files,
    hashed,
    manifest,
    plan_case,
    remove,
    write,
)

needs_shared = pytest.mark.skipif(
    not (SHARED_CORPUS.is_dir() and REFERENCE.is_dir()),
    reason=f"needs the shared BCQuality corpus and reference at {SHARED_CORPUS.parent.parent} (see README, Tests)",
)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    base = tmp_path_factory.mktemp("plain")
    root = build_knowledge(base / "k", manifest([plan_case()]), use_git=False)
    yield root
    remove(base)


def validate(root, data, tmp_path):
    path = tmp_path / "manifest.json"
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return cli("validate", "--root", root, "--manifest", path)


def with_case(**overrides):
    return manifest([plan_case(**overrides)])


def test_the_synthetic_manifest_validates(checkout, tmp_path):
    result = validate(checkout, with_case(title="t", evidenceType=None, boundary="b"), tmp_path)
    assert_passes(result)
    assert result.out == "Development guidance fixture validation PASSED: 1 case(s)\n"


def test_default_manifest_path_is_under_the_root(tmp_path):
    root = build_knowledge(tmp_path / "k", manifest([plan_case()]), use_git=False)
    write(root, "evaluation/development-guidance-fixtures.json", json.dumps(manifest([plan_case()])))
    assert_passes(cli("validate", "--root", root))


PLAN_PROBLEMS = {
    "top-level-array": ([], "JSON object"),
    "top-level-null": (None, "JSON object"),
    "no-version": ({k: v for k, v in with_case().items() if k != "version"}, "missing required field 'version'"),
    "version-2": (manifest([plan_case()], version=2), "integer 1"),
    "version-string": (manifest([plan_case()], version="1"), "integer 1"),
    "version-float": (manifest([plan_case()], version=1.0), "integer 1"),
    "threshold-above-one": (manifest([plan_case()], minimumKnowledgeRecall=1.5), "Manifest thresholds"),
    "threshold-negative": (manifest([plan_case()], minimumKnowledgePrecision=-0.1), "Manifest thresholds"),
    "threshold-bool": (manifest([plan_case()], minimumKnowledgeRecall=True), "Manifest thresholds"),
    "threshold-string": (manifest([plan_case()], minimumKnowledgeRecall="1"), "Manifest thresholds"),
    "skill-missing": (manifest([plan_case()], skill="microsoft/skills/development/missing.md"), "existing file"),
    "skill-traversal": (manifest([plan_case()], skill="../skill.md"), "without traversal"),
    "skill-absolute": (manifest([plan_case()], skill="/etc/passwd"), "without traversal"),
    "skill-directory": (manifest([plan_case()], skill="microsoft/skills/development"), "existing file"),
    "cases-empty": (manifest([]), "must not be empty"),
    "cases-object": (manifest({}), "JSON array"),
    "case-string": (manifest(["synthetic-case"]), "JSON object"),
    "id-upper": (with_case(id="Synthetic-Case"), "kebab-case"),
    "id-blank": (with_case(id=" "), "non-empty string"),
    "duplicate-id": (manifest([plan_case(), plan_case()]), "Duplicate fixture or model case identity"),
    "kind-casing": (with_case(expectedKind="Bug"), "expectedKind must be one of"),
    "outcome-unknown": (with_case(expectedOutcome="done"), "expectedOutcome must be one of"),
    "plan-empty-string": (with_case(**{"development-plan": " "}), "non-empty string"),
    "plan-without-request": (with_case(**{"development-plan": {"kind": "bug"}}), "missing required field 'request'"),
    "plan-number": (with_case(**{"development-plan": 5}), "development-plan"),
    "context-missing-unknown": (
        with_case(context={k: v for k, v in context().items() if k != "unknown"}),
        "missing required field 'unknown'",
    ),
    "context-duplicate": (with_case(context={**context(), "technologies": ["al", "AL"]}), "contains duplicates"),
    "context-invalid-dimension": (with_case(context={**context(), "unknown": ["Countries"]}), "invalid dimension"),
    "context-unknown-unlisted": (
        with_case(context={**context(), "countries": ["unknown"]}),
        "Unavailable applicability dimensions",
    ),
    "context-version-blank": (with_case(context={**context(), "bc-version": ""}), "non-empty string"),
    "knowledge-not-array": (with_case(requiredKnowledge=PAIR), "JSON array"),
    "knowledge-duplicate": (with_case(optionalKnowledge=[PAIR.upper()]), "duplicate paths"),
    "knowledge-not-layered": (with_case(optionalKnowledge=[PLAN_SKILL]), "layered knowledge articles"),
    "knowledge-missing": (
        with_case(optionalKnowledge=["microsoft/knowledge/performance/missing.md"]),
        "existing file inside the knowledge checkout",
    ),
    "knowledge-sample": (
        with_case(optionalKnowledge=["microsoft/knowledge/performance/pair-findset-with-next-loop.good.al"]),
        "layered knowledge articles",
    ),
    "expected-unknown-invalid": (with_case(expectedUnknown=["region"]), "valid dimension"),
    "requires-unresolved-string": (with_case(requiresUnresolved="yes"), "JSON boolean"),
    "material-not-partial": (with_case(requiresMaterialUnresolved=True), "requiresMaterialUnresolved"),
    "material-without-unresolved": (
        with_case(expectedOutcome="partial", requiresMaterialUnresolved=True),
        "requiresMaterialUnresolved",
    ),
    "no-knowledge-with-knowledge": (with_case(expectedOutcome="no-knowledge"), "requires empty"),
    "not-applicable-with-optional": (
        with_case(expectedOutcome="not-applicable", requiredKnowledge=[], optionalKnowledge=[UPDLOCK]),
        "requires empty",
    ),
    "missing-expected-unknown": (
        manifest([{k: v for k, v in plan_case().items() if k != "expectedUnknown"}]),
        "missing required field 'expectedUnknown'",
    ),
}


@pytest.mark.parametrize("name", sorted(PLAN_PROBLEMS))
def test_plan_manifest_problems(checkout, tmp_path, name):
    data, key = PLAN_PROBLEMS[name]
    assert_fails(validate(checkout, data, tmp_path), key)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"version": 1, "Version": 1}',
        b'{"version": NaN}',
        b'{"version": 1,}',
        b'// comment\n{"version": 1}',
        b'{"version": 1} x',
        b"\xff\xfe",
        b"[" * 65 + b"]" * 65,
    ],
    ids=["case-insensitive-duplicate", "nan", "trailing-comma", "comment", "trailing-data", "not-utf8", "too-deep"],
)
def test_manifest_must_be_strict_json(checkout, tmp_path, raw):
    assert_fails(validate(checkout, raw, tmp_path), "strict JSON with unique members")


def test_depth_64_is_accepted_by_the_reader(checkout, tmp_path):
    data = with_case()
    nested: object = "x"
    for _ in range(60):
        nested = [nested]
    data["deep"] = nested  # depth 62 in total; extra members are allowed
    assert_passes(validate(checkout, data, tmp_path))


def test_utf8_bom_is_tolerated(checkout, tmp_path):
    assert_passes(validate(checkout, b"\xef\xbb\xbf" + json.dumps(with_case()).encode(), tmp_path))


def test_missing_manifest_and_root(checkout, tmp_path):
    assert_fails(cli("validate", "--root", checkout, "--manifest", tmp_path / "absent.json"), "does not exist")
    assert_fails(cli("validate", "--root", tmp_path / "absent", "--manifest", tmp_path / "x.json"), "does not exist")
    write(tmp_path, "file", "x")
    assert_fails(cli("validate", "--root", tmp_path / "file", "--manifest", tmp_path / "x"), "existing directory")


def test_linked_manifest_is_refused(checkout, tmp_path):
    target = write(tmp_path, "real.json", json.dumps(with_case()))
    (tmp_path / "link.json").symlink_to(target)
    assert_fails(cli("validate", "--root", checkout, "--manifest", tmp_path / "link.json"), "Links, junctions")


def test_nothing_is_written_by_validation_or_a_failed_preparation(checkout, tmp_path):
    before = sorted(p.name for p in tmp_path.iterdir())
    assert_fails(validate(checkout, with_case(expectedKind="x"), tmp_path), "expectedKind")
    out = tmp_path / "prepared"
    assert_fails(cli("prepare", "--root", checkout, "--manifest", tmp_path / "manifest.json", "--out", out), "FAILED")
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*before, "manifest.json"])


# --- implementation manifests (§1.6) ---------------------------------------------------------

DECISION = {
    "phase": "implement-loop",
    "decision": "Choose the read method.",
    "decision-key": "loop-read",
    "evidence-fingerprint": "sha256:v1",
    "affected-files": ["src/Loop.Codeunit.al"],
    "affected-symbols": ["procedure UpdateAll"],
    "changed-tokens": ["FindSet"],
    "tests": [],
    "acceptance-criteria": [],
    "development-plan-pin": "plan:1",
    "implementation-evidence-pin": "diff:1",
}


def impl_case(**overrides):
    case = {
        "id": "impl-case",
        "expectedOutcome": "completed",
        "development-plan": "Update all rows.",
        "implementation-diff": "+ FindSet",
        "decision-context": DECISION,
        "consumed-guidance": [
            {"path": UPDLOCK, "decision-key": "loop-read", "evidence-fingerprint": "sha256:v0", "prior-decision": "x"}
        ],
        "context": context(),
        "requiredKnowledge": [PAIR],
        "optionalKnowledge": [],
        "expectedOmitted": [],
        "requiresUnresolved": False,
    }
    case.update(overrides)
    return manifest([case], skill=IMPLEMENTATION_SKILL)


def consumed(**overrides):
    entry = {"path": UPDLOCK, "decision-key": "k", "evidence-fingerprint": "f", "prior-decision": "p"}
    entry.update(overrides)
    return entry


IMPLEMENTATION_PROBLEMS = {
    "diff-not-string": (impl_case(**{"implementation-diff": None}), "implementation-diff must be a JSON string"),
    "decision-not-object": (impl_case(**{"decision-context": []}), "JSON object"),
    "decision-partial": (
        impl_case(**{"decision-context": {"phase": "p"}}),
        "missing required field 'decision'",
    ),
    "decision-blank-pin": (
        impl_case(**{"decision-context": {**DECISION, "development-plan-pin": ""}}),
        "decision-context.development-plan-pin must be a non-empty string",
    ),
    "decision-list-string": (
        impl_case(**{"decision-context": {**DECISION, "tests": "t"}}),
        "decision-context.tests must be a JSON array",
    ),
    "consumed-not-array": (impl_case(**{"consumed-guidance": {}}), "JSON array"),
    "consumed-missing-field": (
        impl_case(**{"consumed-guidance": [{"path": UPDLOCK}]}),
        "missing required field 'decision-key'",
    ),
    "consumed-duplicate-triple": (
        impl_case(**{"consumed-guidance": [consumed(), consumed(**{"prior-decision": "other"})]}),
        "repeats a (path, decision-key, evidence-fingerprint) triple",
    ),
    "omitted-not-layered": (impl_case(expectedOmitted=[IMPLEMENTATION_SKILL]), "layered knowledge articles"),
    "no-knowledge-with-required": (impl_case(expectedOutcome="no-knowledge"), "requires empty"),
    "not-applicable-with-both": (
        impl_case(expectedOutcome="not-applicable", requiredKnowledge=[]),
        "must lack its implementation-diff or decision-context",
    ),
    "missing-expected-omitted": (
        manifest(
            [{k: v for k, v in impl_case()["cases"][0].items() if k != "expectedOmitted"}],
            skill=IMPLEMENTATION_SKILL,
        ),
        "missing required field 'expectedOmitted'",
    ),
}


@pytest.mark.parametrize("name", sorted(IMPLEMENTATION_PROBLEMS))
def test_implementation_manifest_problems(checkout, tmp_path, name):
    data, key = IMPLEMENTATION_PROBLEMS[name]
    assert_fails(validate(checkout, data, tmp_path), key)


@pytest.mark.parametrize(
    "overrides",
    [
        {"decision-context": {}, "implementation-diff": ""},  # applicable with {} validates (it can never score)
        {"expectedOutcome": "not-applicable", "requiredKnowledge": [], "implementation-diff": ""},
        {"expectedOutcome": "not-applicable", "requiredKnowledge": [], "decision-context": {}},
        {"expectedOutcome": "no-knowledge", "requiredKnowledge": [], "expectedOmitted": [UPDLOCK]},
        {"optionalKnowledge": [UPDLOCK], "expectedOmitted": [UPDLOCK]},  # no duplicate rejection in this mode
        {"consumed-guidance": [consumed(path="not/validated.md")]},  # consumed paths are not resolved
    ],
)
def test_implementation_manifest_accepts(checkout, tmp_path, overrides):
    assert_passes(validate(checkout, impl_case(**overrides), tmp_path))


def test_implementation_mode_is_chosen_only_by_the_exact_skill_path(checkout, tmp_path):
    data = impl_case()
    data["skill"] = PLAN_SKILL  # the plan rules now apply: expectedKind is required
    assert_fails(validate(checkout, data, tmp_path), "missing required field 'expectedKind'")


# --- the real reference manifests ------------------------------------------------------------


def referenced_files(documents: list[dict]) -> list[str]:
    """Every article the manifests name, with its existing good/bad siblings."""
    rels: set[str] = set()
    for document in documents:
        for case in document["cases"]:
            for key in ("requiredKnowledge", "optionalKnowledge", "expectedOmitted"):
                rels.update(case.get(key, []))
    files = []
    for rel in sorted(rels - set(STAND_INS)):
        files.append(rel)
        stem = rel[: -len(".md")]
        files += [f"{stem}.{kind}.al" for kind in ("good", "bad") if (SHARED_CORPUS / f"{stem}.{kind}.al").is_file()]
    return files


def add_reference_files(root, stand_ins=True):
    copy_files(REFERENCE, root, [PLAN_SKILL, IMPLEMENTATION_SKILL])
    for name in ("development-guidance-fixtures.json", "implementation-guidance-fixtures.json"):
        copy_files(REFERENCE, root / "evaluation", [name])
    if stand_ins:
        for rel in STAND_INS:
            write(root, rel, "---\ndomain: stand-in\n---\n\n# Stand-in\n\n## Best Practice\n\nStub.\n")


@pytest.fixture(scope="module")
def real_checkout(tmp_path_factory):
    """The whole shared corpus plus the reference skills, manifests and the two stand-ins."""
    if not (SHARED_CORPUS.is_dir() and REFERENCE.is_dir()):
        pytest.skip(
            f"needs the shared BCQuality corpus and reference at {SHARED_CORPUS.parent.parent} (see README, Tests)"
        )
    base = tmp_path_factory.mktemp("real")
    rels = [p.relative_to(SHARED_CORPUS).as_posix() for p in SHARED_CORPUS.rglob("*") if p.is_file()]
    copy_files(SHARED_CORPUS, base / "k", rels)
    add_reference_files(base / "k")
    yield base / "k"
    remove(base)


PLAN_IDS = {
    "synthetic-normal-initial-plan": "case-b49c8ab1",
    "versioned-upgrade-plan-guidance": "case-a1c55ce1",
    "no-additional-knowledge": "case-66ff92e6",
    "unknown-material-version": "case-2b6599b8",
    "partial-plan-decision": "case-580d5493",
}
IMPLEMENTATION_IDS = {
    "expanded-surface-adds-pii-field": "case-f5503a33",
    "exact-consumed-guidance-is-omitted": "case-20ea8539",
    "no-additional-guidance-control": "case-6681363d",
    "missing-current-decision-and-diff": "case-e3b3b971",
    "read-only-public-interface-checkpoint": "case-4fef00c0",
}


def test_hashed_ids_match_the_spec_table():
    from bceval.evaluators.base import model_id

    table = {**PLAN_IDS, **IMPLEMENTATION_IDS, "synthetic-case": "case-be3af114", "second-case": "case-2ea89089"}
    for case_id, expected in table.items():
        assert hashed(case_id) == expected
        assert model_id(case_id) == expected


@needs_shared
def test_minimal_plain_copy_validates_and_needs_the_stand_ins(tmp_path):
    documents = [json.loads((REFERENCE / "development-guidance-fixtures.json").read_text())]
    root = tmp_path / "k"
    copy_files(SHARED_CORPUS, root, referenced_files(documents))
    add_reference_files(root, stand_ins=False)
    manifest_path = root / "evaluation/development-guidance-fixtures.json"
    assert_fails(cli("validate", "--root", root, "--manifest", manifest_path), "existing file inside")
    add_reference_files(root)
    assert_passes(cli("validate", "--root", root))  # 1: on a plain, non-git copy, default manifest path


@needs_shared
def test_real_plan_manifest_validates_and_prepares(real_checkout, tmp_path):
    manifest_path = real_checkout / "evaluation/development-guidance-fixtures.json"
    result = cli("validate", "--root", real_checkout, "--manifest", manifest_path)
    assert_passes(result)
    assert "5 case(s)" in result.out
    out = tmp_path / "prepared"
    assert_passes(cli("prepare", "--root", real_checkout, "--manifest", manifest_path, "--out", out))  # 2
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["knowledge-index.json", *(f"request-{h}.json" for h in PLAN_IDS.values())])
    index = json.loads((out / "knowledge-index.json").read_text())
    assert index["articleCount"] == len(index["articles"]) > 250
    source = json.loads(manifest_path.read_text())
    for case in source["cases"]:
        text = (out / f"request-{PLAN_IDS[case['id']]}.json").read_text()
        request = json.loads(text)
        assert list(request) == [
            "protocol",
            "caseId",
            "skill",
            "skillInstructions",
            "knowledgeIndex",
            "knowledgeRoot",
            "task-context",
            "development-plan",
            "resultSchema",
        ]
        assert request["caseId"] == PLAN_IDS[case["id"]]
        assert request["skillInstructions"] == (real_checkout / PLAN_SKILL).read_text()
        assert request["knowledgeIndex"] == str(out / "knowledge-index.json")
        assert request["knowledgeRoot"] == str(real_checkout)
        assert request["development-plan"] == case["development-plan"]
        task = request["task-context"]
        assert task["inputs-available"] == ["development-plan", "repository"]
        assert "unknown" not in task and "repository" not in request
        for hidden in (
            "expectedOutcome",
            "requiredKnowledge",
            "optionalKnowledge",
            "expectedKind",
            "requiresUnresolved",
        ):
            assert hidden not in text
        for article_path in case["requiredKnowledge"]:
            assert article_path not in text
        assert not text.startswith("\ufeff") and text.endswith("}\n")


@needs_shared
def test_serialized_plan_string_is_kept_verbatim(real_checkout, tmp_path):
    manifest_path = real_checkout / "evaluation/development-guidance-fixtures.json"
    out = tmp_path / "prepared"
    assert_passes(cli("prepare", "--root", real_checkout, "--manifest", manifest_path, "--out", out))
    source = json.loads(manifest_path.read_text())["cases"][0]
    request = json.loads((out / "request-case-b49c8ab1.json").read_text())
    plan = request["development-plan"]
    assert isinstance(plan, str) and plan == source["development-plan"]  # 3
    assert request["task-context"]["goal"] == plan
    document = json.loads(plan)
    assert document["metadata"]["kind"] == "bug"
    for heading in ("Root cause and design", "Proposed fix", "Affected files", "Test strategy", "Acceptance criteria"):
        assert re.search(rf"^## {heading}$", document["body"], re.MULTILINE)


@needs_shared
def test_real_implementation_manifest_validates_and_prepares_with_a_map(real_checkout, tmp_path):
    manifest_path = real_checkout / "evaluation/implementation-guidance-fixtures.json"
    assert_passes(cli("validate", "--root", real_checkout, "--manifest", manifest_path))  # I1
    workspaces = {case_id: tmp_path / "targets" / case_id for case_id in IMPLEMENTATION_IDS}
    for path in workspaces.values():
        path.mkdir(parents=True)
    map_path = write(tmp_path, "map.json", json.dumps({k: str(v) for k, v in workspaces.items()}))
    out = tmp_path / "prepared"
    result = cli(
        "prepare", "--root", real_checkout, "--manifest", manifest_path, "--out", out, "--workspace-map", map_path
    )
    assert_passes(result)  # I2
    source = {case["id"]: case for case in json.loads(manifest_path.read_text())["cases"]}
    for case_id, case_hash in IMPLEMENTATION_IDS.items():
        request = json.loads((out / f"request-{case_hash}.json").read_text())
        assert list(request)[-4:] == ["implementation-diff", "decision-context", "consumed-guidance", "repository"]
        assert request["repository"] == str(workspaces[case_id])
        assert request["task-context"]["inputs-available"] == [
            "development-plan",
            "repository",
            "implementation-diff",
            "decision-context",
            "consumed-guidance",
        ]
        for name in ("implementation-diff", "decision-context", "consumed-guidance", "development-plan"):
            assert request[name] == source[case_id][name]
        assert request["resultSchema"]["guidanceReport"]["skill"]["id"] == "al-implementation-guidance"
        assert "expectedOmitted" not in json.dumps(request)
    empty = json.loads((out / "request-case-e3b3b971.json").read_text())
    assert empty["implementation-diff"] == "" and empty["decision-context"] == {}  # I3
