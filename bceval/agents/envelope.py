"""What an agent command printed: plain text, or a Claude Code `json` / `stream-json` result envelope, its answer,
cost, the model that served it and the trace of its Read calls. An envelope's `is_error: true` or a `subtype` other
than `success` is a failure ("not logged in" is `success` with is_error)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from typing import Any

from bceval.escape import console
from bceval.jsonio import parse_json_text
from bceval.usage import Usage, known_number

TRACE_CAP = 1000  # Read calls kept of one answer: a trace is the agent's account, not a log to keep in full
CAUSE_CHARS = 200  # of an agent's own words kept in a one-line failure
READ = "read"  # the status of a Read call whose result arrived without error: the only kind that counts as a read


@dataclass(frozen=True)
class AgentOutput:
    """The text to take the answer from (None on failure), why it failed, what it cost, and its format."""

    text: str | None
    failure: tuple[str, str, str | None] | None  # (kind, detail, agent subtype)
    usage: Usage
    format: str  # "plain", "json" or "stream-json"
    model: str | None = None  # the model the envelope says answered (what a price table is looked up by first)
    trace: tuple[dict[str, Any], ...] = ()  # the Read tool calls a stream-json envelope shows: the agent's own claims
    served: str | None = None  # the model the stream's assistant messages name: the one that served the answer


def _is_envelope(value: Any) -> bool:
    """An object with a `type` and no `cases`: an agent's envelope, never an answer object itself."""
    return isinstance(value, dict) and "type" in value and "cases" not in value


def _usage(envelope: dict[str, Any]) -> Usage:
    tokens = envelope.get("usage") if isinstance(envelope.get("usage"), dict) else {}
    duration = known_number(envelope.get("duration_ms"))
    turns = known_number(envelope.get("num_turns"))
    return Usage(
        agentSeconds=duration / 1000 if duration is not None else None,
        costUsd=known_number(envelope.get("total_cost_usd")),
        inputTokens=known_number(tokens.get("input_tokens")),
        outputTokens=known_number(tokens.get("output_tokens")),
        cacheCreationTokens=known_number(tokens.get("cache_creation_input_tokens")),
        cacheReadTokens=known_number(tokens.get("cache_read_input_tokens")),
        turns=int(turns) if turns is not None else None,
    )


def _reported_model(envelope: dict[str, Any], init: Any = None) -> str | None:
    """The model an envelope names: the stream's `init` line's `model`, else the one key of `modelUsage` (an
    answer that used several models names none: their tokens cannot be told apart)."""
    if isinstance(init, dict) and init.get("type") == "system" and isinstance(init.get("model"), str) and init["model"]:
        return init["model"]
    used = envelope.get("modelUsage")
    if isinstance(used, dict) and len(used) == 1:
        (name,) = used
        return name if isinstance(name, str) and name else None
    return None


def _from_result(envelope: dict[str, Any], form: str, init: Any = None) -> AgentOutput:
    if envelope.get("type") != "result":
        detail = f"{form} output ends in an object of type {str(envelope.get('type'))[:40]!r}, not a result"
        return AgentOutput(None, ("invalid-output", detail, None), Usage(), form)
    usage = _usage(envelope)
    model = _reported_model(envelope, init)
    subtype = envelope.get("subtype") if isinstance(envelope.get("subtype"), str) else None
    if envelope.get("is_error") is True or subtype != "success":
        name = (subtype or "unknown")[:60]
        status = envelope.get("api_error_status")
        extra = f", API status {status}" if isinstance(status, int) and not isinstance(status, bool) else ""
        flag = ", is_error" if envelope.get("is_error") is True else ""
        detail = f"the agent reported an error ({name}{flag}{extra})"
        said = last_line(envelope.get("result")) if isinstance(envelope.get("result"), str) else ""
        detail += f": {said}" if said else ""
        return AgentOutput(None, ("agent-error", detail, name), usage, form, model)
    if not isinstance(envelope.get("result"), str):
        return AgentOutput(None, ("invalid-output", f"{form} result has no 'result' text", None), usage, form, model)
    return AgentOutput(envelope["result"], None, usage, form, model)


def read_agent_output(stdout: str) -> AgentOutput:
    """Recognise a Claude Code `json` or `stream-json` envelope; anything else is plain output."""
    stripped = stdout.strip()
    whole = parse_json_text(stripped) if stripped.startswith("{") else None
    if _is_envelope(whole):
        return _from_result(whole, "json")
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].startswith("{") and lines[-1].startswith("{"):
        first, last = parse_json_text(lines[0]), parse_json_text(lines[-1])
        if _is_envelope(first) and first.get("type") == "thread.started":
            return codex_output(_events(lines))
        if _is_envelope(first) and (last is None or _is_envelope(last)):
            if last is None:
                broken = ("invalid-output", "stream-json output ends in a broken line", None)
                return AgentOutput(None, broken, Usage(), "stream-json")
            events = _events(lines[1:-1])
            output = _from_result(last, "stream-json", first)
            served = served_model(events)  # priced by the model that served it, where the stream names it
            trace = read_calls(events, last.get("permission_denials"))
            return replace(output, model=served or output.model, served=served, trace=trace)
    return AgentOutput(stdout, None, Usage(), "plain")


def _events(lines: list[str]) -> list[dict[str, Any]]:
    events = (parse_json_text(line) if line.startswith("{") else None for line in lines)
    return [event for event in events if isinstance(event, dict)]


def served_model(events: list[dict[str, Any]]) -> str | None:
    """The model the last assistant message of a Claude Code stream names: the one that served it (the init line and
    `modelUsage` name the one asked for)."""
    for event in reversed(events):
        message = event.get("message") if event.get("type") == "assistant" else None
        name = message.get("model") if isinstance(message, dict) else None
        if isinstance(name, str) and name and name != "<synthetic>":  # Claude Code's own error messages
            return name[:200]
    return None


def _blocks(event: dict[str, Any], role: str) -> list[dict[str, Any]]:
    """The content blocks of a stream's `assistant` or `user` message event."""
    message = event.get("message") if event.get("type") == role else None
    content = message.get("content") if isinstance(message, dict) else None
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def read_calls(events: list[dict[str, Any]], denials: Any = None) -> tuple[dict[str, Any], ...]:
    """The Read tool calls a Claude Code stream shows, as `{path, offset?, limit?, status}`: the agent's own account,
    never read evidence. `status` is "read" only when the call's tool_result arrived without error and the envelope's
    `permission_denials` does not name it; else "refused" (denied), "failed" (an error result) or "no-result"."""
    denied = {item.get("tool_use_id") for item in denials or [] if isinstance(item, dict)}
    results: dict[str, str] = {}  # tool_use_id -> how its result came back
    for event in events:
        for block in _blocks(event, "user"):
            if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                error = block.get("is_error") is True
                said = str(block.get("content"))[:1000].lower()
                refused = error and ("permission" in said or "not enabled" in said)  # denied, or a disabled tool
                results[block["tool_use_id"]] = "refused" if refused else "failed" if error else READ
    calls: list[dict[str, Any]] = []
    for event in events:
        for block in _blocks(event, "assistant"):
            if block.get("type") != "tool_use" or block.get("name") != "Read":
                continue
            given = block.get("input") if isinstance(block.get("input"), dict) else {}
            path = given.get("file_path")
            if isinstance(path, str) and path and len(calls) < TRACE_CAP:
                call: dict[str, Any] = {"path": path[:4096]}
                for key in ("offset", "limit"):
                    if known_number(given.get(key)) is not None:
                        call[key] = given[key]
                use = block.get("id")
                call["status"] = "refused" if use in denied else results.get(use, "no-result")
                calls.append(call)
    return tuple(calls)


def last_line(text: str) -> str:
    """The last line of an agent's words that names an error (a stack trace after it says less), else its last
    line; cut and made inert for one line of bceval's."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return console((errors or lines)[-1][:CAUSE_CHARS]) if lines else ""


def agent_retries(stdout: str) -> dict[str, Any] | None:
    """The retries of its model calls an agent's stream reports (Claude Code's `api_retry` events, Codex's
    "Reconnecting..." errors): how many, and the seconds it waited before them; None when it reports none."""
    count, waited = 0, 0.0
    for line in stdout.splitlines():
        if '"api_retry"' not in line and '"Reconnecting' not in line:
            continue
        event = parse_json_text(line.strip())
        if not isinstance(event, dict):
            continue
        if event.get("type") == "system" and event.get("subtype") == "api_retry":
            count += 1
            waited += (known_number(event.get("retry_delay_ms")) or 0) / 1000
        elif event.get("type") == "error" and str(event.get("message")).startswith("Reconnecting"):
            count += 1
    return {"count": count, "waitSeconds": round(waited, 3)} if count else None


# --- Codex: `codex exec --json` events ------------------------------------------------------------------------------

READERS = {"cat", "head", "tail", "sed", "nl", "less", "more", "bat", "awk", "grep", "rg"}  # what shows a file's text


def codex_output(events: list[dict[str, Any]]) -> AgentOutput:
    """What a Codex `--json` event stream says: the last agent message is the answer; `turn.completed` gives the
    tokens, `turn.failed` (or no end at all) is a failure; its command executions that print a file are its reads."""
    items = [e["item"] for e in events if e.get("type") == "item.completed" and isinstance(e.get("item"), dict)]
    done = {item.get("id") for item in items}
    started = [e["item"] for e in events if e.get("type") == "item.started" and isinstance(e.get("item"), dict)]
    items += [{**item, "status": "no-result"} for item in started if item.get("id") not in done]  # never finished
    ends = [e for e in events if e.get("type") in ("turn.completed", "turn.failed")]
    usage = Usage(turns=sum(e["type"] == "turn.completed" for e in ends) or None)
    for end in ends:
        tokens = end.get("usage") if isinstance(end.get("usage"), dict) else {}
        usage = usage.plus(
            Usage(
                inputTokens=known_number(tokens.get("input_tokens")),
                outputTokens=known_number(tokens.get("output_tokens")),
                cacheReadTokens=known_number(tokens.get("cached_input_tokens")),
            )
        )
    trace = tuple(call for item in items if item.get("type") == "command_execution" for call in _codex_reads(item))
    messages = [
        item["text"] for item in items if item.get("type") == "agent_message" and isinstance(item.get("text"), str)
    ]
    if not ends or ends[-1]["type"] == "turn.failed":
        error = ends[-1].get("error") if ends else None
        said = last_line(str(error.get("message", ""))) if isinstance(error, dict) else ""
        detail = f"the agent reported an error (turn.failed): {said}" if ends else "codex output has no turn.completed"
        failure = ("agent-error", detail, "turn.failed") if ends else ("invalid-output", detail, None)
        return AgentOutput(None, failure, usage, "codex-json", trace=trace)
    if not messages:
        return AgentOutput(None, ("invalid-output", "codex output has no agent message", None), usage, "codex-json")
    return AgentOutput(messages[-1], None, usage, "codex-json", trace=trace)


def _codex_reads(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The files a command execution printed (`cat`, `sed -n`, `head` ... of a path), each as a Read call: "read"
    when the command exited 0, else "failed" ("refused" when its output says it was denied)."""
    command = item.get("command")
    try:
        words = shlex.split(command) if isinstance(command, str) else []
        if len(words) == 3 and words[1] in ("-lc", "-c"):  # a shell running a script: read the script
            words = shlex.split(words[2])
    except ValueError:
        return []
    if item.get("status") == "no-result":  # Codex reported its start only (its end went missing)
        status = "no-result"
    elif item.get("exit_code") == 0 and item.get("status") == "completed":
        status = READ
    else:
        status = "refused" if "denied" in str(item.get("aggregated_output"))[:2000].lower() else "failed"
    calls, program = [], None
    for word in words:
        if word in ("&&", "||", ";", "|"):
            program = None
        elif program is None:
            program = word.rsplit("/", 1)[-1]
        elif program in READERS and not word.startswith("-") and "." in word and len(calls) < TRACE_CAP:
            calls.append({"path": word[:4096], "status": status})
    return calls
