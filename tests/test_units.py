"""Many answers in one build task (bceval.steps.units) and the run's journal of what bceval wrote
(bceval.runs.record.note_written): up to date means a result under the same state, an interrupted answering keeps
what it finished, and neither grows a cost per answer with the size of the run."""

from __future__ import annotations

import gc
import json
import threading
import time

import pytest

from bceval.errors import BcevalError
from bceval.runs.record import WRITTEN, fold_written, note_written, read_current_record, tampered
from bceval.steps.units import Journal, Unit, answer_units, stale, unit_state_maker


def unit_state(values):
    return unit_state_maker(values)("view")


def _unit(tmp_path, name, calls, state="s", after=None, fail=None, seconds=0.0):
    target = tmp_path / f"{name.replace('/', '_')}.json"

    def answer():
        if fail:
            raise BcevalError(fail)
        time.sleep(seconds)
        calls.append(name)
        target.write_text("{}")

    return Unit(name, unit_state({"s": state}), str(target), answer, after)


def test_a_unit_is_stale_without_a_result_or_under_another_state(tmp_path):
    journal = Journal(tmp_path / "j.log")
    calls: list[str] = []
    units = [_unit(tmp_path, f"a/e1/case-{n}", calls) for n in range(3)]
    assert list(stale(units, journal)) == units
    answer_units(units, 1, journal)
    assert calls == [u.name for u in units]  # serial: in order
    reread = Journal(tmp_path / "j.log")
    assert list(stale(units, reread)) == []
    changed = _unit(tmp_path, "a/e1/case-1", calls, state="other")
    assert list(stale([units[0], changed, units[2]], reread)) == [changed]
    (tmp_path / "a_e1_case-2.json").unlink()
    assert list(stale(units, reread)) == [units[2]]


def test_the_journal_skips_a_partial_line_and_the_last_line_of_a_name_wins(tmp_path):
    path = tmp_path / "j.log"
    first, second = unit_state({"n": 1}), unit_state({"n": 2})
    path.write_text(f"{first} a/e1/x\n{second} a/e1/x\n{first} b/e1/y\n{first[:10]}")  # killed mid-line
    journal = Journal(path)
    assert journal.states == {"a/e1/x": second, "b/e1/y": first}
    journal.compact()
    assert path.read_text() == f"{second} a/e1/x\n{first} b/e1/y\n"


def test_a_sharing_unit_waits_for_the_answer_it_shares(tmp_path):
    journal = Journal(tmp_path / "j.log")
    calls: list[str] = []
    owner = _unit(tmp_path, "a/e1/c", calls, seconds=0.3)
    sharer = _unit(tmp_path, "b/e1/c", calls, after="a/e1/c")
    answer_units([owner, sharer], 4, journal)
    assert calls == ["a/e1/c", "b/e1/c"]


def test_the_first_error_stops_new_units_and_keeps_what_was_answered(tmp_path):
    journal = Journal(tmp_path / "j.log")
    calls: list[str] = []
    units = [_unit(tmp_path, "a/1", calls), _unit(tmp_path, "a/2", calls, fail="case 2 is not prepared")]
    units += [_unit(tmp_path, f"a/{n}", calls) for n in range(3, 6)]
    with pytest.raises(BcevalError, match="case 2 is not prepared"):
        answer_units(units, 1, journal)
    assert calls == ["a/1"]
    assert set(Journal(tmp_path / "j.log").states) == {"a/1"}  # the finished answer survives the failure


def test_a_unit_without_a_result_is_not_noted(tmp_path):
    journal = Journal(tmp_path / "j.log")
    unit = Unit("a/1", unit_state({}), str(tmp_path / "never.json"), lambda: None)  # an infrastructure failure
    answer_units([unit], 2, journal)
    assert journal.states == {} and list(stale([unit], Journal(tmp_path / "j.log"))) == [unit]


def test_parallel_units_run_side_by_side(tmp_path):
    journal = Journal(tmp_path / "j.log")
    calls: list[str] = []
    units = [_unit(tmp_path, f"a/{n}", calls, seconds=0.2) for n in range(8)]
    before = set(threading.enumerate())  # earlier tests may leave daemon threads (a test server's connections)
    started = time.monotonic()
    answer_units(units, 8, journal)
    assert time.monotonic() - started < 1.2 and sorted(calls) == sorted(u.name for u in units)
    assert set(threading.enumerate()) <= before  # the workers are gone


def test_what_exists_before_the_answering_is_left_out_of_collections_until_it_ends(tmp_path):
    journal = Journal(tmp_path / "j.log")
    frozen: list[int] = []
    target = tmp_path / "a.json"

    def answer():
        frozen.append(gc.get_freeze_count())
        target.write_text("{}")

    gc.unfreeze()  # an earlier test may have frozen objects for good (api.load_openai): answering then keeps them so
    answer_units([Unit("a/1", unit_state({}), str(target), answer)], 2, journal)
    assert frozen and frozen[0] > 0  # the graph, the modules and the cases: not walked by every full collection
    assert gc.get_freeze_count() == 0  # collectable again afterwards (a process that answers many times)


def test_objects_frozen_for_good_during_the_answering_stay_frozen(tmp_path):
    journal = Journal(tmp_path / "j.log")
    target = tmp_path / "a.json"
    kept: list[object] = []

    def answer():  # as api.load_openai does: thousands of long-lived objects, frozen for the rest of the process
        kept.extend(object() for _ in range(5000))
        gc.freeze()
        target.write_text("{}")

    try:
        answer_units([Unit("a/1", unit_state({}), str(target), answer)], 1, journal)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_objects_frozen_for_good_before_the_answering_stay_frozen(tmp_path):
    journal = Journal(tmp_path / "j.log")
    target = tmp_path / "a.json"
    gc.freeze()  # as an earlier api answering of the same process left them
    try:
        answer_units([Unit("a/1", unit_state({}), str(target), lambda: target.write_text("{}"))], 1, journal)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


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


def test_units_are_taken_as_they_come_so_the_first_answer_does_not_wait_for_the_last_unit(tmp_path):
    journal = Journal(tmp_path / "j.log")
    log: list[str] = []

    def units():
        for n in range(3):
            log.append(f"made a/{n}")
            yield _unit(tmp_path, f"a/{n}", log)

    answer_units(stale(units(), journal), 1, journal)
    assert log == ["made a/0", "a/0", "made a/1", "a/1", "made a/2", "a/2"]
    counted = []
    changed = [_unit(tmp_path, "a/0", log, state="new")]
    assert list(stale(changed, Journal(tmp_path / "j.log"), lambda: counted.append(1))) == changed
    assert counted == [1]  # a result given under another state is counted as one more to answer


def test_an_error_while_making_the_next_unit_stops_the_answering(tmp_path):
    journal = Journal(tmp_path / "j.log")
    calls: list[str] = []

    def units():
        yield _unit(tmp_path, "a/0", calls)
        raise BcevalError("a/1: not prepared")

    with pytest.raises(BcevalError, match="not prepared"):
        answer_units(units(), 4, journal)
    assert calls == ["a/0"]


def _turn_taker(tmp_path, name, spans, hold=0.05, after=None):
    """A unit whose agent 'exits' at once: it takes the turn (as the command agent does), works for `hold` seconds
    and notes when; the turn stays with its worker until that worker's next agent starts or it stops."""
    from bceval.agents import live

    target = tmp_path / f"{name.replace('/', '_')}.json"

    def answer():
        live.begin_turn()
        began = time.monotonic()
        time.sleep(hold)
        spans.append((began, time.monotonic()))
        target.write_text("{}")
        live.end_turn()  # as the start of the next agent gives it up

    return Unit(name, unit_state({}), str(target), answer, after)


def test_workers_take_turns_between_an_agent_exit_and_the_next_start(tmp_path):
    spans: list[tuple[float, float]] = []
    units = [_turn_taker(tmp_path, f"a/{n}", spans) for n in range(6)]
    answer_units(units, 6, Journal(tmp_path / "j.log"))
    spans.sort()
    assert len(spans) == 6
    assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:], strict=False))  # one at a time


def test_a_worker_holding_the_turn_gives_it_up_to_wait_for_a_shared_answer(tmp_path):
    from bceval.agents import live

    calls: list[str] = []
    target = tmp_path / "owner.json"

    def owner_answer():  # its worker needs the turn only after the sharer's worker holds it and waits
        time.sleep(0.2)
        live.begin_turn()
        calls.append("owner")
        target.write_text("{}")

    def holder_answer():  # keeps the turn, as a worker does when its agent exited and the next unit is cached
        live.begin_turn()
        calls.append("holder")
        (tmp_path / "holder.json").write_text("{}")

    owner = Unit("a/e1/c", unit_state({}), str(target), owner_answer)
    holder = Unit("h/e1/c", unit_state({}), str(tmp_path / "holder.json"), holder_answer)
    sharer = _unit(tmp_path, "b/e1/c", calls, after="a/e1/c")
    done = threading.Thread(target=answer_units, args=([owner, holder, sharer], 2, Journal(tmp_path / "j.log")))
    done.start()
    done.join(10)
    assert not done.is_alive(), "a worker kept the turn while it waited"
    assert calls[-1] == "b/e1/c" and set(calls) == {"owner", "holder", "b/e1/c"}


def test_a_thread_that_does_not_take_turns_never_waits_for_one():
    from bceval.agents import live

    held = threading.Event()
    release = threading.Event()

    def holder():
        live.taking_turns(True)
        live.begin_turn()
        held.set()
        release.wait(5)
        live.taking_turns(False)

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(5)
    started = time.monotonic()
    live.begin_turn()  # this thread does not take turns
    live.end_turn()
    assert time.monotonic() - started < 0.5
    release.set()
    thread.join(5)
