"""Live review runs that cannot see the answer: agent views, the bwrap sandbox, and cheating fake agents that
prove both are needed (tests/agents.py holds the agents).

The cheats never review anything: they look for the sample a case file was made from. With `--isolation none`
they pass the gate, which proves they are capable; in the default view the local cheat finds nothing; under
`--sandbox bwrap` neither does the one that roams the disk.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from agents import clean_environment
from conftest import DEMO_CORPUS, SHARED_CORPUS, requires_shared

from bceval.agents.view import build_view, materialize, remove, scrubbed_environment
from bceval.cli import main
from bceval.errors import BcevalError


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


def bwrap_or_skip() -> str:
    from bceval.agents.sandbox import require_bwrap

    try:
        return require_bwrap()
    except BcevalError as exc:
        pytest.skip(f"the bwrap sandbox cannot run here: {exc}")


def copy_corpus(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target


def run_cli(capsys, *argv: str) -> tuple[int, list[str], list[str]]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out.strip().splitlines(), captured.err.strip().splitlines()


def live(capsys, corpus: Path, out: Path, command: str, *flags: str) -> dict:
    """Answer every case with the agent and score the run; returns the run's score.json."""
    base = ["--corpus", str(corpus), "--out", str(out)]
    code, lines, err = run_cli(
        capsys, "answer", *base, "--adapter", "command", "--command", command, "--jobs", "8", "--retries", "0", *flags
    )
    assert code == 0, lines + err
    run = next(flag for flag in (flags[i + 1] for i, f in enumerate(flags) if f == "--run"))
    run_cli(capsys, "score", *base, "--adapter", "command", "--run", run, "--no-gate")
    return json.loads((out / "runs" / run / "score.json").read_text(encoding="utf-8"))


def tallies(report: dict) -> tuple[tuple[int, int], tuple[int, int]]:
    return (report["positive"]["passed"], report["positive"]["total"]), (
        report["clean"]["passed"],
        report["clean"]["total"],
    )


# --- what a view holds --------------------------------------------------------------------------------------------


def test_a_view_holds_the_request_the_case_the_leaf_and_the_candidates_and_nothing_else(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["prepare", "--corpus", str(DEMO_CORPUS), "--out", str(out)]) == 0
    for request_path in sorted((out / "review").glob("request-case-*.json")):
        model_id = request_path.stem.removeprefix("request-")
        request = json.loads(request_path.read_text(encoding="utf-8"))
        view = build_view(out / "review", DEMO_CORPUS, model_id)
        paths = {f.path for f in view.files}
        candidates = {row["path"] for row in request["candidateArticles"]}
        assert paths == {f"request-{model_id}.json", f"{model_id}.al", request["skill"]} | candidates
        assert [p for p in paths if p.endswith(".al")] == [f"{model_id}.al"]  # never a sample
        assert not any("evaluation/" in p or "review-fixtures" in p for p in paths)  # never the manifest
        rewritten = json.loads(view.text(f"request-{model_id}.json"))
        assert "knowledgeIndex" not in rewritten and rewritten["cases"] == request["cases"]
        for item in view.files[2:]:
            assert item.data == (DEMO_CORPUS / item.path).read_bytes()  # full text, byte for byte
    root = materialize(view, tmp_path)
    try:
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        assert files == sorted(paths)
        assert all(not os.access(p, os.W_OK) or os.geteuid() == 0 for p in root.rglob("*"))
        assert all(stat.S_IMODE(p.stat().st_mode) in (0o444, 0o555) for p in [root, *root.rglob("*")])
    finally:
        remove(root)
    assert not root.exists()


def test_the_digest_covers_every_byte_and_path(tmp_path):
    out = tmp_path / "out"
    corpus = copy_corpus(DEMO_CORPUS, tmp_path / "corpus")
    assert main(["prepare", "--corpus", str(corpus), "--out", str(out)]) == 0
    model_id = sorted(p.stem.removeprefix("request-") for p in (out / "review").glob("request-case-*.json"))[0]
    before = build_view(out / "review", corpus, model_id)
    article = corpus / next(f.path for f in before.files if f.path.endswith(".md") and "/knowledge/" in f.path)
    article.write_text(article.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
    after = build_view(out / "review", corpus, model_id)
    assert after.digest != before.digest
    changed = [a["path"] for a, b in zip(before.manifest(), after.manifest(), strict=True) if a != b]
    assert changed == [article.relative_to(corpus).as_posix()]


def test_the_agent_environment_names_neither_corpus_nor_output(tmp_path):
    corpus, out = tmp_path / "corpus", tmp_path / "out"
    environ = {
        "PATH": "/usr/bin",
        "HOME": "/home/someone",
        "BCEVAL_LIVE": "1",
        "BCEVAL_MODEL": "m",
        "MY_CORPUS": str(corpus),
        "NOTES": f"look in {out}/runs",
        "PWD": str(tmp_path),
        "OLDPWD": "/somewhere",
    }
    kept = scrubbed_environment(environ, [corpus, out], tmp_path / "view")
    assert kept == {"PATH": "/usr/bin", "HOME": "/home/someone", "PWD": str(tmp_path / "view")}


def test_an_isolated_agent_runs_in_its_view_with_a_clean_environment(agent, tmp_path, capsys, monkeypatch, view_root):
    monkeypatch.setenv("BCEVAL_SECRET_HINT", "x")
    agent.mode("read-view")  # it opens the leaf and every candidate article by its relative path
    out = tmp_path / "out"
    report = live(capsys, DEMO_CORPUS, out, "fake-agent", "--run", "careful", "--timeout", "10")
    assert report["passed"]
    calls = agent.calls()
    assert len(calls) == 16
    for call in calls:
        assert Path(call["cwd"]).name.startswith("bceval-view-") and not Path(call["cwd"]).exists()
        assert Path(call["cwd"]).parent == view_root
        assert not [key for key in call["env"] if key.startswith("BCEVAL_")]
        assert "Every path in the request is relative to the working directory" in call["stdin"].replace("\n", " ")
        assert call["read"]


def test_isolation_none_is_labelled_as_not_isolated(agent, tmp_path, capsys):
    out = tmp_path / "out"
    live(capsys, DEMO_CORPUS, out, "fake-agent", "--run", "open", "--isolation", "none", "--timeout", "10")
    document = json.loads(next((out / "runs/open/results").glob("result-*.json")).read_text())
    assert document["answeredBy"]["isolation"] == "none"
    assert "isolation **not isolated**" in (out / "runs/open/scorecard.md").read_text()
    assert all(call["cwd"] == os.getcwd() for call in agent.calls())  # where bceval runs, as before


# --- cheats: capable without isolation, blind in a view, blind under bwrap when roaming ---------------------------


def cheat_matrix(capsys, monkeypatch, corpus: Path, out: Path, sandbox_allow: Path) -> dict[str, dict]:
    monkeypatch.chdir(corpus)  # a maintainer runs bceval in their checkout, so an agent without a view is in it too
    results = {
        "none": live(capsys, corpus, out, "cheat-agent", "--run", "none", "--isolation", "none"),
        "view": live(capsys, corpus, out, "cheat-agent", "--run", "view"),
        "roaming-view": live(capsys, corpus, out, "cheat-agent --roam", "--run", "roaming-view"),
    }
    bwrap_or_skip()
    results["roaming-bwrap"] = live(
        capsys,
        corpus,
        out,
        "cheat-agent --roam",
        "--run",
        "roaming-bwrap",
        "--sandbox",
        "bwrap",
        "--sandbox-allow-rw",
        str(sandbox_allow),
    )
    return results


@requires_shared
def test_cheats_on_the_shared_corpus(agent, tmp_path, capsys, monkeypatch, view_root):
    corpus = copy_corpus(SHARED_CORPUS, tmp_path / "bcquality")
    results = cheat_matrix(capsys, monkeypatch, corpus, tmp_path / "out", agent.data)
    assert results["none"]["passed"] and tallies(results["none"]) == ((16, 16), (16, 16))  # the cheat is capable
    assert tallies(results["view"]) == ((0, 16), (16, 16))  # in its view it finds nothing: recall 0
    # a view alone does not stop an agent that walks the disk (the corpus copy sits in the same temp folder) ...
    assert results["roaming-view"]["recall"] > 0
    # ... the sandbox does
    assert tallies(results["roaming-bwrap"]) == ((0, 16), (16, 16))


def test_cheats_on_the_demo_corpus(agent, tmp_path, capsys, monkeypatch, view_root):
    corpus = copy_corpus(DEMO_CORPUS, tmp_path / "demo")
    results = cheat_matrix(capsys, monkeypatch, corpus, tmp_path / "out", agent.data)
    assert results["none"]["passed"] and tallies(results["none"]) == ((8, 8), (8, 8))
    assert tallies(results["view"]) == ((0, 8), (8, 8))
    assert results["roaming-view"]["recall"] > 0
    assert tallies(results["roaming-bwrap"]) == ((0, 8), (8, 8))


def test_a_well_behaved_agent_reads_its_view_and_answers_normally_under_bwrap(agent, tmp_path, capsys, view_root):
    bwrap_or_skip()
    agent.mode("read-view")
    out = tmp_path / "out"
    report = live(
        capsys,
        DEMO_CORPUS,
        out,
        "fake-agent",
        "--run",
        "sandboxed",
        "--sandbox",
        "bwrap",
        "--sandbox-allow-rw",
        str(agent.data),
        "--sandbox-allow",
        os.environ["FAKE_ANSWERS"],
        "--timeout",
        "20",
    )
    assert report["passed"] and tallies(report) == ((8, 8), (8, 8))
    calls = agent.calls()
    assert len(calls) == 16 and all(call["read"] for call in calls)  # it opened every candidate article
    card_md = (out / "runs/sandboxed/scorecard.md").read_text()
    assert "isolation agent view, sandbox bwrap" in card_md


# --- what the agent can read is what the answer depends on --------------------------------------------------------


def test_an_article_edit_re_asks_exactly_the_cases_whose_views_hold_it(agent, tmp_path, capsys):
    corpus = copy_corpus(DEMO_CORPUS, tmp_path / "demo")
    out = tmp_path / "out"
    flags = ["--run", "r", "--timeout", "10"]
    live(capsys, corpus, out, "fake-agent", *flags)
    assert len(agent.calls()) == 16
    live(capsys, corpus, out, "fake-agent", *flags)
    assert len(agent.calls()) == 16  # a no-op asks nothing

    views = {}
    for transcript in (out / "runs/r/transcripts").glob("*.json"):
        record = json.loads(transcript.read_text())
        views[record["case"]] = {f["path"] for f in record["view"]["files"]}
    article = "microsoft/knowledge/performance/filter-before-findset.md"
    holding = sorted(case for case, paths in views.items() if article in paths)
    assert 0 < len(holding) < 16
    path = corpus / article
    path.write_text(path.read_text(encoding="utf-8") + "\nA clarifying sentence.\n", encoding="utf-8")
    live(capsys, corpus, out, "fake-agent", *flags)
    assert sorted(call["case"] for call in agent.calls()[16:]) == holding

    seen = set().union(*views.values())
    unused = next(p for p in sorted(corpus.glob("*/knowledge/*/*.md")) if p.relative_to(corpus).as_posix() not in seen)
    unused.write_text(unused.read_text(encoding="utf-8") + "\nNobody reads this.\n", encoding="utf-8")
    live(capsys, corpus, out, "fake-agent", *flags)
    assert len(agent.calls()) == 16 + len(holding)  # an article in no view re-asks nothing


# --- bad input: one line, exit 2, nothing touched -----------------------------------------------------------------


def test_a_sandbox_grant_that_does_not_exist_is_one_line(agent, tmp_path, capsys):
    bwrap_or_skip()
    out = tmp_path / "out"
    base = ["--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command", "--command", "fake-agent"]
    code, lines, err = run_cli(capsys, "answer", *base, "--sandbox", "bwrap", "--sandbox-allow", str(tmp_path / "nope"))
    assert (
        code == 2
        and lines == []
        and err == [f"bceval: --sandbox-allow {tmp_path / 'nope'} does not exist; create it or drop the flag"]
    )
    assert not (out / "runs").exists() and agent.calls() == []


@pytest.mark.parametrize("exists", [True, False])
def test_a_sandbox_grant_without_the_sandbox_is_one_line(agent, tmp_path, capsys, exists):
    """A grant changes the cache key and the run's identity: one that does nothing must not pass unnoticed."""
    out = tmp_path / "out"
    granted = tmp_path if exists else tmp_path / "nope"
    base = ["--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command", "--command", "fake-agent"]
    code, lines, err = run_cli(capsys, "answer", *base, "--sandbox-allow", str(granted))
    assert code == 2 and lines == [] and len(err) == 1
    assert err[0] == "bceval: --sandbox-allow only applies under --sandbox bwrap: add --sandbox bwrap or drop it"
    assert not out.exists() and agent.calls() == []


def test_a_sandbox_grant_that_would_expose_the_corpus_is_refused(agent, tmp_path, capsys):
    bwrap_or_skip()
    out = tmp_path / "out"
    base = ["--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command", "--command", "fake-agent"]
    code, _, err = run_cli(capsys, "answer", *base, "--sandbox", "bwrap", "--sandbox-allow", str(DEMO_CORPUS.parent))
    assert code == 2 and "would expose the corpus" in err[-1]
    assert not (out / "runs").exists()


@pytest.mark.parametrize(
    ("code", "reason"), [(errno.ENOSPC, "No space left on device"), (errno.EROFS, "Read-only file system")]
)
def test_a_view_that_cannot_be_created_is_one_line_and_touches_no_result(
    agent, tmp_path, capsys, monkeypatch, code, reason, view_root
):
    out = tmp_path / "out"
    base = ["--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command", "--command", "fake-agent"]
    assert run_cli(capsys, "answer", *base, "--run", "r", "--jobs", "4")[0] == 0
    results = out / "runs/r/results"
    next(iter(sorted(results.iterdir()))).unlink()  # one case to answer again
    before = {p.name: p.read_bytes() for p in results.iterdir()}

    def full_or_read_only(*args, **kwargs):
        raise OSError(code, reason)

    monkeypatch.setattr("bceval.agents.view.tempfile.mkdtemp", full_or_read_only)
    exit_code, lines, err = run_cli(capsys, "answer", *base, "--run", "r", "--jobs", "4")
    assert exit_code == 2 and lines == []
    assert err == [
        f"bceval: {view_root}: cannot create an agent view there ({reason}); set TMPDIR to a writable folder"
    ]
    assert {p.name: p.read_bytes() for p in results.iterdir()} == before
    assert len(agent.calls()) == 16


@pytest.mark.skipif(os.name != "posix", reason="stale views are swept on POSIX only (Windows cannot probe a pid)")
def test_views_a_killed_run_left_are_swept_once_stale_and_nothing_else(tmp_path):
    import subprocess
    import sys
    import time

    from bceval.agents.view import STALE_AFTER, sweep_stale_folders

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)

    def folder(name: str, age: float) -> Path:
        path = tmp_path / name
        (path / "microsoft").mkdir(parents=True)
        (path / "microsoft" / "article.md").write_text("x")
        for item in (path / "microsoft" / "article.md", path / "microsoft", path):
            item.chmod(0o444 if item.is_file() else 0o555)  # read-only, as a view is
        old = time.time() - age
        os.utime(path, (old, old))
        return path

    stale = [folder(f"bceval-{kind}-{dead}-abc", STALE_AFTER + 60) for kind in ("view", "knowledge", "request")]
    young = folder(f"bceval-view-{dead}-young", 60)  # may be a run in another pid namespace: left alone
    running = folder(f"bceval-view-{os.getpid()}-mine", STALE_AFTER + 60)  # its process lives
    foreign = folder("bceval-view-abcdefgh", STALE_AFTER + 60)  # not a name bceval gives
    other = folder(f"something-{dead}-else", STALE_AFTER + 60)
    assert sweep_stale_folders(tmp_path) == 3
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in (young, running, foreign, other))
