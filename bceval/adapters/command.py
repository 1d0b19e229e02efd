"""A live agent behind any command line (`claude -p`, `codex exec`, `llm`, ...). Opt-in only.

The prompt (our output contract, the request JSON and the neutral case file) goes to the command's
stdin; a `{request}` argument is replaced by the request file's path instead (then stdin is empty).
Answers are cached by content (request bytes + case bytes + command + model), so a killed or repeated
run never pays twice; failures are never cached, so a rerun retries them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bceval.adapters.base import CaseInput
from bceval.errors import BcevalError
from bceval.jsonio import MAX_JSON_BYTES, dumps, parse_json, write_atomic
from bceval.review.scoring import InfraFailure, ResultEntry, read_result_document

UNPINNED_MODEL = "unpinned"
VERSION_TIMEOUT = 30.0
POLL_SECONDS = 0.05
CONTRACT = (
    "You are reviewing Business Central AL code for a code-review evaluation. Follow the request below: "
    "apply its leafInstructions to the case file, consider only its candidateArticles, and answer with one "
    "JSON object shaped like the request's resultSchema, using the case id given in the request and finding "
    "ids copied verbatim from candidateArticles[].path. A case with nothing to report has an empty findings "
    "array. Print the JSON object and nothing else."
)


def _kill(process: subprocess.Popen) -> None:
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            process.kill()
    except ProcessLookupError:
        pass


_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)
_MISSING = object()


def _loads(text: str) -> Any:
    """Strict parse (no duplicate keys, bounded depth, no lone surrogates); model output gets no slack."""
    try:
        return parse_json(text.encode("utf-8", "surrogatepass"), "answer")
    except BcevalError:
        return _MISSING


def _feed(stream: Any, data: bytes) -> None:
    """Write the prompt and close stdin; a command that exits without reading it is not an error here."""
    try:
        stream.write(data)
        stream.close()
    except OSError:
        pass


def extract_json_object(text: str) -> Any:
    """The answer object: the whole output, else the last fenced block, else the last line that is one.

    Output that is valid JSON but not an object (an array, a string) is no answer at all.
    """
    whole = _loads(text.strip())
    if whole is not _MISSING:
        return whole if isinstance(whole, dict) else None
    for block in reversed(_FENCE.findall(text)):
        value = _loads(block.strip())
        if value is not _MISSING:
            return value if isinstance(value, dict) else None
    for line in reversed(text.splitlines()):
        if line.strip().startswith("{"):
            value = _loads(line.strip())
            if isinstance(value, dict):
                return value
    return None


class CommandAdapter:
    name = "command"

    def __init__(
        self,
        command: str,
        model: str | None,
        cache_dir: Path,
        timeout: float = 300.0,
        retries: int = 2,
        environ: dict[str, str] | None = None,
    ) -> None:
        environ = dict(os.environ if environ is None else environ)
        if environ.get("BCEVAL_LIVE") != "1":
            raise BcevalError("the command adapter calls a live model and is opt-in: set BCEVAL_LIVE=1 to allow it")
        try:
            self.argv = shlex.split(command, posix=os.name == "posix")
        except ValueError as exc:
            raise BcevalError(f"--command: cannot split '{command}': {exc}") from None
        if not self.argv:
            raise BcevalError("--command is empty: give the agent command line, e.g. --command 'claude -p'")
        self.executable = shutil.which(self.argv[0], path=environ.get("PATH"))
        if self.executable is None:
            raise BcevalError(f"--command: '{self.argv[0]}' was not found on PATH; install it or give a full path")
        self.command = command
        self.model = model or UNPINNED_MODEL
        self.pinned = bool(model)
        self.cache_dir = cache_dir
        self.timeout = timeout
        self.retries = retries
        self.environ = environ
        self._version: str | None = None

    def describe(self) -> dict[str, Any]:
        if self._version is None:
            self._version = self._probe_version()
        return {
            "adapter": self.name,
            "command": self.command,
            "model": self.model,
            "version": self._version,
            "pinned": self.pinned,
        }

    def _probe_version(self) -> str:
        try:
            done = subprocess.run(
                [self.executable, "--version"],
                capture_output=True,
                text=True,
                timeout=VERSION_TIMEOUT,
                stdin=subprocess.DEVNULL,
                env=self.environ,
            )
        except (OSError, subprocess.TimeoutExpired):
            return "unknown"
        lines = done.stdout.strip().splitlines()
        return lines[0].strip() if done.returncode == 0 and lines else "unknown"

    def cache_key(self, case: CaseInput) -> str:
        digest = hashlib.sha256()
        for part in (case.request_path.read_bytes(), case.case_path.read_bytes()):
            digest.update(hashlib.sha256(part).digest())
        digest.update(json.dumps([self.command, self.model]).encode("utf-8"))
        return digest.hexdigest()

    def prompt(self, case: CaseInput) -> str:
        request = case.request_path.read_text(encoding="utf-8")
        code = case.case_path.read_text(encoding="utf-8")
        return (
            f"{CONTRACT}\n\n=== request {case.request_path.name} ===\n{request}\n"
            f"=== file {case.case_path.name} ===\n{code}"
        )

    def answer(self, case: CaseInput) -> list[ResultEntry] | InfraFailure:
        key = self.cache_key(case)
        cached = self.cache_dir / f"{key}.json"
        if cached.is_file():
            return [ResultEntry.model_validate(e) for e in json.loads(cached.read_text(encoding="utf-8"))["cases"]]
        failure: InfraFailure | None = None
        for attempt in range(1, self.retries + 2):
            outcome = self._run_once(case, attempt)
            if isinstance(outcome, InfraFailure):
                failure = outcome
                continue
            record = {"command": self.command, "model": self.model, "cases": [e.model_dump() for e in outcome]}
            write_atomic(cached, dumps(record))
            return outcome
        assert failure is not None
        return failure

    def _supervise(self, process: subprocess.Popen, stdin_text: bytes, out: Any, err: Any) -> tuple[str, str] | None:
        """Feed stdin, then wait; kill the process group on timeout or when its output passes the cap.

        Returns (kind, detail) of an infrastructure failure, or None when the command exited 0.
        """
        feeder = threading.Thread(target=_feed, args=(process.stdin, stdin_text), daemon=True)
        feeder.start()
        started = time.monotonic()
        while True:
            try:
                process.wait(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                pass
            if max(os.fstat(out.fileno()).st_size, os.fstat(err.fileno()).st_size) > MAX_JSON_BYTES:
                _kill(process)
                process.wait()
                return "too-large", f"output passed {MAX_JSON_BYTES} bytes; the command was stopped"
            if time.monotonic() - started > self.timeout:
                _kill(process)
                process.wait()
                return "timeout", f"no answer within {self.timeout:g} s"
        feeder.join(timeout=1)
        if process.returncode != 0:
            return "crash", f"exit code {process.returncode} after {time.monotonic() - started:.1f} s"
        size = os.fstat(out.fileno()).st_size
        if size > MAX_JSON_BYTES:
            return "too-large", f"output of {size} bytes exceeds {MAX_JSON_BYTES} bytes"
        return None

    def _run_once(self, case: CaseInput, attempt: int) -> list[ResultEntry] | InfraFailure:
        def fail(kind: str, detail: str) -> InfraFailure:
            return InfraFailure(id=case.model_id, kind=kind, detail=detail, attempts=attempt)

        argv = [self.executable] + [arg.replace("{request}", str(case.request_path)) for arg in self.argv[1:]]
        uses_path = any("{request}" in arg for arg in self.argv[1:])
        stdin_text = b"" if uses_path else self.prompt(case).encode("utf-8")
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                process = subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=out,
                    stderr=err,
                    env=self.environ,
                    start_new_session=os.name == "posix",
                )
            except OSError as exc:
                return fail("spawn-error", f"cannot start {self.argv[0]}: {exc.strerror}")
            failure = self._supervise(process, stdin_text, out, err)
            if failure is not None:
                return fail(*failure)
            out.seek(0)
            raw = out.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return fail("invalid-output", "output is not UTF-8")
        document = extract_json_object(text)
        if document is None:
            return fail("invalid-output", "output holds no JSON object")
        reading = read_result_document(json.dumps(document).encode("utf-8"), "answer")
        if reading.problems or not reading.entries:
            return fail("invalid-output", "answer JSON does not have the result shape")
        return reading.entries  # the ids are the model's to get right; scoring judges them
