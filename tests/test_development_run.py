"""Runner mode of the development evaluator on the demo corpus (spec §11, §15.8) with scripted agents and the
demo's stand-in gates: pass, fail, overclaim, a commit does not hide work, a write outside the copy is caught,
a hung gate is stopped by its timeout, a gate that cannot start is an infrastructure error, and a required check
with no configuration stops before any agent runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DEMO_CORPUS

from bceval.cli import main

CHECKS_DIR = DEMO_CORPUS / "evaluation"
AGENT = "{python} " + str(CHECKS_DIR / "development-demo" / "agent.py")
RATING = "courier-rating-field"


def one_case(tmp_path: Path, case: str = RATING) -> list[str]:
    """A manifest and capability file with only `case` (each run of the demo's two cases takes seconds)."""
    manifest = json.loads((CHECKS_DIR / "development-fixtures.json").read_text(encoding="utf-8"))
    manifest["cases"] = [c for c in manifest["cases"] if c["id"] == case]
    capabilities = json.loads((DEMO_CORPUS / "coverage/development-capabilities.json").read_text(encoding="utf-8"))
    capabilities["capabilities"] = [c for c in capabilities["capabilities"] if case in c["fixtureIds"]]
    (tmp_path / "m.json").write_text(json.dumps(manifest), encoding="utf-8")
    (tmp_path / "c.json").write_text(json.dumps(capabilities), encoding="utf-8")
    return ["--manifest", str(tmp_path / "m.json"), "--capabilities", str(tmp_path / "c.json")]


def develop(tmp_path: Path, capsys, mode: str, *extra: str, case_args: list[str] | None = None):
    out = tmp_path / f"run-{mode}"
    args = ["development", "run", "--root", str(DEMO_CORPUS), "--out", str(out), "--command", f"{AGENT} {mode}"]
    code = main([*args, *(one_case(tmp_path) if case_args is None else case_args), *extra])
    printed = capsys.readouterr()
    return code, printed.out, printed.err, out


def verdicts(out: Path) -> dict[str, dict]:
    return {
        json.loads(p.read_text())["case"]: json.loads(p.read_text()) for p in out.glob("development/*/verdict.json")
    }


def test_the_known_good_patch_passes_every_runner_gate_and_keeps_everything(tmp_path, capsys):
    code, printed, _, out = develop(tmp_path, capsys, "good", case_args=[])
    assert code == 0, printed
    assert printed.splitlines()[-1].startswith("Development run PASSED: 2 passed, 0 failed, 0 error(s)")
    run = json.loads((out / "run.json").read_text())
    assert run["knowledgeCheckout"]["unchanged"] and run["overclaims"] == 0
    for verdict in verdicts(out).values():
        assert verdict["verdict"] == "pass" and verdict["gatesPassed"] and verdict["problems"] == []
        assert verdict["measures"]["knowledgeEvidence"] == "claimed"
    folder = next(out.glob("development/case-*"))
    for name in (
        "request.json",
        "base.json",
        "agent/envelope.json",
        "agent/stdout.txt",
        "result.json",
        "diff.patch",
        "changed-paths.json",
        "checks/compile.log",
        "checks/tests.log",
        "checks/review.json",
        "evidence.json",
        "verdict.json",
    ):
        assert (folder / name).is_file(), name
    assert not (folder / "workspace").exists()  # passing workspaces are not kept
    base = json.loads((folder / "base.json").read_text())
    assert len(base["digest"]) == 64 and len(base["baseCommit"]) == 40
    assert_schemas(out)


def assert_schemas(out: Path) -> None:
    """Every artifact of a run validates against its committed schema."""
    import jsonschema

    schemas = Path(__file__).resolve().parents[1] / "schemas"

    def check(path: Path, name: str) -> None:
        schema = json.loads((schemas / f"development-{name}.schema.json").read_text())
        jsonschema.Draft202012Validator(schema).validate(json.loads(path.read_text()))

    check(out / "run.json", "run")
    for request in (out / "requests").glob("request-case-*.json"):
        check(request, "request")
    for folder in out.glob("development/case-*"):
        for name in ("base", "result", "evidence", "verdict"):
            check(folder / f"{name}.json", name)


def test_the_known_bad_patch_fails_the_gates_and_the_review(tmp_path, capsys):
    code, printed, _, out = develop(tmp_path, capsys, "bad")
    assert code == 1
    verdict = verdicts(out)[RATING]
    assert verdict["verdict"] == "fail" and not verdict["gatesPassed"] and verdict["overclaims"] == 0
    assert f"{RATING}: required check 'tests' did not pass exactly once." in verdict["problems"]
    assert f"{RATING}: post-implementation review has 1 gating finding(s)." in verdict["problems"]
    evidence = json.loads(next(out.glob("development/*/evidence.json")).read_text())
    assert [e["status"] for e in evidence["runner"]] == ["passed", "failed", "failed"]
    assert (next(out.glob("development/case-*")) / "workspace" / "app.json").is_file()  # a failing one is kept


def test_claiming_passing_tests_it_broke_is_an_overclaim(tmp_path, capsys):
    code, printed, _, out = develop(tmp_path, capsys, "overclaim")
    assert code == 1
    assert_schemas(out)
    verdict = verdicts(out)[RATING]
    assert verdict["verdict"] == "fail" and verdict["overclaims"] == 3
    assert f"{RATING}: validation 'tests' reported 'passed' but the runner observed 'failed'." in verdict["diagnostics"]
    assert "6 overclaim" not in printed and "3 overclaim(s)" in printed


def test_a_commit_does_not_hide_the_work(tmp_path, capsys):
    code, printed, _, out = develop(tmp_path, capsys, "commit")
    assert code == 0, printed
    paths = json.loads(next(out.glob("development/*/changed-paths.json")).read_text())
    assert paths == ["src/Courier.Table.al", "src/CourierList.Page.al"]
    assert "the agent committed" in printed


def test_a_write_outside_the_copy_fails_the_run(tmp_path, capsys):
    code, printed, _, out = develop(tmp_path, capsys, "outside")
    assert code == 1 and "  - Knowledge checkout identity/content changed" in printed
    run = json.loads((out / "run.json").read_text())
    assert not run["knowledgeCheckout"]["unchanged"] and run["verdict"] == "FAIL"
    original = DEMO_CORPUS / "microsoft/knowledge/ui/tooltips-on-page-fields.md"
    assert "rewritten" not in original.read_text()


def _checks(
    tmp_path: Path, tests_argv: list[str], timeout: float = 60, review_argv: list[str] | None = None
) -> list[str]:
    path = tmp_path / "checks.yaml"
    demo = str(CHECKS_DIR / "development-demo")
    path.write_text(
        json.dumps(
            {  # JSON is YAML
                "version": "1",
                "checks": {
                    "compile": {"argv": ["{python}", f"{demo}/compile.py"], "timeout_s": "60"},
                    "tests": {"argv": tests_argv, "timeout_s": str(timeout)},
                    "review": {
                        "kind": "review",
                        "argv": review_argv or ["{python}", f"{demo}/review.py"],
                        "timeout_s": "60",
                    },
                },
                "workspaces": {RATING: str(CHECKS_DIR / "development-workspaces" / RATING)},
            }
        ),
        encoding="utf-8",
    )
    return ["--checks", str(path)]


def test_a_hung_gate_is_stopped_by_its_timeout(tmp_path, capsys):
    hang = ["{python}", "-c", "import time; time.sleep(60)"]
    code, _, _, out = develop(tmp_path, capsys, "good", *_checks(tmp_path, hang, timeout=1))
    assert code == 1
    tests = json.loads(next(out.glob("development/*/evidence.json")).read_text())["runner"][1]
    assert (
        tests["status"] == "failed" and tests["details"].startswith("timed out after 1 s") and tests["durationS"] < 10
    )


def test_a_gate_that_cannot_start_is_an_infrastructure_error(tmp_path, capsys):
    code, printed, _, out = develop(tmp_path, capsys, "good", *_checks(tmp_path, ["/no/such/tool"]))
    assert code == 1
    verdict = verdicts(out)[RATING]
    assert verdict["verdict"] == "error" and "could not start" in verdict["infrastructure"]
    assert "0 passed, 0 failed, 1 error(s) (infrastructure)" in printed


def test_exit_127_is_not_run_and_an_infrastructure_error(tmp_path, capsys):
    code, _, _, out = develop(tmp_path, capsys, "good", *_checks(tmp_path, ["{python}", "-c", "raise SystemExit(127)"]))
    assert code == 1 and verdicts(out)[RATING]["verdict"] == "error"


def test_the_runner_passing_while_the_agent_says_not_run_is_an_underclaim(tmp_path, capsys):
    from bceval.evaluators.development.gates import GateResult, compare
    from bceval.evaluators.development.manifest import load

    loaded = load(DEMO_CORPUS)
    case = loaded.cases[0]
    report = {"validation": [{"id": "tests", "status": "not-run"}]}
    gates = [GateResult("tests", "t", "passed", "exit 0")]
    result = compare(case, report, gates, None)
    assert result.underclaims == [f"{RATING}: validation 'tests' reported 'not-run' but the runner observed 'passed'."]
    assert result.overclaims == []


def test_a_required_check_without_configuration_stops_before_any_agent(tmp_path, capsys):
    path = tmp_path / "checks.yaml"
    path.write_text("version: 1\nchecks:\n  compile: {argv: [true]}\n", encoding="utf-8")
    code, printed, err, out = develop(tmp_path, capsys, "good", "--checks", str(path))
    assert code == 2 and printed == ""
    assert (
        err == f"bceval: {path}: required check 'tests' of case '{RATING}' has no configured check (add it under "
        "checks:)\n"
    )
    assert not out.exists()


def test_build_outputs_of_gates_never_reach_the_diff(tmp_path, capsys):
    demo = str(CHECKS_DIR / "development-demo")
    build = ["{python}", "-c", "open('Courier.app','w').write('x'); open('untracked.txt','w').write('x')"]
    args = _checks(tmp_path, ["{python}", f"{demo}/tests.py", "{case}"])
    text = (
        Path(args[1])
        .read_text()
        .replace('"argv": ["{python}", "' + demo + '/compile.py"]', '"argv": ' + json.dumps(build))
    )
    Path(args[1]).write_text(text)
    code, printed, _, out = develop(tmp_path, capsys, "good", *args)
    assert code == 0, printed
    assert json.loads(next(out.glob("development/*/changed-paths.json")).read_text()) == [
        "src/Courier.Table.al",
        "src/CourierList.Page.al",
    ]


def test_the_demo_checks_file_fits_its_schema():
    import jsonschema
    import yaml

    schema = json.loads((Path(__file__).resolve().parents[1] / "schemas/development-checks.schema.json").read_text())
    document = yaml.load((CHECKS_DIR / "development-checks.yaml").read_text(), Loader=yaml.BaseLoader)
    jsonschema.Draft202012Validator(schema).validate(document)


def test_doit_development_runs_the_demo_control_and_passes(tmp_path, monkeypatch, capsys):
    from bceval.config import load_settings
    from bceval.graph.loader import run_graph

    for name in ("BCEVAL_DEVELOPMENT_ROOT", "BCEVAL_COMMAND", "BCEVAL_DEVELOPMENT_CHECKS"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(corpus=str(DEMO_CORPUS), out=str(tmp_path / "out"), cwd=tmp_path, environ={})
    assert run_graph(settings, ["development"]) == 0
    assert "Development run PASSED: 2 passed" in capsys.readouterr().out
    assert (tmp_path / "out" / "development-runs" / "run-0001" / "run.json").is_file()


@pytest.mark.parametrize(
    ("guidance", "skill", "implementation", "names_knowledge"),
    [
        ("none", "none", False, False),
        ("plan", "microsoft/skills/development/al-development.md", False, True),
        ("implementation", "none", True, True),
        ("both", "microsoft/skills/development/al-development.md", True, True),
    ],
)
def test_each_guidance_arm_gives_the_agent_only_its_guidance(
    tmp_path, capsys, guidance, skill, implementation, names_knowledge
):
    code, printed, _, out = develop(tmp_path, capsys, "good", "--guidance", guidance)
    assert code == 0, printed
    folder = next(out.glob("development/case-*"))
    request = json.loads((folder / "request.json").read_text())
    assert request["skill"] == skill
    assert ("implementationGuidance" in request) is implementation
    if implementation:
        assert (
            request["implementationGuidance"]["checkpoints"]
            == json.loads((out / "run.json").read_text())["checkpoints"]
        )
    stdin_named = json.loads((out / "run.json").read_text())["guidance"]
    assert stdin_named == guidance
    assert_schemas(out)
    envelope = json.loads((folder / "agent" / "envelope.json").read_text())
    assert envelope["exitCode"] == 0
    assert names_knowledge == (guidance != "none")


def _bwrap_works() -> bool:
    import shutil
    import subprocess

    if shutil.which("bwrap") is None:
        return False
    probe = ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(not _bwrap_works(), reason="bwrap is missing or cannot create namespaces here")
def test_in_the_sandbox_only_the_copy_is_writable(tmp_path, capsys):
    import shutil

    tools = tmp_path / "tools"
    shutil.copytree(CHECKS_DIR / "development-demo", tools)
    command = f"{{python}} {tools}/agent.py"
    args = [
        "development",
        "run",
        "--root",
        str(DEMO_CORPUS),
        "--sandbox",
        "bwrap",
        "--sandbox-allow",
        str(tools),
        *one_case(tmp_path),
    ]
    assert main([*args, "--out", str(tmp_path / "good"), "--command", f"{command} good"]) == 0, capsys.readouterr()
    capsys.readouterr()
    code = main([*args, "--out", str(tmp_path / "outside"), "--command", f"{command} outside"])
    printed = capsys.readouterr().out
    assert code == 1
    run = json.loads((tmp_path / "outside" / "run.json").read_text())
    assert run["knowledgeCheckout"]["unchanged"]  # the write was refused: the view is mounted read-only
    assert run["counts"]["error"] == 1 and "ERROR courier-rating-field" in printed


def test_a_repository_pinned_to_a_commit_starts_from_that_commit(tmp_path, capsys):
    import shutil
    import subprocess

    source = tmp_path / "source"
    shutil.copytree(CHECKS_DIR / "development-workspaces" / RATING, source)
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "PATH": "/usr/bin:/bin",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=source, env=env, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "start")
    pinned = git("rev-parse", "HEAD")
    (source / "src" / "Later.al").write_text("codeunit 50401 Later { }\n")
    git("add", "-A")
    git("commit", "-qm", "later")
    (tmp_path / "map.json").write_text(json.dumps({RATING: f"{source}@{pinned}"}))
    code, printed, _, out = develop(tmp_path, capsys, "good", "--workspace-map", str(tmp_path / "map.json"))
    assert code == 0, printed
    base = json.loads(next(out.glob("development/*/base.json")).read_text())
    assert base["baseCommit"] == pinned and base["source"] == f"{source}@{pinned}"


def test_a_missing_starting_repository_stops_before_any_agent(tmp_path, capsys):
    (tmp_path / "map.json").write_text(json.dumps({RATING: str(tmp_path / "nowhere")}))
    code, printed, err, out = develop(tmp_path, capsys, "good", "--workspace-map", str(tmp_path / "map.json"))
    assert (code, printed) == (2, "") and "is not a folder with app.json" in err and not out.exists()


def test_an_agent_that_times_out_is_an_infrastructure_error_and_one_without_json_a_failure(tmp_path, capsys):
    out = tmp_path / "slow"
    base = ["development", "run", "--root", str(DEMO_CORPUS), *one_case(tmp_path)]
    assert (
        main([*base, "--out", str(out), "--timeout", "1", "--command", "{python} -c 'import time; time.sleep(30)'"])
        == 1
    )
    assert verdicts(out)[RATING]["verdict"] == "error" and "timed out" in verdicts(out)[RATING]["infrastructure"]
    capsys.readouterr()
    out = tmp_path / "chatty"
    assert main([*base, "--out", str(out), "--command", "{python} -c 'print(1 + 1)'"]) == 1
    assert verdicts(out)[RATING]["verdict"] == "fail"
    assert verdicts(out)[RATING]["problems"] == [
        f"{RATING}: result is not valid JSON: the agent's answer holds no JSON object"
    ]


def test_a_review_citing_an_article_outside_the_checkout_fails_the_review_gate(tmp_path, capsys):
    demo = str(CHECKS_DIR / "development-demo")
    finding = {
        "id": "f",
        "severity": "minor",
        "message": "m",
        "references": [{"path": "microsoft/knowledge/none.md"}],
        "confidence": "high",
    }
    answer = findings_report([finding])
    reviewer = ["{python}", "-c", f"import sys; sys.stdin.read(); print({json.dumps(json.dumps(answer))})"]
    code, _, _, out = develop(
        tmp_path, capsys, "good", *_checks(tmp_path, ["{python}", f"{demo}/tests.py", "{case}"], review_argv=reviewer)
    )
    assert code == 1
    review = json.loads(next(out.glob("development/*/evidence.json")).read_text())["runner"][2]
    assert review["status"] == "failed" and "outcome failed" in review["details"]


def findings_report(findings: list) -> dict:
    return {
        "skill": {"id": "al-code-review", "version": 1},
        "outcome": "completed",
        "summary": {
            "counts": {"blocker": 0, "major": 0, "minor": len(findings), "info": 0},
            "coverage": {"worklist-size": 1, "items-evaluated": 1},
        },
        "findings": findings,
        "suppressed": [],
    }


@pytest.mark.parametrize(
    ("answer", "logged"),
    [
        ({**findings_report([]), "summary": {}}, "summary: 'counts' is a required property"),
        (
            findings_report(
                [{"id": "mine", "severity": "major", "message": "m", "references": [], "confidence": "high"}]
            ),
            "findings/0/confidence: 'high' is not one of ['medium', 'low']",
        ),
        ("no JSON here", "no findings-report JSON object"),
    ],
)
def test_a_review_answer_that_is_no_findings_report_is_an_infrastructure_error_not_a_pass(
    tmp_path, capsys, answer, logged
):
    text = answer if isinstance(answer, str) else json.dumps(answer)
    reviewer = ["{python}", "-c", f"import sys; sys.stdin.read(); print({json.dumps(text)})"]
    demo = str(CHECKS_DIR / "development-demo")
    code, printed, _, out = develop(
        tmp_path, capsys, "good", *_checks(tmp_path, ["{python}", f"{demo}/tests.py", "{case}"], review_argv=reviewer)
    )
    assert code == 1 and "1 error(s) (infrastructure)" in printed
    folder = next(out.glob("development/case-*"))
    review = json.loads((folder / "evidence.json").read_text())["runner"][2]
    assert review["status"] == "not-run" and "no valid findings-report" in review["details"]
    assert json.loads((folder / "verdict.json").read_text())["verdict"] == "error"
    assert logged in (folder / "checks" / "review.log").read_text()


def test_the_demo_reviewer_answers_findings_reports():
    from bceval.evaluators.development.findings import findings_report_errors

    for case, kind in ((RATING, "bad"), ("courier-deactivate-batch", "bad"), (RATING, "good")):
        for source in (CHECKS_DIR / "development-demo" / "patches" / case / kind).rglob("*.al"):
            question = {"file-path": f"src/{source.name}", "content": source.read_text(encoding="utf-8")}
            done = subprocess.run(
                [sys.executable, str(CHECKS_DIR / "development-demo" / "review.py")],
                input=json.dumps(question),
                capture_output=True,
                text=True,
                check=True,
            )
            assert findings_report_errors(json.loads(done.stdout)) == [], source


def test_a_declared_unavailable_toolchain_is_not_run_never_passed(tmp_path, capsys):
    args = _checks(tmp_path, ["{python}", "-c", "raise SystemExit(0)"])
    path = Path(args[1])
    path.write_text(path.read_text().replace('"version": "1",', '"version": "1", "toolchain": "unavailable",'))
    code, printed, _, out = develop(tmp_path, capsys, "good", *args)
    assert code == 1
    runner = json.loads(next(out.glob("development/*/evidence.json")).read_text())["runner"]
    assert [e["status"] for e in runner[:2]] == ["not-run", "not-run"]
    assert verdicts(out)[RATING]["verdict"] == "error" and not verdicts(out)[RATING]["gatesPassed"]


def test_a_run_directory_inside_the_knowledge_checkout_is_refused(tmp_path, capsys):
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, corpus)
    code = main(["development", "run", "--root", str(corpus), "--out", str(corpus / "run"), "--command", "true"])
    assert code == 2 and "must be outside the knowledge checkout" in capsys.readouterr().err
