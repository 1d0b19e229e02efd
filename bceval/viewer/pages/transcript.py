"""A live agent's transcript as a reader follows it, on the case pages of every kind of run."""

from __future__ import annotations

import json
from typing import Any

from bceval.layout import RunDir
from bceval.viewer.collect import read_text
from bceval.viewer.html import render

KNOWN_TRANSCRIPT = {"schemaVersion", "run", "answeredBy", "case", "attempts", "usage", "view", "outcome"}
SKIPPED = {"cached", "cacheKey"}  # said in a sentence, or not for a reader


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


def conversation(transcript: Any, prompts: RunDir) -> str:
    """A transcript as a reader follows it: per attempt the wait, the prompt, the outcome, the output and the
    agent's events; anything else it holds (turns, tool calls, read evidence of an api agent) generically."""
    if not isinstance(transcript, dict):
        return render("conversation.html", transcript=None)
    attempts = transcript.get("attempts") if isinstance(transcript.get("attempts"), list) else []
    shown = [_attempt(attempt, transcript, prompts) for attempt in attempts if isinstance(attempt, dict)]
    return render("conversation.html", transcript=transcript, attempts=shown, known=KNOWN_TRANSCRIPT | SKIPPED)


def _attempt(attempt: dict[str, Any], transcript: dict[str, Any], prompts: RunDir) -> dict[str, Any]:
    digest = attempt.get("promptSha256") or transcript.get("promptSha256")
    prompt = None
    if isinstance(digest, str):
        text = read_text(prompts.prompt(digest)) if len(digest) == 64 and digest.isalnum() else None
        prompt = (digest[:12], text)
    stdout = str(attempt.get("stdout") or "")
    return {
        "head": f"Attempt {attempt.get('attempt', '?')}: {attempt.get('outcome', '-')}",
        "fields": attempt,
        "prompt": prompt,
        "events": [(e.get("type"), e.get("subtype"), _event_text(e)[:4000]) for e in _events(stdout)],
        "stdout": stdout,
        "stderr": attempt.get("stderr") or "",
    }
