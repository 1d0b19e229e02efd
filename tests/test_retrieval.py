"""Bounded knowledge retrieval, the api agent's search_knowledge and get_articles (spec upstream-2026-09 §4, the
scenarios of upstream's Test-KnowledgeRetrieval.ps1): lossless paging within the byte limit, continuations bound to
the index bytes, applicability, the metadata rules at search time, exact bodies at most 8 a call."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from conftest import DEMO_CORPUS, SHARED_CORPUS

from bceval.agents.api_tools import MemoryFolder, ToolBox
from bceval.agents.registry import Shape, ShapedSetup, make_agent
from bceval.agents.retrieval import (
    BODY_RECOVERY,
    BOUNDED_TOOLS,
    CATALOG_RECOVERY,
    INDEX,
    bounded_folder,
    prepared_index,
    source_snapshot,
)
from bceval.agents.settings import AgentSettings, EndpointSettings
from bceval.corpus.index import knowledge_index_text
from bceval.errors import BcevalError

WHEN = "1970-01-01T00:00:00.0000000Z"
DOMAIN = "performance"


def demo_rows() -> tuple[list[dict], dict[str, bytes]]:
    rows = json.loads(knowledge_index_text(DEMO_CORPUS, BcevalError))["articles"]
    return rows, {row["path"]: (DEMO_CORPUS / row["path"]).read_bytes() for row in rows}


def box_of(files: dict[str, bytes]) -> ToolBox:
    return ToolBox(MemoryFolder(files), BOUNDED_TOOLS)


@pytest.fixture
def demo() -> tuple[list[dict], dict[str, bytes]]:
    return demo_rows()


def ask(box: ToolBox, tool: str, **arguments) -> dict:
    text, error = box.call(tool, json.dumps(arguments))
    assert not error, text
    assert text.endswith("\n") and text.count("\n") == 1  # one compact JSON line
    return json.loads(text)


def refused(box: ToolBox, tool: str, **arguments) -> str:
    text, error = box.call(tool, json.dumps(arguments))
    assert error, text
    return text.removeprefix("error: ")


def pages(box: ToolBox, **arguments) -> list[dict]:
    found = [ask(box, "search_knowledge", **arguments)]
    while found[-1]["continuation"]:
        found.append(ask(box, "search_knowledge", **arguments, **found[-1]["continuation"]))
    return found


def test_the_paged_catalog_is_lossless_bounded_and_repeats_its_header(demo):
    rows, files = demo
    box = box_of(bounded_folder(files, rows, WHEN))
    domain_rows = sorted(row["path"] for row in rows if row["domain"] == DOMAIN)
    for limit in (1500, 2500, 16000):
        found = pages(box, domain=DOMAIN, maxBytes=limit)
        union = [row["path"] for page in found for row in page["candidates"]]
        assert union == domain_rows  # no loss, no duplicate, index (path) order
        assert all(0 < page["returnedCount"] for page in found)
        headers = {json.dumps({k: v for k, v in page.items() if k in list(page)[:10]}) for page in found}
        assert len(headers) == 1  # the shared header, snapshot included, on every page
        offsets = [page["offset"] for page in found]
        assert offsets == sorted(set(offsets)) and found[-1]["complete"] and found[-1]["continuation"] is None
        assert found[-1]["remainingCount"] == 0 and found[0]["totalCount"] == len(domain_rows)
    assert len(pages(box, domain=DOMAIN, maxBytes=1500)) > 1
    every = [
        row["path"]
        for d in {r["domain"] for r in rows}
        for p in pages(box, domain=d, maxBytes=1500)
        for row in p["candidates"]
    ]
    assert sorted(every) == sorted(row["path"] for row in rows)  # the union over all domains is every row
    first = ask(box, "search_knowledge", domain=DOMAIN, maxBytes=1500)
    assert list(first) == [
        *("version", "domain", "context", "enabledLayers", "indexedLayers", "excludeConditional", "defaults"),
        *("candidateCount", "excludedByConfigurationCount", "snapshot", "offset", "returnedCount", "totalCount"),
        *("remainingCount", "complete", "continuation", "candidates", "excludedByConfiguration"),
    ]
    assert len(box.call("search_knowledge", json.dumps({"domain": DOMAIN, "maxBytes": 1500}))[0].encode()) <= 1500


def test_a_continuation_without_its_snapshot_past_the_end_or_after_an_index_change_is_refused(demo):
    rows, files = demo
    folder = bounded_folder(files, rows, WHEN)
    box = box_of(folder)
    first = ask(box, "search_knowledge", domain=DOMAIN, maxBytes=1500)
    follow = first["continuation"]
    assert refused(box, "search_knowledge", domain=DOMAIN, maxBytes=1500, offset=follow["offset"]) == (
        "Continuation requires Snapshot from the preceding page."
    )
    total = first["totalCount"]
    assert refused(box, "search_knowledge", domain=DOMAIN, offset=total, snapshot=follow["snapshot"]) == (
        f"Invalid Offset={total} for totalCount={total}; no rows were returned."
    )
    assert refused(box, "search_knowledge", domain=DOMAIN, offset=1, snapshot="0" * 64).startswith(
        "Snapshot changed or continuation belongs to another request."
    )
    # another request (a context given) is another snapshot too
    assert refused(box, "search_knowledge", domain=DOMAIN, bcVersion=27, maxBytes=1500, **follow).startswith(
        "Snapshot changed"
    )
    # the index rebuilt: only its generatedAt differs, and it is still internally consistent
    rebuilt = box_of({**folder, INDEX: prepared_index(rows, files, "1970-01-01T00:00:01.0000000Z")})
    assert refused(rebuilt, "search_knowledge", domain=DOMAIN, maxBytes=1500, **follow) == (
        "Snapshot changed or continuation belongs to another request. Discard partial results and restart at Offset=0."
    )
    assert ask(rebuilt, "search_knowledge", domain=DOMAIN, maxBytes=1500)["snapshot"] != follow["snapshot"]


def _row(path: str, **fields) -> dict:
    row = {
        "path": path,
        "layer": path.split("/", 1)[0],
        "domain": "ui",
        "bc-version": ["all"],
        "technologies": ["al"],
        "countries": ["w1"],
        "application-area": ["all"],
        "keywords": ["page"],
        "title": "A title",
        "description": "A description.",
        "parsed": True,
    }
    return {**row, **fields}


def _folder(*rows: dict) -> dict[str, bytes]:
    bodies = {row["path"]: f"# {row['path']}\n".encode() for row in rows}
    return bounded_folder(bodies, list(rows), WHEN)


def test_applicability_defaults_are_omitted_and_unknown_dimensions_are_named():
    rows = (
        _row("microsoft/knowledge/ui/a.md"),
        _row("microsoft/knowledge/ui/b.md", **{"bc-version": ['"27.."'], "countries": ["dk", "de"]}),
        _row("community/knowledge/ui/c.md", technologies=["al", "powershell"], **{"application-area": ["sales"]}),
        _row("microsoft/knowledge/ui/d.md", **{"bc-version": ["24", "25"]}),
        _row("microsoft/knowledge/events/e.md", domain="events"),
    )
    box = box_of(_folder(*rows))
    page = ask(box, "search_knowledge", domain="ui", enabledLayers=["microsoft"])
    assert [row["path"] for row in page["candidates"]] == [
        "microsoft/knowledge/ui/a.md",
        "microsoft/knowledge/ui/b.md",
        "microsoft/knowledge/ui/d.md",
    ]
    assert [row["path"] for row in page["excludedByConfiguration"]] == ["community/knowledge/ui/c.md"]
    a, b, _ = page["candidates"]
    assert list(a) == ["path", "layer", "keywords", "title", "description", "applicability", "unknownDimensions"]
    assert a["unknownDimensions"] == ["technologies"] and a["applicability"] == "conditional"
    assert b["bc-version"] == ['"27.."'] and b["countries"] == ["dk", "de"] and "technologies" not in b
    assert b["unknownDimensions"] == ["bc-version", "technologies", "countries"]
    known = {"bcVersion": 27, "technologies": ["al"], "countries": ["dk"], "applicationAreas": ["sales"]}
    page = ask(box, "search_knowledge", domain="ui", **known)
    assert [(row["path"][-4:], row["applicability"]) for row in page["candidates"]] == [
        ("c.md", "applicable"),  # ordinal path order: community/ before microsoft/
        ("a.md", "applicable"),
        ("b.md", "applicable"),
    ]  # d (24, 25) is ruled out by bc-version 27: it appears nowhere
    assert page["context"] == {
        "bc-version": 27,
        "technologies": ["al"],
        "countries": ["dk"],
        "application-area": ["sales"],
    }
    assert ask(box, "search_knowledge", domain="ui", bcVersion=30, countries=["de"])["candidateCount"] == 3  # 27..
    assert ask(box, "search_knowledge", domain="ui", bcVersion=26, countries=["de"])["candidateCount"] == 2
    only = ask(box, "search_knowledge", domain="ui", technologies=["al"], excludeConditional=True)
    assert [row["path"][-4:] for row in only["candidates"]] == ["a.md"]  # c: application-area unknown
    assert ask(box, "search_knowledge", domain="UI")["totalCount"] == 0  # the domain is matched exactly
    assert refused(box, "search_knowledge", domain="ui", technologies=["all"]) == (
        "Technologies has no 'all' sentinel. Omit unknown context."
    )
    assert refused(box, "search_knowledge", domain="ui", countries=None) == (
        "Omit unknown context; do not pass null for Countries."
    )
    assert (
        refused(box, "search_knowledge", domain="ui", countries=[" dk"]) == "Invalid context value for Countries: ' dk'"
    )
    assert refused(box, "search_knowledge", domain="ui", enabledLayers=["Microsoft"]) == (
        "EnabledLayers must contain unique canonical lowercase layer names."
    )
    assert (
        refused(box, "search_knowledge", domain="ui", maxBytes=1023)
        == "MaxBytes must be a whole number from 1024 to 16000."
    )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"parsed": False}, "unparsed frontmatter"),
        ({"domain": "User Interface"}, "missing/invalid domain"),
        ({"bc-version": []}, "missing/invalid bc-version"),
        ({"technologies": ["al", " "]}, "invalid technologies value"),
        ({"keywords": None}, "missing/invalid keywords"),
        ({"title": " "}, "missing/invalid title"),
        ({"description": "two\nlines"}, "missing/invalid description"),
        ({"bc-version": ["all", "27"]}, "mixed bc-version sentinel"),
        ({"bc-version": ["0.."]}, "invalid bc-version range bound"),
        ({"bc-version": ["28..27"]}, "descending bc-version range"),
        ({"bc-version": ["27", "x"]}, "invalid bc-version"),
        ({"technologies": ["all"]}, "invalid technologies sentinel"),
        ({"technologies": ["AL"]}, "invalid technologies"),
        ({"countries": ["w1", "dk"]}, "mixed countries sentinel"),
        ({"countries": ["dnk"]}, "invalid countries"),
        ({"application-area": ["all", "sales"]}, "mixed application-area sentinel"),
        ({"application-area": ["Sales"]}, "invalid application-area"),
        ({"keywords": ["Bad_Token"]}, "invalid keywords"),
        # the first failing rule wins
        ({"parsed": False, "domain": ""}, "unparsed frontmatter"),
        ({"bc-version": ["x"], "keywords": ["Bad"]}, "invalid bc-version"),
    ],
)
def test_one_bad_row_anywhere_fails_every_search_with_its_problem(fields, problem):
    folder = _folder(_row("microsoft/knowledge/ui/a.md"), _row("microsoft/knowledge/events/z.md", domain="events"))
    assert json.loads(_folder(_row("microsoft/knowledge/events/z.md", **fields))[INDEX])["articles"] == []  # skipped
    box = box_of(_edited(folder, lambda index: index["articles"][0].update(fields)))  # events/z.md, changed later
    assert refused(box, "search_knowledge", domain="ui") == (
        f"Malformed knowledge index row at microsoft/knowledge/events/z.md: {problem}. {CATALOG_RECOVERY}"
    )


def _edited(folder: dict[str, bytes], change) -> dict[str, bytes]:
    index = json.loads(folder[INDEX])
    change(index)
    return {**folder, INDEX: json.dumps(index).encode()}


def test_a_stale_malformed_or_missing_index_is_refused_before_anything_is_returned():
    folder = _folder(_row("microsoft/knowledge/ui/a.md"), _row("microsoft/knowledge/ui/b.md"))
    path = "microsoft/knowledge/ui/a.md"

    def row_field(name, value):
        return lambda index: index["articles"][0].__setitem__(name, value)

    cases = [
        ({k: v for k, v in folder.items() if k != INDEX}, f"Knowledge index missing: {INDEX}. {CATALOG_RECOVERY}"),
        ({**folder, INDEX: b"{"}, "Malformed knowledge index JSON"),
        ({**folder, INDEX: b"\xff"}, f"Knowledge file is not valid strict UTF-8: {INDEX}"),
        (_edited(folder, lambda i: i.__setitem__("articleCount", 3)), "Invalid knowledge index envelope."),
        (_edited(folder, lambda i: i.__setitem__("enabledLayers", ["Custom"])), "Invalid knowledge index envelope."),
        (
            _edited(folder, lambda i: i.__setitem__("generatedAt", "2999-01-01T00:00:00Z")),
            "Invalid knowledge index generatedAt.",
        ),
        (
            _edited(folder, row_field("sourceSha256", "0" * 64)),
            "Stale or internally inconsistent prepared index snapshot.",
        ),
        (_edited(folder, row_field("sourceSha256", "ABC")), f"Invalid source hash in knowledge index: {path}."),
        (_edited(folder, row_field("layer", "custom")), f"Invalid index layer: {path}."),
        (
            _edited(folder, row_field("path", "microsoft/knowledge/ui/../a.md")),
            "Invalid knowledge path: microsoft/knowledge/ui/../a.md",
        ),
        (_edited(folder, row_field("path", 7)), "Index row has no exact path."),
        (_edited(folder, lambda i: i["articles"].append(i["articles"][0])), "Invalid knowledge index envelope."),
    ]
    for files, message in cases:
        assert message in refused(box_of(files), "search_knowledge", domain="ui"), message
    twice = _edited(folder, lambda i: (i["articles"].append(i["articles"][0]), i.__setitem__("articleCount", 3)))
    assert refused(box_of(twice), "get_articles", paths=[path]) == f"Duplicate index path: {path}. {BODY_RECOVERY}"
    limited = _edited(folder, lambda i: i.__setitem__("enabledLayers", ["microsoft"]))
    assert refused(box_of(limited), "search_knowledge", domain="ui") == (
        f"Index layer coverage does not cover EnabledLayers. {CATALOG_RECOVERY}"
    )
    assert ask(box_of(limited), "search_knowledge", domain="ui", enabledLayers=["microsoft"])["totalCount"] == 2


def test_rows_and_envelopes_that_cannot_fit_fail_without_clipping():
    long = _row("microsoft/knowledge/ui/long.md", description="x" * 1200)
    box = box_of(_folder(long))
    assert refused(box, "search_knowledge", domain="ui", maxBytes=1024) == (
        "One complete candidates row plus envelope exceeds MaxBytes=1024 at microsoft/knowledge/ui/long.md. "
        "No row was clipped."
    )
    assert refused(box, "search_knowledge", domain="u" * 1100, maxBytes=1024) == (
        "Page envelope exceeds MaxBytes=1024. Use READ's path-discovery fallback; never truncate."
    )
    assert ask(box, "search_knowledge", domain="ui", maxBytes=2000)["returnedCount"] == 1


def test_bodies_come_whole_at_most_8_a_call_with_bytes_and_hash_and_count_as_complete_reads(demo):
    rows, files = demo
    box = box_of(bounded_folder(files, rows, WHEN))
    paths = sorted(files)[:9]
    assert refused(box, "get_articles", paths=paths) == (
        "Paths count 9 exceeds MaxArticles=8. Split the worklist into stable chunks of at most 8 exact paths."
    )
    assert refused(box, "get_articles", paths=paths[:3], maxArticles=2).startswith(
        "Paths count 3 exceeds MaxArticles=2."
    )
    batch = ask(box, "get_articles", paths=paths[:8])
    assert batch["complete"] and batch["returnedCount"] == 8 and batch["continuation"] is None
    for article in batch["articles"]:
        data = files[article["path"]]
        assert article["body"].encode("utf-8") == data and article["bytes"] == len(data)
        assert article["sha256"] == hashlib.sha256(data).hexdigest()
    assert [read["path"] for read in box.reads()] == paths[:8] and all(read["complete"] for read in box.reads())
    # a batch larger than the page: whole bodies, then a continuation over the rest
    got, asked, rounds = [], {"paths": paths[:8], "maxBytes": 2500}, 0
    while True:
        part = ask(box, "get_articles", **asked)
        assert len(json.dumps(part, ensure_ascii=False, separators=(",", ":")).encode()) + 1 <= 2500
        got += [article["path"] for article in part["articles"]]
        rounds += 1
        if part["complete"]:
            break
        assert part["remainingPaths"] == paths[len(got) : 8]
        asked = {"paths": part["remainingPaths"], "maxBytes": 2500, **part["continuation"]}
    assert got == paths[:8] and rounds > 1


def test_a_body_batch_refuses_what_is_not_an_indexed_article_of_an_enabled_layer(demo):
    rows, files = demo
    folder = bounded_folder(files, rows, WHEN)
    box = box_of(folder)
    first, second = sorted(files)[:2]
    tries = (
        box.call("get_articles", json.dumps({"paths": [first, second], "maxBytes": n})) for n in range(1024, 16001, 100)
    )
    part = next(json.loads(text) for text, error in tries if not error and not json.loads(text)["complete"])
    assert [read["path"] for read in box.reads()] == [first]  # what was returned whole, and only that
    # its continuation for another batch, or after the index changed, is refused
    rebuilt = box_of({**folder, INDEX: prepared_index(rows, files, "1970-01-01T00:00:01.0000000Z")})
    for other, paths in ((box, [first]), (rebuilt, [second])):
        assert refused(other, "get_articles", paths=paths, **part["continuation"]) == (
            "Article snapshot changed or continuation belongs to another exact path batch. Discard partial results "
            "and restart."
        )
    assert ask(box, "get_articles", paths=[second], **part["continuation"])["articles"][0]["path"] == second
    missing = first.replace(".md", "-nope.md")
    assert refused(box, "get_articles", paths=[first, first]) == f"Duplicate requested path: {first}"
    assert (
        refused(box, "get_articles", paths=[missing]) == f"Knowledge path does not exist with exact casing: {missing}"
    )
    assert refused(box, "get_articles", paths=[first.upper()]).startswith("Invalid knowledge path")
    assert (
        refused(box, "get_articles", paths=[first[:-3] + ".txt"]) == f"Expected an exact article path: {first[:-3]}.txt"
    )
    assert refused(box, "get_articles", paths=["../evaluation/review-fixtures.json"]).startswith(
        "Invalid knowledge path"
    )
    assert refused(box, "get_articles", paths=[first], enabledLayers=["custom"]) == f"Layer disabled for path: {first}"
    assert refused(box, "get_articles", paths=[first], enabledLayers=None) == "EnabledLayers must be an array."
    unindexed = box_of({**folder, "microsoft/knowledge/ui/extra.md": b"# extra\n"})
    assert refused(unindexed, "get_articles", paths=["microsoft/knowledge/ui/extra.md"]) == (
        "Selected article is absent from the prepared index: microsoft/knowledge/ui/extra.md"
    )
    changed = box_of({**folder, first: files[first] + b"\n"})
    assert refused(changed, "get_articles", paths=[first]) == (
        f"Selected article hash does not match the prepared index: {first}"
    )
    big = _row("microsoft/knowledge/ui/big.md")
    huge = bounded_folder({big["path"]: b"x" * 20000}, [big], WHEN)
    assert refused(box_of(huge), "get_articles", paths=[big["path"]]) == (
        f"No complete body plus continuation fits MaxBytes=16000 at {big['path']}. Use a smaller exact path batch or "
        "READ's bounded native-file fallback; never truncate."
    )
    assert [read["path"] for read in box.reads()] == [first, second]  # refusals read nothing


def test_the_prepared_index_snapshot_is_upstreams_formula_and_bounded_is_in_the_identity_only_when_chosen():
    rows = [_row("microsoft/knowledge/ui/b.md"), _row("microsoft/knowledge/ui/a.md")]
    index = json.loads(_folder(*rows)[INDEX])
    assert [row["path"] for row in index["articles"]] == ["microsoft/knowledge/ui/a.md", "microsoft/knowledge/ui/b.md"]
    assert list(index)[-3:] == ["articleCount", "sourceSnapshot", "articles"]
    pairs = [{"path": row["path"], "sha256": row["sourceSha256"]} for row in index["articles"]]
    expected = hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).hexdigest()
    assert index["sourceSnapshot"] == expected == source_snapshot(index["articles"])
    assert "knowledge" not in EndpointSettings().identity()
    assert EndpointSettings(knowledge="bounded").identity()["knowledge"] == "bounded"


def test_the_tools_read_only_their_folder(tmp_path: Path, demo):
    rows, files = demo
    box = ToolBox(MemoryFolder(bounded_folder(files, rows, WHEN)), BOUNDED_TOOLS)
    assert [spec["function"]["name"] for spec in box.specs()] == ["search_knowledge", "get_articles"]
    for path in ("/etc/passwd", "microsoft/knowledge/../../secret.md", "microsoft/knowledge/ui/a.md\0"):
        assert refused(box, "get_articles", paths=[path]).startswith("Invalid knowledge path")


@pytest.mark.skipif(not SHARED_CORPUS.is_dir(), reason=f"needs the public BCQuality corpus at {SHARED_CORPUS}")
def test_every_article_of_the_shared_corpus_is_kept_found_and_read_whole():
    rows = json.loads(knowledge_index_text(SHARED_CORPUS, BcevalError))["articles"]
    files = {row["path"]: (SHARED_CORPUS / row["path"]).read_bytes() for row in rows}
    box = box_of(bounded_folder(files, rows, WHEN))
    assert json.loads(box.read(INDEX)[1])["articleCount"] == len(rows) == 255  # no row breaks a metadata rule
    found = [row["path"] for d in {r["domain"] for r in rows} for p in pages(box, domain=d) for row in p["candidates"]]
    assert sorted(found) == sorted(files)
    for start in range(0, len(found), 8):
        asked: dict = {"paths": found[start : start + 8]}
        while True:
            batch = ask(box, "get_articles", **asked)
            assert all(a["body"].encode() == files[a["path"]] for a in batch["articles"])
            if batch["complete"]:
                break
            asked = {"paths": batch["remainingPaths"], **batch["continuation"]}
    assert len(box.reads()) == 255 and all(read["complete"] for read in box.reads())


def test_bounded_is_refused_for_a_question_shape_that_has_no_bounded_mode():
    class Plain(Shape):
        hidden: dict = {}
        tools = ()

    settings = AgentSettings(command="", model="m", endpoint=EndpointSettings(knowledge="bounded"))
    with pytest.raises(BcevalError, match="^--knowledge bounded applies to review questions only"):
        make_agent("api", ShapedSetup("development", Plain(), settings))
