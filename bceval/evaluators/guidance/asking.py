"""The guidance question as the live kinds are asked it: one agent per case, in the case's workspace, reading a
read-only knowledge view of the layers' `skills/` and `knowledge/` and the index (never `evaluation/`, where the
expected outcomes live). Nothing the agent prints reaches the console."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from bceval.agents.api import shared_first
from bceval.agents.api_tools import READ_TOOLS, TOOLS_VERSION, ToolBox
from bceval.agents.base import GuidanceCaseInput, NoReport
from bceval.agents.process import Unreadable, _Attempt, extract_json_object
from bceval.agents.registry import Shape, agent_names
from bceval.agents.settings import AgentSettings
from bceval.agents.view import release, scrubbed_environment, sweep_stale_folders, temp_folder
from bceval.corpus.layers import LAYERS
from bceval.errors import BcevalError
from bceval.evaluators.base import GUIDANCE
from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.evidence import run_git
from bceval.evaluators.guidance.manifest import GuidanceManifest
from bceval.jsonio import dumps
from bceval.layout import KNOWLEDGE_INDEX, GuidanceRunDir
from bceval.runs.record import write_prompt, write_transcript
from bceval.usage import Usage

VIEW_FOLDERS = ("skills", "knowledge")
CONTRACT = (
    "You are giving development guidance for Business Central AL work, in an evaluation. Your working directory "
    "is the workspace the request is about: read it, but change nothing in it (no edits, no commits). The "
    "knowledge you may use is in the read-only folder the request's knowledgeRoot names, a copy of the knowledge "
    "checkout at commit {head}; its knowledgeIndex lists every article. Follow the request's protocol and "
    'skillInstructions and answer with one JSON object shaped like its resultSchema ({{"caseId": ..., '
    '"guidanceReport": {{...}}}}). Print the JSON object and nothing else.'
)
PROTOCOL = (  # the api agent's system message
    "You are giving development guidance for Business Central AL work, in an evaluation. The tools read two "
    "folders: workspace/ is the repository the request is about, and knowledge/ is a read-only copy of the "
    "knowledge checkout at commit {head} (knowledge/{index} lists every article). You can read, never change. "
    "Follow the request's protocol and skillInstructions and answer with one JSON object shaped like its "
    'resultSchema ({{"caseId": ..., "guidanceReport": {{...}}}}). The final message is that JSON object and '
    "nothing else."
)

SHARED = ("protocol", "skill", "skillInstructions", "knowledgeRoot", "knowledgeIndex")  # every case's, in requests


class GuidanceShape(Shape):
    """The guidance question shape of the live kinds: GuidanceCaseInput -> result document or NoReport."""

    in_case_view = False
    checks_command = True
    tools = READ_TOOLS

    def __init__(self, manifest: GuidanceManifest, run_dir: Path, hidden: Mapping[str, Path]) -> None:
        self.hidden = {"the knowledge checkout": manifest.root, "the run directory": run_dir, **hidden}
        self.manifest = manifest
        self.run_dir = run_dir
        self._view: Path | None = None
        self._head: str | None = None
        self._evidence: dict[str, dict[str, Any]] = {}  # per case: what the api agent's tools returned

    def view(self) -> Path:
        """A read-only copy of the checkout's `<layer>/skills` and `<layer>/knowledge` plus the knowledge index,
        made at the first question."""
        if self._view is None:
            sweep_stale_folders()  # what killed runs left in the temp dir
            self._head = run_git(self.manifest.root, "rev-parse", "--verify", "HEAD")
            view = temp_folder("knowledge")
            for layer in LAYERS:
                for folder in VIEW_FOLDERS:
                    source = self.manifest.root / layer / folder
                    if source.is_dir():
                        shutil.copytree(source, view / layer / folder, symlinks=False)
            shutil.copyfile(GuidanceRunDir(self.run_dir).prepared.knowledge_index, view / KNOWLEDGE_INDEX)
            for path in sorted(view.rglob("*"), reverse=True):  # files and the deepest folders first
                path.chmod(0o444 if path.is_file() else 0o555)
            view.chmod(0o555)
            self._view = view
        return self._view

    def close(self) -> None:
        if self._view is not None:
            release(self._view)
        self._view = None

    def described(self, agent: Any, described: dict[str, Any]) -> dict[str, Any]:
        return {**described, "isolation": "knowledge view"}

    def read_evidence(self) -> dict[str, dict[str, Any]]:
        return dict(self._evidence)

    def _request(self, case: GuidanceCaseInput, root: str) -> dict[str, Any]:
        """The case's request, its knowledge at `root`: the view, never the checkout with its expectations."""
        return {**case.request(), "knowledgeRoot": root, "knowledgeIndex": f"{root}/{KNOWLEDGE_INDEX}"}

    def by_process(self, agent: Any, case: GuidanceCaseInput) -> dict[str, Any] | NoReport:
        view = self.view()
        text = dumps(self._request(case, str(view)))
        prompt = f"{CONTRACT.format(head=self._head)}\n\n=== request {case.request_path.name} ===\n{text}"
        # the runner's environment, already without git-redirecting variables (runner.run_guidance)
        env = scrubbed_environment(case.environment, list(self.hidden.values()), case.workspace)
        stdin = b"" if agent.reads_request_file else prompt.encode("utf-8")
        scratch = temp_folder("request")  # {request}: a copy outside every root
        try:
            request_file = scratch / case.request_path.name
            request_file.write_text(text, encoding="utf-8")

            def attempt(number: int, waited: float) -> Any:
                argv = agent.command_line(request_file, case.workspace)
                argv = agent.sandboxed(argv, case.workspace, [case.workspace, view, scratch], env)
                record = {"attempt": number, "waitedSeconds": round(waited, 3), "argv": argv}
                return agent.run(argv, case.workspace, env, stdin, record)

            answer, attempts, usage = agent.ask(attempt, lambda output: _answer_of(output, case.case_id))
        finally:
            release(scratch)
        record = {
            "promptSha256": None if agent.reads_request_file else write_prompt(self.run_dir, prompt),
            "attempts": [attempt.record for attempt in attempts],
        }
        return self._finish(agent, case, answer, attempts, usage, record)

    def by_endpoint(self, agent: Any, case: GuidanceCaseInput) -> dict[str, Any] | NoReport:
        view = self.view()
        # the tools' paths; what every case shares first, and no file name naming the case (agents.api.shared_first)
        user = f"=== request ===\n{dumps(shared_first(self._request(case, 'knowledge'), SHARED))}"
        system = PROTOCOL.format(head=self._head, index=KNOWLEDGE_INDEX)

        def attempt(number: int, waited: float) -> _Attempt:
            box = ToolBox({"workspace": case.workspace, "knowledge": view}, agent.tools)
            return agent.attempt(system, user, box, None, number, waited)

        answer, attempts, usage = agent.ask(attempt, lambda text: _answer_of(agent.endpoint.scrub(text), case.case_id))
        record = {
            "model": agent.model,
            "servedModel": agent.endpoint.served_model,
            "tools": [tool.name for tool in agent.tools],
            "toolsVersion": TOOLS_VERSION,
            **agent.attempts_record(attempts, user, self.run_dir.name),
        }
        record = agent.endpoint.scrub(record)
        self._evidence[case.case_id] = {"readBy": record["readBy"], "readEvidence": record["readEvidence"]}
        return self._finish(agent, case, answer, attempts, usage, record)

    def _finish(
        self, agent: Any, case: GuidanceCaseInput, answer: Any, attempts: list[_Attempt], usage: Usage, record: dict
    ) -> dict[str, Any] | NoReport:
        """Write the case's transcript (`record`: what the kind of agent adds); the answer, else why there is none."""
        failure = None if answer is not None else (attempts[-1].failure or ("no-answer",))[0]
        outcome = "answered" if failure is None else f"failed: {failure}"
        record = {"case": case.case_id, "workspace": str(case.workspace), **record, "outcome": outcome}
        write_transcript(self.run_dir, case.case_id, self.run_dir.name, agent.describe(), record, usage)
        return answer if failure is None else NoReport(failure)


def _answer_of(output: str, case_id: str) -> dict[str, Any] | Unreadable:
    """The envelope's guidance report, or the object itself when it is one; the agent's case id only when it
    gave a string."""
    document = extract_json_object(output)
    if not isinstance(document, dict):
        return Unreadable("output holds no guidance report")
    report = document.get("guidanceReport")
    if not isinstance(report, dict):
        if "skill" not in document or "outcome" not in document:
            return Unreadable("output holds no guidance report")
        report = document
    answer_id = document.get("caseId", case_id)
    return {"caseId": answer_id if isinstance(answer_id, str) else case_id, "guidanceReport": report}


@dataclass(frozen=True)
class GuidanceSetup:
    """What an agent answering guidance questions is made from (bceval.agents.registry.make_agent takes it)."""

    question: ClassVar[str] = GUIDANCE
    manifest: GuidanceManifest  # the oracle answers what its cases expect
    agent: AgentSettings | None = None
    shape: Shape | None = None  # how a live agent is asked

    def unknown(self, name: str) -> BcevalError:
        return GuidanceError(f"unknown guidance adapter '{name}' (available: {', '.join(agent_names(GUIDANCE))})")

    def missing_command(self, name: str) -> BcevalError:
        return GuidanceError("the command adapter needs --command (the agent command line)")
