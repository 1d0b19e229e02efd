"""The development request as the live agent kinds are asked it (spec §11.2, §11.8); one attempt, no retries."""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from bceval.agents.api import shared_first
from bceval.agents.api_tools import KNOWLEDGE, READ_WRITE_TOOLS, TOOLS_VERSION, WORKSPACE, WorkspaceBox
from bceval.agents.process import extract_json_object
from bceval.agents.registry import Shape
from bceval.agents.sandbox import sandbox_argv
from bceval.agents.settings import AgentSettings
from bceval.errors import BcevalError
from bceval.evaluators.base import DEVELOPMENT
from bceval.evaluators.development import processes as proc
from bceval.evaluators.development.checks import expand
from bceval.evaluators.development.knowledge_response import evidence_record
from bceval.evaluators.development.manifest import Case, Loaded
from bceval.jsonio import dumps, write_atomic
from bceval.layout import DevelopmentCaseDir
from bceval.runs.record import write_transcript
from bceval.usage import Usage

PROMPT_VERSION = 1  # of the api agent's system message
SYSTEM = (
    "You are a Business Central AL developer in an evaluation, working only through tools. 'workspace/' is the "
    "fixture repository you change: write_file and edit_file work there and nowhere else. {knowledge}Make the "
    "change the request asks for with the tools, keep it in the working tree, and answer with nothing but the "
    "implementationReport JSON object in the shape of the request's resultSchema. List as knowledge only articles "
    "you read in full and that shaped the change."
)
SYSTEM_KNOWLEDGE = (
    "'knowledge/' is a read-only copy of the BCQuality knowledge checkout; knowledge/knowledge-index.json lists its "
    "articles, and the request's knowledge paths are relative to knowledge/. "
)

SHARED = ("protocol", "skill", "skillInstructions", "implementationGuidance", "knowledgeIndex")  # every case's


@dataclass(frozen=True)
class DevelopmentQuestion:
    """One case's request as its agent gets it, and where it works."""

    case: Case
    folder: Path  # the case's folder in the run (request.json, agent/, ...)
    request_text: str
    workspace: Path  # the fresh writable copy
    knowledge: Path | None  # the knowledge view, in arms with guidance


@dataclass
class Asked:
    """What the agent of one case gave back: its answer (the JSON object) or why there is none."""

    answer: dict[str, Any] | None
    infrastructure: str | None  # the agent crashed or timed out before it answered (§11.10)
    evidence: dict[str, Any] | None = None  # bceval's §13 read-evidence record (api adapter only: tool events)
    refused_outside: list[str] = field(default_factory=list)  # write paths refused because they leave the copy


class DevelopmentShape(Shape):
    in_case_view = False
    checks_command = False  # its placeholders are the run's own (checks.expand), expanded per case
    tools = READ_WRITE_TOOLS

    def __init__(self, opts: Any, loaded: Loaded) -> None:
        self.opts = opts
        self.hidden = {"the output directory": opts.out.resolve(), "the corpus": loaded.root.resolve()}
        self.bwrap: str | None = None  # the run sets it under --sandbox bwrap

    def described(self, agent: Any, described: dict[str, Any]) -> dict[str, Any]:
        endpoint = agent.agent.endpoint
        if endpoint is None:
            return described
        kept = {key: value for key, value in described.items() if key not in ("isolation", "sandbox")}
        tools = [tool.name for tool in self.tools]
        identity = {"endpoint": endpoint.identity(), "tools": tools, "toolsVersion": TOOLS_VERSION}
        return {**kept, **identity, "promptVersion": PROMPT_VERSION}

    def _keep(
        self, agent: Any, q: DevelopmentQuestion, output: tuple, envelope: dict, work: dict, by: Any, usage: Usage
    ) -> None:
        """The agent's stdout, stderr and envelope in the case's agent/ folder, and its transcript (`work`: the
        record's members, `by`: who answered)."""
        folder = DevelopmentCaseDir(q.folder).agent
        write_atomic(folder / "stdout.txt", output[0])
        write_atomic(folder / "stderr.txt", output[1])
        write_atomic(folder / "envelope.json", dumps(envelope))
        record = {"case": q.case.model_id, "manifestId": q.case.id, "epoch": agent.agent.epoch, **work}
        write_transcript(self.opts.out, q.case.model_id, self.opts.out.name, by, record, usage)

    def by_process(self, agent: Any, q: DevelopmentQuestion) -> Asked:
        """The agent command line, run in the copy (under bwrap only the copy is writable)."""
        settings = agent.agent
        argv = expand(
            tuple(shlex.split(settings.command)),
            q.case,
            q.workspace,
            q.folder,
            self.opts.checks,
            knowledge=str(q.knowledge) if q.knowledge is not None else "",
            request=str(DevelopmentCaseDir(q.folder).request),
            model=settings.model or "",
        )
        if self.bwrap is not None:
            argv = sandbox_argv(
                self.bwrap,
                argv,
                workdir=q.workspace,
                read_only=[q.knowledge] if q.knowledge is not None else [],
                allow=list(settings.sandbox_allow),
                allow_rw=[q.workspace, *settings.sandbox_allow_rw],
                hidden=self.hidden,
                environ=proc.clean_environment(),
            )
        lines = [q.request_text, f"Your working directory is the fixture repository: {q.workspace}"]
        if q.knowledge is not None:  # in arms with guidance
            lines.append(f"The knowledge checkout (read-only) is: {q.knowledge}")
        stdin = ("\n".join(lines) + "\n").encode("utf-8")
        finished = proc.run_command(argv, q.workspace, settings.timeout, proc.clean_environment(), stdin)
        answer = extract_json_object(finished.stdout.decode("utf-8", "replace")) if finished.stdout.strip() else None
        infra = None
        if finished.timed_out and answer is None:
            infra = f"the agent timed out after {settings.timeout:g} s before it answered"
        elif finished.missing or (finished.exit_code not in (0, None) and answer is None):
            infra = f"the agent process failed (exit {finished.exit_code}) before it answered"
        envelope = {
            "argv": argv,
            "exitCode": finished.exit_code,
            "seconds": round(finished.seconds, 3),
            "timedOut": finished.timed_out,
            "model": settings.model,
            "epoch": settings.epoch,
            "stdoutSha256": hashlib.sha256(finished.stdout).hexdigest(),
            "infrastructure": infra,
        }
        by = {"adapter": "command", "model": settings.model, "pinned": "{model}" in settings.command}
        outcome = "answered" if answer is not None else ("failed" if infra else "unparsable")
        usage = Usage(wallSeconds=envelope["seconds"])
        self._keep(agent, q, (finished.stdout, finished.stderr), envelope, {**envelope, "outcome": outcome}, by, usage)
        return Asked(answer, infra)

    def by_endpoint(self, agent: Any, q: DevelopmentQuestion) -> Asked:
        """bceval's own conversation: read tools over workspace/ (and knowledge/), write tools over workspace/."""
        box = WorkspaceBox({WORKSPACE: q.workspace, **({KNOWLEDGE: q.knowledge} if q.knowledge is not None else {})})
        system = SYSTEM.format(knowledge=SYSTEM_KNOWLEDGE if q.knowledge is not None else "")
        user = f"=== request ===\n{dumps(shared_first(json.loads(q.request_text), SHARED))}"
        talk, usage, seconds = agent.converse(system, user, box, None)
        scrub = agent.endpoint.scrub
        failure = scrub(f"{talk.failure[0]}: {talk.failure[1]}") if talk.failure else None
        reads = box.reads()
        work = {
            "outcome": f"failed: {talk.failure[0]}" if talk.failure else "answered",
            "detail": talk.failure[1] if talk.failure else None,
            "servedModel": talk.served_model,
            "systemSha256": hashlib.sha256(system.encode("utf-8")).hexdigest(),
            "userSha256": hashlib.sha256(user.encode("utf-8")).hexdigest(),
            "turns": talk.turns,
            "waits": talk.waits,
            "toolCalls": box.calls,
            "refused": len(box.refusals),
            "writes": box.writes,
            "refusedOutside": box.outside,
            "reads": reads,
            "wallSeconds": seconds,
        }
        work = scrub(work)
        text = scrub(talk.text) if talk.text is not None else None
        answer = extract_json_object(text) if text and text.strip() else None
        infra = f"the api conversation ended before an answer ({failure})" if failure else None
        envelope = {
            "adapter": "api",
            "model": agent.agent.model,
            "servedModel": work["servedModel"],
            "epoch": agent.agent.epoch,
            "seconds": work["wallSeconds"],
            "turns": len(work["turns"]),
            "toolCalls": len(work["toolCalls"]),
            "refused": work["refused"],
            "writes": len(work["writes"]),
            "stdoutSha256": hashlib.sha256((text or "").encode("utf-8")).hexdigest(),
            "infrastructure": infra,
        }
        evidence = evidence_record(self.opts.out.name, DevelopmentCaseDir(q.folder).request.read_bytes(), reads)
        work.update(readBy="bceval", readEvidence=evidence)
        stderr = (failure or "") + ("\n" if failure else "")
        self._keep(agent, q, (text or "", stderr), envelope, work, agent.describe(), usage)
        return Asked(answer, infra, evidence, list(work["refusedOutside"]))


@dataclass(frozen=True)
class DevelopmentSetup:
    """What an agent answering development requests is made from (make_agent takes it)."""

    question: ClassVar[str] = DEVELOPMENT
    shape: Shape
    agent: AgentSettings | None = None

    def unknown(self, name: str) -> BcevalError:
        return BcevalError(f"--adapter {name}: development runs take the command or the api adapter")

    def missing_command(self, name: str) -> BcevalError:
        if name == "api":
            return BcevalError("run --adapter api needs its endpoint settings (--model, --base-url, ...)")
        return BcevalError("run --adapter command needs --command (or BCEVAL_COMMAND), the agent command line")
