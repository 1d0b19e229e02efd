"""The review question as the live kinds are asked it: the case's agent view (bceval.agents.view), the prompts,
the answer cache, how an answer is read and what its record keeps.

A command agent runs in the view, materialized for each attempt, with the prompt on stdin; the api agent's
read-only tools read the view held in memory. Answers are cached by the kind's `cache_key` (what the agent could
see and how it was asked), so a killed or repeated run never pays twice; failures are never cached.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bceval.agents.api_tools import READ_TOOLS, TOOLS_VERSION, MemoryFolder, ToolBox
from bceval.agents.base import Answer, CaseInput
from bceval.agents.envelope import READ
from bceval.agents.process import Unreadable, _Attempt, extract_json_object
from bceval.agents.registry import Shape
from bceval.agents.retrieval import BOUNDED_TOOLS, bounded_folder
from bceval.agents.view import View, build_view, materialize, release, scrubbed_environment
from bceval.clock import generated_at
from bceval.errors import BcevalError
from bceval.evaluators.review.entries import ResultEntry, answered_cases, stored_case
from bceval.jsonio import dumps, parse_json, read_regular_bytes, write_atomic
from bceval.layout import cached_answer
from bceval.models import InfraFailure
from bceval.usage import Usage

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
PROTOCOL = (  # the api agent's system message, before the leaf's instructions
    "You are a code reviewer in an evaluation of Business Central AL review guidance. The user message holds a "
    "review request (JSON) and the AL file under review. Follow the leaf skill's instructions below. The request's "
    "candidateArticles are the only findings you may report; their full text is in the files you can read with "
    "the tools (read_file with the candidate's path). Read an article before you cite it. When you are done, "
    "answer with one JSON object shaped like the request's resultSchema: the case id from the request and the "
    "finding ids copied verbatim from candidateArticles[].path (an empty findings array when nothing applies). "
    "The final message is that JSON object and nothing else.\n\n=== leaf skill instructions ===\n"
)
BOUNDED_PROTOCOL = (  # --knowledge bounded: the request holds no candidates; the agent finds and reads them
    "You are a code reviewer in an evaluation of Business Central AL review guidance. The user message holds a "
    "review request (JSON) and the AL file under review. Follow the leaf skill's instructions below. The knowledge "
    "articles are not in the request: find those of the request's knowledgeDomain with search_knowledge and read "
    "the full text of every one you cite with get_articles. When you are done, answer with one JSON object shaped "
    "like the request's resultSchema: the case id from the request and the finding ids copied verbatim from the "
    "catalog rows' paths (an empty findings array when nothing applies). The final message is that JSON object and "
    "nothing else.\n\n=== leaf skill instructions ===\n"
)


def _object(**properties: Any) -> dict[str, Any]:
    """A JSON Schema object that has exactly these properties."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


_STRING = {"type": "string"}
_FINDINGS = {"type": "array", "items": _object(id=_STRING)}
RESULT_SCHEMA = _object(cases={"type": "array", "items": _object(id=_STRING, findings=_FINDINGS)})  # response_format
TRACE_KEYS = ("readBy", "agentTrace", "candidates")


def review_prompt(view: View, isolated: bool) -> str:
    """The text a command agent gets on its standard input for the case of `view` (`bceval prompt` shows it)."""
    note = f"{VIEW_NOTE}\n\n" if isolated else ""
    return f"{CONTRACT}\n\n{note}{user_message(view)}"


def user_message(view: View) -> str:
    """A command agent's: the request file, named, then the case file."""
    request = f"=== request {view.request_name} ===\n{view.text(view.request_name)}"
    return f"{request}\n=== file {view.case_name} ===\n{view.text(view.case_name)}"


def endpoint_message(view: View, bounded: bool) -> str:
    """The api agent's: what a leaf's cases share first, the case last, in the same bytes every time, so a provider's
    prompt cache holds everything before the case. The request's members already come in that order (its `cases`
    last); its file name, which names the case, is left out of the header."""
    request = view.text(view.request_name)
    if bounded:  # the candidates are left for the tools to find, with the domain they are searched in
        shown = json.loads(request)
        del shown["candidateArticles"], shown["protocol"]  # the protocol names them; BOUNDED_PROTOCOL replaces it
        domain = shown["skill"].rsplit("/", 1)[-1].removeprefix("al-").removesuffix("-review.md")
        request = dumps({"knowledgeDomain": domain, **shown})
    return f"=== request ===\n{request}\n=== file {view.case_name} ===\n{view.text(view.case_name)}"


class ReviewShape(Shape):
    """The review question shape of the live kinds: CaseInput -> Answer."""

    in_case_view = True
    checks_command = True
    tools = READ_TOOLS
    bounded = True  # takes --knowledge bounded: the api agent finds the candidates with BOUNDED_TOOLS

    def __init__(self, cache_dir: Path, hidden: Mapping[str, Path]) -> None:
        self.cache_dir = cache_dir
        self.hidden = dict(hidden)

    def in_cache(self, agent: Any, case: CaseInput) -> bool:
        view = build_view(case.request_path.parent, case.corpus, case.model_id)
        return self._cached(agent.cache_key(view, case)) is not None

    # --- a command agent ---------------------------------------------------------------------------------------

    def by_process(self, agent: Any, case: CaseInput) -> Answer:
        view = build_view(case.request_path.parent, case.corpus, case.model_id)
        key = agent.cache_key(view, case)
        settings = agent.agent
        base = {
            "case": case.model_id,
            "epoch": settings.epoch,
            "command": settings.command,
            "model": agent.model,
            "pinned": agent.pinned,
            "isolation": settings.isolation,
            "sandbox": settings.sandbox,
            "sandboxAllow": [str(path) for path in settings.sandbox_allow],
            **(
                {"sandboxAllowRw": [str(path) for path in settings.sandbox_allow_rw]}
                if settings.sandbox_allow_rw
                else {}
            ),
            **({"sandboxNetwork": settings.sandbox_network} if settings.sandbox == "bwrap" else {}),
            "view": {"sha256": view.digest, "files": view.manifest()},
            "cacheKey": key,
        }
        # the prompt depends on the view and the isolation only, so a cached answer's prompt is this one too
        sent = "" if agent.reads_request_file else review_prompt(view, settings.isolation == "view")
        prompts = (sent,) if sent else ()
        cached = self._answer_from_cache(agent, key, base, view, prompts, TRACE_KEYS)
        if cached is not None:
            return cached
        entries, attempts, usage = agent.ask(
            lambda number, waited: self._attempt(agent, case, view, number, waited), _entries
        )
        record = {**base, "cached": False, "attempts": [a.record for a in attempts]}
        if entries is not None:
            record.update(agent_trace(attempts[-1].record, view))
        return self._answered(agent, case, (entries, attempts, usage), record, key, view, prompts)

    def _attempt(self, agent: Any, case: CaseInput, view: View, number: int, waited: float) -> _Attempt:
        isolated = agent.agent.isolation == "view"
        root = materialize(view) if isolated else None  # tracked until released: an interrupt removes it
        try:
            workdir = root if root is not None else Path.cwd()
            request_path = (root / view.request_name) if root is not None else case.request_path
            argv = agent.command_line(request_path, workdir)
            prompt = b"" if agent.reads_request_file else review_prompt(view, isolated).encode("utf-8")
            hidden = list(self.hidden.values())
            env = scrubbed_environment(agent.environ, hidden, workdir) if isolated else dict(agent.environ)
            argv = agent.sandboxed(argv, workdir, [workdir], env)
            record: dict[str, Any] = {
                "attempt": number,
                "waitedSeconds": round(waited, 3),
                "promptSha256": hashlib.sha256(prompt).hexdigest(),
                "argv": argv,
                "workdir": str(workdir),
            }
            return agent.run(argv, workdir if isolated else None, env, prompt, record)
        finally:
            if root is not None:
                release(root)

    # --- the api agent -----------------------------------------------------------------------------------------

    def by_endpoint(self, agent: Any, case: CaseInput) -> Answer:
        view = build_view(case.request_path.parent, case.corpus, case.model_id)
        key = agent.cache_key(view, case)
        request = json.loads(view.text(view.request_name))
        bounded = agent.agent.endpoint is not None and agent.agent.endpoint.knowledge == "bounded"
        tools = BOUNDED_TOOLS if bounded else agent.tools
        base = {
            "case": case.model_id,
            "epoch": agent.agent.epoch,
            "model": agent.model,
            "endpoint": agent.agent.endpoint.identity() if agent.agent.endpoint else None,
            "tools": [tool.name for tool in tools],
            "toolsVersion": TOOLS_VERSION,
            "view": {"sha256": view.digest, "files": view.manifest()},
            "cacheKey": key,
            "candidates": [row["path"] for row in request.get("candidateArticles", [])],
        }
        cached = self._answer_from_cache(agent, key, base, view, (), None)
        if cached is not None:
            return cached
        user = endpoint_message(view, bounded)
        system = (BOUNDED_PROTOCOL if bounded else PROTOCOL) + str(request.get("leafInstructions", ""))
        files = {item.path: item.data for item in view.files}
        if bounded:  # the candidates' prepared index beside their bodies: what search_knowledge and get_articles read
            files = bounded_folder(files, request["candidateArticles"], generated_at())

        def attempt(number: int, waited: float) -> _Attempt:  # the tools read the view held in memory
            box = ToolBox(MemoryFolder(files), tools)
            return agent.attempt(system, user, box, RESULT_SCHEMA, number, waited)

        entries, attempts, usage = agent.ask(attempt, lambda text: _entries(agent.endpoint.scrub(text)))
        served = agent.endpoint.served_model
        record = {**base, "cached": False, "servedModel": served, **agent.attempts_record(attempts, user, None)}
        return self._answered(agent, case, (entries, attempts, usage), agent.endpoint.scrub(record), key, view, ())

    # --- shared --------------------------------------------------------------------------------------------------

    def _answered(
        self,
        agent: Any,
        case: CaseInput,
        asked: tuple[list[ResultEntry] | None, list[_Attempt], Usage],
        record: dict[str, Any],
        key: str,
        view: View,
        prompts: tuple[str, ...],
    ) -> Answer:
        """The answer of fresh attempts (stored in the cache), or the infrastructure failure of the last one."""
        entries, attempts, usage = asked
        if entries is not None:
            record["outcome"] = "answered"
            stored = {
                "command": agent.agent.command,
                "model": agent.model,
                "cases": [entry.model_dump() for entry in entries],
                "usage": usage.as_record(),
                "transcript": record,
                **({"paidBy": agent.agent.paid_by} if agent.agent.paid_by else {}),
            }
            write_atomic(cached_answer(self.cache_dir, key), dumps(stored))
            return Answer(entries, None, usage, record, False, view.digest, prompts)
        kind, detail, subtype = attempts[-1].failure or ("agent-error", "no answer", None)
        failure = InfraFailure(id=case.model_id, kind=kind, detail=detail, attempts=len(attempts), subtype=subtype)
        record["outcome"] = f"failed: {kind}"
        return Answer(None, failure, usage, record, False, view.digest, prompts)

    def _answer_from_cache(
        self,
        agent: Any,
        key: str,
        base: dict[str, Any],
        view: View,
        prompts: tuple[str, ...],
        kept: tuple[str, ...] | None,
    ) -> Answer | None:
        """The cached answer under `key`, its record the base and what the stored one kept (`kept`: its attempts
        and these fields; None: every field the base does not hold). An answer this run paid for itself (a killed
        run resumed) is its own, cost included; only one an earlier, finished attempt of another run paid for is
        "cached"."""
        found = self._cached(key)
        if found is None:
            return None
        entries, usage, stored, payer = found
        mine = bool(agent.agent.paid_by) and payer == agent.agent.paid_by
        if kept is None:
            record = {**base, **{k: v for k, v in stored.items() if k not in base}, "cached": not mine}
            record["outcome"] = "answered"
        else:
            record = {**base, "cached": not mine, "attempts": stored.get("attempts", []), "outcome": "answered"}
            record.update({name: stored[name] for name in kept if name in stored})
        if not mine and payer:
            record["paidBy"] = payer
        return Answer(entries, None, usage, record, not mine, view.digest, prompts)

    def _cached(self, key: str) -> tuple[list[ResultEntry], Usage, dict[str, Any], str] | None:
        path = cached_answer(self.cache_dir, key)
        try:
            stored = json.loads(read_regular_bytes(path))
            entries = [stored_case(entry) for entry in stored["cases"]]
        except (OSError, ValueError, KeyError, TypeError, BcevalError):
            return None  # absent, or not ours: answer again
        payer = stored.get("paidBy")
        return entries, Usage.from_record(stored.get("usage")), stored.get("transcript") or {}, str(payer or "")


def agent_trace(attempt: dict[str, Any], view: View) -> dict[str, Any]:
    """The answering attempt's Read calls (a Claude Code stream-json envelope's), as the answer record keeps them:
    `readBy: "agent-trace"`, the paths relative to the agent's folder where they are inside it, and the case's
    candidate articles. The agent's own account of what it asked to read: bceval never saw what it got, so this is
    never read evidence (`--require-read` does not take it). Nothing for an answer without such calls."""
    calls = attempt.get("agentTrace")
    if not calls:
        return {}
    workdir = Path(str(attempt.get("workdir", "")))
    reads, refused = [], []
    for call in calls:
        path = Path(call["path"])
        if path.is_absolute() and path.is_relative_to(workdir):
            path = path.relative_to(workdir)
        # only a read whose result arrived is one; a refused or failed one is kept apart, never scored as opened
        (reads if call.get("status", READ) == READ else refused).append({**call, "path": path.as_posix()})
    try:
        rows = json.loads(view.text(view.request_name)).get("candidateArticles") or []
    except (ValueError, AttributeError):
        rows = []
    candidates = [row["path"] for row in rows if isinstance(row, dict) and isinstance(row.get("path"), str)]
    trace = {"source": "agent-trace", "reads": reads, **({"notRead": refused} if refused else {})}
    return {"readBy": "agent-trace", "agentTrace": trace, "candidates": candidates}


def _entries(text: str) -> list[ResultEntry] | Unreadable:
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
