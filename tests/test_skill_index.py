"""The skill index (upstream-2026-09.md §5): `bceval skills build` and `check`, and the leaf order it gives."""

from __future__ import annotations

import hashlib
import json

import pytest
from cliutil import run_cli
from conftest import SHARED_CORPUS, requires_shared

from bceval.corpus.skills import skill_index

LEAVES = ("performance", "security")


def skill(skill_id: str, *extra: str, outputs: str = "[findings-report]", kind: str = "action-skill") -> str:
    lines = [f"kind: {kind}", f"id: {skill_id}", "version: 1", f"title: {skill_id} title", "description: Reviews."]
    lines += ["inputs: [pr-diff, file-path]", f"outputs: {outputs}", *extra]
    return "---\n" + "".join(f"{line}\n" for line in lines) + "---\n\n# Skill\n"


def super_skill(*leaves: str, layer: str = "microsoft") -> str:
    subs = [f"  - {layer}/skills/review/al-{leaf}-review.md" for leaf in leaves]
    return skill("al-code-review", 'bc-version: [all, 27, "28.."]', "technologies: [al]", "sub-skills:", *subs)


@pytest.fixture
def skills(small_corpus):
    """The small corpus's two leaves as action skills, composed security first by the review super-skill."""
    for leaf in LEAVES:
        small_corpus.leaf(leaf, body=skill(f"al-{leaf}-review", "countries: [w1]"))
    small_corpus.write("microsoft/skills/review/al-code-review.md", super_skill("security", "performance"))
    small_corpus.write("microsoft/skills/notes/readme.md", skill("notes", kind="guide"))  # no action skill
    small_corpus.write("community/skills/review/al-performance-review.md", skill("al-performance-review"))
    return small_corpus


def test_build_writes_the_index_in_layer_and_path_order(skills, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    code, stdout, _ = run_cli(capsys, "skills", "build", "--corpus", skills.root)
    path = skills.root / "skill-index.json"
    assert code == 0 and stdout[-1] == f"Skill index: 4 action skill(s). Index: {path}"
    data = path.read_bytes()
    assert data.endswith(b"}\n") and b"\n" not in data[:-1] and not data.startswith(b"\xef\xbb\xbf")
    index = json.loads(data)
    assert list(index) == ["version", "generatedAt", "skillCount", "sourceSnapshot", "skills"]
    assert index["generatedAt"] == "1970-01-01T00:00:00.0000000Z"
    assert [record["path"] for record in index["skills"]] == [
        "microsoft/skills/review/al-code-review.md",
        "microsoft/skills/review/al-performance-review.md",
        "microsoft/skills/review/al-security-review.md",
        "community/skills/review/al-performance-review.md",  # the same id in another layer overrides it
    ]
    top = index["skills"][0]
    assert list(top) == [
        "path",
        "layer",
        "id",
        "version",
        "title",
        "description",
        "inputs",
        "outputs",
        "filters",
        "subSkills",
        "sourceSha256",
    ]
    assert top["filters"] == {
        "bc-version": ["all", 27, "28.."],
        "technologies": ["al"],
        "countries": [],
        "application-area": [],
    }
    assert top["subSkills"] == [
        "microsoft/skills/review/al-security-review.md",
        "microsoft/skills/review/al-performance-review.md",
    ]
    assert top["sourceSha256"] == hashlib.sha256((skills.root / top["path"]).read_bytes()).hexdigest()
    sources = [{"path": r["path"], "sha256": r["sourceSha256"]} for r in index["skills"]]
    assert index["sourceSnapshot"] == hashlib.sha256(json.dumps(sources, separators=(",", ":")).encode()).hexdigest()
    assert run_cli(capsys, "skills", "--corpus", skills.root)[1] == ["Skill index check PASSED: 4 action skills."]


def test_check_lists_every_difference(skills, capsys):
    assert run_cli(capsys, "skills", "check", "--corpus", skills.root)[:2] == (
        1,
        [f"{skills.root / 'skill-index.json'}: no skill index; `bceval skills build` writes it"],
    )
    run_cli(capsys, "skills", "build", "--corpus", skills.root)
    where = skills.root / "skill-index.json"
    index = json.loads(where.read_text())
    index["skills"][1]["id"] = "Upper"
    where.write_text(json.dumps(index))
    skills.write("microsoft/skills/review/al-security-review.md", skill("al-security-review", "countries: [dk]"))
    code, stdout, _ = run_cli(capsys, "skills", "check", "--corpus", skills.root)
    assert code == 1
    assert stdout == [
        f"{where}: skills.1.id: String should match pattern '^[a-z0-9]+(-[a-z0-9]+)*$'",
        f"{where}: sourceSnapshot is {index['sourceSnapshot']!r}, the skills give "
        f"{skill_index(skills.root)['sourceSnapshot']!r}",
        f"{where}: microsoft/skills/review/al-performance-review.md: id differ from the skill",
        f"{where}: microsoft/skills/review/al-security-review.md: filters, sourceSha256 differ from the skill",
    ]


@pytest.mark.parametrize(
    ("rel", "text", "message"),
    [
        (
            "microsoft/skills/x.md",
            "# no frontmatter\n\nText.\n",
            "Missing frontmatter in '{root}/microsoft/skills/x.md'.",
        ),
        (
            "microsoft/skills/x.md",
            "---\nkind: action-skill\n\n",
            "Unterminated frontmatter in '{root}/microsoft/skills/x.md'.",
        ),
        (
            "microsoft/skills/x.md",
            skill("x").replace("title: x title\n", "title: \n"),
            "Action skill '{root}/microsoft/skills/x.md' is missing required frontmatter 'title'.",
        ),
        (
            "microsoft/skills/x.md",
            skill("x").replace("version: 1", "version: 0"),
            "Action skill 'microsoft/skills/x.md' has an invalid version.",
        ),
        (
            "microsoft/skills/x.md",
            skill("x", "sub-skills: []"),
            "Super-skill 'microsoft/skills/x.md' has an empty sub-skills list.",
        ),
        (
            "microsoft/skills/x.md",
            skill("AL-Security-Review"),
            "Duplicate action-skill IDs within a layer: microsoft:al-security-review",
        ),
        (
            "microsoft/skills/review/al-code-review.md",
            super_skill("security", "security"),
            "Super-skill 'microsoft/skills/review/al-code-review.md' declares duplicate sub-skill "
            "'microsoft/skills/review/al-security-review.md'.",
        ),
        (
            "microsoft/skills/review/al-code-review.md",
            super_skill("ui"),
            "Super-skill 'microsoft/skills/review/al-code-review.md' references missing action skill "
            "'microsoft/skills/review/al-ui-review.md'.",
        ),
        (
            "microsoft/skills/x.md",
            skill("x", "sub-skills:", "  - microsoft/skills/review/al-code-review.md"),
            "Nested super-skills are not supported: 'microsoft/skills/x.md' references "
            "'microsoft/skills/review/al-code-review.md'.",
        ),
        (
            "microsoft/skills/review/al-security-review.md",
            skill("al-security-review", outputs="[development-guidance-report]"),
            "Sub-skill 'microsoft/skills/review/al-security-review.md' must produce findings-report.",
        ),
    ],
)
def test_a_skill_the_generator_refuses(skills, capsys, rel, text, message):
    skills.write(rel, text)
    code, stdout, _ = run_cli(capsys, "skills", "build", "--corpus", skills.root)
    assert code == 1
    assert stdout == [f"Skill index build FAILED: {message.format(root=skills.root)}"]
    assert not (skills.root / "skill-index.json").exists()


def case_ids(capsys, corpus, out) -> list[str]:
    assert run_cli(capsys, "validate", "--corpus", corpus.root, "--out", out)[0] == 0
    return [case["id"] for case in json.loads((out / ".build" / "review" / "cases.json").read_text())["cases"]]


def test_the_skill_index_gives_the_leaf_order(skills, tmp_path, capsys):
    out = tmp_path / "out"
    by_name = ["performance-bad", "performance-good", "security-bad", "security-good"]
    assert case_ids(capsys, skills, out) == by_name
    run_cli(capsys, "skills", "build", "--corpus", skills.root)
    assert case_ids(capsys, skills, out) == by_name[2:] + by_name[:2]  # the super-skill's declared order
    (skills.root / "skill-index.json").unlink()
    assert case_ids(capsys, skills, out) == by_name


@requires_shared
def test_the_shared_corpus_builds(tmp_path, capsys):
    target = tmp_path / "skill-index.json"
    code, stdout, _ = run_cli(capsys, "skills", "build", "--corpus", SHARED_CORPUS, "--skill-index", target)
    assert code == 0 and stdout[-1] == f"Skill index: 17 action skill(s). Index: {target}"
    top = next(record for record in json.loads(target.read_text())["skills"] if record["id"] == "al-code-review")
    assert len(top["subSkills"]) == 16
    assert top["subSkills"][:2] == [
        "microsoft/skills/review/al-performance-review.md",
        "microsoft/skills/review/al-security-review.md",
    ]
