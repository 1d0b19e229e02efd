# ruff: noqa: E501
"""Report mode of the development-fixtures evaluator, against the reference data (spec §15 scenarios 1–7):
validation with every message, prepare, and scoring of implementation reports with their complete problem lists."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from development_util import (
    CAPABILITIES,
    MANIFEST,
    MODEL_IDS,
    bare_corpus,
    git,
    passing_report,
    read,
    reference_corpus,
    requires_reference,
    workspace,
    wrapper,
    write,
)

from bceval.cli import main
from bceval.evaluators.development import MARKER
from bceval.evaluators.development.manifest import load
from bceval.evaluators.development.report import score_results, score_wrapper

pytestmark = requires_reference
S = "setup-backed-master-data"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return reference_corpus(tmp_path_factory.mktemp("dev") / "corpus")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["development", *args])
    out, err = capsys.readouterr()
    return code, out, err


# --- §15.1–2: the reference validates; the bare snapshot gives exactly seven problems ---------------------------


def test_the_reference_manifest_validates_with_the_exact_line(corpus, capsys):
    code, out, _ = run(capsys, "validate", "--root", str(corpus))
    assert (code, out) == (
        0,
        "Development fixture validation PASSED: 5 cases; 5 of 10 capabilities have fixtures (minimum 0.5).\n",
    )


def test_the_bare_snapshot_gives_exactly_the_seven_problems_of_the_spec(tmp_path, capsys):
    code, out, _ = run(capsys, "validate", "--root", str(bare_corpus(tmp_path / "bare")))
    assert code == 1
    assert (
        out
        == """Development fixture validation FAILED (7 problem(s)):
  - Development skill does not exist: microsoft/skills/development/al-development.md
  - setup-backed-master-data: knowledge article does not exist: microsoft/knowledge/ui/showmandatory-on-code-required-page-fields.md
  - document-header-and-lines: knowledge article does not exist: microsoft/knowledge/data-modeling/initialize-document-defaults-in-initrecord.md
  - document-header-and-lines: knowledge article does not exist: microsoft/knowledge/ui/updatepropagation-both-refreshes-main-page.md
  - fix-filtered-batch-processing: knowledge article does not exist: microsoft/knowledge/performance/pass-var-record-to-preserve-partial-load-enumerator.md
  - versioned-data-upgrade: knowledge article does not exist: microsoft/knowledge/upgrade/appversion-meaning-depends-on-execution-context.md
  - versioned-data-upgrade: knowledge article does not exist: microsoft/knowledge/upgrade/install-and-upgrade-codeunits-have-no-order.md
"""
    )


# --- §15.3–4: prepare ---------------------------------------------------------------------------------------------


def test_prepare_writes_marker_index_and_hashed_requests(corpus, tmp_path, capsys):
    out = tmp_path / "prep"
    code, line, _ = run(capsys, "prepare", "--root", str(corpus), "--out", str(out))
    assert code == 0 and line.startswith("Development fixture validation PASSED: 5 cases")
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([MARKER, "knowledge-index.json", *(f"request-{m}.json" for m in MODEL_IDS.values())])
    api = read(out / "request-case-050de3f2.json")
    assert list(api) == [
        "protocol",
        "caseId",
        "skill",
        "skillInstructions",
        "knowledgeIndex",
        "task-context",
        "development-request",
        "resultSchema",
    ]
    assert list(api["task-context"]) == ["goal", "inputs-available", "technologies", "countries", "application-area"]
    request = api["development-request"]
    assert request["kind"] == "auto" and request["description"] is None and request["plan"]
    assert api["task-context"]["goal"] == request["plan"] and api["knowledgeIndex"] == "knowledge-index.json"
    assert api["skillInstructions"] == (corpus / "microsoft/skills/development/al-development.md").read_text()
    assert list(api["resultSchema"]["implementationReport"]) == [
        "skill",
        "outcome",
        "outcome-reason",
        "summary",
        "plan",
        "knowledge",
        "changes",
        "validation",
        "review",
        "review-rounds",
        "suppressed",
        "remaining",
    ]
    for model_id in MODEL_IDS.values():
        text = (out / f"request-{model_id}.json").read_text(encoding="utf-8")
        assert text.endswith("}\n") and "\r" not in text
        for hidden in ("expectedKind", "requiredKnowledge", "optionalKnowledge", "requiredChecks", str(corpus)):
            assert hidden not in text


def test_prepare_refuses_an_unmarked_directory_and_cleans_a_marked_one(corpus, tmp_path, capsys):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    code, _, err = run(capsys, "prepare", "--root", str(corpus), "--out", str(foreign))
    assert code == 2 and err == (
        f"bceval: PrepareDirectory is not empty and is not a BCQuality development evaluation directory: {foreign}\n"
    )
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    marked = tmp_path / "marked"
    marked.mkdir()
    (marked / MARKER).write_text("x\n")
    for name in ("request-case-00000000.json", "RESULT-case-1.json", "notes.txt"):
        (marked / name).write_text("{}\n")
    (marked / "keep").mkdir()
    assert run(capsys, "prepare", "--root", str(corpus), "--out", str(marked))[0] == 0
    names = {p.name for p in marked.iterdir()}
    assert {"notes.txt", "keep"} <= names and "request-case-00000000.json" not in names
    assert "RESULT-case-1.json" not in names and len([n for n in names if n.startswith("request-")]) == 5


def test_prepare_and_score_into_one_directory_is_refused(corpus, tmp_path, capsys):
    code, _, err = run(capsys, "score", "--root", str(corpus), "--out", str(tmp_path), "--results", str(tmp_path))
    assert code == 2 and "must be different directories" in err


# --- §15.5: every validation rule, from one-line mutations ---------------------------------------------------------


def _case(manifest: dict[str, Any], case_id: str = S) -> dict[str, Any]:
    return next(c for c in manifest["cases"] if c["id"] == case_id)


def _set(path: list[Any], value: Any) -> Any:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for key in path[:-1]:
            target = (
                next(c for c in target if c["id"] == key)
                if isinstance(target, list) and isinstance(key, str)
                else target[key]
            )
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return mutate


ADR = "setup-and-master-data"
VALIDATION = [
    ("version 2", "m", _set(["version"], 2), ["Unsupported development fixture version: 2"]),
    ("version 1.0 text", "m", _set(["version"], "1.0"), ["Unsupported development fixture version: 1.0"]),
    ("capability version 2", "c", _set(["version"], 2), ["Unsupported capability manifest version: 2"]),
    ("threshold 1.5", "m", _set(["minimumKnowledgeRecall"], 1.5), ["minimumKnowledgeRecall must be between 0 and 1."]),
    (
        "threshold text",
        "m",
        _set(["minimumKnowledgePrecision"], "0.5"),
        ["minimumKnowledgePrecision must be between 0 and 1."],
    ),
    (
        "rounds 0",
        "m",
        _set(["maximumReviewRounds"], 0),
        [
            "maximumReviewRounds must be a positive integer.",
            "maximumReviewRounds must match the development skill quality-round-limit.",
        ],
    ),
    (
        "rounds absent",
        "m",
        _set(["maximumReviewRounds"], KeyError),
        [
            "maximumReviewRounds must be a positive integer.",
            "maximumReviewRounds must match the development skill quality-round-limit.",
        ],
    ),
    (
        "rounds 2 against 3",
        "m",
        _set(["maximumReviewRounds"], 2),
        ["maximumReviewRounds must match the development skill quality-round-limit."],
    ),
    (
        "coverage minimum absent",
        "c",
        _set(["minimumFixtureCoverage"], KeyError),
        ["minimumFixtureCoverage must be between 0 and 1."],
    ),
    (
        "missing development-request",
        "m",
        _set(["cases", S, "development-request"], KeyError),
        [f"{S}: development-request is required."],
    ),
    (
        "kind sideways",
        "m",
        _set(["cases", S, "development-request", "kind"], "sideways"),
        [
            f"{S}: development-request.kind must be one of auto, feature, bug, refactor, upgrade, maintenance.",
            f"{S}: explicit request kind 'sideways' must equal expectedKind 'feature'.",
        ],
    ),
    (
        "blank description",
        "m",
        _set(["cases", S, "development-request", "description"], " "),
        [f"{S}: development-request requires description or plan."],
    ),
    (
        "empty criteria",
        "m",
        _set(["cases", S, "development-request", "acceptance-criteria"], []),
        [f"{S}: development-request.acceptance-criteria must not be empty."],
    ),
    ("null criteria pass", "m", _set(["cases", S, "development-request", "acceptance-criteria"], None), []),
    (
        "kind bug expected feature",
        "m",
        _set(["cases", S, "development-request", "kind"], "bug"),
        [f"{S}: explicit request kind 'bug' must equal expectedKind 'feature'."],
    ),
    (
        "expected kind invalid",
        "m",
        _set(["cases", S, "expectedKind"], "chore"),
        [
            f"{S}: expectedKind must be one of feature, bug, refactor, upgrade, maintenance.",
            f"{S}: explicit request kind 'feature' must equal expectedKind 'chore'.",
        ],
    ),
    (
        "check lint",
        "m",
        _set(["cases", S, "requiredChecks"], ["compile", "lint"]),
        [f"{S}: unsupported required check 'lint'."],
    ),
    (
        "duplicate check (tighten)",
        "m",
        _set(["cases", S, "requiredChecks"], ["compile", "Compile"]),
        [f"{S}: requiredChecks contains duplicate check ids."],
    ),
    (
        "capability status draft",
        "c",
        _set(["capabilities", 0, "status"], "draft"),
        [
            f"{ADR}: invalid capability status 'draft'.",
            "Fixture-backed capability coverage 0.4 is below minimumFixtureCoverage 0.5.",
        ],
    ),
    (
        "fixture status with no fixtures",
        "c",
        _set(["capabilities", 4, "status"], "fixture"),
        ["journals-and-posting: status 'fixture' requires at least one fixture."],
    ),
    (
        "unknown fixture id",
        "c",
        _set(["capabilities", 0, "fixtureIds"], [S, "no-such-case"]),
        [f"{ADR}: unknown fixture id 'no-such-case'."],
    ),
    (
        "one-sided link from a capability",
        "c",
        _set(["capabilities", 4, "fixtureIds"], [S]),
        [f"journals-and-posting: fixture '{S}' does not link back to the capability."],
    ),
    (
        "one-sided link from a case",
        "m",
        _set(["cases", S, "capabilities"], [ADR, "journals-and-posting"]),
        [f"{S}: capability 'journals-and-posting' does not link back to the fixture."],
    ),
    (
        "unknown capability",
        "m",
        _set(["cases", S, "capabilities"], [ADR, "API-x"]),
        [f"{S}: unknown capability 'API-x'."],
    ),
    (
        "coverage 4 of 10",
        "c",
        _set(["capabilities", 0, "status"], "planned"),
        ["Fixture-backed capability coverage 0.4 is below minimumFixtureCoverage 0.5."],
    ),
]


@pytest.mark.parametrize(("name", "which", "mutate", "expected"), VALIDATION, ids=[v[0] for v in VALIDATION])
def test_each_validation_rule_gives_its_message(corpus, tmp_path, name, which, mutate, expected):
    manifest, capabilities = read(corpus / MANIFEST), read(corpus / CAPABILITIES)
    mutate(manifest if which == "m" else capabilities)
    write(tmp_path / "m.json", manifest)
    write(tmp_path / "c.json", capabilities)
    assert load(corpus, tmp_path / "m.json", tmp_path / "c.json").problems == expected


def _validate_cases(corpus: Path, tmp_path: Path, edit: Any) -> list[str]:
    manifest = read(corpus / MANIFEST)
    edit(manifest)
    write(tmp_path / "m.json", manifest)
    return load(corpus, tmp_path / "m.json").problems


def test_an_uppercase_id_fails_the_tightened_kebab_check_and_the_links(corpus, tmp_path):
    # §10.1 tighten (confirmed): kebab-case is case-sensitive, so the upstream pass of §15.5 becomes a problem
    def edit(m: dict[str, Any]) -> None:
        _case(m)["id"] = "Setup-Backed-Master-Data"

    assert _validate_cases(corpus, tmp_path, edit) == [
        "Fixture id must be kebab-case: 'Setup-Backed-Master-Data'.",
        f"{ADR}: unknown fixture id '{S}'.",  # a non-kebab id is never registered; the case's own link is ci
    ]


def test_a_repeated_id_is_a_duplicate(corpus, tmp_path):
    def edit(m: dict[str, Any]) -> None:
        m["cases"].append(copy.deepcopy(_case(m)))

    assert _validate_cases(corpus, tmp_path, edit) == [f"Duplicate fixture id: {S}"]


def test_knowledge_path_rules(corpus, tmp_path):
    first = "microsoft/knowledge/data-modeling/setup-table-is-a-singleton.md"

    def edit(m: dict[str, Any]) -> None:
        case = _case(m)
        case["optionalKnowledge"] += [
            first.upper().replace("MD", "md").lower(),
            "microsoft\\knowledge\\x.md",
            "microsoft/knowledge/x.MD",
            "microsoft/knowledge/none.md",
            "microsoft/../microsoft/knowledge/x.md",
        ]

    assert _validate_cases(corpus, tmp_path, edit) == [
        f"{S}: requiredKnowledge and optionalKnowledge contain duplicates.",
        f"{S}: invalid knowledge path: microsoft\\knowledge\\x.md",
        f"{S}: invalid knowledge path: microsoft/knowledge/x.MD",
        f"{S}: knowledge article does not exist: microsoft/knowledge/none.md",
        f"{S}: invalid knowledge path: microsoft/../microsoft/knowledge/x.md",
    ]


def test_a_crash_of_the_reference_is_one_line_and_exit_2(corpus, tmp_path, capsys):
    manifest = read(corpus / MANIFEST)
    del manifest["minimumKnowledgeRecall"]
    write(tmp_path / "m.json", manifest)
    code, out, err = run(capsys, "validate", "--root", str(corpus), "--manifest", str(tmp_path / "m.json"))
    assert (code, out) == (
        2,
        "",
    ) and err == f"bceval: {tmp_path / 'm.json'}: member 'minimumKnowledgeRecall' is missing\n"
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    code, _, err = run(capsys, "validate", "--root", str(corpus), "--manifest", str(tmp_path / "bad.json"))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


# --- §15.6–7: scoring ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loaded(corpus):
    return load(corpus)


def test_a_controlled_passing_result_per_case_passes(corpus, loaded, tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    for case in read(corpus / MANIFEST)["cases"]:
        ws = workspace(tmp_path / case["id"])
        write(
            results / f"result-{MODEL_IDS[case['id']]}.json", wrapper(MODEL_IDS[case["id"]], ws, passing_report(case))
        )
    code, out, _ = run(capsys, "score", "--root", str(corpus), "--results", str(results))
    assert (code, out) == (0, "Development fixture scoring PASSED: 5 case(s).\n")


def _problems(loaded, corpus, tmp_path, edit_report=None, edit_wrapper=None, edit_ws=None) -> list[str]:
    from bceval.evaluators.development.processes import probe_workspace

    raw = _case(read(corpus / MANIFEST))
    case = next(c for c in loaded.cases if c.id == S)
    ws = workspace(tmp_path / "ws")
    report = passing_report(raw)
    if edit_report:
        edit_report(report)
    doc = wrapper(MODEL_IDS[S], ws, report)
    if edit_wrapper:
        edit_wrapper(doc)
    if edit_ws:
        edit_ws(ws)
    return score_wrapper(loaded, case, doc, probe_workspace).problems


def _drop(name):
    return lambda r: r.pop(name)


FIELD_KNOCK_ONS = {
    "skill": [f"{S}: implementation report skill is ''."],
    "outcome": [f"{S}: implementation outcome is ''."],
    "summary": [f"{S}: summary.request is missing or empty."],
    "plan": [f"{S}: plan.kind '' does not match expected mode 'feature'."],
    "knowledge": [
        f"{S}: implementation report contains no knowledge entries.",
        f"{S}: knowledge recall 0 is below 1.",
        f"{S}: knowledge precision 0 is below 0.5.",
    ],
    "changes": [
        f"{S}: implementation report contains no changed files.",
        f"{S}: worktree change is absent from the implementation report: src/Member.Table.al",
    ],
    "validation": [f"{S}: required check '{c}' did not pass exactly once." for c in ("compile", "tests", "review")],
    "review": [f"{S}: complete post-implementation review is missing."],
    "review-rounds": [f"{S}: review-rounds must contain 1..3 entries."],
    "suppressed": [],
    "remaining": [],
}


@pytest.mark.parametrize("field", list(FIELD_KNOCK_ONS))
def test_each_missing_report_field_and_its_knock_on_messages(loaded, corpus, tmp_path, field):
    assert _problems(loaded, corpus, tmp_path, _drop(field)) == [
        f"{S}: implementation report is missing '{field}'.",
        *FIELD_KNOCK_ONS[field],
    ]


def _ext(key, items):
    return lambda r: r[key].extend(items)


REQ = "microsoft/knowledge/data-modeling/setup-table-is-a-singleton.md"
OPT = "microsoft/knowledge/style/tooltip-required-on-page-fields.md"
OTHER = [
    f"microsoft/knowledge/{d}"
    for d in (
        "performance/use-setloadfields-for-partial-records.md",
        "performance/use-isempty-not-count-for-existence.md",
        "security/permission-set-avoid-wildcard-grants.md",
    )
]


def _extras(corpus: Path, count: int) -> list[dict[str, str]]:
    raw = _case(read(corpus / MANIFEST))
    accepted = set(raw["requiredKnowledge"] + raw["optionalKnowledge"])
    found = sorted(p.relative_to(corpus).as_posix() for p in (corpus / "microsoft/knowledge").rglob("*.md"))
    return [{"path": p, "used-for": "x"} for p in found if p not in accepted][:count]


SCORING = [
    ("skill al-foo", lambda r: r["skill"].update(id="al-foo"), [f"{S}: implementation report skill is 'al-foo'."]),
    ("blank request", lambda r: r["summary"].update(request="  "), [f"{S}: summary.request is missing or empty."]),
    (
        "kind mismatch",
        lambda r: r["plan"].update(kind="bug"),
        [f"{S}: plan.kind 'bug' does not match expected mode 'feature'."],
    ),
    ("outcome partial", lambda r: r.update(outcome="partial"), [f"{S}: implementation outcome is 'partial'."]),
    ("outcome Completed passes", lambda r: r.update(outcome="Completed"), []),
    (
        "knowledge []",
        lambda r: r.update(knowledge=[]),
        [
            f"{S}: implementation report contains no knowledge entries.",
            f"{S}: knowledge recall 0 is below 1.",
            f"{S}: knowledge precision 0 is below 0.5.",
        ],
    ),
    (
        "knowledge null",
        lambda r: r.update(knowledge=None),
        [
            f"{S}: knowledge entry has a missing or invalid path ''.",
            f"{S}: knowledge entry '' has no used-for explanation.",
            f"{S}: knowledge recall 0 is below 1.",
            f"{S}: knowledge precision 0 is below 0.5.",
        ],
    ),
    ("one required missing", lambda r: r["knowledge"].pop(0), [f"{S}: knowledge recall 0.8 is below 1."]),
    (
        "duplicate path",
        lambda r: r["knowledge"].append({"path": REQ.upper().lower(), "used-for": "again"}),
        [f"{S}: knowledge contains duplicate paths."],
    ),
    (
        "parent path",
        lambda r: r["knowledge"].append({"path": "microsoft/../" + REQ, "used-for": "x"}),
        [f"{S}: knowledge entry has a missing or invalid path 'microsoft/../{REQ}'."],
    ),
    (
        "blank used-for",
        lambda r: r["knowledge"][0].update({"used-for": ""}),
        [f"{S}: knowledge entry '{REQ}' has no used-for explanation."],
    ),
    (
        "compile not-run",
        lambda r: r["validation"][0].update(status="not-run"),
        [f"{S}: required check 'compile' did not pass exactly once."],
    ),
    (
        "two compile entries",
        lambda r: r["validation"].append(dict(r["validation"][0])),
        [f"{S}: required check 'compile' did not pass exactly once."],
    ),
    (
        "passed without details",
        lambda r: r["validation"][0].update(details=" "),
        [f"{S}: required check 'compile' lacks command or evidence details."],
    ),
    (
        "no changes",
        lambda r: r.update(changes=[]),
        [
            f"{S}: implementation report contains no changed files.",
            f"{S}: worktree change is absent from the implementation report: src/Member.Table.al",
        ],
    ),
    (
        "a reported path absent",
        _ext("changes", [{"path": "src/Gone.al", "action": "created", "purpose": "x"}]),
        [f"{S}: reported change is absent from the worktree diff: src/Gone.al"],
    ),
    (
        "a rooted reported path",
        _ext("changes", [{"path": "/etc/x.al", "action": "created", "purpose": "x"}]),
        [
            f"{S}: changed path is not repository-relative: /etc/x.al",
            f"{S}: reported change is absent from the worktree diff: /etc/x.al",
        ],
    ),
    (
        "review outcome partial",
        lambda r: r["review"].update(outcome="partial"),
        [f"{S}: post-implementation review outcome is 'partial'."],
    ),
    ("review missing a member", lambda r: r["review"].pop("suppressed"), [f"{S}: review is missing 'suppressed'."]),
    (
        "one major while counts say 0",
        lambda r: r["review"]["findings"].append({"id": "f1", "severity": "Major"}),
        [f"{S}: post-implementation review has 1 gating finding(s)."],
    ),
    ("counts say 2 majors, no findings", lambda r: r["review"]["summary"]["counts"].update(major=2), []),
    ("rounds []", lambda r: r.update({"review-rounds": []}), [f"{S}: review-rounds must contain 1..3 entries."]),
    (
        "4 rounds",
        lambda r: r.update(
            {
                "review-rounds": [{"round": i, "outcome": "fixing", "gating-finding-ids": ["a"]} for i in (1, 2, 3)]
                + [{"round": 4, "outcome": "clean", "gating-finding-ids": []}]
            }
        ),
        [f"{S}: review-rounds must contain 1..3 entries."],
    ),
    (
        "round numbers 1, 3",
        lambda r: r.update(
            {
                "review-rounds": [
                    {"round": 1, "outcome": "fixing", "gating-finding-ids": ["a"]},
                    {"round": 3, "outcome": "clean", "gating-finding-ids": []},
                ]
            }
        ),
        [f"{S}: review round numbering is not contiguous."],
    ),
    (
        "outcome done",
        lambda r: r["review-rounds"][0].update(outcome="done"),
        [
            f"{S}: review round 1 has invalid outcome 'done'.",
            f"{S}: completed implementation must end with a clean review round.",
        ],
    ),
    (
        "clean with ids",
        lambda r: r["review-rounds"][0].update({"gating-finding-ids": ["a"]}),
        [f"{S}: clean review round 1 must have no gating IDs."],
    ),
    (
        "fixing without ids",
        lambda r: r.update(
            {
                "review-rounds": [
                    {"round": 1, "outcome": "fixing", "gating-finding-ids": []},
                    {"round": 2, "outcome": "clean", "gating-finding-ids": []},
                ]
            }
        ),
        [f"{S}: review round 1 outcome 'fixing' requires gating IDs."],
    ),
    (
        "duplicate ids",
        lambda r: r.update(
            {
                "review-rounds": [
                    {"round": 1, "outcome": "fixing", "gating-finding-ids": ["a", "A"]},
                    {"round": 2, "outcome": "clean", "gating-finding-ids": []},
                ]
            }
        ),
        [f"{S}: review round 1 has duplicate gating IDs."],
    ),
    (
        "last round fixing",
        lambda r: r["review-rounds"][0].update({"outcome": "fixing", "gating-finding-ids": ["a"]}),
        [f"{S}: completed implementation must end with a clean review round."],
    ),
    (
        "last round without outcome",
        lambda r: r["review-rounds"][0].pop("outcome"),
        [
            f"{S}: review round 1 has invalid outcome ''.",
            f"{S}: completed implementation must end with a clean review round.",
        ],
    ),
    ("remaining null", lambda r: r.update(remaining=None), [f"{S}: completed report still lists remaining work."]),
]


@pytest.mark.parametrize(("name", "edit", "expected"), SCORING, ids=[s[0] for s in SCORING])
def test_each_scoring_rule_gives_its_messages(loaded, corpus, tmp_path, name, edit, expected):
    assert _problems(loaded, corpus, tmp_path, edit) == expected


def test_precision_counts_extras(loaded, corpus, tmp_path):
    five = _extras(corpus, 5)
    assert _problems(loaded, corpus, tmp_path, _ext("knowledge", five)) == []
    six = _extras(corpus, 6)
    assert _problems(loaded, corpus, tmp_path / "six", _ext("knowledge", six)) == [
        f"{S}: knowledge precision 0.45454545454545453 is below 0.5."
    ]


def test_wrapper_rules(loaded, corpus, tmp_path):
    assert _problems(loaded, corpus, tmp_path, edit_wrapper=lambda w: w.update(caseId="case-00000000")) == [
        f"{S}: result caseId mismatch."
    ]
    assert _problems(loaded, corpus, tmp_path / "2", edit_wrapper=lambda w: w.update(caseId=MODEL_IDS[S].upper())) == []
    assert _problems(loaded, corpus, tmp_path / "3", edit_wrapper=lambda w: w.pop("implementationReport")) == [
        f"{S}: implementationReport is missing."
    ]


def test_workspace_rules(loaded, corpus, tmp_path):
    assert _problems(loaded, corpus, tmp_path / "a", edit_wrapper=lambda w: w.pop("workspaceRoot")) == [
        f"{S}: workspaceRoot is missing or unavailable."
    ]
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _problems(loaded, corpus, tmp_path / "b", edit_wrapper=lambda w: w.update(workspaceRoot=str(plain))) == [
        f"{S}: workspaceRoot is not a readable git worktree."
    ]  # review, rounds and remaining are then not checked
    untracked = _problems(loaded, corpus, tmp_path / "c", edit_ws=lambda ws: (ws / "src" / "New.al").write_text("x"))
    assert untracked == [f"{S}: worktree change is absent from the implementation report: src/New.al"]
    ignored = _problems(loaded, corpus, tmp_path / "d", edit_ws=lambda ws: (ws / "build.app").write_text("x"))
    assert ignored == []

    def commit(ws: Path) -> None:
        git(ws, "commit", "-q", "-am", "agent commit")

    assert _problems(loaded, corpus, tmp_path / "e", edit_ws=commit) == [
        f"{S}: reported change is absent from the worktree diff: src/Member.Table.al"
    ]


def test_missing_and_unparsable_result_files(loaded, corpus, tmp_path):
    from bceval.evaluators.development.processes import probe_workspace

    (tmp_path / f"result-{MODEL_IDS[S]}.json").write_text('{"caseId": "x", "secret": ', encoding="utf-8")
    scores = {s.case: s.problems for s in score_results(loaded, tmp_path, probe_workspace)}
    assert scores["document-header-and-lines"] == ["document-header-and-lines: missing result file."]
    assert scores[S] == [
        f"{S}: result is not valid JSON: not strict JSON (UTF-8, unique members, no NaN, at most 32 MiB, depth 64)"
    ]
    assert "secret" not in json.dumps(scores)


def test_report_text_reaches_the_console_escaped(loaded, corpus, tmp_path, capsys):
    from bceval.evaluators.development.cli import SCORING_FAILED
    from bceval.evaluators.development.runner import problem_block

    problems = _problems(loaded, corpus, tmp_path, lambda r: r["plan"].update(kind="bug\x1b[2J\rfeature"))
    block = problem_block(SCORING_FAILED, problems)
    assert "\x1b" not in block and "\r" not in block and "bug\\x1b[2J\\rfeature" in block


def test_counts_that_disagree_with_the_findings_are_a_lint_not_a_failure(loaded, corpus, tmp_path):
    from bceval.evaluators.development.processes import probe_workspace

    raw = _case(read(corpus / MANIFEST))
    case = next(c for c in loaded.cases if c.id == S)
    report = passing_report(raw)
    report["review"]["summary"]["counts"]["major"] = 2
    score = score_wrapper(loaded, case, wrapper(MODEL_IDS[S], workspace(tmp_path / "ws"), report), probe_workspace)
    assert score.problems == []
    assert score.lints == [
        f"{S}: review summary.counts do not match the severities of its findings (bceval lint, not gating)."
    ]
