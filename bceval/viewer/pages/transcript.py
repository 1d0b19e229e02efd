"""A live agent's transcript as a reader follows it, on the case pages of every kind of run."""

from __future__ import annotations

import json
from typing import Any

from bceval.layout import RunDir
from bceval.viewer.collect import read_text
from bceval.viewer.html import definition, details, esc, pre, table

KNOWN_TRANSCRIPT = {"schemaVersion", "run", "answeredBy", "case", "attempts", "usage", "view", "outcome"}
KNOWN_ATTEMPT = {"stdout", "stderr"}


def _events(stdout: str) -> list[dict[str, Any]]:
    """The JSON events of an agent's stream output (one object a line), if it is one."""
    events = []
    for line in stdout.splitlines():
        try:
            value = json.loads(line) if line.strip().startswith("{") else None
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def _event_text(event: dict[str, Any]) -> str:
    message = event.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        parts = [part for part in message["content"] if isinstance(part, dict)]
        return " ".join(str(part.get("text") or part.get("name") or part.get("type") or "") for part in parts)
    if "result" in event:
        return str(event.get("result"))
    return json.dumps({k: v for k, v in event.items() if k not in ("type", "subtype")})[:2000]


def json_value(value: Any) -> str:
    """Any JSON value of a transcript, readable: scalars as text, the rest as indented JSON (escaped)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return esc(value)
    return pre(json.dumps(value, indent=2, ensure_ascii=False))


def _turns(items: list[Any]) -> str:
    """A list of turns or tool calls (an api agent's), each as a table of its fields."""
    out = []
    for number_, item in enumerate(items, 1):
        if isinstance(item, dict):
            out.append(
                f"<h4>#{number_} {esc(item.get('role') or item.get('type') or item.get('tool') or '')}</h4>"
                + definition((str(k), json_value(v)) for k, v in item.items())
            )
        else:
            out.append(json_value(item))
    return "".join(out)


def _as_turns(key: str, value: Any, tag: str) -> str:
    """A list of turns under a heading of its own; '' for any other value."""
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return f"<{tag}>{esc(key)}</{tag}>" + _turns(value)
    return ""


def conversation(transcript: Any, prompts: RunDir) -> str:
    """A transcript as a reader follows it: per attempt the wait, the prompt, the outcome, the output and the
    agent's events; anything else it holds (turns, tool calls, read evidence of an api agent) generically."""
    if not isinstance(transcript, dict):
        return '<p class="muted">No transcript: this answer did not come from a live agent.</p>'
    out = []
    described = transcript.get("answeredBy")
    if isinstance(described, dict):
        out.append(definition((str(k), json_value(v)) for k, v in described.items()))
    if transcript.get("cached"):
        out.append("<p>Answered from the cache: the attempts below are those of the answer that was cached.</p>")
    for key, value in transcript.items():
        if key not in KNOWN_TRANSCRIPT and key not in ("cached", "cacheKey"):
            out.append(_as_turns(key, value, "h3") or definition([(key, json_value(value))]))
    attempts = transcript.get("attempts") if isinstance(transcript.get("attempts"), list) else []
    out += [_attempt(attempt, transcript, prompts) for attempt in attempts if isinstance(attempt, dict)]
    return "".join(out)


def _attempt(attempt: dict[str, Any], transcript: dict[str, Any], prompts: RunDir) -> str:
    head = f"Attempt {attempt.get('attempt', '?')}: {attempt.get('outcome', '-')}"
    facts = [
        (str(k), json_value(v)) for k, v in attempt.items() if k not in KNOWN_ATTEMPT and not isinstance(v, list | dict)
    ]
    body = definition(facts)
    digest = attempt.get("promptSha256") or transcript.get("promptSha256")
    if isinstance(digest, str):
        text = read_text(prompts.prompt(digest)) if len(digest) == 64 and digest.isalnum() else None
        body += details(
            f"Prompt sent ({digest[:12]})",
            pre(text) if text is not None else '<p class="muted">Prompt text not stored (older run).</p>',
        )
    for key in ("argv", "usage"):
        if key in attempt:
            body += details(key, json_value(attempt[key]))
    for key, value in attempt.items():  # an api agent's turns, tool calls and reads, whatever their names
        if key not in ("argv", "usage") and isinstance(value, list | dict):
            body += _as_turns(key, value, "h4") or details(key, json_value(value))
    stdout = str(attempt.get("stdout") or "")
    events = _events(stdout)
    if events:
        rows = [[esc(e.get("type")), esc(e.get("subtype")), esc(_event_text(e)[:4000])] for e in events]
        body += "<h4>Agent events</h4>" + table(["Type", "Subtype", "Content"], rows, "events")
    body += details("stdout", pre(stdout, "stdout"), open_=not events)
    body += details("stderr", pre(attempt.get("stderr") or "", "stderr"))
    return f'<section class="attempt"><h3>{esc(head)}</h3>{body}</section>'
