"""The pages of `bceval view --evaluator pr-review`: rendered from the Jinja2 templates the package ships, every value
escaped (a gold comment's body from the dataset, a finding's file path from the agent, an instance id from a
score.json that may come from anywhere)."""

from __future__ import annotations

import json
import tomllib
from fnmatch import fnmatch
from importlib.resources import files
from pathlib import Path

from agents import clean_environment
from cliutil import run_cli
from test_pr_review_run import entry, new_file_patch

from bceval.evaluators.pr_review.report import PAGES

BODY = 'Leaks <script>alert("t&k")</script> & more\x1b[31m'
PATH = 'src/<script>"a&b".al'
INSTANCE = 'inst<script>"&'


def test_bodies_paths_and_instance_ids_are_escaped_in_the_pages(tmp_path, capsys, monkeypatch):
    clean_environment(monkeypatch)
    code = ["codeunit 50100 Tokens", "{", "    procedure GetToken(): Text", "}"]
    gold = {"file": "src/Tokens.Codeunit.al", "line_start": 3, "severity": "high", "body": BODY}
    lines = [
        entry("synthetic__leak-1", new_file_patch("src/Tokens.Codeunit.al", code), [gold]),
        entry("synthetic__quiet-2", new_file_patch("src/Quiet.Table.al", ["table 1 Q", "{", "}"]), []),
    ]
    dataset = tmp_path / "codereview.jsonl"
    dataset.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "out"
    common = ("--evaluator", "pr-review", "--manifest", dataset, "--out", out, "--adapter", "oracle")
    assert run_cli(capsys, "answer", *common)[0] == 0 and run_cli(capsys, "score", *common)[0] == 0
    score_path = out / "runs" / "oracle-pr-review" / "score.json"
    score = json.loads(score_path.read_text(encoding="utf-8"))
    score["entries"][0]["findings"].append({"file": PATH, "line_start": 9, "body": "elsewhere"})
    score["entries"][1]["instance_id"] = INSTANCE  # the dataset refuses such an id; a score.json is read as it is
    score_path.write_text(json.dumps(score), encoding="utf-8")
    assert run_cli(capsys, "view", "--evaluator", "pr-review", "--out", out)[0] == 0

    site = out / "view" / "pr-review"
    leak, quiet = (site / "oracle-pr-review" / f"{e['task']}.html" for e in score["entries"])
    pages = {p: p.read_text(encoding="utf-8") for p in (leak, quiet, site / "oracle-pr-review.html")}
    assert not [p for p, text in pages.items() if "<script" in text or "\x1b" in text]
    body = "Leaks &lt;script&gt;alert(&#34;t&amp;k&#34;)&lt;/script&gt; &amp; more\\x1b[31m"
    assert body in pages[leak].split('<div class="gold">')[1]  # beside its line, in the gold column
    assert body in pages[leak].split('<div class="found">')[1]  # and the oracle's finding beside it
    assert '<a href="#f0">f0</a>' in pages[leak] and '<a href="#g0">g0</a>' in pages[leak]
    assert "f1 at src/&lt;script&gt;&#34;a&amp;b&#34;.al:9, no gold comment in that file" in pages[leak]
    instance = "inst&lt;script&gt;&#34;&amp;"
    assert f"<title>{instance} in oracle-pr-review</title>" in pages[quiet]
    assert f'<a href="oracle-pr-review/{quiet.name}">{instance}</a>' in pages[site / "oracle-pr-review.html"]


def test_the_templates_ship_as_package_data():
    shipped = files("bceval.evaluators.pr_review").joinpath("templates")
    names = sorted(t.name for t in shipped.iterdir() if t.name.endswith(".html"))
    assert names == ["entry.html", "index.html", "page.html", "run.html"] == sorted(PAGES.list_templates())
    pyproject = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["bceval.evaluators.pr_review"]
    assert all(any(fnmatch(f"templates/{name}", glob) for glob in globs) for name in names)
    assert "jinja2>=3.1" in pyproject["project"]["dependencies"]
