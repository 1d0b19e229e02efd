"""Issue 20's catalogue under pytest: every attempt of tests/catalogue_*.py, each in a scratch folder of its own,
must hold, and none may end in a traceback, a hang, a file changed outside bceval's own folders, model text
escaping its box, or a process or view folder left behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalogue import Attempt, load_attempts

ATTEMPTS = load_attempts()


def test_the_catalogue_is_not_empty() -> None:
    assert ATTEMPTS, "no attempt registered: tests/catalogue_*.py imported nothing"
    ids = [attempt.id for attempt in ATTEMPTS]
    assert len(ids) == len(set(ids)), "two attempts share an id"


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=[attempt.id for attempt in ATTEMPTS])
def test_attempt_holds(attempt: Attempt, tmp_path: Path) -> None:
    outcome = attempt.run(tmp_path)
    assert not outcome.traceback, outcome.detail
    assert not outcome.hang, outcome.detail
    assert outcome.changed_outside == 0, outcome.detail
    assert outcome.escapes == 0, outcome.detail
    assert outcome.orphans == 0, outcome.detail
    assert outcome.held, outcome.detail


def test_the_replay_script_prints_a_line_per_attempt_and_the_totals(capsys):
    import replay_catalogue

    code = replay_catalogue.main(["19-an-unknown-flag", "19-a-flag-without-its-value"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    names = [line.split(" (")[0] for line in lines[:2]]
    assert names == ["held   19-a-flag-without-its-value", "held   19-an-unknown-flag"]
    assert lines[2].endswith(
        "attempts 2, held 2, clean one-line errors 2, tracebacks 0, hangs 0, files changed outside 0, escapes 0, "
        "orphans 0"
    )
