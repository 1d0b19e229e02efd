"""What an agent command printed, read from recorded Claude Code stream-json transcripts: only a Read whose result
arrived without error, and that the envelope does not list as denied, counts as a read."""

from __future__ import annotations

import json
from pathlib import Path

from bceval.agents.envelope import agent_retries, read_agent_output
from bceval.evaluators.review.question import agent_trace
from bceval.evaluators.review.scoring import case_reads

WORKDIR = "/tmp/bceval-view-1"


def _use(number: int, path: str) -> dict:
    block = {"type": "tool_use", "id": f"toolu_{number}", "name": "Read", "input": {"file_path": f"{WORKDIR}/{path}"}}
    return {"type": "assistant", "message": {"model": "served-model-1", "content": [block]}}


def _result(number: int, content: str, error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": f"toolu_{number}", "content": content}
    if error:
        block["is_error"] = True
    return {"type": "user", "message": {"content": [block]}}


def transcript(*events: dict, denials: list | None = None, answer: str = '{"cases": []}') -> str:
    init = {"type": "system", "subtype": "init", "cwd": WORKDIR, "model": "requested-model", "tools": ["Read"]}
    text = {"type": "assistant", "message": {"model": "served-model-1", "content": [{"type": "text", "text": answer}]}}
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": answer,
        "permission_denials": denials or [],
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }
    return "\n".join(json.dumps(event) for event in (init, *events, text, result)) + "\n"


ARTICLES = ["knowledge/a.md", "knowledge/b.md", "knowledge/c.md", "knowledge/d.md", "knowledge/e.md"]


def recorded() -> str:
    denied = {"tool_name": "Read", "tool_use_id": "toolu_1", "tool_input": {"file_path": f"{WORKDIR}/{ARTICLES[1]}"}}
    return transcript(
        _use(0, ARTICLES[0]),
        _result(0, "     1\tthe article"),
        _use(1, ARTICLES[1]),
        _result(1, "denied", error=True),  # listed in permission_denials
        _use(2, ARTICLES[2]),
        _result(2, "File does not exist.", error=True),
        _use(3, ARTICLES[3]),
        _result(3, "Claude requested permissions to read from /x, but you haven't granted it yet.", error=True),
        _use(4, ARTICLES[4]),  # no result ever came: the stream was cut
        denials=[denied],
    )


def test_only_reads_whose_result_arrived_without_error_count():
    output = read_agent_output(recorded())
    assert output.failure is None and output.format == "stream-json"
    statuses = [(call["path"].removeprefix(WORKDIR + "/"), call["status"]) for call in output.trace]
    assert statuses == [
        (ARTICLES[0], "read"),
        (ARTICLES[1], "refused"),
        (ARTICLES[2], "failed"),
        (ARTICLES[3], "refused"),
        (ARTICLES[4], "no-result"),
    ]


class _View:
    request_name = "request.json"

    def text(self, name: str) -> str:
        return json.dumps({"candidateArticles": [{"path": path} for path in ARTICLES]})


def test_refused_and_failed_reads_are_recorded_apart_and_never_scored_as_opened():
    output = read_agent_output(recorded())
    record = agent_trace({"agentTrace": list(output.trace), "workdir": WORKDIR}, _View())  # type: ignore[arg-type]
    trace = record["agentTrace"]
    assert [read["path"] for read in trace["reads"]] == [ARTICLES[0]]
    assert [(read["path"], read["status"]) for read in trace["notRead"]] == [
        (ARTICLES[1], "refused"),
        (ARTICLES[2], "failed"),
        (ARTICLES[3], "refused"),
        (ARTICLES[4], "no-result"),
    ]
    reads = case_reads([ARTICLES[0], ARTICLES[1]], record, None)
    assert reads.source == "agent-trace" and reads.opened == [ARTICLES[0]]
    assert reads.citedWithoutCompleteRead == [ARTICLES[0], ARTICLES[1]]  # a trace never backs a citation


def test_a_model_whose_every_read_is_refused_has_zero_read_evidence():
    denials = [{"tool_name": "Read", "tool_use_id": f"toolu_{n}"} for n in range(2)]
    text = transcript(_use(0, ARTICLES[0]), _result(0, "x", True), _use(1, ARTICLES[1]), denials=denials)
    record = agent_trace({"agentTrace": list(read_agent_output(text).trace), "workdir": WORKDIR}, _View())
    assert record["agentTrace"]["reads"] == []
    assert case_reads([ARTICLES[0]], record, None).opened == []


def test_a_trace_of_older_records_without_status_still_counts_its_reads():
    record = agent_trace({"agentTrace": [{"path": f"{WORKDIR}/{ARTICLES[0]}"}], "workdir": WORKDIR}, _View())
    assert record["agentTrace"] == {"source": "agent-trace", "reads": [{"path": ARTICLES[0]}]}
    assert Path(record["agentTrace"]["reads"][0]["path"]).as_posix() == ARTICLES[0]


def test_the_served_model_is_the_one_the_streams_assistant_messages_name():
    output = read_agent_output(transcript(_use(0, ARTICLES[0]), _result(0, "x")))
    assert output.model == "served-model-1"  # not the init line's or modelUsage's requested model


def codex(*events: dict) -> str:
    return "\n".join(json.dumps(event) for event in ({"type": "thread.started", "thread_id": "t"}, *events)) + "\n"


def _command(command: str, code: int = 0, output: str = "text") -> dict:
    item = {"type": "command_execution", "command": command, "aggregated_output": output, "exit_code": code}
    return {"type": "item.completed", "item": {**item, "status": "completed" if code == 0 else "failed"}}


def test_a_codex_event_stream_gives_its_answer_tokens_turns_and_reads():
    answer = '{"cases": []}'
    text = codex(
        {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 1/5 (unexpected status 500)"},
        _command(f"/bin/bash -lc 'cat {ARTICLES[0]}'"),
        _command(f"/bin/bash -lc \"sed -n '1,200p' {ARTICLES[1]} && head -5 {ARTICLES[2]}\""),
        _command(f"cat {ARTICLES[3]}", 1, "cat: x: No such file or directory"),
        _command(f"cat {ARTICLES[4]}", 1, "cat: x: Permission denied"),
        {"type": "item.started", "item": {"id": "late", "type": "command_execution", "command": "cat late.md"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": answer}},
        {"type": "turn.completed", "usage": {"input_tokens": 900, "cached_input_tokens": 300, "output_tokens": 40}},
    )
    output = read_agent_output(text)
    assert (output.failure, output.text, output.format) == (None, answer, "codex-json")
    usage = output.usage
    assert (usage.inputTokens, usage.cacheReadTokens, usage.outputTokens, usage.turns) == (900, 300, 40, 1)
    assert [(call["path"], call["status"]) for call in output.trace] == [
        (ARTICLES[0], "read"),
        (ARTICLES[1], "read"),
        (ARTICLES[2], "read"),
        (ARTICLES[3], "failed"),
        (ARTICLES[4], "refused"),
        ("late.md", "no-result"),  # its start reported, its end never
    ]
    assert agent_retries(text) == {"count": 1, "waitSeconds": 0.0}


def test_a_failed_or_unfinished_codex_turn_is_a_failure_with_its_reason():
    failed = read_agent_output(codex({"type": "turn.failed", "error": {"message": "unexpected status 404\x1b"}}))
    assert failed.failure == (
        "agent-error",
        "the agent reported an error (turn.failed): unexpected status 404\\x1b",
        "turn.failed",
    )
    unfinished = read_agent_output(codex({"type": "turn.started"}))
    assert unfinished.failure == ("invalid-output", "codex output has no turn.completed", None)
