"""One registry of agent kinds and one of evaluators: every kind registered once with what it can do, one
factory for review and guidance questions, and looking a kind up never loads the process runner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from bceval.agents.base import case_input
from bceval.agents.registry import ReviewSetup, agent, agent_names, capabilities, make_agent
from bceval.errors import BcevalError
from bceval.evaluators.base import CASE, GUIDANCE, REVIEW, RUN
from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.asking import GuidanceSetup
from bceval.evaluators.registry import evaluator, evaluator_names
from bceval.evaluators.review.cases import ReviewCase


def test_each_kind_is_registered_once_with_what_it_can_do():
    assert agent_names(REVIEW) == ("baseline", "oracle", "command", "api")
    assert agent_names(GUIDANCE) == ("oracle", "command", "api")
    api = capabilities("api")
    assert api.live and api.needs_view and api.reports_usage and api.endpoint and not api.knows_answers
    assert not capabilities("command").endpoint
    command, oracle, baseline = capabilities("command"), capabilities("oracle"), capabilities("baseline")
    assert command.live and command.needs_view and command.reports_usage and not command.knows_answers
    assert oracle.knows_answers and not (oracle.live or oracle.needs_view or oracle.reports_usage)
    assert not (baseline.live or baseline.knows_answers) and baseline.questions == (REVIEW,)
    assert capabilities("nobody").questions == () and not capabilities("nobody").live
    with pytest.raises(ValueError, match="registered twice"):
        agent("oracle")(lambda setup: None)


def test_one_factory_refuses_a_kind_that_does_not_answer_the_question(tmp_path: Path):
    with pytest.raises(BcevalError, match=r"^unknown adapter 'x'; choose one of: baseline, oracle, command, api$"):
        make_agent("x", ReviewSetup([], tmp_path, tmp_path))
    manifest = object()  # never reached: the name is refused first
    refused = r"^unknown guidance adapter 'baseline' \(available: oracle, command, api\)$"
    with pytest.raises(GuidanceError, match=refused):
        make_agent("baseline", GuidanceSetup(manifest))  # type: ignore[arg-type]
    with pytest.raises(GuidanceError, match="the command adapter needs --command"):
        make_agent("command", GuidanceSetup(manifest))  # type: ignore[arg-type]


def test_the_oracle_answers_what_the_review_evaluator_expects(tmp_path: Path):
    case = ReviewCase(id="x-bad", modelId="case-12345678", domain="x", input="a.bad.al", expected=["k/a.md"])
    oracle = make_agent("oracle", ReviewSetup([case], tmp_path, tmp_path))
    answer = oracle.answer(case_input(tmp_path, tmp_path, case))
    assert answer.entries == evaluator("review").oracle_answer(case)
    assert [e.findings for e in answer.entries] == [["k/a.md"]]
    outcome = evaluator("review").score([case], {case.modelId: answer.entries[0].findings})
    assert [(o.case, o.passed) for o in outcome] == [("x-bad", True)]
    assert evaluator("review").score([case], {})[0].problems == ("Results missing case: x-bad",)
    assert evaluator_names() == ("review", "plan", "implementation", "development", "pr-review")
    assert {evaluator(name).question for name in ("plan", "implementation")} == {GUIDANCE}


def test_evaluators_load_when_named_and_each_is_registered_under_its_own_name():
    assert all(evaluator(name).name == name for name in evaluator_names())
    probe = (
        "import sys; from bceval.evaluators.registry import evaluator, evaluator_names; "
        "names = evaluator_names(); evaluator('review'); "
        "print(sorted(m for m in sys.modules if m.startswith('bceval.evaluators.')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = done.stdout.strip()
    assert "bceval.evaluators.review.plugin" in loaded
    assert "bceval.evaluators.guidance.plugin" not in loaded and "bceval.evaluators.development.plugin" not in loaded
    assert "bceval.evaluators.pr_review.plugin" not in loaded


def test_each_evaluator_says_what_its_runs_do():
    """An experiment decides by the evaluator's traits, never by its name."""
    review = evaluator("review").traits
    assert (review.unit, review.default_agent, review.default_manifest) == (CASE, None, None)
    assert review.shares_answers and not (review.needs_workspaces or review.needs_checkout or review.prepares_in_run)
    for name in ("plan", "implementation"):
        traits = evaluator(name).traits
        assert (traits.unit, traits.default_agent) == (RUN, "oracle")
        assert GUIDANCE in capabilities(traits.default_agent).questions
        assert traits.needs_workspaces and traits.needs_checkout and traits.prepares_in_run
        assert not traits.shares_answers
        stem = "development" if name == "plan" else name
        assert traits.default_manifest == f"evaluation/{stem}-guidance-fixtures.json"
    assert all(hasattr(evaluator(n), "outcomes") for n in evaluator_names() if evaluator(n).traits.unit == RUN)


def test_a_run_s_recorded_problems_become_per_case_outcomes():
    from types import SimpleNamespace

    plan = evaluator("plan")
    manifest = SimpleNamespace(cases=[SimpleNamespace(id="a"), SimpleNamespace(id="b")])
    outcomes = plan.outcomes(manifest, ["a: cites nothing"])
    assert [(o.case, o.passed, o.problems) for o in outcomes] == [("a", False, ("a: cites nothing",)), ("b", True, ())]
    everything = plan.outcomes(manifest, ["the knowledge checkout changed"])  # about no case: fails every case
    assert [o.passed for o in everything] == [False, False]
    assert plan.measures(manifest, None) == {} and evaluator("review").measures(None, None) is None


def loads_none_of(modules: tuple[str, ...], imports: str) -> None:
    """In a fresh interpreter, importing `imports` loads none of `modules`."""
    code = f"import sys, {imports}\nloaded = [m for m in {modules!r} if m in sys.modules]\nassert not loaded, loaded\n"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


def test_looking_up_kinds_loads_no_process_code():
    processes = ("bceval.agents.process", "bceval.agents.command", "bceval.agents.live", "bceval.agents.sandbox")
    loads_none_of(processes, "bceval.config, bceval.agents.registry, bceval.experiment.plan, bceval.runs.record")


def test_a_command_answer_is_read_and_cached():
    code = (
        "import sys\n"
        "from bceval.evaluators.review import question as review\n"
        "from bceval.evaluators.review.entries import stored_case\n"
        'read = review._entries(\'{"cases": [{"id": "case-1", "findings": [{"id": "b.md"}, "a.md"]}]}\')\n'
        "assert [case.model_dump() for case in read] == [{'id': 'case-1', 'findings': ['a.md', 'b.md']}], read\n"
        "assert [stored_case(case.model_dump()) for case in read] == read\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


def test_one_transcript_format_for_every_run(tmp_path: Path):
    from bceval.runs.record import write_transcript
    from bceval.usage import Usage

    answered = {"adapter": "command", "model": "m1"}
    relative = write_transcript(tmp_path, "case-1", "run-a", answered, {"case": "c", "outcome": "answered"}, Usage())
    assert relative == "transcripts/case-1.json"
    text = (tmp_path / relative).read_text(encoding="utf-8")
    document = json.loads(text)
    assert list(document) == ["schemaVersion", "run", "answeredBy", "case", "outcome", "usage"]
    assert document["schemaVersion"] == 1 and document["run"] == "run-a" and document["answeredBy"] == answered
    assert text.startswith('{\n  "schemaVersion": 1,\n') and text.endswith("}\n")


def test_a_new_kind_is_one_registration_and_answers_a_review_case(tmp_path: Path, monkeypatch):
    """Adding an agent kind: one factory registered with `agent(...)`; the one factory makes it for a review run."""
    from bceval.agents import registry
    from bceval.agents.base import Answer
    from bceval.agents.registry import Agent
    from bceval.evaluators.review.scoring import ResultEntry

    monkeypatch.setattr(registry, "_KINDS", dict(registry._KINDS))  # the toy kind stays in this test

    class Toy(Agent):
        name = kind = "toy"

        def describe(self):
            return {"adapter": "toy", "model": "none", "version": "1", "pinned": True}

        def answer(self, question):
            return Answer([ResultEntry(id=question.model_id, findings=["k/a.md"])])

    agent("toy")(lambda setup: Toy())
    assert "toy" in agent_names(REVIEW) and not capabilities("toy").live
    case = ReviewCase(id="x-bad", modelId="case-12345678", domain="x", input="a.bad.al", expected=["k/a.md"])
    toy = make_agent("toy", ReviewSetup([case], tmp_path, tmp_path))
    answer = toy.answer(case_input(tmp_path, tmp_path, case))
    outcome = evaluator("review").score([case], {case.modelId: answer.entries[0].findings})
    assert [(o.case, o.passed) for o in outcome] == [("x-bad", True)]
