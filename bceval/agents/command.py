"""The `command` kind: a live agent behind any command line (`claude -p`, `codex exec`, ...), one fresh process
per attempt, for every question shape; its version, the checks that its executable can start, its sandbox, and its
process's supervision; what it printed is read by bceval.agents.envelope."""

from __future__ import annotations

import hashlib
import os
import select
import shlex
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bceval.agents import live
from bceval.agents.agentconfig import AgentConfig, read_config
from bceval.agents.envelope import agent_retries, last_line, read_agent_output
from bceval.agents.presets import PRESETS
from bceval.agents.process import LiveAgent, _Attempt
from bceval.agents.sandbox import env_command, require_bwrap, sandbox_argv, shebang
from bceval.agents.settings import PLACEHOLDER, UNPINNED_MODEL, AgentSettings, check_command, pinned, placeholders
from bceval.agents.view import View, release, scrubbed_environment, temp_folder, view_parent
from bceval.errors import BcevalError
from bceval.jsonio import MAX_JSON_BYTES, write_all
from bceval.prices import priced
from bceval.runs.identity import asking, question
from bceval.usage import Usage

PROMPT_VERSION = 2  # of the review prompt: part of every cache key, a reworded prompt is a different question
VERSION_TIMEOUT = 10.0  # a command that answers `--version` with a model call is stopped long before it pays much
VERSION_MAX_CHARS = 80  # a version is one short line; anything longer (or shaped like an answer) is "unknown"
POLL_SECONDS = 0.1  # how often a running agent's output size and time are checked
TRANSCRIPT_CAP = 1 << 20  # bytes of stdout and of stderr kept per attempt
ELSEWHERE = "its case's own folder"  # where an isolated agent runs
NETWORK_KINDS = ("agent-error", "crash", "timeout")  # failures an agent without a network ends in
NO_NETWORK = "the sandbox removed the network (--sandbox-network none): an agent that calls a model API needs share"


class CommandAgent(LiveAgent):
    """One agent command line, checked and ready to run, answering the questions of its shape."""

    name = kind = "command"

    def setup(self) -> None:
        agent = self.agent
        self.in_case_view = self.shape.in_case_view  # the review shape: it runs in the case's view, so bwrap needs it
        self.model = agent.model or UNPINNED_MODEL
        self.pinned = pinned(agent.command, agent.model)
        self.bwrap: str | None = None
        self._version: str | None = None
        self._version_lock = threading.Lock()
        self.config: AgentConfig | None = None
        if agent.agent:  # a preset's environment, unless the user's own says otherwise, and its configuration
            self.environ = {**PRESETS[agent.agent].environment, **self.environ}
            self.config = read_config(PRESETS[agent.agent].config_variable, self.environ)
        if not self.shape.checks_command:
            return
        # the opt-in gate, the command line and its executable, and the sandbox's own checks, before any case
        self.require_opt_in()
        check_command(agent.command, agent.model)
        try:
            self.argv = shlex.split(agent.command)
        except ValueError as exc:
            raise BcevalError(f"--command: cannot split '{agent.command}': {exc}") from None
        if not self.argv:
            raise BcevalError("--command is empty: give the agent command line, e.g. --command 'claude -p'")
        # the agent's working folder is its case view (or workspace) unless it runs where bceval runs
        self.executable = resolve_command(self.argv[0], self.environ, self.isolated)
        self.named_files = named_files(self.argv[1:], self.isolated)
        if agent.sandbox == "bwrap":
            if self.in_case_view and agent.isolation != "view":
                raise BcevalError("--sandbox bwrap needs the agent view: drop --isolation none")
            self.bwrap = require_bwrap(self.environ)
            # the sandbox's own checks (allowed paths exist, nothing hidden is exposed) before any case runs
            self.sandboxed([self.executable], Path(tempfile.gettempdir()), [], self.environ)

    def answer(self, question: Any) -> Any:
        return self.shape.by_process(self, question)

    @property
    def model_is_label_only(self) -> bool:
        return bool(self.agent.model) and not self.pinned

    @property
    def reads_request_file(self) -> bool:
        """The command names the request file through {request}, so stdin stays empty."""
        return "request" in placeholders(self.agent.command)

    @property
    def isolated(self) -> bool:
        """It runs elsewhere than bceval: in its case's view or a folder of its own."""
        return not self.in_case_view or self.agent.isolation == "view"

    def describe(self) -> dict[str, Any]:
        with self._version_lock:  # probed once, by the first answer's thread
            if self._version is None:
                self._version = self._probe_version()
        described = {
            "adapter": self.name,
            "command": self.agent.command,
            "model": self.model,
            "version": self._version,
            "pinned": self.pinned,
            "isolation": self.agent.isolation,
            "sandbox": self.agent.sandbox,
        }
        if self.config is not None and self.config.digest:
            described["agentConfig"] = self.config.digest
        return self.shape.described(self, described)

    def _probe_version(self) -> str:
        """`<command> --version`, asked as the agent is asked: in an empty folder of its own, in its sandbox, stdin
        empty, within VERSION_TIMEOUT."""
        try:
            folder = temp_folder("probe")
        except (OSError, BcevalError):
            return "unknown"
        try:
            workdir = folder if self.isolated else Path.cwd()
            hidden = list(self.hidden.values())
            env = scrubbed_environment(self.environ, hidden, folder) if self.isolated else dict(self.environ)
            argv = self.sandboxed([self.executable, "--version"], workdir, [folder], env)
            try:
                ran = run_process(argv, workdir, VERSION_TIMEOUT, env)
            except BcevalError:
                return "unknown"
            return version_line(ran.stdout[:4096]) if ran.exit_code == 0 else "unknown"
        finally:
            release(folder)

    def cache_key(self, view: View, case: Any) -> str:
        """What a review answer depends on (under --isolation none, where the corpus is: the agent can read it)."""
        digest = self.config.digest if self.config is not None else None  # of the configuration it copies
        asked = replace(asking("command", self.agent, live=True), model=self.model, config=digest)
        key = question(asked, view.digest, case.corpus, case.request_path).cache_key(PROMPT_VERSION)
        if self.agent.sandbox_network != "share":  # absent when shared: existing keys stay valid
            key = hashlib.sha256(f"{key}|network={self.agent.sandbox_network}".encode()).hexdigest()
        return key

    def command_line(self, request_path: Path, workdir: Path) -> list[str]:
        values = {"model": self.agent.model or "", "request": str(request_path), "workdir": str(workdir)}
        return [self.executable] + [
            PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), arg) for arg in self.argv[1:]
        ]

    def sandboxed(self, argv: list[str], workdir: Path, read_only: list[Path], env: Mapping[str, str]) -> list[str]:
        """The command line under bwrap when the sandbox is on (`read_only` bound read-only)."""
        if self.bwrap is None:
            return argv
        return sandbox_argv(
            self.bwrap,
            argv,
            workdir=workdir,
            read_only=read_only,
            allow=list(self.agent.sandbox_allow),
            allow_rw=self.agent.sandbox_allow_rw,
            hidden=self.hidden,
            environ=dict(env),
            named=self.named_files,
            network=self.agent.sandbox_network,
        )

    def run(self, argv: list[str], cwd: Path | None, env: dict[str, str], prompt: bytes, record: dict) -> _Attempt:
        """One process of the agent, with a fresh copy of its configuration folder (read-only under bwrap) when it
        has one: its answer's text or why there is none; `record` completed."""
        if self.config is None:
            return self._run(argv, cwd, env, prompt, record)
        folder = materialize_config(self.config)
        try:
            if self.bwrap is not None:  # the copy is the attempt's own: what it writes there goes with it
                at = argv.index("--chdir")
                bind = "--bind" if PRESETS[self.agent.agent or ""].config_writable else "--ro-bind"
                argv = [*argv[:at], bind, str(folder), str(folder), *argv[at:]]
            record.update(argv=argv, agentConfig=self.config.record())
            return self._run(argv, cwd, {**env, self.config.variable: str(folder)}, prompt, record)
        finally:
            release(folder)

    def _run(self, argv: list[str], cwd: Path | None, env: dict[str, str], prompt: bytes, record: dict) -> _Attempt:
        started = time.monotonic()
        scratch = view_parent()  # in memory where it can be: three files for every attempt
        with (  # unbuffered: each is written or read once, whole
            tempfile.TemporaryFile(dir=scratch, buffering=0) as given,
            tempfile.TemporaryFile(dir=scratch, buffering=0) as out,
            tempfile.TemporaryFile(dir=scratch, buffering=0) as err,
        ):
            # The prompt is a file on stdin, not a pipe: no thread has to feed it, and an agent that never reads
            # it cannot block on it.
            write_all(given.fileno(), prompt)
            given.seek(0)
            try:
                process = live.start(argv, cwd=cwd, env=env, stdout=out, stderr=err, stdin=given)
            except OSError as exc:
                made = _Attempt(record).failed("spawn-error", f"cannot start {self.argv[0]}: {exc.strerror or exc}")
                record.update(exitCode=None, wallSeconds=0.0, stdout="", stderr="")
                return made
            try:
                stopped = _supervise(process, out, err, started, self.agent.timeout)
            finally:
                live.end(process)  # the case is over: nothing the agent started outlives it
                live.forget(process)
            wall = time.monotonic() - started
            # the sizes first: a read of "up to the cap" sets aside the whole cap (32 MiB) for a 100-byte answer
            out_size, err_size = os.fstat(out.fileno()).st_size, os.fstat(err.fileno()).st_size
            raw = os.pread(out.fileno(), min(out_size, MAX_JSON_BYTES) + 1, 0)
            raw_err = os.pread(err.fileno(), min(err_size, TRANSCRIPT_CAP), 0)
        record.update(
            exitCode=process.returncode,
            wallSeconds=round(wall, 3),
            stdout=_kept(raw, out_size),
            stdoutBytes=out_size,
            stderr=_kept(raw_err, err_size),
            stderrBytes=err_size,
        )
        retried = agent_retries(record["stdout"])
        if retried:  # the agent's own retries of its model calls: a run that waits on them says so
            record.update(agentRetries=retried)
        usage = Usage(wallSeconds=round(wall, 3))
        if stopped is not None:
            made = _Attempt(record, usage=usage).failed(*stopped)
        else:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                return _Attempt(record, usage=usage).failed("invalid-output", "output is not UTF-8")
            made = _read_output(self.agent, text, process.returncode, wall, record, usage)
        if made.failure is not None and made.failure[0] in NETWORK_KINDS and self.agent.sandbox_network == "none":
            kind, detail, subtype = made.failure
            made.failed(kind, f"{detail}; {NO_NETWORK}", subtype)
        return made


def materialize_config(config: AgentConfig) -> Path:
    """A fresh copy of an agent's configuration in a folder of its own (removed with `release`)."""
    root = temp_folder("config", view_parent())
    for name, data in config.files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@dataclass(frozen=True)
class Ran:
    exit_code: int | None  # None: stopped at its timeout
    stdout: bytes
    stderr: bytes


def run_process(argv: list[str], cwd: Path, timeout: float, env: Mapping[str, str] | None = None) -> Ran:
    """Run a program (stdin empty) in a session of its own; at `timeout` seconds it and all it started are ended.
    The first TRANSCRIPT_CAP bytes of its stdout and of its stderr are read (a casework judge runs programs so)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = live.start(argv, cwd, dict(os.environ if env is None else env), out, err, subprocess.DEVNULL)
        except OSError as exc:
            raise BcevalError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:
            stopped = process.poll() is None
            live.end(process)  # whatever it left running goes with it
            live.forget(process)
        out.seek(0)
        err.seek(0)
        code = None if stopped else process.returncode
        return Ran(code, out.read(TRANSCRIPT_CAP), err.read(TRANSCRIPT_CAP))


def _kept(data: bytes, size: int) -> str:
    text = data[:TRANSCRIPT_CAP].decode("utf-8", "replace")
    if size > TRANSCRIPT_CAP:
        text += f"\n[bceval: {size - TRANSCRIPT_CAP} more bytes were cut from this transcript]\n"
    return text


def _read_output(agent: AgentSettings, text: str, code: int, wall: float, record: dict, usage: Usage) -> _Attempt:
    """The attempt of a process that ran to its end: its envelope's answer, cost and trace, or its failure."""
    output = read_agent_output(text)
    spent, priced_as = priced(output.usage, agent.prices, (output.model, agent.model))
    usage = usage.plus(spent)
    record.update(format=output.format, usage=spent.as_record())
    if output.served:
        record.update(servedModel=output.served)
    if priced_as is not None:  # the envelope gave tokens, not a cost: the user's price table made it
        record.update(costFrom="prices", pricedModel=priced_as)
    if output.trace:  # the Read calls the agent's stream shows: its own account, never bceval's evidence
        record.update(agentTrace=list(output.trace))
    if output.failure is not None:  # an agent's own error report says more than its exit code
        return _Attempt(record, usage=usage).failed(*output.failure)
    if code != 0:
        cause = last_line(record.get("stderr", ""))
        if not text.strip() and cause:  # it stopped before any output and said why: a retry would say it again
            made = _Attempt(record, usage=usage, final=True)
            return made.failed("crash", f"exit code {code} after {wall:.1f} s, before any output: {cause}")
        return _Attempt(record, usage=usage).failed("crash", f"exit code {code} after {wall:.1f} s")
    record.update(outcome="answered")
    return _Attempt(record, text=output.text, usage=usage)


@contextmanager
def _exit_watch(process: subprocess.Popen) -> Iterator[Callable[[], bool]]:
    """`exited()` waits up to POLL_SECONDS for the agent's exit. On Linux a pidfd wakes it at the exit itself, so a
    short answer is not rounded up to Popen.wait's polling steps; elsewhere Popen.wait polls."""
    try:
        pidfd: int | None = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        pidfd = None

    def exited() -> bool:
        if pidfd is not None:
            select.select([pidfd], [], [], POLL_SECONDS)
            return process.poll() is not None
        try:
            process.wait(timeout=POLL_SECONDS)
            return True
        except subprocess.TimeoutExpired:
            return False

    try:
        yield exited
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _supervise(process: subprocess.Popen, out: Any, err: Any, started: float, timeout: float) -> Any:
    """Wait for the agent; end it on timeout or when its output passes the cap: then (kind, detail), else None."""
    with _exit_watch(process) as exited:
        while not exited():
            if max(os.fstat(out.fileno()).st_size, os.fstat(err.fileno()).st_size) > MAX_JSON_BYTES:
                live.end(process)
                return "too-large", f"output passed {MAX_JSON_BYTES} bytes; the command was stopped"
            if time.monotonic() - started > timeout:
                live.end(process)
                return "timeout", f"no answer within {timeout:g} s"
    if os.fstat(out.fileno()).st_size > MAX_JSON_BYTES:
        return "too-large", f"output of {os.fstat(out.fileno()).st_size} bytes exceeds {MAX_JSON_BYTES} bytes"
    return None


def version_line(output: bytes) -> str:
    """The version a `--version` printed: its first line when short and plain, else "unknown" (never an answer)."""
    lines = output.decode("utf-8", "replace").strip().splitlines()
    first = lines[0].strip() if lines else ""
    plain = first.isprintable() and not first.startswith(("{", "[", "```"))
    return first if plain and 0 < len(first) <= VERSION_MAX_CHARS and any(c.isdigit() for c in first) else "unknown"


def resolve_command(command: str, environ: Mapping[str, str], elsewhere: bool) -> str:
    """The executable the agent's process will start, resolved as it will (a relative path is refused when it runs
    `elsewhere`), and proven startable: else one line."""
    if os.sep in command:
        path = Path(command)
        if not path.is_absolute() and elsewhere:
            hint = f"; give its absolute path, {path.absolute()}" if path.exists() else ""
            raise BcevalError(
                f"--command: '{command}' is a relative path, and the agent runs in {ELSEWHERE}, "
                f"where it does not exist{hint}"
            )
        found = str(path) if path.exists() else None
    else:
        found = shutil.which(command, path=environ.get("PATH"))
    if found is None:
        raise BcevalError(f"--command: '{command}' was not found on PATH; install it or give a full path")
    if elsewhere and not os.path.isabs(found):  # a relative PATH entry: the agent would look for it in its folder
        raise BcevalError(
            f"--command: '{command}' was found as {found} through a relative PATH entry, and the agent runs in "
            f"{ELSEWHERE}; give its absolute path, {Path(found).absolute()}"
        )
    problem = _cannot_start(Path(found), environ)
    if problem:
        raise BcevalError(f"--command: '{command}' cannot start: {problem}")
    return found


def _cannot_start(path: Path, environ: Mapping[str, str]) -> str | None:
    try:
        info = path.stat()
    except OSError as exc:
        return exc.strerror or str(exc)
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a file"
    if not os.access(path, os.X_OK):
        return f"{path} is not executable (chmod +x it)"
    try:
        words = shebang(path)
    except OSError as exc:
        return exc.strerror or str(exc)
    if words is None:
        return None
    if not words:
        return f"{path} has an empty #! line"
    interpreter = words[0]
    if Path(interpreter).name == "env":
        named = env_command(words)
        if named and shutil.which(named, path=environ.get("PATH")) is None:
            return f"its #! line runs '{named}', which is not on PATH"
        return None
    if not os.access(interpreter, os.X_OK):
        return f"its #! interpreter {interpreter} does not exist or is not executable"
    return None


def named_files(args: list[str], elsewhere: bool) -> list[Path]:
    """The existing files the command line names by absolute path (the sandbox shows them read-only); a relative
    one is refused when the agent runs elsewhere."""
    found = []
    for arg in args:
        if PLACEHOLDER.search(arg):
            continue
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if not value or value.startswith("-"):
            continue
        path = Path(value)
        if not os.path.isfile(path):  # never raises (a name too long, a null byte)
            continue
        if path.is_absolute():
            found.append(Path(os.path.abspath(path)))
        elif elsewhere and (os.sep in value or "." in value):
            raise BcevalError(
                f"--command: '{value}' is a file relative to where bceval runs, but the agent runs in "
                f"{ELSEWHERE}; give its absolute path ({path.absolute()})"
            )
    return list(dict.fromkeys(found))
