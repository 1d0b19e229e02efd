"""Many answers in one build task (bceval.steps.units) and the run's journal of what bceval wrote
(bceval.runs.record.note_written): answers are given in order, side by side, a shared one after its owner, and
an interrupted answering keeps what it finished."""

from __future__ import annotations

import json
import threading
import time

import pytest

from bceval.errors import BcevalError
from bceval.runs.record import WRITTEN, fold_written, note_written, read_current_record, tampered
from bceval.steps.units import Unit, answer_units, missing_results


def _unit(tmp_path, name, calls, after=None, fail=None, seconds=0.0):
    target = tmp_path / f"result-{name.replace('/', '_')}.json"

    def answer():
        if fail:
            raise BcevalError(fail)
        time.sleep(seconds)
        calls.append(name)
        target.write_text("{}")

    return Unit(name, answer, after)


def test_serial_units_are_answered_in_order_and_missing_results_counted(tmp_path):
    calls: list[str] = []
    units = [_unit(tmp_path, f"case-{n}", calls) for n in range(3)]
    assert missing_results(tmp_path, ["case-0", "case-1", "case-2"]) == 3
    answer_units(units, 1)
    assert calls == [u.name for u in units]  # serial: in order
    assert missing_results(tmp_path, ["case-0", "case-1", "case-2", "case-3"]) == 1
    assert missing_results(tmp_path / "absent", ["case-0"]) == 1


def test_a_sharing_unit_waits_for_the_answer_it_shares(tmp_path):
    calls: list[str] = []
    owner = _unit(tmp_path, "a/e1/c", calls, seconds=0.3)
    sharer = _unit(tmp_path, "b/e1/c", calls, after="a/e1/c")
    answer_units([owner, sharer], 4)
    assert calls == ["a/e1/c", "b/e1/c"]


def test_the_first_error_stops_new_units_and_keeps_what_was_answered(tmp_path):
    calls: list[str] = []
    units = [_unit(tmp_path, "a/1", calls), _unit(tmp_path, "a/2", calls, fail="case 2 is not prepared")]
    units += [_unit(tmp_path, f"a/{n}", calls) for n in range(3, 6)]
    with pytest.raises(BcevalError, match="case 2 is not prepared"):
        answer_units(units, 1)
    assert calls == ["a/1"]
    assert (tmp_path / "result-a_1.json").is_file()  # the finished answer survives the failure


def test_parallel_units_run_side_by_side(tmp_path):
    calls: list[str] = []
    units = [_unit(tmp_path, f"a/{n}", calls, seconds=0.2) for n in range(8)]
    before = set(threading.enumerate())  # earlier tests may leave daemon threads (a test server's connections)
    started = time.monotonic()
    answer_units(units, 8)
    assert time.monotonic() - started < 1.2 and sorted(calls) == sorted(u.name for u in units)
    assert set(threading.enumerate()) <= before  # the workers are gone


def _run_with_record(tmp_path):
    run = tmp_path / "run"
    (run / "results").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"name": "r", WRITTEN: {}}))
    return run


def test_written_digests_are_journaled_then_folded_into_run_json(tmp_path):
    import hashlib

    run = _run_with_record(tmp_path)
    result = run / "results" / "result-case-0000000a.json"
    result.write_bytes(b"{}")
    before = (run / "run.json").read_bytes()
    note_written(run, {result.name: hashlib.sha256(b"{}").hexdigest(), "infra-case-0000000a.json": None})
    assert (run / "run.json").read_bytes() == before  # nothing rewritten per answer
    assert read_current_record(run)[WRITTEN] == {result.name: hashlib.sha256(b"{}").hexdigest()}
    assert tampered(run, [result]) == []  # scoring sees the journal before it is folded
    with open(run / ".written.log", "a") as handle:
        handle.write("result-case-0000000b.json 12ab")  # a line a killed run left half written
    fold_written(run)
    assert not (run / ".written.log").exists()
    assert json.loads((run / "run.json").read_text())[WRITTEN] == {result.name: hashlib.sha256(b"{}").hexdigest()}
    result.write_bytes(b"{ }")
    assert len(tampered(run, [result])) == 1


def test_no_record_no_journal(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    note_written(run, {"result-case-0000000a.json": "0" * 64})
    assert not (run / ".written.log").exists()
