"""The implementation-guidance evaluator end to end (spec §1.6, §3.4, §4, §6 I1-I7, §7) on the real
5-case manifest: a git knowledge checkout of the manifest, its skill and every article it names, one
committed target per case, capture, controlled reports, scoring."""

from __future__ import annotations

import copy
import json

import pytest
from guidance_util import (
    IMPLEMENTATION_SKILL,
    REFERENCE,
    SENTINEL,
    SHARED_CORPUS,
    Scenario,
    assert_fails,
    assert_passes,
    commit_all,
    copy_files,
    git,
    hashed,
    init_repo,
    remove,
    write,
)

pytestmark = pytest.mark.skipif(
    not (SHARED_CORPUS.is_dir() and REFERENCE.is_dir()),
    reason=f"needs the shared BCQuality corpus and reference at {SHARED_CORPUS.parent.parent} (see README, Tests)",
)

MANIFEST_NAME = "implementation-guidance-fixtures.json"
EXPANDED = "expanded-surface-adds-pii-field"
EXACT = "exact-consumed-guidance-is-omitted"
NOT_APPLICABLE = "missing-current-decision-and-diff"
PUBLIC = "read-only-public-interface-checkpoint"
PII = "microsoft/knowledge/privacy/data-classification-required-on-pii-fields.md"
TOBECLASSIFIED = "microsoft/knowledge/privacy/resolve-tobeclassified-before-release.md"


def build_checkout(root, data):
    """A git knowledge checkout: the skill, the manifest, and every named or consumed article with its samples."""
    rels = set()
    for case in data["cases"]:
        for key in ("requiredKnowledge", "optionalKnowledge", "expectedOmitted"):
            rels.update(case[key])
        rels.update(entry["path"] for entry in case["consumed-guidance"])
    files = []
    for rel in sorted(rels):
        stem = rel[: -len(".md")]
        files += [rel] + [f"{stem}.{k}.al" for k in ("good", "bad") if (SHARED_CORPUS / f"{stem}.{k}.al").is_file()]
    copy_files(SHARED_CORPUS, root, files)
    copy_files(REFERENCE, root, [IMPLEMENTATION_SKILL])
    write(root, f"evaluation/{MANIFEST_NAME}", json.dumps(data, indent=2))
    init_repo(root)
    commit_all(root)
    return root


def build_scenario(base, data):
    root = build_checkout(base / "k", data)
    targets = {}
    for index, case in enumerate(data["cases"]):
        target = base / f"target-{index}"
        init_repo(target)
        write(target, "app.json", '{"name": "Notifications"}\n')
        write(target, "CurrentImplementation.al", 'codeunit 71000 "Current Implementation" { }\n')
        commit_all(target)
        targets[case["id"]] = target
    scenario = Scenario.assemble(base, root, root / "evaluation" / MANIFEST_NAME, targets)
    scenario.head = git(root, "rev-parse", "HEAD")
    return scenario


def reference_manifest():
    return json.loads((REFERENCE / MANIFEST_NAME).read_text())


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    base = tmp_path_factory.mktemp("impl")
    scenario = build_scenario(base / "run", reference_manifest())
    assert_passes(scenario.cli("validate"))  # I1
    prepared = base / "prepared"
    assert_passes(scenario.cli("prepare", "--out", prepared, "--workspace-map", scenario.map))  # I2
    scenario.requests = {
        case["id"]: json.loads((prepared / f"request-{hashed(case['id'])}.json").read_text())
        for case in scenario.data["cases"]
    }
    assert scenario.requests[NOT_APPLICABLE]["implementation-diff"] == ""  # I3
    assert scenario.requests[NOT_APPLICABLE]["decision-context"] == {}
    assert_passes(scenario.capture(), "captured")  # I4
    yield scenario
    remove(base)


def controlled_report(scenario, case_id):
    """The I5 builder: a report that follows the decision context and the fixture's expectations."""
    case = next(c for c in scenario.data["cases"] if c["id"] == case_id)
    request = scenario.requests[case_id]
    decision = case["decision-context"]
    applicable = case["expectedOutcome"] != "not-applicable"
    knowledge = [
        {
            "path": path,
            "sha": scenario.head,
            "used-for": decision["decision"],
            "constraints": [f"Apply the article's normative constraint {SENTINEL}"],
            "sample-paths": [],
        }
        for path in case["requiredKnowledge"]
    ]
    omitted = []
    for path in case["expectedOmitted"]:
        match = next(c for c in case["consumed-guidance"] if c["path"] == path)
        omitted.append(
            {name: match[name] for name in ("path", "decision-key", "evidence-fingerprint", "prior-decision")}
        )

    def current(name):
        return decision[name] if applicable else "unavailable"

    def pin(name):
        return decision[name] if applicable else "unpinned"

    report = {
        "skill": {"id": "al-implementation-guidance", "version": 1},
        "outcome": case["expectedOutcome"],
        "summary": {
            "request": request["task-context"]["goal"],
            "phase": current("phase"),
            "decision": current("decision"),
            "decision-key": current("decision-key"),
            "evidence-fingerprint": current("evidence-fingerprint"),
            "candidates": len(knowledge) + len(omitted),
            "selected": len(knowledge),
            "omitted-consumed": len(omitted),
        },
        "pins": {
            "knowledge-checkout": scenario.head if applicable else "unpinned",
            "development-plan": pin("development-plan-pin"),
            "implementation-evidence": pin("implementation-evidence-pin"),
        },
        "context": {
            **{k: v for k, v in case["context"].items()},
            **{
                name: decision[name] if applicable else []
                for name in ("affected-files", "affected-symbols", "changed-tokens")
            },
        },
        "knowledge": knowledge,
        "validation-considerations": [],
        "deduplication": {"strategy": "omit-exact-consumed-match", "omitted": omitted},
        "suppressed": [],
        "unresolved": [],
    }
    return copy.deepcopy({"caseId": hashed(case_id), "guidanceReport": report})  # never share manifest lists


def write_all(scenario, results, change=None):
    for case in scenario.data["cases"]:
        document = controlled_report(scenario, case["id"])
        if change is not None:
            change(case["id"], document["guidanceReport"])
        scenario.write_result(document, case["id"], results=results)


def only(case_id, mutate):
    def change(current, report):
        if current == case_id:
            mutate(report)

    return change


def test_controlled_reports_pass_end_to_end(real, tmp_path):
    write_all(real, tmp_path / "results")
    result = real.score(results=tmp_path / "results")
    assert_passes(result)  # I5
    assert "5 case(s)" in result.out
    assert_passes(real.score(results=tmp_path / "results"))  # scoring twice: still read-only


def test_controlled_reports_validate_against_the_report_model(real):
    from bceval.evaluators.guidance.report_models import ImplementationGuidanceReport

    for case in real.data["cases"]:
        ImplementationGuidanceReport.model_validate(controlled_report(real, case["id"])["guidanceReport"])


def fails_with(real, tmp_path, change, key, case_id):
    write_all(real, tmp_path / "results", change)
    result = real.score(results=tmp_path / "results")
    assert_fails(result, key)
    assert f"  - {case_id}: " in result.err
    assert "FAILED with 1 problem(s)" in result.err


def _empty_omitted(report):
    report["deduplication"]["omitted"] = []
    report["summary"]["omitted-consumed"] = 0
    report["summary"]["candidates"] = 0


def _omit_pii(fingerprint):
    def change(report):
        report["knowledge"][0]["path"] = TOBECLASSIFIED  # still completed, with the optional article
        report["summary"].update(selected=1, candidates=2, **{"omitted-consumed": 1})
        report["deduplication"]["omitted"] = [
            {
                "path": PII,
                "decision-key": "notification-recipient-schema",
                "evidence-fingerprint": fingerprint,
                "prior-decision": "No recipient field existed in the implementation surface.",
            }
        ]

    return change


def _select_optional_only(report):
    report["knowledge"][0]["path"] = TOBECLASSIFIED


def _upper_pin(real):
    def change(report):
        report["pins"]["knowledge-checkout"] = real.head.upper()

    return change


MUTATIONS = {
    "exact-consumed-not-omitted": (EXACT, _empty_omitted, "omitted set"),  # I6
    "expanded-surface-omitted-with-current-fingerprint": (
        EXPANDED,
        _omit_pii("sha256:expanded-surface-v1"),
        "exact consumed match",
    ),
    "expanded-surface-omitted-with-consumed-fingerprint": (
        EXPANDED,
        _omit_pii("sha256:plan-only-v0"),
        "exact consumed match",
    ),
    "expanded-surface-not-reselected": (EXPANDED, _select_optional_only, "recall is below"),
    "changed-plan-pin": (
        PUBLIC,
        lambda r: r["pins"].update(**{"development-plan": "plan:other"}),
        "consumer-supplied pins",
    ),
    "changed-evidence-pin": (
        EXPANDED,
        lambda r: r["pins"].update(**{"implementation-evidence": "diff:other"}),
        "consumer-supplied pins",
    ),
    "knowledge-pin-zeros": (
        PUBLIC,
        lambda r: r["pins"].update(**{"knowledge-checkout": "0" * 40}),
        "Knowledge checkout pin",
    ),
    "knowledge-pin-free-text": (
        PUBLIC,
        lambda r: r["pins"].update(**{"knowledge-checkout": SENTINEL}),
        "Knowledge checkout pin",
    ),
    "not-applicable-with-knowledge": (
        NOT_APPLICABLE,
        lambda r: (
            r.update(knowledge=[{"path": PII, "used-for": "x", "constraints": ["y"], "sample-paths": []}]),
            r["summary"].update(selected=1, candidates=1),
        ),
        "requires empty knowledge",
    ),
    "decision-key-changed": (
        PUBLIC,
        lambda r: r["summary"].update(**{"decision-key": "other"}),
        "preserve current decision context",
    ),
    "phase-changed": (
        PUBLIC,
        lambda r: r["summary"].update(phase="Public-Contract-Checkpoint"),
        "preserve current decision context",
    ),
    "affected-files-reordered": (
        PUBLIC,
        lambda r: r["context"]["affected-symbols"].reverse(),
        "preserve current implementation evidence",
    ),
    "changed-tokens-missing": (PUBLIC, lambda r: r["context"].pop("changed-tokens"), "missing required field"),
    "strategy-other": (EXACT, lambda r: r["deduplication"].update(strategy="omit-all"), "omit-exact-consumed-match"),
    "omitted-not-array": (EXACT, lambda r: r["deduplication"].update(omitted={}), "JSON array"),
    "omitted-count-wrong": (EXACT, lambda r: r["summary"].update(**{"omitted-consumed": 0}), "Summary counts"),
    "candidates-too-low": (EXPANDED, lambda r: r["summary"].update(candidates=0), "Summary counts"),
    "omitted-twice": (
        EXACT,
        lambda r: (
            r["deduplication"]["omitted"].append(copy.deepcopy(r["deduplication"]["omitted"][0])),
            r["summary"].update(candidates=2, **{"omitted-consumed": 2}),
        ),
        "duplicated or reissued",
    ),
    "omitted-entry-incomplete": (
        EXACT,
        lambda r: r["deduplication"]["omitted"][0].pop("prior-decision"),
        "missing required field 'prior-decision'",
    ),
    "skill-id-one-element-array": (
        PUBLIC,
        lambda r: r["skill"].update(id=["al-implementation-guidance"]),
        "non-empty string",
    ),  # §7.21: stricter than the reference
    "skill-plan-id": (PUBLIC, lambda r: r["skill"].update(id="al-development-plan"), "identity/version"),
    "pins-missing": (PUBLIC, lambda r: r.pop("pins"), "missing required field 'pins'"),
    "duplicate-samples": (
        PUBLIC,
        lambda r: r["knowledge"][0].update(
            **{
                "sample-paths": [
                    "microsoft/knowledge/interfaces/extend-published-interfaces-dont-edit-them.good.al",
                    "microsoft/knowledge/interfaces/extend-published-interfaces-dont-edit-them.GOOD.al",
                ]
            }
        ),
        "contains duplicates",
    ),  # §7.16: stricter than the reference
    "suppressed-also-selected": (
        EXPANDED,
        lambda r: r.update(suppressed=[{"reference": {"path": PII}, "reason": "configuration"}]),
        "Duplicate or selected suppressed",
    ),  # §7.16
    "suppressed-blank-reason": (
        EXPANDED,
        lambda r: r.update(suppressed=[{"reference": {"path": TOBECLASSIFIED}, "reason": ""}]),
        "non-empty string",
    ),  # §7.16
    "entry-sha-zeros": (PUBLIC, lambda r: r["knowledge"][0].update(sha="0" * 40), "recorded live checkout"),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_implementation_report_mutations_fail(real, tmp_path, name):
    case_id, mutate, key = MUTATIONS[name]
    if mutate is _upper_pin:
        mutate = mutate(real)
    fails_with(real, tmp_path, only(case_id, mutate), key, case_id)


def test_uppercase_checkout_pin_fails_while_uppercase_entry_sha_passes(real, tmp_path):
    fails_with(real, tmp_path, only(PUBLIC, _upper_pin(real)), "Knowledge checkout pin", PUBLIC)
    write_all(real, tmp_path / "upper", only(PUBLIC, lambda r: r["knowledge"][0].update(sha=real.head.upper())))
    assert_passes(real.score(results=tmp_path / "upper"))


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r["pins"].update(**{"knowledge-checkout": "unpinned"}),
        lambda r: r["deduplication"]["omitted"][0].update(**{"prior-decision": "something else entirely"}),
    ],
    ids=["unpinned-checkout", "prior-decision-not-compared"],
)
def test_tolerated_variations_pass(real, tmp_path, mutate):
    write_all(real, tmp_path / "results", only(EXACT, mutate))
    assert_passes(real.score(results=tmp_path / "results"))


def test_not_applicable_fields_are_free_but_typed(real, tmp_path):
    def free(report):
        report["summary"].update(phase="anything", decision="anything")
        report["pins"]["development-plan"] = "anything"

    write_all(real, tmp_path / "free", only(NOT_APPLICABLE, free))
    assert_passes(real.score(results=tmp_path / "free"))
    fails_with(
        real,
        tmp_path / "typed",
        only(NOT_APPLICABLE, lambda r: r["summary"].update(phase="")),
        "non-empty string",
        NOT_APPLICABLE,
    )


def test_public_interface_target_append_fails(real, tmp_path):
    write_all(real, tmp_path / "results")
    target = real.targets[PUBLIC]
    al_file = target / "CurrentImplementation.al"
    original = al_file.read_bytes()
    stat = al_file.stat()
    try:
        with open(al_file, "ab") as handle:
            handle.write(b"// appended by an agent\n")
        fails_with(real, tmp_path, None, "identity/content changed", PUBLIC)  # I7
    finally:
        import os

        al_file.write_bytes(original)
        os.utime(al_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_omitting_a_consumed_match_not_in_expected_omitted_fails(tmp_path):
    data = reference_manifest()
    data["cases"] = [case for case in data["cases"] if case["id"] == EXACT]
    data["cases"][0]["expectedOmitted"] = []
    scenario = build_scenario(tmp_path / "run", data)
    scenario.requests = {EXACT: {"task-context": {"goal": data["cases"][0]["development-plan"]["request"]}}}
    assert_passes(scenario.capture(), "captured")
    document = controlled_report(scenario, EXACT)
    report = document["guidanceReport"]
    consumed = data["cases"][0]["consumed-guidance"][0]
    report["deduplication"]["omitted"] = [dict(consumed)]
    report["summary"].update(candidates=1, **{"omitted-consumed": 1})
    scenario.write_result(document, EXACT)
    assert_fails(scenario.score(), "omitted set")
    _empty_omitted(report)
    scenario.write_result(document, EXACT)
    assert_passes(scenario.score())
    remove(tmp_path / "run")
