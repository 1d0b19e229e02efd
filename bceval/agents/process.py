"""What the live kinds share (LiveAgent: opt-in, retries, cost), reading an answer out of model output, and the
command kind's processes: one per attempt, its version, and the checks that its executable can start."""

from __future__ import annotations

import functools
import os
import random
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bceval.agents import live
from bceval.agents.envelope import read_agent_output
from bceval.agents.registry import Agent
from bceval.agents.sandbox import env_command, shebang
from bceval.agents.settings import PLACEHOLDER, AgentSettings
from bceval.errors import BcevalError
from bceval.jsonio import MAX_JSON_BYTES, parse_json_text, write_all
from bceval.prices import priced
from bceval.usage import Usage

VERSION_TIMEOUT = 10.0  # a command that answers `--version` with a model call is stopped long before it pays much
VERSION_MAX_CHARS = 80  # a version is one short line; anything longer (or shaped like an answer) is "unknown"
POLL_SECONDS = 0.1  # how often a running agent's output size and time are checked
TRANSCRIPT_CAP = 1 << 20  # bytes of stdout and of stderr kept per attempt
RETRY_WAIT_CAP = 300.0  # the longest pause between two attempts
ELSEWHERE = "its case's own folder"  # where an isolated agent runs
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)
_MISSING = object()


def extract_json_object(text: str) -> Any:
    """The answer object: the whole output, else the last fenced block, else the last line that is one (strict)."""
    whole = parse_json_text(text.strip(), _MISSING)
    if whole is not _MISSING:
        return whole if isinstance(whole, dict) else None
    for block in reversed(_FENCE.findall(text)):
        value = parse_json_text(block.strip(), _MISSING)
        if value is not _MISSING:
            return value if isinstance(value, dict) else None
    for line in reversed(text.splitlines()):
        if line.strip().startswith("{"):
            value = parse_json_text(line.strip(), _MISSING)
            if isinstance(value, dict):
                return value
    return None


def _kept(data: bytes, size: int) -> str:
    text = data[:TRANSCRIPT_CAP].decode("utf-8", "replace")
    if size > TRANSCRIPT_CAP:
        text += f"\n[bceval: {size - TRANSCRIPT_CAP} more bytes were cut from this transcript]\n"
    return text


def backoff(attempt: int, first_wait: float, rng: random.Random) -> float:
    """Seconds to wait before `attempt` (2, 3, ...): doubling from `first_wait`, capped, jittered (half to all)."""
    if attempt < 2 or first_wait <= 0:
        return 0.0
    base = min(RETRY_WAIT_CAP, first_wait * 2 ** (attempt - 2))
    return base * (0.5 + rng.random() / 2)


@dataclass
class _Attempt:
    record: dict[str, Any]
    text: str | None = None
    failure: tuple[str, str, str | None] | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Unreadable:
    """Output that ran fine but holds no answer: an invalid-output failure, and `detail` says why."""

    detail: str


class LiveAgent(Agent):
    """What both live kinds share: their question shape, the opt-in, retries with backoff, and what answers cost."""

    def __init__(
        self,
        agent: AgentSettings,
        shape: Any,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.agent = agent
        self.shape = shape
        self.hidden = dict(shape.hidden)
        self.environ = dict(os.environ if environ is None else environ)
        self.sleep = sleep
        self.rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self.usage = Usage()
        self.last_usage: Usage | None = None  # the latest answer's: a guidance run's budget counts case by case
        self._usage_lock = threading.Lock()
        self.setup()

    def setup(self) -> None:
        """The kind's own checks and state, before any case runs."""

    def in_cache(self, question: Any) -> bool:
        return self.shape.in_cache(self, question)

    def close(self) -> None:
        self.shape.close()

    def read_evidence(self) -> dict[str, dict[str, Any]]:
        return self.shape.read_evidence()

    def require_opt_in(self) -> None:
        if self.environ.get("BCEVAL_LIVE") != "1":
            raise BcevalError(
                f"the {self.kind} adapter calls a live model and is opt-in: set BCEVAL_LIVE=1 to allow it"
            )

    def ask(
        self, attempt: Callable[[int, float], _Attempt], read: Callable[[str], Any]
    ) -> tuple[Any, list[_Attempt], Usage]:
        """Attempts until one's output reads as an answer (`read(text)`, else Unreadable): (answer or None, the
        attempts, what they cost)."""
        attempts: list[_Attempt] = []
        for number in range(1, self.agent.retries + 2):
            with self._rng_lock:
                wait = backoff(number, self.agent.retry_wait, self.rng)
            if wait:
                self.sleep(wait)
            made = attempt(number, wait)
            attempts.append(made)
            if made.failure is not None and made.failure[0] == "spawn-error":
                break  # a command that cannot start will not start on a retry either
            if made.failure is None:
                answer = read(made.text or "")
                if not isinstance(answer, Unreadable):
                    return self._spent(answer, attempts)
                made.failure = ("invalid-output", answer.detail, None)
                made.record.update(outcome="invalid-output", detail=answer.detail)
        return self._spent(None, attempts)

    def _spent(self, answer: Any, attempts: list[_Attempt]) -> tuple[Any, list[_Attempt], Usage]:
        spent = functools.reduce(Usage.plus, (attempt.usage for attempt in attempts), Usage())
        with self._usage_lock:
            self.usage = self.usage.plus(spent)
            self.last_usage = spent
        return answer, attempts, spent


@dataclass(frozen=True)
class Ran:
    exit_code: int | None  # None: stopped at its timeout
    stdout: bytes
    stderr: bytes


def run_process(argv: list[str], cwd: Path, timeout: float, env: Mapping[str, str] | None = None) -> Ran:
    """Run a program (stdin empty) in a session of its own; at `timeout` seconds it and all it started are ended.
    Of its stdout and of its stderr the first TRANSCRIPT_CAP bytes are read."""
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


def probe_version(workdir: Path, argv: list[str], env: dict[str, str]) -> str:
    """`<command> --version` (`argv`, sandboxed as the agent is), in `workdir`, stdin empty, within VERSION_TIMEOUT."""
    try:
        ran = run_process(argv, workdir, VERSION_TIMEOUT, env)
    except BcevalError:
        return "unknown"
    return version_line(ran.stdout[:4096]) if ran.exit_code == 0 else "unknown"


def run_attempt(
    agent: AgentSettings, name: str, argv: list[str], cwd: Path | None, env: dict[str, str], prompt: bytes, record: dict
) -> _Attempt:
    """One process of the agent command `name`: its answer's text or why there is none; `record` completed."""
    started = time.monotonic()
    with (  # unbuffered: each is written or read once, whole
        tempfile.TemporaryFile(buffering=0) as given,
        tempfile.TemporaryFile(buffering=0) as out,
        tempfile.TemporaryFile(buffering=0) as err,
    ):
        # The prompt is a file on stdin, not a pipe: no thread has to feed it, and an agent that never reads
        # it cannot block on it.
        write_all(given.fileno(), prompt)
        given.seek(0)
        try:
            process = live.start(argv, cwd=cwd, env=env, stdout=out, stderr=err, stdin=given)
        except OSError as exc:
            record.update(outcome="spawn-error", detail=f"cannot start {name}: {exc.strerror or exc}")
            record.update(exitCode=None, wallSeconds=0.0, stdout="", stderr="")
            return _Attempt(record, failure=("spawn-error", record["detail"], None))
        try:
            stopped = _supervise(process, out, err, started, agent.timeout)
        finally:
            live.end(process)  # the case is over: nothing the agent started outlives it
            live.forget(process)
        wall = time.monotonic() - started
        # the sizes first: a read of "up to the cap" sets aside the whole cap (32 MiB) for a 100-byte answer
        out_size, err_size = os.fstat(out.fileno()).st_size, os.fstat(err.fileno()).st_size
        raw = _read_start(out, min(out_size, MAX_JSON_BYTES) + 1)
        raw_err = _read_start(err, min(err_size, TRANSCRIPT_CAP))
    record.update(
        exitCode=process.returncode,
        wallSeconds=round(wall, 3),
        stdout=_kept(raw, out_size),
        stdoutBytes=out_size,
        stderr=_kept(raw_err, err_size),
        stderrBytes=err_size,
    )
    usage = Usage(wallSeconds=round(wall, 3))
    if stopped is not None:
        record.update(outcome=stopped[0], detail=stopped[1])
        return _Attempt(record, failure=(stopped[0], stopped[1], None), usage=usage)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        record.update(outcome="invalid-output", detail="output is not UTF-8")
        return _Attempt(record, failure=("invalid-output", "output is not UTF-8", None), usage=usage)
    return _read_output(agent, text, process.returncode, wall, record, usage)


def _read_output(agent: AgentSettings, text: str, code: int, wall: float, record: dict, usage: Usage) -> _Attempt:
    """The attempt of a process that ran to its end: its envelope's answer, cost and trace, or its failure."""
    output = read_agent_output(text)
    spent, priced_as = priced(output.usage, agent.prices, (output.model, agent.model))
    usage = usage.plus(spent)
    record.update(format=output.format, usage=spent.as_record())
    if priced_as is not None:  # the envelope gave tokens, not a cost: the user's price table made it
        record.update(costFrom="prices", pricedModel=priced_as)
    if output.trace:  # the Read calls the agent's stream shows: its own account, never bceval's evidence
        record.update(agentTrace=list(output.trace))
    if output.failure is not None:  # an agent's own error report says more than its exit code
        record.update(outcome=output.failure[0], detail=output.failure[1])
        return _Attempt(record, failure=output.failure, usage=usage)
    if code != 0:
        detail = f"exit code {code} after {wall:.1f} s"
        record.update(outcome="crash", detail=detail)
        return _Attempt(record, failure=("crash", detail, None), usage=usage)
    record.update(outcome="answered")
    return _Attempt(record, text=output.text, usage=usage)


def _supervise(process: subprocess.Popen, out: Any, err: Any, started: float, timeout: float) -> Any:
    """Wait for the agent; end it on timeout or when its output passes the cap: then (kind, detail), else None."""
    while True:
        try:
            process.wait(timeout=POLL_SECONDS)
            break
        except subprocess.TimeoutExpired:
            pass
        if max(os.fstat(out.fileno()).st_size, os.fstat(err.fileno()).st_size) > MAX_JSON_BYTES:
            live.end(process)
            return "too-large", f"output passed {MAX_JSON_BYTES} bytes; the command was stopped"
        if time.monotonic() - started > timeout:
            live.end(process)
            return "timeout", f"no answer within {timeout:g} s"
    if os.fstat(out.fileno()).st_size > MAX_JSON_BYTES:
        return "too-large", f"output of {os.fstat(out.fileno()).st_size} bytes exceeds {MAX_JSON_BYTES} bytes"
    return None


def _read_start(file: Any, size: int) -> bytes:
    """Up to `size` bytes from the start of an unbuffered file (one read may return fewer before its end)."""
    file.seek(0)
    chunks, left = [], size
    while left > 0 and (chunk := file.read(left)):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def version_line(output: bytes) -> str:
    """The version a `--version` printed: its first line when short and plain, else "unknown" (never an answer)."""
    lines = output.decode("utf-8", "replace").strip().splitlines()
    first = lines[0].strip() if lines else ""
    plain = first.isprintable() and not first.startswith(("{", "[", "```"))
    return first if plain and 0 < len(first) <= VERSION_MAX_CHARS and any(c.isdigit() for c in first) else "unknown"


def resolve_command(command: str, environ: Mapping[str, str], elsewhere: bool) -> str:
    """The executable the agent's process will start, resolved as it will (a relative path is refused when it runs
    `elsewhere`), and proven startable: else one line."""
    if os.sep in command or (os.altsep and os.altsep in command):
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
