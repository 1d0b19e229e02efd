"""Scorecard, publish and compare: statistics, schema, page history rules, paired comparison."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace

import jsonschema
import pytest
import yaml
from conftest import DEMO_CORPUS, REPO
from graphutil import run_graph, settings_for

from bceval.cli.main import _parser, main
from bceval.errors import BcevalError
from bceval.scorecard.compare import compare
from bceval.scorecard.model import Scorecard, read_scorecard
from bceval.scorecard.publish import HISTORY_BEGIN, LATEST_BEGIN, MAX_HISTORY_ROWS, update_page
from bceval.scorecard.render import render_html
from bceval.scorecard.stats import mcnemar_exact, wilson_interval


@pytest.mark.parametrize(
    ("passed", "total", "low", "high"),
    [(0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (5, 10, 0.2366, 0.7634), (2, 8, 0.0715, 0.5907), (0, 0, 0.0, 1.0)],
)
def test_wilson_interval_matches_published_values(passed, total, low, high):
    got = wilson_interval(passed, total)
    assert got == pytest.approx((low, high), abs=5e-5)


@pytest.mark.parametrize(
    ("regressed", "fixed", "expected"),
    [(1, 5, 2 * (1 + 6) / 64), (0, 8, 2 / 256), (3, 3, 1.0), (0, 0, 1.0), (2, 7, 2 * (1 + 9 + 36) / 512)],
)
def test_mcnemar_exact_against_hand_computation(regressed, fixed, expected):
    assert mcnemar_exact(regressed, fixed) == pytest.approx(expected)


@pytest.fixture(scope="module")
def cards(tmp_path_factory):
    """Scorecards of the oracle and baseline runs on the demo corpus."""
    made = {}
    for adapter in ("oracle", "baseline"):
        settings = settings_for(DEMO_CORPUS, tmp_path_factory.mktemp(adapter) / "out")
        settings = replace(settings, adapter=adapter)
        run_graph(settings, "summary")
        made[adapter] = settings.scorecard_json
    return made


def test_scorecards_validate_against_the_committed_schema(cards):
    schema = json.loads((REPO / "schemas" / "scorecard.schema.json").read_text())
    for path in cards.values():
        document = json.loads(path.read_text())
        jsonschema.Draft202012Validator(schema).validate(document)
        assert document["corpus"]["commit"] != ""
        assert len(document["corpus"]["requestSetSha256"]) == 64
        assert document["tool"]["packages"]["doit"] != "missing"


def test_scorecard_content(cards):
    oracle, baseline = read_scorecard(cards["oracle"]), read_scorecard(cards["baseline"])
    assert oracle.verdict == "passed" and baseline.verdict == "failed"
    assert oracle.corpus.requestSetSha256 == baseline.corpus.requestSetSha256
    assert (baseline.recall.passed, baseline.recall.total) == (2, 8)
    assert baseline.recall.wilson95 == pytest.approx(wilson_interval(2, 8))
    assert sum(d.positiveTotal + d.cleanTotal for d in baseline.domains) == len(baseline.cases) == 16
    assert baseline.adapter.pinned and baseline.adapter.name == "baseline"
    assert (REPO / "schemas").is_dir() and cards["baseline"].with_suffix(".html").is_file()


def test_html_is_self_contained_and_escapes(cards):
    card = read_scorecard(cards["baseline"])
    card.cases[0].missing = ["<script>alert(1)</script>"]
    card.cases[0].passed = False
    html = render_html(card)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "http://" not in html and "https://" not in html and "<link" not in html
    assert "FAILED" in html and 'class="bar"' in html


def test_unpinned_model_is_visible(cards):
    card = read_scorecard(cards["baseline"])
    card.adapter.pinned = False
    page = update_page(None, card, REPO / "x.md")
    assert "unpinned: not reproducible" in page and "(unpinned)" in page


def with_run(card: Scorecard, number: int) -> Scorecard:
    return card.model_copy(update={"runId": f"{number:016x}" + "0" * 48})


def history(page: str) -> list[str]:
    section = page.split(HISTORY_BEGIN, 1)[1]
    return [line for line in section.splitlines() if line.startswith("| 20")]


def test_publish_adds_one_row_at_the_top_and_is_idempotent(cards):
    first, second = read_scorecard(cards["oracle"]), read_scorecard(cards["baseline"])
    page = update_page(None, first, REPO / "x.md")
    again = update_page(page, first, REPO / "x.md")
    assert again == page and len(history(page)) == 1
    page = update_page(page, second, REPO / "x.md")
    rows = history(page)
    assert len(rows) == 2 and "baseline" in rows[0] and "oracle" in rows[1]
    assert "FAILED: baseline" in page.split(LATEST_BEGIN, 1)[1] and "PASSED: oracle" not in page


def test_publish_keeps_at_most_100_rows_and_never_edits_older_ones(cards):
    card = read_scorecard(cards["oracle"])
    page = update_page(None, with_run(card, 0), REPO / "x.md")
    for number in range(1, MAX_HISTORY_ROWS + 5):
        page = update_page(page, with_run(card, number), REPO / "x.md")
    rows = history(page)
    assert len(rows) == MAX_HISTORY_ROWS
    assert f"`{MAX_HISTORY_ROWS + 4:016x}`" in rows[0] and f"`{5:016x}`" in rows[-1]
    edited = page.replace(rows[3], rows[3].replace("oracle", "oracle (hand note)"))
    updated = update_page(edited, with_run(card, 999), REPO / "x.md")
    assert "oracle (hand note)" in updated


def test_hand_edits_outside_the_markers_survive(cards):
    card = read_scorecard(cards["oracle"])
    page = update_page(None, card, REPO / "x.md")
    page = page.replace("# bceval scorecard", "# Our quality dashboard\n\nRead this first.")
    page += "\nFooter written by a maintainer.\n"
    updated = update_page(page, read_scorecard(cards["baseline"]), REPO / "x.md")
    assert updated.startswith("# Our quality dashboard\n\nRead this first.")
    assert updated.endswith("\nFooter written by a maintainer.\n")


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda p: p.replace(HISTORY_BEGIN, ""), "is missing"),
        (lambda p: p + "\n" + LATEST_BEGIN + "\n", "repeated 2 times"),
        (
            lambda p: p.replace(LATEST_BEGIN, "@@").replace(HISTORY_BEGIN, LATEST_BEGIN).replace("@@", HISTORY_BEGIN),
            "out of order",
        ),
        (lambda p: "# Someone else's page\n", "not ours"),
    ],
)
def test_broken_or_foreign_pages_are_refused_untouched(cards, tmp_path, capsys, mangle, message):
    page_path = tmp_path / "page.md"
    page_path.write_text(mangle(update_page(None, read_scorecard(cards["oracle"]), page_path)))
    before = page_path.read_bytes()
    out = cards["oracle"].parent
    code = main(
        ["publish", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "oracle", "--page", str(page_path)]
    )
    err = capsys.readouterr().err.strip().splitlines()[1:]  # after the corpus line
    assert code == 2 and len(err) == 1 and message in err[0] and str(page_path) in err[0]
    assert page_path.read_bytes() == before


def test_publish_through_the_cli_twice_adds_one_row(cards, tmp_path, capsys):
    page_path = tmp_path / "scorecard.md"
    out = cards["oracle"].parent
    args = ["publish", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "oracle", "--page", str(page_path)]
    assert main(args) == 0
    first = page_path.read_text()
    assert main(args) == 0
    assert "already up to date" in capsys.readouterr().out
    assert len(history(page_path.read_text())) == 1 and len(history(first)) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"schemaVersion": 1, "runId": "x"', "invalid JSON"),
        ('{"hello": 1}', "not a bceval scorecard"),
        ('{"schemaVersion": 3, "runId": "x"}', "newer than this bceval reads"),
        ('{"schemaVersion": 1, "runId": "x"}', "not a valid bceval scorecard"),
    ],
)
def test_bad_scorecards_are_refused(tmp_path, content, message):
    path = tmp_path / "card.json"
    path.write_text(content)
    with pytest.raises(BcevalError, match=message):
        read_scorecard(path)


def crafted(card: Scorecard, passing: set[str]) -> Scorecard:
    rows = [row.model_copy(update={"passed": row.id in passing}) for row in card.cases]
    return card.model_copy(update={"cases": rows})


def test_compare_counts_and_mcnemar(cards, tmp_path, capsys):
    base = read_scorecard(cards["oracle"])
    ids = [row.id for row in base.cases]
    old = crafted(base, set(ids[:10]))  # passes 0..9
    new = crafted(base, set(ids[1:3]) | set(ids[10:16]))  # loses 0 and 3..9 (8), gains 10..15 (6)
    result = compare(old, new)
    assert (len(result.regressed), len(result.fixed), len(result.still_passing), len(result.still_failing)) == (
        8,
        6,
        2,
        0,
    )
    assert result.p_value == pytest.approx(mcnemar_exact(8, 6))
    assert result.p_value == pytest.approx(min(1.0, 2 * sum(__import__("math").comb(14, i) for i in range(7)) / 2**14))
    old_path, new_path = tmp_path / "old.json", tmp_path / "new.json"
    old_path.write_text(old.model_dump_json())
    new_path.write_text(new.model_dump_json())
    assert main(["compare", str(old_path), str(new_path)]) == 0
    output = capsys.readouterr().out
    assert "Fixed 6, regressed 8" in output and "| Domain | Old | New | Delta |" in output
    assert main(["compare", str(old_path), str(new_path), "--fail-on-regression"]) == 1
    assert main(["compare", str(new_path), str(new_path), "--fail-on-regression"]) == 0


def test_compare_refuses_different_inputs_and_missing_files(cards, tmp_path, capsys):
    card = read_scorecard(cards["oracle"])
    other = card.model_copy(update={"corpus": card.corpus.model_copy(update={"requestSetSha256": "0" * 64})})
    old_path, new_path = tmp_path / "old.json", tmp_path / "new.json"
    old_path.write_text(card.model_dump_json())
    new_path.write_text(other.model_dump_json())
    assert main(["compare", str(old_path), str(new_path)]) == 2
    assert "different request sets" in capsys.readouterr().err
    assert main(["compare", str(old_path), str(new_path), "--allow-different-inputs"]) == 0
    capsys.readouterr()
    assert main(["compare", str(old_path), str(tmp_path / "absent.json")]) == 2
    assert capsys.readouterr().err.strip() == f"bceval: {tmp_path / 'absent.json'}: scorecard not found"


@pytest.mark.parametrize(
    ("name", "jobs", "first"),
    [
        ("bceval.yml", {"deterministic", "coverage-gate", "live"}, "bceval score --adapter oracle"),
        ("bceval-experiment.yml", {"answer", "report"}, "bceval experiment ab --base"),
    ],
)
def test_workflow_parses_and_uses_only_documented_commands(name, jobs, first):
    workflow = yaml.safe_load((REPO / ".github/workflows" / name).read_text())
    documented = (REPO / "docs" / "ci.md").read_text()
    assert set(workflow["jobs"]) == jobs
    commands = []
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            for line in step.get("run", "").splitlines():
                for command in line.split("&&"):
                    command = command.strip()
                    if command and not command.startswith(("if ", "echo ", "else", "fi", "then")):
                        commands.append(command)
    assert any(c.startswith(first) for c in commands)
    for command in commands:
        assert command in documented, f"workflow command not documented in docs/ci.md: {command}"
        sample = {"$EPOCHS": "3", "$SHARD": "1", "$BASE": "main", "$HEAD": "HEAD", "$RUNNER_TEMP": "/tmp"}
        for variable, value in sample.items():  # what the workflow's environment puts there
            command = command.replace(variable, value)
        words = shlex.split(command)
        while words and "=" in words[0] and not words[0].startswith("-"):  # VAR=value before the program
            words = words[1:]
        if words and words[0] == "bceval":
            _parser().parse_args(words[1:])  # exits on an unknown subcommand or flag


def _github_glob(pattern: str) -> re.Pattern[str]:
    """GitHub's path filters: `**` crosses folders, `*` stays within one."""
    parts = re.split(r"(\*\*/?|\*)", pattern)
    translated = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*"}
    return re.compile("".join(translated.get(part, re.escape(part)) for part in parts) + r"\Z")


def test_the_experiment_workflow_fires_on_changes_to_this_repositorys_corpus_and_a_top_level_one():
    workflow = yaml.safe_load((REPO / ".github/workflows/bceval-experiment.yml").read_text())
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    filters = [_github_glob(p) for p in triggers["pull_request"]["paths"]]
    corpus = REPO / "evaluation" / "demo-corpus"
    changes = [
        next(corpus.glob("*/knowledge/*/*.md")),
        next(corpus.glob("*/skills/review/*.md")),
        corpus / "evaluation" / "review-fixtures.json",
    ]
    for change in changes:
        path = change.relative_to(REPO).as_posix()
        assert any(f.match(path) for f in filters), f"no path filter matches {path}"
        top_level = change.relative_to(corpus).as_posix()  # a corpus repository with its layers at the top
        assert any(f.match(top_level) for f in filters), f"no path filter matches {top_level}"
    assert not any(f.match("bceval/cli/main.py") for f in filters)
