"""Issue 20, part B: a new user's first hour (items 8, 9, 10, 13, 15, 16, 19) and "no traceback, no hang" (17).

Each attempt does what the user did, in a scratch folder of its own, through `python -m bceval` in a subprocess
(`run_bceval`), and says whether bceval held. Files outside bceval's own output folder are fingerprinted before
and after, so an attempt that changes one counts it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from catalogue import ROOT, Outcome, Ran, attempt, refusal, run_bceval

DEMO = ROOT / "evaluation" / "demo-corpus"


def fingerprints(root: Path, skip: tuple[str, ...] = ("out",)) -> dict[str, tuple[str, int]]:
    """Every regular file below `root` (not under a top-level folder named in `skip`): its SHA-256 and mode."""
    found: dict[str, tuple[str, int]] = {}
    for folder, dirs, names in os.walk(root):
        if Path(folder) == root:
            dirs[:] = [d for d in dirs if d not in skip]
        for name in names:
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            found[str(path.relative_to(root))] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mode)
    return found


@contextmanager
def watched(root: Path, changed: list[int], skip: tuple[str, ...] = ("out",)) -> Iterator[None]:
    """Count (into `changed`) files below `root`, outside `skip`, that an attempt created, changed or removed."""
    before = fingerprints(root, skip)
    yield
    after = fingerprints(root, skip)
    changed.append(sum(1 for key in before.keys() | after.keys() if before.get(key) != after.get(key)))


def with_outside(outcome: Outcome, changed: list[int]) -> Outcome:
    count = sum(changed)
    if not count:
        return outcome
    return Outcome(
        False,
        f"{count} file(s) changed outside out/: {outcome.detail}",
        outcome.clean_error,
        outcome.traceback,
        outcome.hang,
        count,
        outcome.escapes,
        outcome.orphans,
    )


def passed(ran: Ran, *must_contain: str, code: int = 0) -> Outcome:
    """An attempt that must succeed (exit `code`) and print every text of `must_contain` (stdout or stderr)."""
    text = ran.stdout + ran.stderr
    missing = [item for item in must_contain if item not in text]
    held = ran.code == code and not missing and not ran.traceback
    last = (ran.stdout.strip().splitlines() or ran.stderr.strip().splitlines() or [""])[-1]
    detail = last if held else f"exit {ran.code}, missing {missing!r}: {(ran.stdout + ran.stderr)[-400:]!r}"
    return Outcome(held, detail, traceback=ran.traceback, hang=ran.hang)


def demo_copy(tmp: Path) -> Path:
    """A corpus of one's own: the demo corpus, copied."""
    corpus = tmp / "corpus"
    shutil.copytree(DEMO, corpus)
    return corpus


# --- 8: a named run is scored as it was answered; a name that is no run is refused ----------------------------


def _answered(tmp: Path) -> list[str]:
    flags = ["--corpus", str(DEMO), "--out", str(tmp / "out")]
    ran = run_bceval(["answer", "--adapter", "oracle", "--run", "mine", *flags], tmp)
    assert ran.code == 0, ran.stderr
    return flags


@attempt(8, "score-a-named-run-without-its-adapter")
def score_named_run(tmp: Path) -> Outcome:
    flags = _answered(tmp)
    ran = run_bceval(["score", "--run", "mine", *flags], tmp)
    return passed(ran, "Review evaluation PASSED")


@attempt(8, "score-a-named-run-with-another-adapter-is-refused")
def score_named_run_other_adapter(tmp: Path) -> Outcome:
    flags = _answered(tmp)
    return refusal(run_bceval(["score", "--run", "mine", "--adapter", "baseline", *flags], tmp), "--adapter baseline")


@attempt(8, "score-a-run-that-does-not-exist")
def score_typo(tmp: Path) -> Outcome:
    flags = _answered(tmp)
    outcome = refusal(run_bceval(["score", "--run", "typo", *flags], tmp), "--run typo", "the runs there: mine")
    if (tmp / "out" / "runs" / "typo").exists():
        return Outcome(False, "a run 'typo' was made: " + outcome.detail, traceback=outcome.traceback)
    return outcome


@attempt(8, "publish-a-run-that-does-not-exist")
def publish_typo(tmp: Path) -> Outcome:
    flags = _answered(tmp)
    page = tmp / "page.md"
    outcome = refusal(run_bceval(["publish", "--run", "typo", "--page", str(page), *flags], tmp), "--run typo", "mine")
    if page.exists() or (tmp / "out" / "runs" / "typo").exists():
        return Outcome(False, "publish wrote: " + outcome.detail, traceback=outcome.traceback)
    return outcome


@attempt(8, "compare-a-run-that-does-not-exist")
def compare_typo(tmp: Path) -> Outcome:
    flags = _answered(tmp)
    assert run_bceval(["score", "--run", "mine", *flags], tmp).code == 0
    ran = run_bceval(["compare", "mine", "typo", "--out", str(tmp / "out")], tmp)
    return refusal(ran, "typo", "the runs there: mine")


# --- 9: the demo corpus only when asked for; no leaf is a failure --------------------------------------------


@attempt(9, "validate-in-an-empty-folder")
def validate_empty(tmp: Path) -> Outcome:
    outcome = refusal(run_bceval(["validate"], tmp), str(tmp), "a corpus has review leaves", "--corpus demo")
    if (tmp / "out").exists():
        return Outcome(False, "out/ was created: " + outcome.detail, traceback=outcome.traceback)
    return outcome


@attempt(9, "validate-a-folder-without-leaves")
def validate_no_leaf(tmp: Path) -> Outcome:
    (tmp / "E" / "microsoft" / "knowledge").mkdir(parents=True)
    outcome = refusal(run_bceval(["validate", "--corpus", "E"], tmp), str(tmp / "E"), "no review leaf found")
    return outcome if not (tmp / "E" / "out").exists() else Outcome(False, "out/ was created: " + outcome.detail)


@attempt(9, "validate-the-root-folder")
def validate_root(tmp: Path) -> Outcome:
    return refusal(run_bceval(["prepare", "--corpus", "/", "--out", str(tmp / "out")], tmp), "/: no review leaf")


@attempt(9, "the-demo-corpus-when-asked-for")
def demo_asked(tmp: Path) -> Outcome:
    ran = run_bceval(["validate", "--corpus", "demo", "--out", str(tmp / "out")], tmp)
    return passed(ran, "(--corpus demo: bceval's demo corpus)", "Review fixture validation PASSED: 16 cases")


@attempt(9, "an-experiment-arm-reading-etc")
def experiment_arm_etc(tmp: Path) -> Outcome:
    (tmp / "x.yaml").write_text(
        f"name: evil\nepochs: 1\narms:\n  - name: a\n    corpus: {DEMO}\n  - name: b\n    corpus: ../../../../etc\n",
        encoding="utf-8",
    )
    changed: list[int] = []
    with watched(tmp, changed):
        ran = run_bceval(["experiment", "run", "x.yaml"], tmp)
        outcome = refusal(ran, "x.yaml", "arms[1].corpus", "no review leaf")
    return with_outside(outcome, changed)


# --- 19: a usage error is one line naming the flag ------------------------------------------------------------


@attempt(19, "a-flag-without-its-value")
def flag_without_value(tmp: Path) -> Outcome:
    return refusal(run_bceval(["answer", "--corpus", "demo", "--jobs"], tmp), "--jobs", "expected one argument")


@attempt(19, "an-unknown-flag")
def unknown_flag(tmp: Path) -> Outcome:
    return refusal(run_bceval(["validate", "--corpus", "demo", "--bogus"], tmp), "--bogus")


@attempt(19, "a-choice-argparse-checks")
def bad_choice(tmp: Path) -> Outcome:
    return refusal(run_bceval(["answer", "--adapter", "gpt"], tmp), "--adapter", "gpt")


@attempt(19, "a-range-error-names-the-flag-typed")
def range_names_flag(tmp: Path) -> Outcome:
    return refusal(run_bceval(["health", "--corpus", "demo", "--margin", "-1"], tmp), "--margin must be at least 0")


@attempt(19, "a-range-error-from-the-environment-names-the-variable")
def range_names_variable(tmp: Path) -> Outcome:
    ran = run_bceval(["answer", "--corpus", "demo", "--out", str(tmp / "out")], tmp, env={"BCEVAL_JOBS": "0"})
    return refusal(ran, "BCEVAL_JOBS must be at least 1")


def _json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


# --- 10: `doit guidance` in a corpus evaluates its own guidance manifests, or says there are none --------------


def run_doit(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Ran:
    """`python -m doit -f <bceval's dodo.py> ARGS` in CWD, as `doit` in a corpus with bceval's dodo file."""
    import subprocess
    import sys

    environ = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    environ.update(env or {})
    try:
        done = subprocess.run(
            [sys.executable, "-m", "doit", "-f", str(ROOT / "dodo.py"), *args],
            cwd=cwd,
            env=environ,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return Ran(None, "", "")
    return Ran(done.returncode, done.stdout, done.stderr)


@attempt(10, "doit-guidance-in-a-corpus-runs-its-own-manifests")
def doit_guidance_own(tmp: Path) -> Outcome:
    corpus = demo_copy(tmp)
    manifest = corpus / "evaluation" / "development-guidance-fixtures.json"
    document = json.loads(manifest.read_text(encoding="utf-8"))
    document["cases"] = document["cases"][:3]  # the demo's plan manifest has 4: this corpus's own has 3
    manifest.write_text(json.dumps(document, indent=2), encoding="utf-8")
    changed: list[int] = []
    with watched(corpus, changed):
        ran = run_doit(["guidance"], corpus)
    return with_outside(passed(ran, "Development guidance run PASSED: 3 case(s)"), changed)


@attempt(10, "doit-guidance-in-a-corpus-without-guidance-manifests")
def doit_guidance_none(tmp: Path) -> Outcome:
    corpus = demo_copy(tmp)
    for name in ("development-guidance-fixtures.json", "implementation-guidance-fixtures.json"):
        (corpus / "evaluation" / name).unlink()
    ran = run_doit(["guidance"], corpus)
    outcome = passed(ran, "has no guidance manifest", "nothing to evaluate")
    if "PASSED" in ran.stdout + ran.stderr:
        return Outcome(False, "a PASSED was printed for a corpus without guidance: " + outcome.detail)
    return outcome


# --- 16: the console and the page say what happened -------------------------------------------------------------


@attempt(16, "publish-right-after-scoring-does-not-say-nothing-happened")
def publish_after_score(tmp: Path) -> Outcome:
    flags = ["--corpus", str(DEMO), "--out", str(tmp / "out"), "--adapter", "oracle"]
    assert run_bceval(["score", *flags], tmp).code == 0
    ran = run_bceval(["publish", *flags, "--page", str(tmp / "page.md")], tmp)
    outcome = passed(ran, "Published run")
    if "nothing was rebuilt" in ran.stderr:
        return Outcome(False, "publish said: everything is up to date; nothing was rebuilt")
    return outcome


@attempt(16, "the-published-page-names-the-run-s-scorecard")
def page_names_scorecard(tmp: Path) -> Outcome:
    flags = ["--corpus", str(DEMO), "--out", str(tmp / "out"), "--adapter", "oracle"]
    ran = run_bceval(["publish", *flags, "--page", str(tmp / "page.md")], tmp)
    page = (tmp / "page.md").read_text(encoding="utf-8") if (tmp / "page.md").is_file() else ""
    if "`out/scorecard.json`" in page or "out/runs/<run>/scorecard.json" not in page:
        return Outcome(False, "the page does not name out/runs/<run>/scorecard.json", traceback=ran.traceback)
    return passed(ran, "Published run")


@attempt(16, "doit-health-reports-when-up-to-date")
def doit_health(tmp: Path) -> Outcome:
    env = {"BCEVAL_CORPUS": str(DEMO), "BCEVAL_OUT": str(tmp / "out")}
    first = run_doit(["health"], tmp, env)
    again = run_doit(["health"], tmp, env)
    if first.code != 0 or "Corpus health" not in first.stdout:
        detail = f"first doit health: exit {first.code}: {first.stderr[-200:]!r}"
        return Outcome(False, detail, traceback=first.traceback)
    return passed(again, "Corpus health OK")


@attempt(16, "bceval-health-always-prints-the-summary")
def bceval_health(tmp: Path) -> Outcome:
    flags = ["health", "--corpus", str(DEMO), "--out", str(tmp / "out")]
    assert run_bceval(flags, tmp).code == 0
    return passed(run_bceval(flags, tmp), "Corpus health OK")


@attempt(16, "doit-list-names-the-current-paths")
def doit_list(tmp: Path) -> Outcome:
    ran = run_doit(["list"], tmp, {"BCEVAL_CORPUS": str(DEMO), "BCEVAL_OUT": str(tmp / "out")})
    stale = [line for line in ran.stdout.splitlines() if "out/score.json" in line or "out/scorecard.json" in line]
    if stale:
        return Outcome(False, f"old paths: {stale[0]}", traceback=ran.traceback)
    return passed(ran, "out/runs/<run>/score.json", "out/runs/<run>/scorecard.json")


@attempt(16, "answer-and-ab-help-agree-on-the-corpus-default")
def help_agrees(tmp: Path) -> Outcome:
    def corpus_help(*command: str) -> str:
        text = run_bceval([*command, "--help"], tmp, env={"COLUMNS": "200"}).stdout
        lines = text.splitlines()
        return next((line.split("(default:", 1)[-1] for line in lines if line.strip().startswith("--corpus PATH")), "")

    answer, ab = corpus_help("answer"), corpus_help("experiment", "ab")
    held = bool(answer) and answer == ab and "demo corpus" not in answer
    return Outcome(held, f"answer: {answer.strip()!r}; ab: {ab.strip()!r}")


@attempt(16, "every-guidance-mode-has-its-own-help")
def guidance_mode_help(tmp: Path) -> Outcome:
    import contextlib
    import io

    from bceval.cli import main

    def shown(mode: str) -> str:  # in this process: --help needs no process of its own
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(["guidance", mode, "--help"])
        return out.getvalue()

    modes = ("validate", "prepare", "capture", "score", "run", "demo-workspaces")
    texts = {mode: shown(mode) for mode in modes}
    firsts = {text.splitlines()[0] if text else "" for text in texts.values()}
    held = len(set(texts.values())) == len(modes) and len(firsts) == len(modes) and all(texts.values())
    return Outcome(held, f"{len(set(texts.values()))} different help texts for {len(modes)} modes")


# --- 17: no traceback, no hang ---------------------------------------------------------------------------------


def _clean_failure(ran: Ran, *must_contain: str, code: int = 2) -> Outcome:
    """Refused or failed with the given exit code, without a traceback, naming what it must."""
    text = ran.stdout + ran.stderr
    missing = [item for item in must_contain if item not in text]
    held = ran.code == code and not missing and not ran.traceback
    last = (ran.stderr.strip().splitlines() or [""])[-1]
    return Outcome(
        held,
        last if held else f"exit {ran.code}, missing {missing!r}: {text[-300:]!r}",
        clean_error=held and code == 2,
        traceback=ran.traceback,
        hang=ran.hang,
    )


def _looped_corpus(tmp: Path, kind: str) -> Path:
    corpus = demo_copy(tmp)
    knowledge = corpus / "microsoft" / "knowledge"
    if kind == "self":
        (knowledge / "performance" / "x.md").symlink_to("x.md")
    else:
        (knowledge / "aa").mkdir()
        (knowledge / "bb").mkdir()
        (knowledge / "aa" / "l").symlink_to("../bb")
        (knowledge / "bb" / "l").symlink_to("../aa")
    return corpus


for _kind in ("self", "cross"):
    for _command in ("validate", "prepare", "health"):

        def _loop(tmp: Path, kind: str = _kind, command: str = _command) -> Outcome:
            corpus = _looped_corpus(tmp, kind)
            ran = run_bceval([command, "--corpus", str(corpus), "--out", str(tmp / "out")], tmp, timeout=30)
            return _clean_failure(ran, "symbolic link" if kind == "cross" else "x.md")

        attempt(17, f"a-{_kind}-symlink-loop-in-the-corpus-under-{_command}")(_loop)


@attempt(17, "a-full-disk-during-score-then-the-next-run")
def full_disk(tmp: Path) -> Outcome:
    import resource
    import signal
    import subprocess
    import sys

    flags = ["score", "--corpus", str(DEMO), "--out", str(tmp / "out"), "--adapter", "oracle"]
    assert run_bceval(["prepare", *flags[1:5]], tmp).code == 0

    def small_disk() -> None:  # every file may grow to 8 KiB: larger writes fail as on a full disk (EFBIG)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    environ = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, "-m", "bceval", *flags],
        cwd=tmp,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=small_disk,
    )
    full = Ran(done.returncode, done.stdout, done.stderr)
    if full.traceback or full.code in (0, None):
        return Outcome(False, f"on a full disk: exit {full.code}: {full.stderr[-300:]!r}", traceback=full.traceback)
    again = run_bceval(flags, tmp)
    if "killed run" in again.stderr:
        return Outcome(False, "the next run blamed a killed run: " + again.stderr.strip().splitlines()[-1])
    return passed(again, "Review evaluation PASSED")


@attempt(17, "a-folder-named-bceval-where-bench-starts-bceval")
def shadowing_folder(tmp: Path) -> Outcome:
    import subprocess

    from bceval.bench.measure import BCEVAL, measured_environment

    (tmp / "bceval").mkdir()
    (tmp / "bceval" / "__init__.py").write_text("", encoding="utf-8")
    (tmp / "bceval" / "__main__.py").write_text("raise SystemExit('the wrong bceval')\n", encoding="utf-8")
    done = subprocess.run(
        [*BCEVAL, "--version"], cwd=tmp, env=measured_environment(), capture_output=True, text=True, timeout=30
    )
    held = done.returncode == 0 and done.stdout.startswith("bceval ")
    return Outcome(held, (done.stdout or done.stderr).strip())


def _git(*args: str, cwd: Path, stdin: str | None = None) -> str:
    import subprocess

    identity = ["-c", "user.name=catalogue", "-c", "user.email=catalogue@example.invalid"]
    return subprocess.run(
        ["git", *identity, *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=True
    ).stdout.strip()


@attempt(17, "a-ref-whose-tree-holds-a-dot-dot-entry")
def dot_dot_tree(tmp: Path) -> Outcome:
    repo = demo_copy(tmp)
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "base", cwd=repo)
    blob = _git("hash-object", "-w", "--stdin", cwd=repo, stdin="escaped\n")
    inner = _git("mktree", cwd=repo, stdin=f"100644 blob {blob}\tpwned.txt\n")
    listing = _git("cat-file", "-p", "HEAD^{tree}", cwd=repo)
    root = _git("mktree", cwd=repo, stdin=f"{listing}\n040000 tree {inner}\t..\n")
    evil = _git("commit-tree", root, "-p", "HEAD", "-m", "evil", cwd=repo)
    _git("branch", "evil", evil, cwd=repo)
    (tmp / "x.yaml").write_text(
        f"name: dotdot\nepochs: 1\ndefaults:\n  corpus: {repo}\narms:\n  - name: base\n    ref: HEAD\n"
        "  - name: evil\n    ref: evil\n",
        encoding="utf-8",
    )
    ran = run_bceval(["experiment", "run", "x.yaml", "--out", str(tmp / "out")], tmp)
    escaped = list(tmp.rglob("pwned.txt")) + list(tmp.parent.glob("pwned.txt"))
    outcome = _clean_failure(ran, "unsafe path")
    if escaped:
        return Outcome(False, f"a file escaped the export: {escaped[0]}", escapes=len(escaped))
    return outcome


@attempt(17, "a-doit-state-file-that-is-not-valid-json")
def broken_state(tmp: Path) -> Outcome:
    flags = ["validate", "--corpus", str(DEMO), "--out", str(tmp / "out")]
    assert run_bceval(flags, tmp).code == 0
    (tmp / "out" / ".bceval.doit.db").write_text('{"validate": {}}}', encoding="utf-8")
    ran = run_bceval(flags, tmp)
    outcome = passed(ran, "Review fixture validation PASSED", "was not doit's state database")
    return outcome if "killed run" not in ran.stderr else Outcome(False, "it blamed a killed run")


@attempt(17, "the-output-lock-is-a-folder")
def lock_folder(tmp: Path) -> Outcome:
    (tmp / "out" / ".bceval.lock").mkdir(parents=True)
    ran = run_bceval(["validate", "--corpus", str(DEMO), "--out", str(tmp / "out")], tmp)
    return refusal(ran, ".bceval.lock")


def _bceval_process(args: list[str], cwd: Path, **popen: object) -> tuple[int | None, str]:
    """`python -m bceval ARGS` with the given Popen settings (stdout elsewhere); its exit code and stderr."""
    import subprocess
    import sys

    environ = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    process = subprocess.Popen(
        [sys.executable, "-m", "bceval", *args], cwd=cwd, env=environ, stderr=subprocess.PIPE, text=True, **popen
    )  # type: ignore[call-overload]
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return None, ""
    return process.returncode, err


@attempt(17, "standard-output-closed")
def stdout_closed(tmp: Path) -> Outcome:
    read, write = os.pipe()
    os.close(read)  # `| head -c0`: the reader is gone before bceval writes
    try:
        code, err = _bceval_process(["validate", "--corpus", str(DEMO), "--out", str(tmp / "out")], tmp, stdout=write)
    finally:
        os.close(write)
    ran = Ran(code, "", err)
    lines = [line for line in ran.stderr_lines() if not line.startswith("bceval: corpus ")]
    held = code == 141 and not lines  # the reader stopped reading: quietly, as `yes | head` does
    return Outcome(held, f"exit {code}, stderr {lines[-1:]!r}", traceback=ran.traceback, hang=ran.hang)


@attempt(17, "standard-output-full")
def stdout_full(tmp: Path) -> Outcome:
    with open("/dev/full", "w") as full:
        code, err = _bceval_process(["runs", "--out", str(tmp / "out")], tmp, stdout=full)
    return refusal(Ran(code, "", err), "cannot write to standard output", "No space left on device")


@attempt(17, "a-deleted-working-folder")
def deleted_cwd(tmp: Path) -> Outcome:
    import shlex
    import subprocess
    import sys

    gone = tmp / "gone"
    gone.mkdir()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    environ["PYTHONPATH"] = str(ROOT)
    folder, python = shlex.quote(str(gone)), shlex.quote(sys.executable)
    script = f"cd {folder} && rmdir {folder} && exec {python} -m bceval validate"
    done = subprocess.run(["sh", "-c", script], env=environ, capture_output=True, text=True, timeout=60)
    return refusal(Ran(done.returncode, done.stdout, done.stderr), "current folder no longer exists")


_INTERRUPTED_IMPORT = """
import sys
class Interrupt:  # Ctrl-C while bceval's command line is being imported
    def find_spec(self, name, path=None, target=None):
        if name == "bceval.cli":
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
sys.argv = ["bceval", "validate"]
import bceval.__main__
bceval.__main__.run()
"""

_INTERRUPTED_AT_THE_END = """
import os, signal, sys
import bceval.cli
work = bceval.cli.main
def main(argv=None):  # Ctrl-C the moment the work is done
    code = work(argv)
    os.kill(os.getpid(), signal.SIGINT)
    return code
bceval.cli.main = main
sys.argv = ["bceval", "validate", "--corpus", "demo", "--out", sys.argv[1]]
import bceval.__main__
bceval.__main__.run()
"""


def _python(code: str, cwd: Path, *args: str) -> Ran:
    import subprocess
    import sys

    environ = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    environ["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=60
    )
    return Ran(done.returncode, done.stdout, done.stderr)


@attempt(17, "ctrl-c-during-start-up")
def ctrl_c_start(tmp: Path) -> Outcome:
    ran = _python(_INTERRUPTED_IMPORT, tmp)
    held = ran.code == 130 and ran.stderr_lines() == ["bceval: interrupted"]
    return Outcome(held, f"exit {ran.code}: {ran.stderr_lines()[-1:]!r}", traceback=ran.traceback)


@attempt(17, "ctrl-c-just-as-the-work-finished")
def ctrl_c_end(tmp: Path) -> Outcome:
    ran = _python(_INTERRUPTED_AT_THE_END, tmp, str(tmp / "out"))
    lines = [line for line in ran.stderr_lines() if not line.startswith("bceval: corpus ")]
    held = (ran.code == 0 and not lines) or (ran.code == 130 and lines == ["bceval: interrupted"])
    return Outcome(held, f"exit {ran.code}: {lines[-1:]!r}", traceback=ran.traceback)


# --- 13 and 15: experiments that say what they paid, and the agent's own prompt -----------------------------------

# A live agent for these attempts: it keeps the prompt it was given (DUMP/<case>.txt) and finds nothing.
DUMPING_AGENT = """#!{python}
import json, os, sys
if sys.argv[1:2] == ["--version"]:
    print("dumping-agent 1.0")
    sys.exit(0)
prompt = sys.stdin.read()
start = prompt.index("\\n", prompt.index("=== request ")) + 1
case = json.loads(prompt[start:prompt.index("\\n=== file ", start)])["cases"][0]["id"]
with open(os.path.join(os.environ["DUMP"], case + ".txt"), "w", encoding="utf-8", newline="") as handle:
    handle.write(prompt)
print(json.dumps({"cases": [{"id": case, "findings": []}]}))
"""


def _live_agent(tmp: Path) -> dict[str, str]:
    import sys

    agent = tmp / "bin" / "dumping-agent"
    agent.parent.mkdir()
    agent.write_text(DUMPING_AGENT.replace("{python}", sys.executable), encoding="utf-8")
    agent.chmod(0o755)
    (tmp / "dump").mkdir()
    return {"BCEVAL_LIVE": "1", "DUMP": str(tmp / "dump"), "PATH": f"{agent.parent}{os.pathsep}{os.environ['PATH']}"}


@attempt(15, "prompt-prints-what-the-agent-of-the-run-got")
def prompt_matches(tmp: Path) -> Outcome:
    env = _live_agent(tmp)
    flags = ["--corpus", str(DEMO), "--out", str(tmp / "out")]
    answered = run_bceval(
        ["answer", *flags, "--adapter", "command", "--command", "dumping-agent", "--run", "live", "-k", "security*"],
        tmp,
        env=env,
    )
    assert answered.code == 0, answered.stderr
    shown = run_bceval(["prompt", "security-bad", *flags, "--run", "live"], tmp)  # no BCEVAL_LIVE: nothing runs
    case = next(line for line in shown.stderr.splitlines() if "case security-bad (" in line).split("(")[-1].strip(")")
    given = (tmp / "dump" / f"{case}.txt").read_text(encoding="utf-8")
    held = shown.code == 0 and shown.stdout == given and "holds 7 file(s)" in shown.stderr
    return Outcome(held, f"{len(shown.stdout)} bytes shown, {len(given)} given", traceback=shown.traceback)


@attempt(15, "progress-lines-name-arm-epoch-case-total-and-time-left")
def progress_lines(tmp: Path) -> Outcome:
    import re

    env = _live_agent(tmp)
    (tmp / "x.yaml").write_text(
        f"name: p\nepochs: 2\ncases: [security-bad, ui-good]\ndefaults:\n  corpus: {DEMO}\n  adapter: command\n"
        "arms:\n  - name: control\n    command: dumping-agent\n  - name: treatment\n    command: dumping-agent --x\n",
        encoding="utf-8",
    )
    ran = run_bceval(["experiment", "run", "x.yaml", "--out", str(tmp / "out")], tmp, env=env)
    pattern = re.compile(
        r"^\[(\d+)/8\] arm (control|treatment), epoch [12], (security-bad|ui-good) \(case-[0-9a-f]{8}\): "
        r"answered in [0-9.]+ s; \d+ s so far, (about \d+ (s|min)( \d+ s)? left|done)$"
    )
    lines = [line for line in ran.stderr.splitlines() if line.startswith("[")]
    held = ran.code == 0 and len(lines) == 8 and all(pattern.match(line) for line in lines)
    held = held and lines[-1].endswith("done")
    return Outcome(held, lines[-1] if lines else f"exit {ran.code}: {ran.stderr[-300:]!r}", traceback=ran.traceback)


def _ab_repo(tmp: Path) -> Path:
    repo = demo_copy(tmp)
    _git("init", "-q", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "base", cwd=repo)
    _git("tag", "base", cwd=repo)
    article = repo / "microsoft" / "knowledge" / "security" / "parameterize-setfilter-expressions.md"
    article.write_text(article.read_text(encoding="utf-8") + "\nMore words.\n", encoding="utf-8")
    _git("commit", "-qam", "head", cwd=repo)
    _git("tag", "head", cwd=repo)
    return repo


@attempt(13, "ab-again-with-another-agent-is-refused-not-mixed")
def ab_other_agent(tmp: Path) -> Outcome:
    repo = _ab_repo(tmp)
    ab = ["experiment", "ab", "--base", "base", "--head", "head", "--corpus", str(repo), "--out", str(tmp / "out")]
    assert run_bceval(ab, tmp).code == 0
    folder = tmp / "out" / "experiments" / "ab-base-head"
    before = fingerprints(folder)
    ran = run_bceval([*ab, "--adapter", "oracle"], tmp)
    outcome = refusal(ran, "ab-base-head", "adapter")
    after = fingerprints(folder)
    changed = sum(1 for key in before.keys() | after.keys() if before.get(key) != after.get(key))
    if changed:
        return Outcome(False, f"{changed} file(s) of the first experiment changed: {outcome.detail}")
    return outcome


@attempt(13, "ab-takes-manifest")
def ab_manifest(tmp: Path) -> Outcome:
    repo = _ab_repo(tmp)
    manifest = tmp / "m.json"
    manifest.write_text((repo / "evaluation" / "review-fixtures.json").read_text(encoding="utf-8"), encoding="utf-8")
    ab = ["experiment", "ab", "--base", "base", "--head", "head", "--corpus", str(repo), "--out", str(tmp / "out")]
    ran = run_bceval([*ab, "--manifest", str(manifest)], tmp)
    written = tmp / "out" / "experiments" / "ab-base-head" / "experiment.yaml"
    text = written.read_text(encoding="utf-8") if written.is_file() else ""
    outcome = passed(ran, "Report:")
    if f"manifest: {manifest}" not in text:
        return Outcome(False, "the manifest is not the arms': " + outcome.detail)
    return outcome


@attempt(13, "ab-head-without-the-manifest-is-evaluated-by-convention")
def ab_head_without_manifest(tmp: Path) -> Outcome:
    repo = _ab_repo(tmp)
    _git("rm", "-q", "evaluation/review-fixtures.json", cwd=repo)
    _git("commit", "-qm", "no manifest", cwd=repo)
    _git("tag", "bare", cwd=repo)
    _git("checkout", "-q", "base", cwd=repo)  # the working corpus has one, the head ref does not
    ab = ["experiment", "ab", "--base", "base", "--head", "bare", "--corpus", str(repo), "--out", str(tmp / "out")]
    return passed(run_bceval(ab, tmp), "Report:")


@attempt(13, "the-report-shows-asked-shared-cached-and-the-cost-paid-separately")
def ab_report_columns(tmp: Path) -> Outcome:
    env = _live_agent(tmp)
    (tmp / "x.yaml").write_text(
        f"name: c\nepochs: 1\ncases: [security-bad]\ndefaults:\n  corpus: {DEMO}\n  adapter: command\n"
        "  command: dumping-agent\narms:\n  - name: a\n  - name: b\n    isolation: view\n",
        encoding="utf-8",
    )
    first = run_bceval(["experiment", "run", "x.yaml", "--out", str(tmp / "one")], tmp, env=env)
    assert first.code == 0, first.stderr
    # a second experiment in another output folder, sharing the first one's answer cache
    shutil.copytree(tmp / "one" / "cache", tmp / "two" / "cache")
    ran = run_bceval(["experiment", "run", "x.yaml", "--out", str(tmp / "two")], tmp, env=env)
    report = tmp / "two" / "experiments" / "c" / "report.md"
    text = report.read_text(encoding="utf-8") if report.is_file() else ""
    header = next((line for line in text.splitlines() if line.startswith("| Arm |")), "")
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    row = next((line for line in text.splitlines() if line.startswith("| a (control) |")), "")
    cells = dict(zip(columns, (cell.strip() for cell in row.strip("|").split("|")), strict=False))
    counts = [cells.get(name) for name in ("Asked", "Shared", "Cached")]
    held = ran.code == 0 and "Cost paid" in columns and counts == ["0", "0", "1"]
    return Outcome(held, row or f"exit {ran.code}: no arm row", traceback=ran.traceback)
