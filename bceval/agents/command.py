"""The `command` kind: a live agent behind any command line (`claude -p`, `codex exec`, ...), one fresh process
per attempt, for every question shape."""

from __future__ import annotations

import hashlib
import os
import shlex
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from bceval.agents.process import LiveAgent, _Attempt, named_files, probe_version, resolve_command, run_attempt
from bceval.agents.sandbox import require_bwrap, sandbox_argv
from bceval.agents.settings import PLACEHOLDER, UNPINNED_MODEL, check_command, pinned, placeholders
from bceval.agents.view import View, release, scrubbed_environment, temp_folder
from bceval.errors import BcevalError
from bceval.runs.identity import asking, question

PROMPT_VERSION = 2  # of the review prompt: part of every cache key, a reworded prompt is a different question


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
        if not self.shape.checks_command:
            return
        # the opt-in gate, the command line and its executable, and the sandbox's own checks, before any case
        self.require_opt_in()
        check_command(agent.command, agent.model)
        try:
            self.argv = shlex.split(agent.command, posix=os.name == "posix")
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
        return self.shape.described(self, described)

    def _probe_version(self) -> str:
        """`<command> --version`, asked as the agent is asked: in an empty folder of its own, in its sandbox."""
        try:
            folder = temp_folder("probe")
        except (OSError, BcevalError):
            return "unknown"
        try:
            workdir = folder if self.isolated else Path.cwd()
            hidden = list(self.hidden.values())
            env = scrubbed_environment(self.environ, hidden, folder) if self.isolated else dict(self.environ)
            argv = self.sandboxed([self.executable, "--version"], workdir, [folder], env)
            return probe_version(workdir, argv, env)
        finally:
            release(folder)

    def cache_key(self, view: View, case: Any) -> str:
        """What a review answer depends on (under --isolation none, where the corpus is: the agent can read it)."""
        asked = replace(asking("command", self.agent, live=True), model=self.model)
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
            hidden=self.hidden,
            environ=dict(env),
            named=self.named_files,
            network=self.agent.sandbox_network,
        )

    def run(self, argv: list[str], cwd: Path | None, env: dict[str, str], prompt: bytes, record: dict) -> _Attempt:
        return run_attempt(self.agent, self.argv[0], argv, cwd, env, prompt, record)
