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
    return Outcome(False, f"{count} file(s) changed outside out/: {outcome.detail}", outcome.clean_error,
                   outcome.traceback, outcome.hang, count, outcome.escapes, outcome.orphans)


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
