"""The guards of issue 20 part A, one by one and in process: escaping, the agent's process tree, folders and their
cleanup, temp files, regular-file reads, the version probe, the command's start-up check, the sandbox's network
and named files, and the record of what bceval wrote."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bceval import escape
from bceval.agents import live
from bceval.agents.command import named_files, resolve_command, version_line
from bceval.errors import BcevalError
from bceval.jsonio import NotRegularFile, read_json_bytes, read_regular_bytes, read_regular_text
from bceval.runs.record import WRITTEN, note_written, sha256_of, tampered

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux (/proc, prctl)")


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in {"Z", "X"}
    except FileNotFoundError:
        return False


# --- escaping --------------------------------------------------------------------------------------------------


def test_console_shows_control_characters_as_escapes():
    forged = "\x1b[2K\r\x1b[32mReview evaluation PASSED\n\u202e"
    shown = escape.console(forged)
    assert shown == "\\x1b[2K\\x0d\\x1b[32mReview evaluation PASSED\\x0a\\u202e"
    assert shown.isprintable() and escape.console("plain text, ünïcode") == "plain text, ünïcode"


def test_markdown_escapes_what_would_break_a_cell_or_forge_a_marker():
    text = "a|b `c` *d* [e](f) <!-- bceval:latest:end -->\nnext"
    shown = escape.markdown(text)
    assert "|" not in shown.replace("\\|", "") and "`" not in shown.replace("\\`", "")
    assert "<" not in shown and "\n" not in shown and "&lt;!--" in shown
    assert escape.markdown_code("plain-id") == "`plain-id`" and "`" not in escape.markdown_code("a`b").replace(
        "\\`", ""
    )


def test_html_escapes_markup_and_controls():
    assert escape.html('<script>"x"</script>\x1b') == "&lt;script&gt;&quot;x&quot;&lt;/script&gt;\\x1b"


def test_ids_that_are_no_candidate_path_are_quoted_and_cut():
    path = "microsoft/knowledge/performance/no-findset-in-loops.md"
    assert escape.finding_id(path) == path and escape.markdown_id(path) == f"`{path}`"
    prose = "I think the problem is that " * 10
    shown = escape.finding_id(prose)
    assert shown.startswith('"I think') and shown.endswith('…"') and len(shown) == escape.ID_CUT + 2
    assert escape.finding_id("../../etc/passwd.md").startswith('"')
    assert escape.token("case-0ad1f118") == "case-0ad1f118" and escape.token("case\x1b") == '"case\\x1b"'


# --- the agent's process tree --------------------------------------------------------------------------------


@linux_only
def test_a_setsid_daemon_is_ended_with_its_agent(tmp_path):
    pids = tmp_path / "pids"
    agent = script(
        tmp_path / "agent",
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
        f"open({str(pids)!r}, 'w').write(str(child.pid))\n",
    )
    with tempfile.TemporaryFile() as out:
        process = live.start([str(agent)], None, dict(os.environ), out, out, stdin=subprocess.DEVNULL)
        process.wait(timeout=30)
        daemon = int(pids.read_text())
        assert alive(daemon)  # it left its session and outlived the agent
        live.end(process)
        live.forget(process)
    deadline = time.monotonic() + 5
    while alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(daemon)
    assert live.become_subreaper()


@linux_only
def test_an_orphan_that_exited_before_its_agent_was_ended_is_reaped(tmp_path):
    """The orphan is a zombie by the time the agent is ended: nothing is left to kill, and the table read to see
    that is the one the reaping goes by."""
    pids = tmp_path / "pids"
    agent = script(
        tmp_path / "agent",
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'pass'], start_new_session=True)\n"
        f"open({str(pids)!r}, 'w').write(str(child.pid))\n",
    )
    assert live.become_subreaper()
    with tempfile.TemporaryFile() as out:
        process = live.start([str(agent)], None, dict(os.environ), out, out, stdin=subprocess.DEVNULL)
        process.wait(timeout=30)
        orphan = int(pids.read_text())
        deadline = time.monotonic() + 10
        while live._stat(orphan) is not None and live._stat(orphan)[2] != "Z" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert live._stat(orphan) == (os.getpid(), orphan, "Z")  # adopted by bceval, exited, not yet reaped
        live.end(process)
        live.forget(process)
    assert live._stat(orphan) is None  # reaped


def test_an_interrupt_removes_every_folder_and_refuses_new_ones():
    folders = [live.temp_folder("view") for _ in range(3)]
    (folders[0] / "file").write_text("x")
    folders[1].chmod(0o555)
    try:
        live.stop_all()
        assert not any(folder.exists() for folder in folders)
        with pytest.raises(live.Interrupted):
            live.temp_folder("view")
    finally:
        live.reset()
    extra = live.temp_folder("view")
    assert extra.is_dir()
    live.release(extra)
    assert not extra.exists()


# --- cleanup changes only what bceval wrote ------------------------------------------------------------------


@pytest.fixture(params=["descriptors", "careful"])
def removal(request, monkeypatch):
    """Both ways `remove` has: through descriptors, and the careful walk (the fallback)."""
    if request.param == "careful":

        def changed(path):
            raise OSError("the tree changed under us")

        monkeypatch.setattr(live, "_remove_by_descriptors", changed)
    else:  # the careful walk must not be what removed a tree

        def refused(path, *args, **kwargs):
            raise AssertionError(f"the careful walk removed {path}")

        monkeypatch.setattr(live.shutil, "rmtree", refused)
    return request.param


def test_removing_a_folder_keeps_the_mode_of_files_linked_in(tmp_path, removal):
    outside = tmp_path / "article.md"
    outside.write_text("corpus text")
    outside.chmod(0o644)
    folder = Path(tempfile.mkdtemp(prefix="bceval-view-"))
    (folder / "ours.md").write_text("ours")
    (folder / "ours.md").chmod(0o444)
    os.link(outside, folder / "linked.md")  # what an agent did
    (folder / "link").symlink_to(outside)
    folder.chmod(0o555)
    live.remove(folder)
    assert not folder.exists()
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644 and outside.read_text() == "corpus text"


def test_removing_a_nested_read_only_view_never_follows_a_link_to_a_folder(tmp_path, removal):
    elsewhere = tmp_path / "corpus"
    (elsewhere / "inner").mkdir(parents=True)
    (elsewhere / "inner" / "article.md").write_text("keep")
    (elsewhere / "inner").chmod(0o750)
    folder = Path(tempfile.mkdtemp(prefix="bceval-view-"))
    deep = folder / "microsoft" / "knowledge" / "area"
    deep.mkdir(parents=True)
    (deep / "rule.md").write_text("ours")
    (deep / "rule.md").chmod(0o444)
    (deep / "escape").symlink_to(elsewhere, target_is_directory=True)  # what an agent did
    for path in (deep, deep.parent, deep.parent.parent, folder):
        path.chmod(0o555)
    live.remove(folder)
    assert not os.path.lexists(folder)
    assert (elsewhere / "inner" / "article.md").read_text() == "keep"
    assert stat.S_IMODE((elsewhere / "inner").stat().st_mode) == 0o750  # not made writable through the link


def test_a_view_swapped_for_a_link_removes_only_the_link(tmp_path, removal):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("x")
    target.chmod(0o555)
    link = Path(tempfile.gettempdir()) / f"bceval-view-{os.getpid()}-swapped"
    link.symlink_to(target)
    live.remove(link)
    assert not os.path.lexists(link) and (target / "keep").exists()
    assert stat.S_IMODE(target.stat().st_mode) == 0o555
    target.chmod(0o755)


def _a_materialized_view():
    from bceval.agents.view import View, ViewFile, materialize

    files = (
        ViewFile("request-case-0000abcd.json", b"{}\n"),
        ViewFile("case-0000abcd.al", b"codeunit 1 X {}\n"),
        ViewFile("microsoft/skills/review/al-x-review.md", b"# skill\n"),
        ViewFile("microsoft/knowledge/x/rule.md", b"rule\n"),
        ViewFile("microsoft/knowledge/x/other.md", b"other\n"),
    )
    return materialize(View(files, "request-case-0000abcd.json", "case-0000abcd.al"))


def _tamper(root: Path, how: str, outside: Path) -> None:
    """What an agent could do to its view before bceval removes it (it owns the folders: it may chmod them)."""
    area = root / "microsoft" / "knowledge" / "x"
    for folder in (root, root / "microsoft", root / "microsoft" / "knowledge", area):
        folder.chmod(0o755)
    if how == "added a file":
        (area / "notes.txt").write_text("mine")
    elif how == "added a folder":
        (root / "scratch" / "deep").mkdir(parents=True)
    elif how == "removed a file":
        (area / "rule.md").unlink()
    elif how == "made a file a folder":
        (area / "rule.md").unlink()
        (area / "rule.md").mkdir()
        (area / "rule.md" / "inside").write_text("x")
    elif how == "made a folder a link":
        for name in ("rule.md", "other.md"):
            (area / name).unlink()
        area.rmdir()
        (root / "microsoft" / "knowledge" / "x").symlink_to(outside, target_is_directory=True)
        return  # a chmod of the link would change the folder it points to
    elif how == "made a file a link":
        (area / "rule.md").unlink()
        (area / "rule.md").symlink_to(outside / "keep")
    area.chmod(0o555)


@pytest.mark.parametrize(
    "how",
    [
        "nothing",
        "added a file",
        "added a folder",
        "removed a file",
        "made a file a folder",
        "made a folder a link",
        "made a file a link",
    ],
)
def test_a_view_is_removed_whole_whatever_its_agent_did_to_it(tmp_path, monkeypatch, how):
    """A view goes whole through descriptors whatever its agent did to it (a file the agent made a link goes as
    the link); nothing outside it changes."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    outside.chmod(0o750)
    monkeypatch.setattr(live.shutil, "rmtree", lambda *a, **k: pytest.fail("the careful walk removed the view"))
    root = _a_materialized_view()
    if how != "nothing":
        _tamper(root, how, outside)
    live.remove(root)
    assert not os.path.lexists(root)
    assert (outside / "keep").read_text() == "keep" and stat.S_IMODE(outside.stat().st_mode) == 0o750


# --- reads open regular files only --------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_never_opened_for_reading(tmp_path):
    fifo = tmp_path / "run.json"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(NotRegularFile):
        read_regular_bytes(fifo)
    with pytest.raises(BcevalError, match="not a regular file"):
        read_json_bytes(fifo)
    assert time.monotonic() - started < 5
    with pytest.raises(IsADirectoryError):
        read_regular_bytes(tmp_path)


def test_regular_text_reads_like_read_text(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"one\r\ntwo\rthree\n")
    assert read_regular_text(path) == path.read_text(encoding="utf-8") == "one\ntwo\nthree\n"


# --- the version probe and the command's start-up check -----------------------------------------------------


def test_only_a_short_version_like_first_line_is_a_version():
    assert version_line(b"fake-agent 1.2.3\nbuilt from a tree\n") == "fake-agent 1.2.3"
    assert version_line(b'{"cases": [{"id": "case-1", "findings": []}]}\n') == "unknown"
    assert (
        version_line(b"I reviewed the code and version 2 of it looks fine to me, thanks for asking me!!!!") == "unknown"
    )
    assert version_line(b"no digits here") == "unknown" and version_line(b"") == "unknown"
    assert version_line(b"\x1b[32m1.0\x1b[0m") == "unknown"


def test_a_command_that_answers_version_with_a_model_call_is_stopped(tmp_path, monkeypatch):
    from bceval.agents import command as command_module
    from bceval.agents.command import CommandAgent
    from bceval.agents.settings import AgentSettings
    from bceval.evaluators.review.question import ReviewShape

    marker = tmp_path / "still-running"
    agent = script(
        tmp_path / "wrapper",
        f"import time\ntime.sleep(5)\nopen({str(marker)!r}, 'w').write('paid')\nprint('wrapper 1.0')\n",
    )
    monkeypatch.setattr(command_module, "VERSION_TIMEOUT", 0.5)
    environ = {**os.environ, "BCEVAL_LIVE": "1"}
    shape = ReviewShape(tmp_path / "cache", {"the corpus": tmp_path / "c"})
    adapter = CommandAgent(AgentSettings(command=str(agent)), shape, environ)
    started = time.monotonic()
    assert adapter._probe_version() == "unknown"
    assert time.monotonic() - started < 4
    time.sleep(5)
    assert not marker.exists()  # ended with its whole tree at the timeout, before it "paid"


def test_a_relative_command_is_refused_where_the_agent_runs_elsewhere(tmp_path, monkeypatch):
    script(tmp_path / "mytools" / "peek", "print('hi')")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BcevalError, match="is a relative path") as found:
        resolve_command("./mytools/peek", os.environ, elsewhere=True)
    assert str(tmp_path / "mytools" / "peek") in str(found.value)
    assert resolve_command("./mytools/peek", os.environ, elsewhere=False) == "mytools/peek"


def test_a_command_that_cannot_start_is_refused_with_the_reason(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(BcevalError, match="is not executable"):
        resolve_command(str(plain), os.environ, elsewhere=True)
    missing = script(tmp_path / "missing", "")
    missing.write_text("#!/usr/bin/env no-such-interpreter-here\n")
    with pytest.raises(BcevalError, match="'no-such-interpreter-here', which is not on PATH"):
        resolve_command(str(missing), os.environ, elsewhere=True)


def test_named_files_are_absolute_existing_files_and_a_relative_one_is_refused(tmp_path, monkeypatch):
    agent = tmp_path / "agent.py"
    agent.write_text("print()")
    monkeypatch.chdir(tmp_path)
    assert named_files(["-u", str(agent), f"--settings={agent}", "{request}", "-p"], elsewhere=True) == [agent]
    with pytest.raises(BcevalError, match="give its absolute path"):
        named_files(["agent.py"], elsewhere=True)
    assert named_files(["agent.py"], elsewhere=False) == []


# --- the sandbox: network and named files --------------------------------------------------------------------


@linux_only
def test_network_none_drops_share_net_and_named_files_are_bound_read_only(tmp_path):
    from bceval.agents.sandbox import sandbox_argv

    agent = tmp_path / "agents" / "agent.py"
    agent.parent.mkdir()
    agent.write_text("print()")
    base = {"workdir": tmp_path, "read_only": [], "allow": [], "hidden": {}, "environ": {"PATH": "/usr/bin:/bin"}}
    shared = sandbox_argv("bwrap", ["true"], **base)
    unshared = sandbox_argv("bwrap", ["true", str(agent)], **base, named=[agent], network="none")
    assert "--share-net" in shared and "--share-net" not in unshared and "--unshare-all" in unshared
    at = unshared.index(str(agent))
    assert unshared[at - 1 : at + 2] == ["--ro-bind", str(agent), str(agent)]
    with pytest.raises(BcevalError, match="the file --command names, .* would expose the corpus"):
        sandbox_argv("bwrap", ["true"], **{**base, "hidden": {"the corpus": agent.parent}}, named=[agent])


# --- the record of what bceval wrote -------------------------------------------------------------------------


def test_score_is_refused_for_a_result_changed_added_or_removed_after_bceval_wrote_it(tmp_path):
    run = tmp_path / "runs" / "r"
    results = run / "results"
    results.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"name": "r", WRITTEN: {}}))
    files = {}
    for name in ("result-case-00000001.json", "result-case-00000002.json", "result-case-00000003.json"):
        data = json.dumps({"cases": [], "name": name}).encode()
        (results / name).write_bytes(data)
        files[name] = sha256_of(data)
    note_written(run, files)
    present = sorted(results.glob("*.json"))
    assert tampered(run, present) == []
    (results / "result-case-00000001.json").write_text('{"cases": [{"id": "x", "findings": []}]}')
    (results / "result-case-00000002.json").unlink()
    (results / "result-case-00000009.json").write_text("{}")
    problems = tampered(run, sorted(results.glob("*.json")))
    assert len(problems) == 3 and all("\n" not in line for line in problems)
    assert "result-case-00000001.json: changed since bceval wrote it" in problems[0]
    assert "result-case-00000009.json: bceval did not write this file" in problems[1]
    assert "result-case-00000002.json: removed since bceval wrote it" in problems[2]
    note_written(run, {"result-case-00000002.json": None})
    assert "00000002" not in json.dumps(json.loads((run / "run.json").read_text())[WRITTEN])
