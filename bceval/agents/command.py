"""A live review agent behind any command line (`claude -p`, `codex exec`, `llm`, ...). Opt-in only.

Each case is answered by one fresh process. By default it runs in the case's agent view (see view.py), a
folder holding only what it may read, with an environment that names neither the corpus nor the output
directory; `--isolation none` runs it where bceval runs, as older versions did, and says so everywhere.
`--sandbox bwrap` also hides the rest of the machine (see sandbox.py). The process, its placeholders,
envelopes, retries and transcripts are shared with the guidance agent (see process.py).

Answers are cached by what the agent could see and how it was asked: the view's digest, the command, the
model, the isolation, the sandbox, the epoch and the prompt version. A killed or repeated run never pays
twice; another epoch is another sample. Failures are never cached, so a rerun retries them. Every
attempt is kept in a transcript.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from bceval.agents.base import Answer, CaseInput
from bceval.agents.process import LiveAgent, Unreadable, _Attempt, extract_json_object
from bceval.agents.settings import AgentSettings
from bceval.agents.view import View, built_view, materialize, release, scrubbed_environment
from bceval.errors import BcevalError
from bceval.evaluators.review.entries import AnsweredCase, answered_cases, stored_case
from bceval.jsonio import dumps, parse_json, read_regular_bytes, write_atomic
from bceval.layout import cached_answer
from bceval.runs.identity import asking, question
from bceval.usage import Usage

PROMPT_VERSION = 2  # part of every cache key: a reworded prompt is a different question
CONTRACT = (
    "You are reviewing Business Central AL code for a code-review evaluation. Follow the request below: "
    "apply its leafInstructions to the case file, consider only its candidateArticles, and answer with one "
    "JSON object shaped like the request's resultSchema, using the case id given in the request and finding "
    "ids copied verbatim from candidateArticles[].path. A case with nothing to report has an empty findings "
    "array. Print the JSON object and nothing else."
)
VIEW_NOTE = (
    "Your working directory was made for this case alone: it holds the request, the case file, the leaf skill "
    "and the full text of every candidate article. Every path in the request is relative to the working "
    "directory."
)


def review_prompt(view: View, isolated: bool) -> str:
    """The text a command agent gets on its standard input for the case of `view` (`bceval prompt` shows it)."""
    note = f"{VIEW_NOTE}\n\n" if isolated else ""
    return (
        f"{CONTRACT}\n\n{note}=== request {view.request_name} ===\n{view.text(view.request_name)}\n"
        f"=== file {view.case_name} ===\n{view.text(view.case_name)}"
    )


class CommandAdapter(LiveAgent):
    """The review question shape of the `command` kind."""

    name = "command"

    def __init__(
        self,
        agent: AgentSettings,
        cache_dir: Path,
        hidden: Mapping[str, Path],
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(agent, hidden, environ, sleep, rng)
        self.cache_dir = cache_dir
        self._scrubbed_environ: dict[str, str] | None = None
        self._asked: tuple[AgentSettings, Any] | None = None  # (the settings it was made from, how this agent asks)

    def cache_key(self, view: View, case: CaseInput) -> str:
        """What the answer depends on. Under --isolation none the agent can read the whole corpus and prepare
        folder, not just the view, so where they are is part of the key: another corpus is another question."""
        if self._asked is None or self._asked[0] is not self.agent:  # the same for every case: made once
            self._asked = (self.agent, replace(asking("command", self.agent, live=True), model=self.model))
        key = question(self._asked[1], view.digest, case.corpus, case.request_path).cache_key(PROMPT_VERSION)
        if self.agent.sandbox_network != "share":  # absent when shared: existing keys stay valid
            key = hashlib.sha256(f"{key}|network={self.agent.sandbox_network}".encode()).hexdigest()
        return key

    def prompt(self, view: View, isolated: bool) -> str:
        return review_prompt(view, isolated)

    # --- answering -------------------------------------------------------------------------------------------

    def answer(self, case: CaseInput) -> Answer:
        view = built_view(case.request_path.parent, case.corpus, case.model_id)
        key = self.cache_key(view, case)
        base = {
            "case": case.model_id,
            "epoch": self.agent.epoch,
            "command": self.agent.command,
            "model": self.model,
            "pinned": self.pinned,
            "isolation": self.agent.isolation,
            "sandbox": self.agent.sandbox,
            "sandboxAllow": [str(path) for path in self.agent.sandbox_allow],
            **({"sandboxNetwork": self.agent.sandbox_network} if self.agent.sandbox == "bwrap" else {}),
            "view": {"sha256": view.digest, "files": view.manifest()},
            "cacheKey": key,
        }
        # the prompt depends on the view and the isolation only, so a cached answer's prompt is this one too
        sent = "" if self.reads_request_file else self.prompt(view, self.agent.isolation == "view")
        prompts = (sent,) if sent else ()
        cached = self._cached(key)
        if cached is not None:
            entries, usage, transcript, payer = cached
            # An answer this run paid for itself (a killed run resumed) is its own, cost included; only one an
            # earlier, finished attempt of another run paid for is "cached".
            mine = bool(self.agent.paid_by) and payer == self.agent.paid_by
            record = {**base, "cached": not mine, "attempts": transcript.get("attempts", []), "outcome": "answered"}
            record.update({key: transcript[key] for key in TRACE_KEYS if key in transcript})
            if not mine and payer:
                record["paidBy"] = payer
            return Answer(entries, None, usage, record, not mine, view.digest, prompts)
        entries, attempts, usage = self.ask(lambda number, waited: self._attempt(case, view, number, waited), _entries)
        record = {**base, "cached": False, "attempts": [a.record for a in attempts]}
        if entries is not None:
            record.update(agent_trace(attempts[-1].record, view))
            record["outcome"] = "answered"
            self._store(key, entries, usage, record)
            return Answer(entries, None, usage, record, False, view.digest, prompts)
        last = attempts[-1].failure
        assert last is not None
        kind, detail, subtype = last
        from bceval.evaluators.review.scoring import InfraFailure

        failure = InfraFailure(id=case.model_id, kind=kind, detail=detail, attempts=len(attempts), subtype=subtype)
        record["outcome"] = f"failed: {kind}"
        return Answer(None, failure, usage, record, False, view.digest, prompts)

    def in_cache(self, question: CaseInput) -> bool:
        view = built_view(question.request_path.parent, question.corpus, question.model_id)
        return self._cached(self.cache_key(view, question)) is not None

    def _cached(self, key: str) -> tuple[list[AnsweredCase], Usage, dict[str, Any], str] | None:
        path = cached_answer(self.cache_dir, key)
        try:
            stored = json.loads(read_regular_bytes(path))
            entries = [stored_case(entry) for entry in stored["cases"]]
        except (OSError, ValueError, KeyError, TypeError, BcevalError):
            return None  # absent, or not ours: answer again
        payer = stored.get("paidBy")
        return entries, Usage.from_record(stored.get("usage")), stored.get("transcript") or {}, str(payer or "")

    def _store(self, key: str, entries: list[AnsweredCase], usage: Usage, transcript: dict[str, Any]) -> None:
        record = {
            "command": self.agent.command,
            "model": self.model,
            "cases": [entry.as_record() for entry in entries],
            "usage": usage.as_record(),
            "transcript": transcript,
            **({"paidBy": self.agent.paid_by} if self.agent.paid_by else {}),
        }
        write_atomic(cached_answer(self.cache_dir, key), dumps(record))

    def _scrubbed(self) -> dict[str, str]:
        """The isolated agent's environment without its working directory: the same for every attempt, so it is
        worked out once (it resolves every hidden path)."""
        if self._scrubbed_environ is None:
            self._scrubbed_environ = scrubbed_environment(self.environ, list(self.hidden.values()), None)
        return self._scrubbed_environ

    def _attempt(self, case: CaseInput, view: View, number: int, waited: float) -> _Attempt:
        isolated = self.agent.isolation == "view"
        root = materialize(view) if isolated else None  # tracked until released: an interrupt removes it
        try:
            workdir = root if root is not None else Path.cwd()
            request_path = (root / view.request_name) if root is not None else case.request_path
            argv = self._command_line(request_path, workdir)
            prompt = b"" if self.reads_request_file else self.prompt(view, isolated).encode("utf-8")
            env = dict(self.environ)
            if isolated:
                env = {**self._scrubbed(), "PWD": str(workdir)}
            argv = self.sandboxed(argv, workdir, [workdir], env)
            record: dict[str, Any] = {
                "attempt": number,
                "waitedSeconds": round(waited, 3),
                "promptSha256": hashlib.sha256(prompt).hexdigest(),
                "argv": argv,
                "workdir": str(workdir),
            }
            return self._run(argv, workdir if isolated else None, env, prompt, record)
        finally:
            if root is not None:
                release(root)


TRACE_KEYS = ("readBy", "agentTrace", "candidates")


def agent_trace(attempt: dict[str, Any], view: View) -> dict[str, Any]:
    """The answering attempt's Read calls (a Claude Code stream-json envelope's), as the answer record keeps them:
    `readBy: "agent-trace"`, the paths relative to the agent's folder where they are inside it, and the case's
    candidate articles. The agent's own account of what it asked to read: bceval never saw what it got, so this is
    never read evidence (`--require-read` does not take it). Nothing for an answer without such calls."""
    calls = attempt.get("agentTrace")
    if not calls:
        return {}
    workdir = Path(str(attempt.get("workdir", "")))
    reads = []
    for call in calls:
        path = Path(call["path"])
        if path.is_absolute() and path.is_relative_to(workdir):
            path = path.relative_to(workdir)
        reads.append({**call, "path": path.as_posix()})
    try:
        rows = json.loads(view.text(view.request_name)).get("candidateArticles") or []
    except (ValueError, AttributeError):
        rows = []
    candidates = [row["path"] for row in rows if isinstance(row, dict) and isinstance(row.get("path"), str)]
    return {"readBy": "agent-trace", "agentTrace": {"source": "agent-trace", "reads": reads}, "candidates": candidates}


def _entries(text: str) -> list[AnsweredCase] | Unreadable:
    """The findings of a review answer, read as a result file is (evaluators.review.entries, so no result model loads);
    the ids are the model's to get right, scoring judges them."""
    document = extract_json_object(text)
    if document is None:
        return Unreadable("output holds no JSON object")
    problems: list[str] = []
    try:  # as a result file holding it would be read: the same strict parse of the same text
        answered = answered_cases(parse_json(json.dumps(document).encode("utf-8"), "answer"), "answer", problems)
    except BcevalError:
        answered = None
    if problems or not answered:
        return Unreadable("answer JSON does not have the result shape")
    return answered
