"""bceval.forked: half of a large read-only job in a forked child, the same result whether or not it worked."""

from __future__ import annotations

import os
import threading

import pytest

from bceval import forked

needs_split = pytest.mark.skipif(not hasattr(os, "fork"), reason="a job is split by a forked child: no fork here")

ITEMS = [(f"folder-{number:03d}", [f"name-{n}" for n in range(number % 7 + 1)]) for number in range(60)]


def lengths(part):
    """The job of the tests: each folder's names joined, and the pid that did it (to see who did which half)."""
    return {folder: ("/".join(names), os.getpid()) for folder, names in part}


def files(item):
    return len(item[1])


@pytest.fixture
def forks(monkeypatch):
    """Every job is split (however small, and whatever threads earlier tests left in this process: the jobs
    here need no lock another thread could hold), and every child forked is noted."""
    made = []
    real = os.fork

    def fork():
        pid = real()
        if pid:
            made.append(pid)
        return pid

    monkeypatch.setattr(forked, "SPLIT_FROM", 0)
    monkeypatch.setattr(forked, "can_split", lambda: True)
    monkeypatch.setattr(forked.os, "fork", fork)
    return made


def _reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@needs_split
def test_a_split_job_has_the_result_of_the_whole_in_its_order(forks):
    result = forked.in_halves(ITEMS, files, lengths)
    assert len(forks) == 1 and _reaped(forks[0])
    assert list(result) == [folder for folder, _ in ITEMS]
    assert {folder: joined for folder, (joined, _) in result.items()} == {
        folder: joined for folder, (joined, _) in lengths(ITEMS).items()
    }
    pids = [pid for _, pid in result.values()]
    here = pids.index(forks[0])  # the child's half is the second one, by weight
    assert set(pids[:here]) == {os.getpid()} and set(pids[here:]) == {forks[0]}
    before = sum(files(item) for item in ITEMS[:here])
    assert abs(2 * before - sum(map(files, ITEMS))) <= 2 * max(map(files, ITEMS))


@needs_split
def test_a_child_that_fails_leaves_its_half_to_this_process(forks):
    parent = os.getpid()

    def failing_in_the_child(part):
        if os.getpid() != parent:
            raise OSError("a child that cannot do its half")
        return lengths(part)

    result = forked.in_halves(ITEMS, files, failing_in_the_child)
    assert len(forks) == 1 and _reaped(forks[0])
    assert result == lengths(ITEMS)  # every folder, every one done here


@needs_split
def test_a_child_that_dies_or_sends_garbage_changes_nothing(forks):
    parent = os.getpid()

    def dying(part):
        if os.getpid() != parent:
            os._exit(0)  # "succeeded" without sending anything
        return lengths(part)

    assert forked.in_halves(ITEMS, files, dying) == lengths(ITEMS)

    def not_a_dict(part):
        return [1, 2] if os.getpid() != parent else lengths(part)  # marshal-able, but not a part

    assert forked.in_halves(ITEMS, files, not_a_dict) == lengths(ITEMS)
    assert len(forks) == 2 and all(_reaped(pid) for pid in forks)


@needs_split
def test_a_failure_here_ends_and_reaps_the_child(forks):
    parent = os.getpid()

    def slow_child_failing_parent(part):
        if os.getpid() != parent:
            threading.Event().wait(30)  # a child still at work when this process gives up
            return lengths(part)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        forked.in_halves(ITEMS, files, slow_child_failing_parent)
    assert len(forks) == 1 and _reaped(forks[0])


def test_a_job_is_split_only_on_linux_with_two_cores_and_one_thread(monkeypatch):
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)
    monkeypatch.setattr(forked.sys, "platform", "linux")
    monkeypatch.setattr(forked.os, "sched_getaffinity", lambda _: {0, 1}, raising=False)
    assert forked.can_split()
    monkeypatch.setattr(forked.os, "sched_getaffinity", lambda _: {0}, raising=False)
    assert not forked.can_split()  # one core: nothing to gain
    monkeypatch.setattr(forked.os, "sched_getaffinity", lambda _: {0, 1}, raising=False)
    monkeypatch.setattr(forked.threading, "active_count", lambda: 2)
    assert not forked.can_split()  # another thread: a fork would copy none of it
    monkeypatch.setattr(forked.threading, "active_count", lambda: 1)
    for platform in ("darwin", "win32"):
        monkeypatch.setattr(forked.sys, "platform", platform)
        assert not forked.can_split()


def test_a_small_job_or_one_with_threads_is_not_split(monkeypatch):
    calls = []
    monkeypatch.setattr(forked.os, "fork", lambda: calls.append(1) or os.getpid())
    assert forked.in_halves(ITEMS, files, lengths) == lengths(ITEMS)  # below SPLIT_FROM
    monkeypatch.setattr(forked, "SPLIT_FROM", 0)
    assert forked.in_halves(ITEMS[:1], files, lengths) == lengths(ITEMS[:1])  # nothing to split
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not forked.can_split()
        assert forked.in_halves(ITEMS, files, lengths) == lengths(ITEMS)
    finally:
        stop.set()
        other.join()
    assert calls == []


@needs_split
def test_a_corpus_stated_in_halves_has_the_states_of_one_process(tmp_path, forks):
    from bceval.corpus.layers import scan_corpus
    from bceval.steps.prepare import _folder_states, listed_states

    for number in range(12):
        folder = tmp_path / "microsoft" / "knowledge" / f"area-{number:02d}"
        folder.mkdir(parents=True)
        for name in ("a.md", "a.good.al", "b.md"):
            (folder / name).write_text(f"{number} {name}\n" * number, encoding="utf-8")
    listing = scan_corpus(tmp_path)
    states = listed_states(str(tmp_path), listing)
    assert len(forks) == 1
    assert list(states) == list(listing.sorted_names)
    assert states == {f: _folder_states(f"{tmp_path}/{f}", names) for f, names in listing.sorted_names.items()}
