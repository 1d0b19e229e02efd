"""The bwrap sandbox: installation discovery on synthetic trees, the argv it builds, its one-line errors,
and, under the real bwrap, what an agent can and cannot reach (skipped with the reason where bwrap fails)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bceval.agents import sandbox
from bceval.agents.sandbox import dns_config_bind, installation_paths, require_bwrap, sandbox_argv
from bceval.errors import BcevalError

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap sandboxing is Linux-only")
SYSTEM_ENV = {"PATH": "/usr/bin:/bin"}

PROBE = """
import json, os, sys

ask = json.loads(sys.argv[1])


def writable(directory):
    try:
        with open(os.path.join(directory, "probe-wrote"), "w") as handle:
            handle.write("x")
        return True
    except OSError:
        return False


with open(os.path.join(ask["allowed"], "token")) as handle:
    token = handle.read()
print(json.dumps({
    "cwd": os.getcwd(),
    "exists": {path: os.path.exists(path) for path in ask["exists"]},
    "tmp": sorted(os.listdir("/tmp")),
    "view_writable": writable(ask["view"]),
    "allowed_token": token,
    "allowed_writable": writable(ask["allowed"]),
    "net_ns": os.readlink("/proc/self/ns/net"),
    "pid_ns": os.readlink("/proc/self/ns/pid"),
}))
"""


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def symlink(link: Path, target: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


def build(argv: list[str], workdir: Path, **binds) -> list[str]:
    """sandbox_argv with nothing bound or hidden unless a test says so."""
    options = {"read_only": [], "allow": [], "hidden": {}, **binds}
    return sandbox_argv("bwrap", argv, workdir=workdir, environ=SYSTEM_ENV, **options)


def inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def one_line(excinfo: pytest.ExceptionInfo[BcevalError]) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


# --- installation_paths on synthetic trees (no bwrap needed) ---


@linux_only
def test_node_prefix_and_env_shebang_interpreter(tmp_path: Path) -> None:
    runtime = executable(tmp_path / "runtime" / "bin" / "fakenode", "#!/bin/sh\n")
    (tmp_path / "runtime" / "lib").mkdir()
    cli = executable(tmp_path / "node" / "lib" / "node_modules" / "pkg" / "cli.js", "#!/usr/bin/env -S fakenode --x\n")
    agent = symlink(tmp_path / "node" / "bin" / "agent", cli)
    found = installation_paths(str(agent), {"PATH": str(runtime.parent)})
    assert found == [tmp_path / "node", tmp_path / "runtime"]


@linux_only
@pytest.mark.parametrize("copied", [False, True])
def test_venv_brings_its_base_installation(tmp_path: Path, copied: bool) -> None:
    base_python = executable(tmp_path / "base" / "bin" / "python3", "")
    (tmp_path / "base" / "lib").mkdir()
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {base_python.parent}\nversion = 3.11.7\n", encoding="utf-8")
    if copied:  # `python -m venv --copies`: only pyvenv.cfg leads to the base
        python = executable(venv / "bin" / "python", "")
    else:
        python = symlink(venv / "bin" / "python", base_python)
    assert installation_paths(str(python), SYSTEM_ENV) == [venv, tmp_path / "base"]


@linux_only
def test_plain_script_binds_its_own_directory_only(tmp_path: Path) -> None:
    script = executable(tmp_path / "tools" / "agent", "#!/bin/sh\n")
    bare_bin = executable(tmp_path / "x" / "bin" / "tool", "#!/usr/bin/env sh\n")  # no lib/ next to bin/
    assert installation_paths(str(script), SYSTEM_ENV) == [tmp_path / "tools"]
    assert installation_paths(str(bare_bin), SYSTEM_ENV) == [tmp_path / "x" / "bin"]
    assert installation_paths("sh", SYSTEM_ENV) == []


@linux_only
def test_shebang_loop_ends(tmp_path: Path) -> None:
    executable(tmp_path / "a" / "run", f"#!{tmp_path / 'b' / 'run'}\n")
    executable(tmp_path / "b" / "run", f"#!{tmp_path / 'a' / 'run'}\n")
    assert installation_paths(str(tmp_path / "a" / "run"), SYSTEM_ENV) == [tmp_path / "a", tmp_path / "b"]


@linux_only
def test_dns_config_behind_a_symlink_is_bound(tmp_path: Path) -> None:
    stub = tmp_path / "run" / "stub-resolv.conf"
    stub.parent.mkdir()
    stub.write_text("nameserver 127.0.0.53\n", encoding="utf-8")
    assert dns_config_bind(symlink(tmp_path / "resolv.conf", stub)) == stub
    assert dns_config_bind(stub) is None  # a plain file is inside /etc already


# --- sandbox_argv and its refusals (no bwrap needed) ---


@linux_only
def test_argv_order_keeps_a_view_inside_a_granted_dir_read_only(tmp_path: Path) -> None:
    view = tmp_path / "granted" / "view"
    view.mkdir(parents=True)
    argv = build(["sh", "-c", "x"], view, read_only=[view], allow_rw=[tmp_path / "granted"])
    text = " ".join(argv)
    assert argv[0] == "bwrap" and argv[-4:] == ["--", shutil.which("sh", path=SYSTEM_ENV["PATH"]), "-c", "x"]
    assert "--unshare-all --share-net --die-with-parent --new-session" in text
    assert "--clearenv" not in argv
    tmpfs = text.index("--tmpfs /tmp")
    granted = text.index(f"--bind {tmp_path / 'granted'} ")
    assert tmpfs < granted < text.index(f"--ro-bind {view} {view}") < text.index(f"--chdir {view} --")


@linux_only
def test_missing_allow_path_is_named(tmp_path: Path) -> None:
    with pytest.raises(BcevalError) as excinfo:
        build(["sh"], tmp_path, allow=[tmp_path / "nope"])
    assert one_line(excinfo) == f"--sandbox-allow {tmp_path / 'nope'} does not exist; create it or drop the flag"


@linux_only
def test_a_missing_or_exposing_writable_grant_is_refused_alike(tmp_path: Path) -> None:
    with pytest.raises(BcevalError) as excinfo:
        build(["sh"], tmp_path, allow_rw=[tmp_path / "nope"])
    assert one_line(excinfo) == f"--sandbox-allow-rw {tmp_path / 'nope'} does not exist; create it or drop the flag"
    (tmp_path / "out").mkdir()
    with pytest.raises(BcevalError) as excinfo:
        build(["sh"], tmp_path, allow_rw=[tmp_path], hidden={"the output directory": tmp_path / "out"})
    assert one_line(excinfo) == (
        f"--sandbox-allow-rw {tmp_path} would expose the output directory {tmp_path / 'out'}; grant a narrower path"
    )


@linux_only
def test_allow_containing_or_inside_hidden_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    # Compared resolved, not by spelling: a symlinked grant, and a corpus named through a symlink.
    alias = symlink(tmp_path / "alias", corpus / "sub")
    corpus_link = symlink(tmp_path / "corpus-link", corpus)
    cases = [(tmp_path, corpus), (corpus / "sub", corpus), (alias, corpus), (corpus / "sub", corpus_link)]
    for granted, named in cases:
        with pytest.raises(BcevalError) as excinfo:
            build(["sh"], tmp_path, allow=[granted], hidden={"the corpus": named})
        assert one_line(excinfo) == f"--sandbox-allow {granted} would expose the corpus {named}; grant a narrower path"


@linux_only
def test_installation_containing_hidden_is_refused(tmp_path: Path) -> None:
    agent = executable(tmp_path / "tools" / "agent", "#!/bin/sh\n")
    out = tmp_path / "tools" / "out"
    with pytest.raises(BcevalError) as excinfo:
        build([str(agent)], tmp_path, hidden={"the output directory": out})
    assert one_line(excinfo) == (
        f"the agent's installation {tmp_path / 'tools'} would expose the output directory {out}; keep the two apart"
    )


@linux_only
def test_hidden_path_under_a_system_dir_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BcevalError) as excinfo:
        build(["sh"], tmp_path, hidden={"the corpus": Path("/usr/share/bcquality")})
    assert one_line(excinfo).startswith("the system directory /usr would expose the corpus /usr/share/bcquality;")


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_other_platforms_get_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, platform: str) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    calls = [
        lambda: require_bwrap(),
        lambda: installation_paths("sh"),
        lambda: sandbox_argv("bwrap", ["sh"], workdir=tmp_path, read_only=[], allow=[], hidden={}),
    ]
    for call in calls:
        with pytest.raises(BcevalError) as excinfo:
            call()
        assert one_line(excinfo) == "--sandbox bwrap needs Linux (bubblewrap); run without --sandbox on this system"


# --- require_bwrap failures ---


@linux_only
def test_missing_bwrap_names_the_package(tmp_path: Path) -> None:
    with pytest.raises(BcevalError) as excinfo:
        require_bwrap({"PATH": str(tmp_path)})
    message = one_line(excinfo)
    assert "apt-get install bubblewrap" in message and "run without --sandbox" in message


@linux_only
def test_refusing_bwrap_gives_its_first_line_and_the_fix(tmp_path: Path) -> None:
    fake = executable(
        tmp_path / "bin" / "bwrap",
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\necho 'more detail' >&2\nexit 1\n",
    )
    with pytest.raises(BcevalError) as excinfo:
        require_bwrap({"PATH": str(fake.parent)})
    message = one_line(excinfo)
    assert "(bwrap: setting up uid map: Permission denied)" in message and "more detail" not in message
    assert "sysctl kernel.unprivileged_userns_clone=1" in message
    assert "sysctl kernel.apparmor_restrict_unprivileged_userns=0" in message and "AppArmor profile" in message


# --- the real sandbox ---


@pytest.fixture(scope="module")
def bwrap() -> str:
    try:
        return require_bwrap()
    except BcevalError as exc:
        pytest.skip(f"no working bwrap here: {exc}")


def venv_under(home: Path) -> Path:
    """A virtual environment's interpreter under `home` (what a checkout under /tmp has): bin/python linked to this
    interpreter, with the pyvenv.cfg that names its home."""
    real = Path(sys.executable).resolve()
    (home / "venv" / "bin").mkdir(parents=True)
    (home / "venv" / "pyvenv.cfg").write_text(f"home = {real.parent}\n", encoding="utf-8")
    python = home / "venv" / "bin" / "python"
    python.symlink_to(real)
    return python


def sees_only_what_it_is_given(bwrap: str, tmp_path: Path, interpreter: Path, view_root: Path) -> str | None:
    """Run the probe under the sandbox on `interpreter`; None when it saw exactly what the sandbox binds, else
    what differed. The expected set follows the binds (the view, the grant, the agent's installation and its
    interpreter's), so it holds wherever the checkout and its venv live, /tmp included. The views are made where
    real ones live (`view_root`: the memory-backed folder, or the system temp dir)."""
    views = [Path(tempfile.mkdtemp(prefix="bceval-view-", dir=view_root)) for _ in range(2)]
    try:
        view, other_view = views
        (view / "request.json").write_text("{}", encoding="utf-8")
        corpus, out, allowed = tmp_path / "corpus", tmp_path / "out", tmp_path / "allowed"
        for directory in (corpus, out, allowed):
            directory.mkdir()
        (allowed / "token").write_text("granted", encoding="utf-8")
        probe = executable(tmp_path / "agent" / "probe", f"#!{interpreter}\n{PROBE}")
        roots = dict.fromkeys([tempfile.gettempdir(), str(view.parent)])  # the host's temp dir and the views' folder
        host_tmp = [str(Path(root, name)) for root in roots for name in os.listdir(root)]
        shown = [view, allowed, *installation_paths(str(probe), SYSTEM_ENV)]
        ask = {
            "view": str(view),
            "allowed": str(allowed),
            "exists": [
                str(p)
                for p in (corpus, out, other_view, view / "request.json", Path.cwd() / "pyproject.toml", *host_tmp)
            ],
        }
        argv = sandbox_argv(
            bwrap,
            [str(probe), json.dumps(ask)],
            workdir=view,
            read_only=[view],
            allow=[],
            allow_rw=[allowed],
            hidden={"the corpus": corpus, "the output directory": out},
            environ=SYSTEM_ENV,
        )
        done = subprocess.run(argv, env=SYSTEM_ENV, capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            return f"the probe failed: {done.stderr.strip()[-300:]}"
        seen = json.loads(done.stdout)
        visible = {path for path, exists in seen["exists"].items() if exists}
        # The host temp dir's entries reach the sandbox only as components of what was bound.
        expected = {str(view / "request.json")} | {p for p in host_tmp if any(inside(s, Path(p)) for s in shown)}
        expected_tmp = sorted({s.relative_to("/tmp").parts[0] for s in shown if inside(s, Path("/tmp"))})
        problems = []
        if seen["cwd"] != str(view):
            problems.append(f"cwd {seen['cwd']}")
        if visible != expected:
            problems.append(f"visible {sorted(visible ^ expected)} differ from the binds")
        if seen["tmp"] != expected_tmp:
            problems.append(f"/tmp holds {seen['tmp']}, the binds {expected_tmp}")
        if seen["view_writable"] or (view / "probe-wrote").exists():
            problems.append("the view was writable")
        if seen["allowed_token"] != "granted" or not seen["allowed_writable"]:
            problems.append("the grant was not readable and writable")
        if seen["net_ns"] != os.readlink("/proc/self/ns/net"):  # the model API stays reachable
            problems.append("the network was unshared")
        if seen["pid_ns"] == os.readlink("/proc/self/ns/pid"):  # ... while everything else is unshared
            problems.append("the pid namespace was shared")
        return "; ".join(problems) or None
    finally:
        for folder in views:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("where", ["this interpreter", "a venv under the temp dir"])
def test_agent_sees_only_what_it_is_given(bwrap: str, tmp_path: Path, where: str, view_root: Path) -> None:
    if where == "this interpreter":  # a pyenv build or a venv outside /usr, wherever the checkout lives
        assert sees_only_what_it_is_given(bwrap, tmp_path, Path(sys.executable), view_root) is None
        return
    home = Path(tempfile.mkdtemp(prefix="bceval-test-venv-"))  # as a checkout under /tmp has its .venv
    try:
        assert sees_only_what_it_is_given(bwrap, tmp_path, venv_under(home), view_root) is None
    finally:
        shutil.rmtree(home)


def test_a_grant_is_read_only_and_a_writable_grant_writable(bwrap: str, tmp_path: Path) -> None:
    read, write = tmp_path / "read", tmp_path / "write"
    for folder in (read, write):
        folder.mkdir()
        (folder / "f").write_text(folder.name, encoding="utf-8")
    script = f"cat {read}/f {write}/f; echo x > {read}/f; echo x > {read}/new; echo y > {write}/f; echo y > {write}/new"
    argv = sandbox_argv(
        bwrap,
        ["sh", "-c", script],
        workdir=tmp_path,
        read_only=[],
        allow=[read],
        allow_rw=[write],
        hidden={},
        environ=SYSTEM_ENV,
    )
    done = subprocess.run(argv, env=SYSTEM_ENV, capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout == "readwrite"  # both grants readable
    assert (read / "f").read_text() == "read" and not (read / "new").exists()  # --sandbox-allow: read-only
    assert (write / "f").read_text() == "y\n" and (write / "new").read_text() == "y\n"  # --sandbox-allow-rw


def test_killing_bwrap_ends_the_agent(bwrap: str, tmp_path: Path) -> None:
    marker = f"{os.getpid() % 1000 + 1}.{time.time_ns() % 10**6:06d}"  # a sleep no one else runs
    argv = sandbox_argv(
        bwrap, ["sleep", marker], workdir=tmp_path, read_only=[tmp_path], allow=[], hidden={}, environ=SYSTEM_ENV
    )
    process = subprocess.Popen(argv, env=SYSTEM_ENV, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not _sleepers(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _sleepers(marker), "the sandboxed sleep never started"
        os.killpg(process.pid, signal.SIGKILL)  # what the command adapter does on a timeout
        process.wait()
        while _sleepers(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _sleepers(marker)
    finally:  # a failing run must not leave its sleep behind
        for pid in _sleepers(marker):
            os.kill(int(pid), signal.SIGKILL)


def _sleepers(marker: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path("/proc", pid, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline[:1] and cmdline[0].endswith(b"sleep") and marker.encode() in cmdline:
            found.append(pid)
    return found


def test_verification_runs_once_per_process(bwrap: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args, **kwargs):
        raise AssertionError("bwrap verified twice")

    monkeypatch.setattr(sandbox.subprocess, "run", fail)
    assert require_bwrap() == bwrap
