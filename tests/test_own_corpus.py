"""One's own corpus on the first try: found from the current directory, no manifest needed, output that stays
out of the way, and every failure one line (issue: "your own corpus on the first try")."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from cliutil import interruptible
from conftest import SHARED_CORPUS, requires_shared
from guidance_util import git

from bceval.cli import main
from bceval.config import DEMO_CORPUS, NOT_FOUND, check_inputs, load_settings
from bceval.errors import BcevalError
from bceval.evaluators.review.cases import ReviewCase

VENV_BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for key in list(os.environ):
        if key.startswith("BCEVAL_") or key == "SOURCE_DATE_EPOCH":
            monkeypatch.delenv(key)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def committed(root: Path) -> Path:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "corpus")
    return root


# --- 1. the corpus is the one you stand in ------------------------------------------------------------------------


def test_validate_in_a_corpus_evaluates_that_corpus_and_says_so(small_corpus, monkeypatch, capsys):
    monkeypatch.chdir(small_corpus.root)
    code, out, err = run(capsys, "validate")
    assert code == 0
    assert out.strip() == "Review fixture validation PASSED: 4 cases cover 2 leaf domains."
    assert err.splitlines()[0] == (
        f"bceval: corpus {small_corpus.root} (found here); manifest {small_corpus.manifest}; "
        f"out {small_corpus.root / 'out'}"
    )


def test_a_subfolder_of_a_git_checkout_finds_the_corpus_at_its_root(small_corpus, monkeypatch):
    committed(small_corpus.root)
    deep = small_corpus.root / "microsoft" / "knowledge" / "performance"
    settings = load_settings(cwd=deep, environ={})
    assert (settings.corpus, settings.corpus_source) == (small_corpus.root, "found here")
    assert settings.out == small_corpus.root / "out"  # beside the corpus, not in the subfolder


def test_outside_git_only_the_current_folder_counts_and_the_demo_corpus_is_never_a_fallback(small_corpus):
    deep = small_corpus.root / "microsoft" / "knowledge" / "performance"
    settings = load_settings(cwd=deep, environ={})
    assert (settings.corpus, settings.corpus_source) == (deep, NOT_FOUND)
    with pytest.raises(BcevalError, match=f"^no corpus in {deep} or its parents up to the git root: a corpus has"):
        check_inputs(settings)
    asked = load_settings(cwd=deep, environ={}, corpus="demo")
    assert (asked.corpus, asked.corpus_source) == (DEMO_CORPUS, "--corpus demo: bceval's demo corpus")


def test_a_relative_corpus_in_the_environment_resolves_against_the_current_folder(small_corpus, tmp_path):
    settings = load_settings(cwd=tmp_path, environ={"BCEVAL_CORPUS": "corpus"})
    assert settings.corpus == small_corpus.root and settings.corpus_source == "BCEVAL_CORPUS"


def test_doit_with_bceval_s_dodo_file_resolves_relative_settings_where_it_was_started(small_corpus, tmp_path):
    # doit changes into the dodo file's folder; bceval still reads the user's folder and environment
    env = {**environment(), "BCEVAL_CORPUS": "corpus", "BCEVAL_OUT": "results"}
    dodo = Path(__file__).resolve().parent.parent / "dodo.py"
    done = subprocess.run(
        ["doit", "-f", str(dodo), "validate"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "4 cases cover 2 leaf domains" in done.stdout
    assert f"corpus {small_corpus.root} (BCEVAL_CORPUS)" in done.stderr
    assert (tmp_path / "results").is_dir()


# --- 2. no manifest needed; bceval init ---------------------------------------------------------------------------


def test_without_a_manifest_the_convention_runs_with_thresholds_1_and_1(small_corpus, monkeypatch, capsys):
    small_corpus.manifest.unlink()
    monkeypatch.chdir(small_corpus.root)
    code, out, err = run(capsys, "score", "--adapter", "oracle")
    assert code == 0, out + err
    assert "manifest none (by convention, thresholds 1 and 1)" in err.splitlines()[0]
    assert "Review evaluation PASSED: recall=1 (2/2), clean-rate=1 (2/2)." in out
    score = json.loads((small_corpus.root / "out/runs/oracle/score.json").read_text())
    assert score["thresholds"] == {"minimumExpectedRecall": 1.0, "minimumCleanRate": 1.0}


def test_an_explicit_manifest_that_is_missing_is_still_an_error(small_corpus, tmp_path, capsys):
    code, _, err = run(capsys, "validate", "--corpus", str(small_corpus.root), "--manifest", str(tmp_path / "no.json"))
    assert code == 2 and err.strip().endswith("no.json: review fixture manifest not found")


def test_init_writes_a_starter_manifest_with_a_schema_and_never_overwrites(small_corpus, monkeypatch, capsys):
    small_corpus.manifest.unlink()
    monkeypatch.chdir(small_corpus.root)
    code, out, _ = run(capsys, "init")
    assert code == 0
    manifest = json.loads(small_corpus.manifest.read_text())
    schema_path = small_corpus.manifest.parent / manifest["$schema"]
    jsonschema.validate(manifest, json.loads(schema_path.read_text()))
    assert manifest["overrides"] == {} and manifest["minimumExpectedRecall"] == 1.0
    assert f"{small_corpus.manifest}: created" in out
    small_corpus.manifest.write_text(small_corpus.manifest.read_text().replace("1.0", "0.5", 1))
    before = small_corpus.manifest.read_bytes()
    code, out, _ = run(capsys, "init")
    assert code == 0 and f"{small_corpus.manifest}: exists; left as it is" in out
    assert small_corpus.manifest.read_bytes() == before
    assert run(capsys, "validate")[0] == 0  # bceval reads the manifest it wrote, $schema included


def test_init_outside_any_corpus_refuses_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "init")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "no corpus found" in err
    assert list(tmp_path.iterdir()) == []


def test_init_doit_adds_a_table_to_an_existing_pyproject_once(small_corpus, monkeypatch, capsys):
    (small_corpus.root / "pyproject.toml").write_text('[project]\nname = "my-corpus"\n')
    monkeypatch.chdir(small_corpus.root)
    assert run(capsys, "init", "--doit")[0] == 0
    text = (small_corpus.root / "pyproject.toml").read_text()
    assert text.startswith('[project]\nname = "my-corpus"\n') and text.count("[tool.bceval]") == 1
    assert run(capsys, "init", "--doit")[0] == 0
    assert (small_corpus.root / "pyproject.toml").read_text() == text


# --- the whole first-run flow, with no flags, in the user's own checkout ------------------------------------------


def first_run(root: Path) -> dict[str, subprocess.CompletedProcess]:
    env = environment()
    results = {}
    for name, argv in (
        ("validate", ["bceval", "validate"]),
        ("prepare", ["bceval", "prepare"]),
        ("answer", ["bceval", "answer", "--adapter", "baseline"]),
        ("score", ["bceval", "score", "--no-gate"]),
        ("health", ["bceval", "health"]),
        ("init", ["bceval", "init", "--doit"]),
        ("doit", ["doit"]),
        ("doit score", ["doit", "score"]),
        ("doit publish", ["doit", "publish"]),
    ):
        results[name] = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    return results


def check_first_run(root: Path, results: dict[str, subprocess.CompletedProcess], gate_passes: bool) -> None:
    for name, done in results.items():
        expected = (0, 1) if name == "doit score" and not gate_passes else (0,)
        assert done.returncode in expected, f"{name}: {done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr
        if name != "init":
            assert f"bceval: corpus {root} (" in done.stderr, name  # every command names the corpus it uses
    assert "Review fixture validation PASSED" in results["validate"].stdout
    assert "Corpus health" in results["health"].stdout
    assert (root / "evaluation" / "scorecard.md").is_file()  # doit publish wrote the user's page
    assert (root / "out" / "runs" / "baseline" / "scorecard.json").is_file()


@requires_shared
def test_first_run_in_a_copy_of_the_shared_corpus(tmp_path):
    root = tmp_path / "bcquality"
    shutil.copytree(SHARED_CORPUS, root)
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    results = first_run(root)
    check_first_run(root, results, gate_passes=False)
    assert "32 cases cover 16 leaf domains" in results["validate"].stdout


def test_first_run_in_a_corpus_without_a_manifest(corpus, tmp_path):
    corpus.leaf("performance")
    corpus.leaf("security", layer="community")
    corpus.article("performance", "alpha-check", keywords=["isempty"])
    corpus.article("security", "gamma-secret", layer="community", keywords=["secrettext"])
    corpus.manifest.unlink()
    results = first_run(corpus.root)
    check_first_run(corpus.root, results, gate_passes=False)
    assert "manifest none (by convention" in results["validate"].stderr
    assert "created" in results["init"].stdout


# --- 4. output that stays out of the way --------------------------------------------------------------------------


def test_a_new_output_folder_in_a_checkout_is_ignored_and_does_not_dirty_the_scorecard(small_corpus, capsys):
    committed(small_corpus.root)
    out = small_corpus.root / "out"
    assert main(["score", "--corpus", str(small_corpus.root), "--out", str(out), "--adapter", "oracle"]) == 0
    assert (out / ".gitignore").read_text().splitlines()[-1] == "*"
    card = json.loads((out / "runs/oracle/scorecard.json").read_text())
    assert card["corpus"]["dirty"] is False
    assert git(small_corpus.root, "status", "--porcelain") == ""


def test_the_dirty_flag_ignores_an_old_output_folder_but_nothing_else(small_corpus, capsys):
    out = small_corpus.root / "results"
    out.mkdir()  # made before bceval ran, so it has no .gitignore of its own
    committed(small_corpus.root)
    (out / "stray.txt").write_text("bceval's own files live here")
    args = ["score", "--corpus", str(small_corpus.root), "--out", str(out), "--adapter", "oracle"]
    assert main(args) == 0
    assert json.loads((out / "runs/oracle/scorecard.json").read_text())["corpus"]["dirty"] is False
    (small_corpus.root / "notes.md").write_text("a real change")
    assert main(args) == 0
    assert json.loads((out / "runs/oracle/scorecard.json").read_text())["corpus"]["dirty"] is True


# --- 5. failures: read-only output, Ctrl-C, killed runs -----------------------------------------------------------


def test_a_read_only_output_folder_is_one_line_exit_2(small_corpus, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    args = [sys.executable, "-m", "bceval", "prepare", "--corpus", str(small_corpus.root), "--out", str(out)]
    if os.geteuid() != 0:
        out.chmod(0o555)
        command = args
    else:  # root writes through file modes; a read-only bind mount stops it
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            pytest.skip("running as root needs bubblewrap (apt-get install bubblewrap) to make a folder read-only")
        command = [bwrap, "--bind", "/", "/", "--ro-bind", str(out), str(out), "--dev", "/dev", "--", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=environment(), timeout=120)
    if done.returncode != 2 and "Operation not permitted" in done.stderr:
        pytest.skip(f"bubblewrap cannot create a mount namespace here: {done.stderr.strip()}")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    expected = f"bceval: {out}: output directory is not writable (Read-only file system); choose another with --out"
    assert lines == [expected] or (len(lines) == 1 and "output directory is not writable" in lines[0])
    assert done.stdout == ""


FAKE_SLOW_AGENT = """#!{python}
import os, sys, time
if sys.argv[1:] == ["--version"]:
    print("slow-agent 1")
    sys.exit(0)
sys.stdin.read()
with open(os.path.join({marks!r}, str(os.getpid())), "w") as handle:
    handle.write(os.getcwd())
time.sleep(30)
"""


@pytest.mark.parametrize(("sent", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_is_one_line_exit_130_and_leaves_no_temporary_file_or_agent(tmp_path, sent, code):
    """SIGTERM (CI cancellation, `docker stop`) ends bceval as Ctrl-C does, with its own exit status (issue 47)."""
    marks = tmp_path / "started"
    marks.mkdir()
    agent = tmp_path / "bin" / "slow-agent"
    agent.parent.mkdir()
    agent.write_text(FAKE_SLOW_AGENT.format(python=sys.executable, marks=str(marks)))
    agent.chmod(0o755)
    out = tmp_path / "out"
    assert main(["prepare", "--corpus", str(DEMO_CORPUS), "--out", str(out)]) == 0
    env = {**environment(), "BCEVAL_LIVE": "1", "PATH": f"{agent.parent}{os.pathsep}{environment()['PATH']}"}
    command = [sys.executable, "-m", "bceval", "answer", "--corpus", str(DEMO_CORPUS), "--out", str(out)]
    command += ["--adapter", "command", "--command", "slow-agent", "--jobs", "4", "--timeout", "60"]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(marks.iterdir())) < 4:
        time.sleep(0.05)
    pids = [int(path.name) for path in marks.iterdir()]
    views = [Path(path.read_text()) for path in marks.iterdir()]
    assert len(pids) == 4, "the fake agents never started"
    process.send_signal(sent)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == code, stderr
    assert stderr.strip().splitlines()[-1] == "bceval: interrupted" and "Traceback" not in stderr
    assert not [p for p in out.rglob(".bceval-tmp-*")]
    assert not [pid for pid in pids if alive(pid)], "an agent outlived the interrupted run"
    assert views and not [view for view in views if view.exists()], "an agent view outlived the interrupted run"


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in {"Z", "X"}
    except FileNotFoundError:
        return False


def test_a_prepare_with_nothing_changed_rebuilds_nothing_and_one_with_anything_changed_rebuilds(
    small_corpus, tmp_path, capsys
):
    out, root = tmp_path / "out", small_corpus.root
    nothing = "bceval: everything is up to date; nothing was rebuilt\n"

    def prepare() -> tuple[int, str]:
        assert main(["prepare", "--corpus", str(root), "--out", str(out)]) == 0
        said = capsys.readouterr().err
        return int(not said.endswith(nothing)), said

    assert prepare()[0] == 1
    ran, said = prepare()
    assert ran == 0 and prepare()[1] == said
    index = out / "review" / "knowledge-index.json"
    article = next(root.glob("microsoft/knowledge/**/alpha-check.md"))
    article.write_text(article.read_text(encoding="utf-8").replace("Does a thing.", "Does two."), encoding="utf-8")
    before = index.read_bytes()
    assert prepare()[0] == 1 and index.read_bytes() != before  # an edited article is indexed again
    assert prepare()[0] == 0
    request = next((out / "review").glob("request-case-*.json"))
    request.unlink()
    assert prepare()[0] == 1 and request.is_file()  # a prepared file taken away is written again
    manifest = root / "evaluation" / "review-fixtures.json"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert prepare()[0] == 1 and prepare()[0] == 0  # so is a changed manifest
    leaf = next(root.glob("microsoft/skills/review/al-*-review.md"))
    leaf.write_text(leaf.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert prepare()[0] == 1


def test_temporary_files_a_killed_run_left_are_swept_by_the_next(small_corpus, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["prepare", "--corpus", str(small_corpus.root), "--out", str(out)]) == 0
    gone = dead_pid()
    left = [out / "review" / f".bceval-tmp-{gone}-k1ll3d_x", out / ".build" / f".bceval-tmp-{gone}-abcdefgh"]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half")
    kept = [
        out / "review" / "notes.tmp",  # not a name bceval's atomic writes use
        out / "review" / ".knowledge-index.json.k1ll3d_x.tmp",  # an editor's (the old atomic-write name)
        out / "review" / f".bceval-tmp-{os.getpid()}-abcdefgh",  # a living process's write in progress
        out / "knowledge" / f".bceval-tmp-{gone}-abcdefgh",  # a folder bceval does not own (--out at a corpus)
    ]
    for path in kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("mine")
    assert main(["prepare", "--corpus", str(small_corpus.root), "--out", str(out)]) == 0
    assert not any(path.exists() for path in left) and all(path.read_text() == "mine" for path in kept)


def dead_pid() -> int:
    """The pid of a process that has exited."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_a_doit_state_file_that_is_not_a_database_is_rebuilt_with_one_line(small_corpus, tmp_path, capsys):
    from bceval.outdir import SQLITE_HEADER

    out = tmp_path / "out"
    assert main(["prepare", "--corpus", str(small_corpus.root), "--out", str(out)]) == 0
    state = out / ".bceval.doit.db"
    state.write_text('{"prepare": {"_values_:": {}')  # an older bceval's JSON state, half written
    capsys.readouterr()
    code, out_text, err = run(capsys, "prepare", "--corpus", str(small_corpus.root), "--out", str(out))
    assert code == 0 and "was not doit's state database (an older bceval's or damaged); rebuilding" in err
    assert "Traceback" not in err
    assert state.read_bytes().startswith(SQLITE_HEADER)  # whole again


def test_a_second_run_on_the_same_output_folder_is_refused_while_the_first_holds_it(small_corpus, tmp_path, capsys):
    from bceval.outdir import OutputLock

    out = tmp_path / "out"
    assert main(["prepare", "--corpus", str(small_corpus.root), "--out", str(out)]) == 0
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from bceval.outdir import OutputLock; "
            "OutputLock(Path(sys.argv[1])).acquire(); print('held', flush=True); time.sleep(30)",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        code, _, err = run(capsys, "prepare", "--corpus", str(small_corpus.root), "--out", str(out))
        assert code == 2 and "another bceval run is using this output directory" in err
    finally:
        holder.kill()
        holder.wait()
    lock = OutputLock(out)
    lock.acquire()  # released when its holder died
    lock.release()


# --- 6. an unfinished prepare is marked, and answer/score refuse it -----------------------------------------------


def test_a_failed_prepare_marks_its_directory_and_answering_refuses_it(corpus, tmp_path, capsys):
    from bceval.errors import BcevalError
    from bceval.steps.answer import RunAnswers, answer_case

    corpus.leaf("performance")
    corpus.leaf("security")
    corpus.article("security", "gamma-secret", keywords=["secrettext"])
    for number in range(11):
        corpus.article("performance", f"rule-{number:02d}", keywords=[f"token{number}"])
    sample = " ".join(f"token{n}" for n in range(1, 11))
    corpus.write("microsoft/knowledge/performance/rule-00.bad.al", f"codeunit 50100 X {{ {sample} }}\n")
    out = tmp_path / "out"
    code, out_text, _ = run(capsys, "prepare", "--corpus", str(corpus.root), "--out", str(out))
    assert code == 1 and "ranking gate failed" in out_text
    assert (out / "review" / ".bceval-incomplete").is_file()
    assert (out / "review" / "review-request.json").is_file()  # written, but flagged as not to be trusted
    settings = load_settings(cwd=tmp_path, environ={}, corpus=str(corpus.root), out=str(out), adapter="oracle")
    answers = RunAnswers(settings, [])
    case = ReviewCase(id="security-bad", modelId="case-00000000", domain="security", input="x.bad.al", expected=[])
    with pytest.raises(BcevalError, match="the last prepare did not finish"):
        answer_case(lambda: answers, case)
    code, out_text, err = run(capsys, "answer", "--adapter", "oracle", "--corpus", str(corpus.root), "--out", str(out))
    assert code != 0 and not (out / "runs" / "oracle" / "results").exists()


def test_a_finished_prepare_removes_the_mark(small_corpus, tmp_path, capsys):
    out = tmp_path / "out"
    (out / "review").mkdir(parents=True)
    (out / "review" / ".bcquality-evaluation").write_text("ours")
    (out / "review" / ".bceval-incomplete").write_text("from a killed run")
    assert main(["prepare", "--corpus", str(small_corpus.root), "--out", str(out)]) == 0
    assert not (out / "review" / ".bceval-incomplete").exists()


# --- 7. validate reads every file prepare reads -------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "microsoft/skills/review/al-performance-review.md",  # a leaf
        "community/knowledge/security/gamma-secret.md",  # an article
        "microsoft/knowledge/performance/beta-loop.good.al",  # a sample no case uses
        "microsoft/knowledge/performance/lonely.bad.al",  # a sample beside no article
    ],
)
def test_validate_refuses_every_file_prepare_would_refuse(small_corpus, tmp_path, capsys, rel):
    path = small_corpus.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((path.read_bytes() if path.exists() else b"x\n") + b"caf\xe9\n")
    code, out, err = run(capsys, "validate", "--corpus", str(small_corpus.root), "--out", str(tmp_path / "o"))
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()[1:]  # after the corpus line, exactly one
    assert line.startswith(f"bceval: {path}: not valid UTF-8 (byte 0xE9 at offset ")


# --- 8. broken frontmatter is named as such; health explains a corpus that fails ----------------------------------


def test_a_case_article_with_broken_frontmatter_is_reported_as_exactly_that(small_corpus, tmp_path, capsys):
    md = small_corpus.root / "microsoft/knowledge/performance/alpha-check.md"
    md.write_text(md.read_text().replace("---\n", "", 1))  # no opening line
    code, out, _ = run(capsys, "prepare", "--corpus", str(small_corpus.root), "--out", str(tmp_path / "o"))
    assert code == 1
    assert "performance-bad: the frontmatter of microsoft/knowledge/performance/alpha-check.md cannot be read" in out
    assert "ranking gate" not in out and "add keywords" not in out


def test_health_runs_on_a_corpus_that_fails_validation_and_says_why(small_corpus, tmp_path, capsys):
    small_corpus.leaf("events")  # a leaf without knowledge: validation fails
    bad = small_corpus.root / "microsoft/knowledge/performance/beta-loop.md"
    bad.write_bytes(bad.read_bytes() + b"\xff")
    out = tmp_path / "o"
    code, out_text, err = run(capsys, "health", "--corpus", str(small_corpus.root), "--out", str(out))
    report = json.loads((out / "health.json").read_text())
    validation = [f["message"] for f in report["findings"] if f["kind"] == "validation"]
    unreadable = [f["path"] for f in report["findings"] if f["kind"] == "unreadable-file"]
    assert any("events: no enabled knowledge layer" in message for message in validation)
    assert unreadable == ["microsoft/knowledge/performance/beta-loop.md"]
    assert report["coverage"]["paired"] >= 2  # the readable rest is still measured
    assert "Corpus health FAILED" in out_text and "health reports what it can read" in err
    # the graph stops at whichever failure it meets first: the invalid corpus (1) or the unreadable file (2)
    assert code in (1, 2)
    assert main(["health", "--corpus", str(small_corpus.root), "--out", str(out), "--strict"]) in (1, 2)


# --- 9. output conventions ----------------------------------------------------------------------------------------


def test_a_no_op_run_says_it_is_up_to_date(small_corpus, tmp_path, capsys):
    args = ["prepare", "--corpus", str(small_corpus.root), "--out", str(tmp_path / "o")]
    assert main(args) == 0
    capsys.readouterr()
    code, out, err = run(capsys, *args)
    assert code == 0 and out == ""
    assert err.splitlines()[1:] == ["bceval: everything is up to date; nothing was rebuilt"]


@pytest.mark.parametrize(
    "command", ["validate", "prepare", "answer", "score", "publish", "health", "bench", "init", "compare", "guidance"]
)
def test_every_subcommand_help_starts_with_one_line_of_description(command, capsys):
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    first, second = capsys.readouterr().out.splitlines()[:2]
    assert first and not first.startswith("usage:") and first.endswith(".") and second == ""


def test_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out.startswith("bceval ")


def test_guidance_commands_find_the_corpus_the_same_way(tmp_path, monkeypatch, capsys):
    corpus = tmp_path / "demo"
    shutil.copytree(DEMO_CORPUS, corpus)
    monkeypatch.chdir(corpus / "microsoft")  # outside git only the current folder counts: no corpus, and no demo
    code, out, err = run(capsys, "guidance")
    assert code == 1 and f"no corpus in {corpus / 'microsoft'} or its parents up to the git root" in err
    code, out, err = run(capsys, "guidance", "--root", "demo")  # the demo corpus when asked for
    assert code == 0 and err.splitlines()[0].startswith(f"bceval: corpus {DEMO_CORPUS} (--root demo: bceval's demo")
    monkeypatch.chdir(corpus)
    code, out, err = run(capsys, "guidance")
    assert code == 0 and "fixture validation PASSED: 4 case(s)" in out
    manifest = corpus / "evaluation" / "development-guidance-fixtures.json"
    assert err.splitlines()[0] == f"bceval: corpus {corpus} (found here); manifest {manifest}"
