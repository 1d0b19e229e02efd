"""The api agent's tools: confined to their folders (no `..`, no absolute path, no link), read evidence that
says what was returned in full, extensible by a caller; the adaptive limit and Retry-After; and the identity
rules that keep every existing cache key and run record as they were."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from bceval.agents.api import AdaptiveLimit, retry_after
from bceval.agents.api_tools import READ_TOOLS, Tool, ToolBox, ToolError
from bceval.agents.settings import AgentSettings, EndpointSettings
from bceval.prices import Price, price_table
from bceval.runs.identity import asking, question


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "view"
    (root / "microsoft" / "knowledge").mkdir(parents=True)
    (root / "microsoft" / "knowledge" / "a.md").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    (root / "case.al").write_text("codeunit 50100 X { }\n")
    (tmp_path / "secret.json").write_text('{"answer": 42}')
    os.symlink(tmp_path / "secret.json", root / "link.json")
    os.symlink(tmp_path, root / "up")
    return root


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../secret.json", "leaves the folder"),
        ("microsoft/../../secret.json", "leaves the folder"),
        ("/etc/passwd", "is absolute"),
        ("C:/Windows/win.ini", "is absolute"),
        ("~/.ssh/id_rsa", "is absolute"),
        ("link.json", "goes through a link"),
        ("up/secret.json", "goes through a link"),
        ("nothing.md", "does not exist"),
        ("", "non-empty string"),
        (7, "non-empty string"),
    ],
)
def test_a_path_that_leaves_the_folder_is_a_tool_error_the_model_sees_and_it_is_recorded(folder, path, message):
    box = ToolBox(folder)
    text, error = box.call("read_file", json.dumps({"path": path}))
    assert error and text.startswith("error: ") and message in text
    assert "42" not in text
    assert box.refusals == [box.calls[0]] and message in box.calls[0]["error"]
    assert box.reads() == []


def test_list_files_shows_regular_files_only_and_search_finds_lines(folder):
    box = ToolBox(folder)
    text, error = box.call("list_files", "{}")
    assert not error and text.splitlines() == ["case.al", "microsoft/knowledge/a.md"]  # links are not followed
    text, error = box.call("search", json.dumps({"pattern": "LINE 1"}))
    assert text.splitlines() == ["microsoft/knowledge/a.md:1: line 1", "microsoft/knowledge/a.md:10: line 10"]
    assert box.call("search", json.dumps({"pattern": ""}))[1] is True


def test_a_read_is_complete_once_every_line_was_returned_across_offsets(folder):
    box = ToolBox(folder)
    data = (folder / "microsoft" / "knowledge" / "a.md").read_bytes()
    text, _ = box.call("read_file", json.dumps({"path": "microsoft/knowledge/a.md", "limit": 4}))
    assert text.splitlines()[-1] == "[lines 1-4 of 10; read on with offset 5]"
    evidence = {"path": "microsoft/knowledge/a.md", "complete": False, "bytes": len(data)}
    evidence["sha256"] = hashlib.sha256(data).hexdigest()
    assert box.reads() == [evidence]
    box.call("read_file", json.dumps({"path": "microsoft/knowledge/a.md", "offset": 7}))
    assert box.reads()[0]["complete"] is False  # lines 5 and 6 were never returned
    text, _ = box.call("read_file", json.dumps({"path": "./microsoft/knowledge/a.md", "offset": 5, "limit": 2}))
    assert box.reads() == [{**evidence, "complete": True}]
    assert box.call("read_file", json.dumps({"path": "case.al", "offset": 0}))[1] is True


def test_named_roots_and_tools_a_caller_adds(tmp_path, folder):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "app.al").write_text("x\n")
    written = []

    def write_file(box: ToolBox, arguments: dict) -> str:
        name, path = box.resolve(arguments.get("path"))
        written.append((name, path))
        return "ok"

    tool = Tool("write_file", "test tool", {"type": "object"}, write_file)
    box = ToolBox({"workspace": workspace, "knowledge": folder}, (*READ_TOOLS, tool))
    assert [spec["function"]["name"] for spec in box.specs()] == ["list_files", "read_file", "search", "write_file"]
    assert "workspace/app.al" in box.call("list_files", "{}")[0].splitlines()
    assert box.call("read_file", json.dumps({"path": "knowledge/case.al"}))[1] is False
    assert "paths start with one of workspace/, knowledge/" in box.call("read_file", '{"path": "app.al"}')[0]
    assert box.call("write_file", json.dumps({"path": "workspace/app.al"})) == ("ok", False)
    assert written == [("workspace/app.al", workspace / "app.al")]
    assert box.call("write_file", json.dumps({"path": "workspace/../knowledge/case.al"}))[1] is True
    with pytest.raises(ToolError):
        box.resolve("knowledge/link.json")


def test_the_limit_halves_on_429_and_adds_one_back_after_a_run_of_successes():
    limit = AdaptiveLimit(8)
    assert [limit.rate_limited() for _ in range(4)] == [4, 2, 1, 1]
    for _ in range(1):
        limit.succeeded()
    assert limit.limit == 2
    for _ in range(2):
        limit.succeeded()
    assert limit.limit == 3 and limit.lowest == 1
    for _ in range(100):
        limit.succeeded()
    assert limit.limit == 8  # never above --jobs


def test_retry_after_reads_seconds_milliseconds_and_http_dates():
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert retry_after({"retry-after": "soon"}) is None and retry_after({}) is None and retry_after(None) is None


def test_an_existing_command_cache_key_is_the_formula_it_always_was_and_the_endpoint_is_only_the_api_kinds():
    agent = AgentSettings(command="claude -p --model {model}", model="m", epoch=3)
    asked = asking("command", agent, live=True)
    key = question(asked, "d" * 64, Path("c"), Path("r")).cache_key(2)
    old = [2, "d" * 64, "claude -p --model {model}", "m", "view", "none", [], 3]
    assert key == hashlib.sha256(json.dumps(old).encode("utf-8")).hexdigest()
    assert "endpoint" not in asked.fields()
    api = AgentSettings(command="", model="m", endpoint=EndpointSettings(base_url="http://x/v1", temperature=0.5))
    one = asking("api", api, live=True)
    assert one.fields()["endpoint"] == {
        "baseUrl": "http://x/v1",
        "temperature": 0.5,
        "maxTurns": 12,
        "maxOutputTokens": None,
        "seed": None,
    }
    other = asking(
        "api", AgentSettings(command="", model="m", endpoint=EndpointSettings(base_url="http://y/v1")), live=True
    )
    assert question(one, "d", Path("c"), Path("r")).cache_key(1) != question(
        other, "d", Path("c"), Path("r")
    ).cache_key(1)


def test_price_tables_say_unknown_for_a_model_they_do_not_name_and_refuse_bad_entries():
    table = price_table({"gpt-x": {"input": 2, "output": 8, "cached-input": 0.5}}, "pyproject.toml")
    assert table.price("gpt-x") == Price(2.0, 8.0, 0.5) and table.price("other") is None
    assert Price(2.0, 8.0, 0.5).cost(1000, 100, 400) == pytest.approx((600 * 2 + 400 * 0.5 + 100 * 8) / 1e6)
    for bad, message in [
        ({"m": {"input": 1}}, "has no 'output' price"),
        ({"m": {"input": -1, "output": 1}}, "must be a number"),
        ({"m": {"input": 1, "output": 1, "cache": 1}}, "unknown key 'cache'"),
        (["m"], "must map model names"),
    ]:
        with pytest.raises(Exception, match=message):
            price_table(bad, "prices.yaml")


def test_an_azure_base_url_sends_its_api_version_and_api_key_header(monkeypatch):
    import random

    pytest.importorskip("openai")
    from bceval.agents.api import Endpoint

    url = "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21"
    endpoint = Endpoint(
        EndpointSettings(base_url=url), "d", {"OPENAI_API_KEY": "k1"}, lambda s: None, random.Random(), 0
    )
    client = endpoint.client
    assert str(client.base_url).rstrip("/") == "https://x.openai.azure.com/openai/deployments/d"
    assert client._custom_query == {"api-version": "2024-10-21"} and client._custom_headers["api-key"] == "k1"
    plain = Endpoint(
        EndpointSettings(base_url="http://127.0.0.1:1/v1"),
        "m",
        {"OPENAI_API_KEY": "k2"},
        lambda s: None,
        random.Random(),
        0,
    )
    assert "api-key" not in plain.client._custom_headers
