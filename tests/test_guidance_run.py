"""bceval as the guidance runner: the demo fixtures, `guidance demo-workspaces`, `guidance run` with
the oracle and with adapters that misbehave, and `doit guidance`, all with real git, capture and score.

The misbehaving adapters prove the protocol: capture happens before the first answer (an edit made
while answering fails), and scoring uses the digest held in memory (a rewritten baseline fails).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import jsonschema
import pytest
from conftest import DEMO_CORPUS, REPO
from guidance_util import SENTINEL, assert_fails, assert_passes, cli, git, hashed, remove, run_guidance_graph

from bceval.agents import registry
from bceval.agents.base import NoReport
from bceval.agents.kinds import OracleAgent
from bceval.config import Settings
from bceval.evaluators.guidance import runner as guidance_run
from bceval.evaluators.guidance.demo import create_demo

MANIFESTS = {
    "plan": "evaluation/development-guidance-fixtures.json",
    "implementation": "evaluation/implementation-guidance-fixtures.json",
}
EXPECTATIONS = ("expectedOutcome", "expectedKind", "requiredKnowledge", "optionalKnowledge", "expectedOmitted")
GUIDANCE_ENV = (
    "BCEVAL_GUIDANCE_ROOT",
    "BCEVAL_GUIDANCE_MANIFEST",
    "BCEVAL_GUIDANCE_OUT",
    "BCEVAL_GUIDANCE_WORKSPACE_MAP",
    "BCEVAL_GUIDANCE_ADAPTER",
)


def cases_of(kind: str) -> list[dict]:
    return json.loads((DEMO_CORPUS / MANIFESTS[kind]).read_text(encoding="utf-8"))["cases"]


class Demo:
    """A demo directory built by bceval; `args(kind)` are the run arguments for one demo manifest."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.knowledge = directory / "knowledge"

    def map(self, kind: str) -> Path:
        return self.directory / f"workspace-map.{kind}.json"

    def workspaces(self, kind: str) -> dict[str, str]:
        return json.loads(self.map(kind).read_text(encoding="utf-8"))

    def args(self, kind: str, run: Path, adapter: str = "oracle") -> list[str | Path]:
        manifest = self.knowledge / MANIFESTS[kind]
        return ["run", "--root", self.knowledge, "--manifest", manifest, "--workspace-map", self.map(kind)] + [
            "--out",
            run,
            "--adapter",
            adapter,
        ]


@pytest.fixture(scope="module")
def shared_demo(tmp_path_factory):
    """One demo for the tests that leave its repositories as they found them."""
    base = tmp_path_factory.mktemp("demo")
    create_demo(DEMO_CORPUS, base / "demo")
    yield Demo(base / "demo")
    remove(base)


@pytest.fixture
def demo(tmp_path):
    """A demo of its own, for a test whose adapter changes a repository."""
    create_demo(DEMO_CORPUS, tmp_path / "demo")
    return Demo(tmp_path / "demo")


def use_adapter(monkeypatch, factory) -> None:
    """`--adapter fake` builds this adapter (the CLI asks make_agent when it runs)."""
    original = registry.make_agent

    def make(name, setup):
        return factory(setup.manifest) if name == "fake" else original(name, setup)

    monkeypatch.setattr(guidance_run, "make_agent", make)


class Oracle(OracleAgent):
    """The oracle under another name, with a hook that runs while a case is being answered."""

    name = "fake"

    def __init__(self, manifest, during=None) -> None:
        super().__init__(manifest)
        self.during = during
        self.seen = []

    def answer(self, case):
        self.seen.append(case)
        if self.during:
            self.during(case, len(self.seen))
        return super().answer(case)


# --- the demo fixtures -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(MANIFESTS))
def test_demo_manifests_validate_and_prepare(kind, tmp_path):
    manifest = DEMO_CORPUS / MANIFESTS[kind]
    assert_passes(cli("validate", "--root", DEMO_CORPUS, "--manifest", manifest))
    result = cli("prepare", "--root", DEMO_CORPUS, "--manifest", manifest, "--out", tmp_path / "prepared")
    assert_passes(result)
    assert "4 case(s)" in result.out
    outcomes = [case["expectedOutcome"] for case in cases_of(kind)]
    assert {"completed", "partial", "no-knowledge"} <= set(outcomes)
    for case in cases_of(kind):
        request = json.loads((tmp_path / "prepared" / f"request-{hashed(case['id'])}.json").read_text())
        assert not set(EXPECTATIONS) & set(request)
        assert (DEMO_CORPUS / "evaluation/guidance-workspaces" / case["id"] / "app.json").is_file()


def test_demo_skills_exist_and_are_not_review_leaves():
    from bceval.corpus.layers import discover_leaves, scan_corpus

    for name in ("al-development-plan", "al-implementation-guidance"):
        text = (DEMO_CORPUS / f"microsoft/skills/development/{name}.md").read_text(encoding="utf-8")
        assert text.startswith("---\n") and f"\nid: {name}\n" in text
    assert all("development" not in leaf.path for leaf in discover_leaves(scan_corpus(DEMO_CORPUS)))


# --- demo-workspaces -------------------------------------------------------------------------


def test_demo_workspaces_creates_standalone_repositories_and_maps(tmp_path):
    out = tmp_path / "demo"
    result = cli("demo-workspaces", "--out", out)
    assert_passes(result, "created: 8 workspace(s)")
    for kind in MANIFESTS:
        assert f"{kind} workspace map: {out / f'workspace-map.{kind}.json'}" in result.out
    demo = Demo(out)
    repositories = [demo.knowledge]
    for kind in MANIFESTS:
        bound = demo.workspaces(kind)
        assert list(bound) == [case["id"] for case in cases_of(kind)]
        assert all(Path(path).is_absolute() for path in bound.values())
        repositories += [Path(path) for path in bound.values()]
    uid = os.getuid()
    for repository in repositories:
        assert (repository / ".git").is_dir()  # own storage, not a linked worktree
        assert git(repository, "rev-parse", "--show-toplevel") == str(repository)
        assert git(repository, "rev-list", "--count", "HEAD") == "1"
        for folder, dirs, files in os.walk(repository):
            for name in dirs + files:
                info = os.lstat(os.path.join(folder, name))
                assert not stat.S_ISLNK(info.st_mode) and info.st_uid == uid
                assert stat.S_ISDIR(info.st_mode) or info.st_nlink == 1
    # The knowledge checkout is the demo corpus byte for byte (CRLF and BOM files included), committed.
    for rel in (
        "microsoft/knowledge/security/store-secrets-in-isolated-storage.md",
        "microsoft/knowledge/events/no-commit-in-subscribers.md",
    ):
        assert (demo.knowledge / rel).read_bytes() == (DEMO_CORPUS / rel).read_bytes()
    assert git(demo.knowledge, "status", "--porcelain") == ""
    workspace = demo.workspaces("plan")["courier-status-refresh-locks-rows"]
    assert (Path(workspace) / "src/CourierStatusRefresh.Codeunit.al").is_file()


def test_demo_repositories_are_deterministic(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    first, second = create_demo(DEMO_CORPUS, tmp_path / "a"), create_demo(DEMO_CORPUS, tmp_path / "b")
    assert git(first[0].root, "rev-parse", "HEAD") == git(second[0].root, "rev-parse", "HEAD")
    one, two = Demo(tmp_path / "a").workspaces("implementation"), Demo(tmp_path / "b").workspaces("implementation")
    assert [git(Path(p), "rev-parse", "HEAD") for p in one.values()] == [
        git(Path(p), "rev-parse", "HEAD") for p in two.values()
    ]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # the commit date comes from it
    third = create_demo(DEMO_CORPUS, tmp_path / "c")
    assert git(third[0].root, "log", "-1", "--format=%at") == "1700000000"


def test_demo_workspaces_refuses_a_non_empty_directory(tmp_path):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "notes.txt").write_text("mine")
    result = cli("demo-workspaces", "--out", tmp_path / "demo")
    assert_fails(result, f"Demo directory {tmp_path / 'demo'} must be new or empty")
    assert result.err.count("\n") == 1
    assert [p.name for p in (tmp_path / "demo").iterdir()] == ["notes.txt"]


def test_demo_workspaces_refuses_a_directory_inside_its_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, corpus)
    assert_fails(cli("demo-workspaces", "--root", corpus, "--out", corpus / "demo"), "outside the demo corpus")
    assert not (corpus / "demo").exists()


def test_the_demo_corpus_itself_is_not_a_checkout_the_evidence_accepts(shared_demo, tmp_path):
    """It is a folder of the bceval repository: runs use the committed copy demo-workspaces makes."""
    args = shared_demo.args("plan", tmp_path / "run")
    args[2], args[4] = DEMO_CORPUS, DEMO_CORPUS / MANIFESTS["plan"]
    assert_fails(cli(*args), "Knowledge checkout must be the root of a git worktree")
    assert not (tmp_path / "run").exists()


# --- guidance run ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(MANIFESTS))
def test_oracle_run_passes_on_each_demo_manifest(kind, shared_demo, tmp_path):
    run = tmp_path / "run"
    result = cli(*shared_demo.args(kind, run))
    assert_passes(result)
    assert result.out == f"Development guidance run PASSED: 4 case(s) in {run}\n"
    ids = [hashed(case["id"]) for case in cases_of(kind)]
    assert sorted(p.name for p in (run / "results").iterdir()) == sorted(f"result-{i}.json" for i in ids)
    assert sorted(p.name for p in (run / "requests").iterdir()) == sorted(
        ["knowledge-index.json"] + [f"request-{i}.json" for i in ids]
    )
    assert (run / "evidence" / "baseline.json").is_file()
    # The control is also clean under the stricter lint schema of its report kind.
    schema = json.loads((REPO / "schemas" / f"guidance-{kind}-report.schema.json").read_text())
    for result in (run / "results").iterdir():
        jsonschema.Draft202012Validator(schema).validate(json.loads(result.read_text())["guidanceReport"])
    record = json.loads((run / "run.json").read_text())
    assert (record["adapter"], record["cases"], record["passed"], record["problems"]) == ("oracle", 4, True, [])
    # The scorer agrees on its own: the results score again with the digest of the baseline file.
    digest = hashlib.sha256((run / "evidence/baseline.json").read_bytes()).hexdigest().upper()
    manifest = shared_demo.knowledge / MANIFESTS[kind]
    again = cli("score", "--root", shared_demo.knowledge, "--manifest", manifest, "--results", run / "results")
    assert_fails(again, "require BaselinePath")  # the modes stay separate ...
    again = cli(
        "score",
        "--root",
        shared_demo.knowledge,
        "--manifest",
        manifest,
        "--results",
        run / "results",
        "--baseline",
        run / "evidence/baseline.json",
        "--baseline-sha256",
        digest,
    )
    assert_passes(again)  # ... and each keeps working on its own


def test_run_refuses_an_existing_run_directory(shared_demo, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    result = cli(*shared_demo.args("plan", run))
    assert_fails(result, f"Run directory {run} already exists")
    assert result.err.count("\n") == 1
    assert list(run.iterdir()) == []  # never reused, never cleaned


@pytest.mark.parametrize(
    ("broken", "key"),
    [
        ("missing", "Workspace map must bind exactly every manifest case: 'courier-app-version-bump' is missing"),
        ("plain-directory", "Target workspace of 'courier-app-version-bump': guidance targets must be standalone"),
        ("relative", "Workspace map value for 'courier-app-version-bump' must be absolute"),
        ("inside-checkout", "distinct, non-overlapping roots"),
    ],
)
def test_bad_workspace_maps_fail_in_one_line_before_anything_is_written(broken, key, shared_demo, tmp_path):
    bound = shared_demo.workspaces("plan")
    case_id = "courier-app-version-bump"
    if broken == "missing":
        del bound[case_id]
    elif broken == "plain-directory":
        (tmp_path / "plain").mkdir()
        bound[case_id] = str(tmp_path / "plain")
    elif broken == "relative":
        bound[case_id] = "workspaces/x"
    else:
        bound[case_id] = str(shared_demo.knowledge / "evaluation")
    bad_map = tmp_path / "map.json"
    bad_map.write_text(json.dumps(bound))
    args = shared_demo.args("plan", tmp_path / "run")
    args[6] = bad_map
    result = cli(*args)
    assert_fails(result, key)
    assert result.err.count("\n") == 1
    assert not (tmp_path / "run").exists()


def test_run_directory_inside_a_workspace_is_refused(shared_demo, tmp_path):
    workspace = Path(shared_demo.workspaces("plan")["courier-app-version-bump"])
    assert_fails(cli(*shared_demo.args("plan", workspace / "run")), "outside target workspaces")
    assert not (workspace / "run").exists()


def test_run_arguments(shared_demo, tmp_path):
    args = shared_demo.args("plan", tmp_path / "run")
    assert_fails(cli(*args[:-2]), "run requires --adapter NAME")
    assert_fails(cli(*args[:5], *args[7:]), "run requires the runner-owned WorkspaceMapPath")
    assert_fails(cli(*args[:7], *args[9:]), "run requires --out RUN")
    assert_fails(cli(*args, "--baseline", tmp_path / "b.json"), "run does not take --baseline")
    assert_fails(cli(*args[:-1], "nobody"), "unknown guidance adapter 'nobody'")
    assert_fails(cli("validate", "--adapter", "oracle"), "validate does not take --adapter")
    assert not (tmp_path / "run").exists()


def test_an_adapter_without_a_report_fails_naming_the_case(shared_demo, tmp_path, monkeypatch):
    class Silent(Oracle):
        def answer(self, case):
            return NoReport() if case.case_id == hashed("courier-api-key-setup-plan") else super().answer(case)

    use_adapter(monkeypatch, Silent)
    result = cli(*shared_demo.args("plan", tmp_path / "run", adapter="fake"))
    assert_fails(result, "courier-api-key-setup-plan: the fake adapter produced no report (no-answer)")
    assert result.err.count("\n") == 1


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (lambda case: (_ for _ in ()).throw(RuntimeError(SENTINEL)), "adapter-error"),
        (lambda case: [SENTINEL], "not-an-object"),
        (lambda case: {"caseId": case.case_id, "guidanceReport": {"x": float("nan"), "y": SENTINEL}}, "not-json"),
    ],
)
def test_unusable_answers_are_no_report_and_never_echoed(answer, kind, shared_demo, tmp_path, monkeypatch):
    class Broken(Oracle):
        def answer(self, case):
            return answer(case)

    use_adapter(monkeypatch, Broken)
    result = cli(*shared_demo.args("plan", tmp_path / "run", adapter="fake"))  # cli() checks the sentinel
    assert_fails(result, f"courier-status-refresh-locks-rows: the fake adapter produced no report ({kind})")


def test_a_wrong_report_fails_scoring_without_echoing_it(shared_demo, tmp_path, monkeypatch):
    class Wrong(Oracle):
        def answer(self, case):
            document = super().answer(case)
            document["guidanceReport"]["outcome"] = "completed"  # every demo case expects its own
            document["guidanceReport"]["summary"]["request"] = SENTINEL
            return document

    use_adapter(monkeypatch, Wrong)
    result = cli(*shared_demo.args("plan", tmp_path / "run", adapter="fake"))
    assert_fails(result, "Development guidance run FAILED with 2 problem(s):")
    assert "  - courier-app-version-bump: outcome does not equal the fixture's expectedOutcome" in result.err
    assert "  - courier-phone-upgrade-unknown-version: outcome does not equal" in result.err
    record = json.loads((tmp_path / "run/run.json").read_text())
    assert record["passed"] is False and len(record["problems"]) == 2


def test_the_adapter_gets_the_runner_binding_and_no_expectations(shared_demo, tmp_path, monkeypatch):
    adapters = []

    def factory(manifest):
        adapters.append(Oracle(manifest))
        return adapters[-1]

    use_adapter(monkeypatch, factory)
    run = tmp_path / "run"
    assert_passes(cli(*shared_demo.args("implementation", run, adapter="fake")))
    bound = shared_demo.workspaces("implementation")
    seen = adapters[0].seen
    assert [case.case_id for case in seen] == [hashed(i) for i in bound]
    for case, (case_id, workspace) in zip(seen, bound.items(), strict=True):
        assert case.workspace == Path(workspace) and case.knowledge == shared_demo.knowledge
        assert case.request_path == run / "requests" / f"request-{hashed(case_id)}.json"
        request = case.request()
        assert request["repository"] == workspace and request["caseId"] == case.case_id
        assert not set(EXPECTATIONS) & set(request)


def test_the_digest_is_in_no_run_file_and_not_in_the_agent_environment(shared_demo, tmp_path, monkeypatch):
    environments = []

    def record(case, _count):
        environments.append(dict(case.environment))
        environments.append(dict(os.environ))

    use_adapter(monkeypatch, lambda manifest: Oracle(manifest, during=record))
    monkeypatch.setenv("GIT_DIR", str(shared_demo.knowledge / ".git"))  # would point an agent's git elsewhere
    run = tmp_path / "run"
    result = cli(*shared_demo.args("plan", run, adapter="fake"))
    assert_passes(result)
    digest = hashlib.sha256((run / "evidence/baseline.json").read_bytes()).hexdigest()
    for value in (digest.lower(), digest.upper()):
        assert value not in result.text
        for path in run.rglob("*"):
            assert not path.is_file() or value.encode() not in path.read_bytes(), path
        assert all(value not in text for env in environments for text in env.values())
    assert "GIT_DIR" not in environments[0]  # the agent's environment drops git redirections


def test_a_workspace_edited_while_answering_fails_the_run(demo, tmp_path, monkeypatch):
    def edit(case, count):
        if count == 1:  # captured before the first answer, so this edit is caught
            with open(case.workspace / "app.json", "a", encoding="utf-8") as handle:
                handle.write("\n")

    use_adapter(monkeypatch, lambda manifest: Oracle(manifest, during=edit))
    result = cli(*demo.args("plan", tmp_path / "run", adapter="fake"))
    assert_fails(result, "FAILED with 1 problem(s):")
    assert (
        "  - courier-status-refresh-locks-rows: target workspace identity/content changed since the baseline"
        in result.err
    )


def test_a_commit_in_a_workspace_while_answering_fails_the_run(demo, tmp_path, monkeypatch):
    def commit(case, count):
        if count == 2:
            git(case.workspace, "commit", "-q", "--allow-empty", "-m", "agent")

    use_adapter(monkeypatch, lambda manifest: Oracle(manifest, during=commit))
    result = cli(*demo.args("implementation", tmp_path / "run", adapter="fake"))
    assert_fails(result, "  - courier-api-key-page-already-consumed: target workspace identity/content changed")
    assert "FAILED with 1 problem(s):" in result.err


def test_a_knowledge_checkout_touched_while_answering_fails_the_run(demo, tmp_path, monkeypatch):
    def touch(case, count):
        if count == 1:
            article = case.knowledge / "microsoft/knowledge/performance/findset-for-record-loops.md"
            os.utime(article, ns=(article.stat().st_atime_ns, article.stat().st_mtime_ns + 5_000_000_000))

    use_adapter(monkeypatch, lambda manifest: Oracle(manifest, during=touch))
    result = cli(*demo.args("plan", tmp_path / "run", adapter="fake"))
    assert_fails(result, "  - Knowledge checkout identity/content changed since the baseline was captured")


def test_a_baseline_rewritten_while_answering_fails_against_the_held_digest(shared_demo, tmp_path, monkeypatch):
    def rewrite(case, count):
        if count == 1:  # an agent that re-records "clean" evidence; the runner's digest says otherwise
            baseline = case.request_path.parent.parent / "evidence" / "baseline.json"
            baseline.write_text(json.dumps(json.loads(baseline.read_text())), encoding="utf-8")

    use_adapter(monkeypatch, lambda manifest: Oracle(manifest, during=rewrite))
    result = cli(*shared_demo.args("plan", tmp_path / "run", adapter="fake"))
    assert_fails(result, "Development guidance run FAILED: Baseline digest mismatch")


def test_a_run_killed_midway_is_repeated_into_a_new_directory(shared_demo, tmp_path, monkeypatch):
    def kill(case, count):
        if count == 3:
            raise KeyboardInterrupt

    use_adapter(monkeypatch, lambda manifest: Oracle(manifest, during=kill))
    with pytest.raises(KeyboardInterrupt):
        cli(*shared_demo.args("plan", tmp_path / "first", adapter="fake"))
    assert len(list((tmp_path / "first/results").iterdir())) == 2 and not (tmp_path / "first/run.json").exists()
    assert_fails(cli(*shared_demo.args("plan", tmp_path / "first")), "already exists")
    assert_passes(cli(*shared_demo.args("plan", tmp_path / "second")))


# --- doit guidance ---------------------------------------------------------------------------


@pytest.fixture
def graph_settings(tmp_path, monkeypatch):
    for key in GUIDANCE_ENV:
        monkeypatch.delenv(key, raising=False)
    return Settings(corpus=DEMO_CORPUS, manifest=DEMO_CORPUS / "evaluation/review-fixtures.json", out=tmp_path / "out")


def passed_lines(out: str) -> list[str]:
    """The PASSED verdicts, which doit prints on stdout (failures keep the guidance contract: stderr)."""
    return [line for line in out.splitlines() if line.startswith("Development guidance run PASSED")]


def test_doit_guidance_runs_the_demo_and_every_rerun_is_a_new_run(graph_settings, capsys):
    out = graph_settings.out
    code, executed = run_guidance_graph(graph_settings, "guidance")
    assert code == 0
    assert executed[0] == "guidance_demo"  # the two runs follow in doit's order
    assert sorted(executed[1:]) == ["guidance:implementation", "guidance:plan"]
    assert sorted(passed_lines(capsys.readouterr().out)) == [
        f"Development guidance run PASSED: 4 case(s) in {out}/guidance-runs/implementation/run-0001",
        f"Development guidance run PASSED: 4 case(s) in {out}/guidance-runs/plan/run-0001",
    ]
    code, executed = run_guidance_graph(graph_settings, "guidance")
    assert code == 0 and sorted(executed) == ["guidance:implementation", "guidance:plan"]  # the demo is reused
    assert len(passed_lines(capsys.readouterr().out)) == 2
    for kind in MANIFESTS:
        assert sorted(p.name for p in (out / "guidance-runs" / kind).iterdir()) == ["run-0001", "run-0002"]

    remove(out / "guidance-demo" / "workspaces" / "courier-app-version-bump")  # no longer intact: rebuilt
    code, executed = run_guidance_graph(graph_settings, "guidance")
    assert code == 0 and executed[0] == "guidance_demo"
    assert len(passed_lines(capsys.readouterr().out)) == 2


def test_doit_guidance_runs_a_configured_manifest_and_map(graph_settings, shared_demo, monkeypatch, capsys):
    monkeypatch.setenv("BCEVAL_GUIDANCE_ROOT", str(shared_demo.knowledge))
    monkeypatch.setenv("BCEVAL_GUIDANCE_MANIFEST", str(shared_demo.knowledge / MANIFESTS["implementation"]))
    monkeypatch.setenv("BCEVAL_GUIDANCE_WORKSPACE_MAP", str(shared_demo.map("implementation")))
    code, executed = run_guidance_graph(graph_settings, "guidance")
    assert code == 0 and executed == ["guidance:implementation-guidance-fixtures"]
    run = graph_settings.out / "guidance-runs/implementation-guidance-fixtures/run-0001"
    assert passed_lines(capsys.readouterr().out) == [f"Development guidance run PASSED: 4 case(s) in {run}"]


def test_doit_guidance_refuses_half_settings_in_one_line(graph_settings, monkeypatch, capsys):
    monkeypatch.setenv("BCEVAL_GUIDANCE_ROOT", str(DEMO_CORPUS))
    code, _ = run_guidance_graph(graph_settings, "guidance")
    assert code == 1
    err = capsys.readouterr().err
    assert "Development guidance run FAILED: BCEVAL_GUIDANCE_ROOT and BCEVAL_GUIDANCE_MANIFEST need" in err
    assert not (graph_settings.out / "guidance-demo").exists()


def test_doit_guidance_reports_a_failing_run(graph_settings, monkeypatch, capsys):
    monkeypatch.setenv("BCEVAL_GUIDANCE_ADAPTER", "nobody")
    code, _ = run_guidance_graph(graph_settings, "guidance")
    assert code == 1
    assert "Development guidance run FAILED: unknown guidance adapter 'nobody'" in capsys.readouterr().err
