"""Bounded knowledge retrieval for bceval's own agent (upstream's PR #179, spec upstream-2026-09 §4): the tools
`search_knowledge` (catalog v2 pages of the prepared index, with applicability) and `get_articles` (exact bodies, at
most 8 a call), over the prepared index `knowledge-index.json` of the folder the agent was given. Pages are at most
16,000 bytes and never clipped; continuations are bound to the index bytes and the whole request, so one made
before the index changed is refused. Error texts are upstream's."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from bceval.agents.api_tools import Outside, Tool, ToolBox, ToolError, _object
from bceval.corpus.layers import LAYERS
from bceval.jsonio import dumps_compact
from bceval.layout import KNOWLEDGE_INDEX as INDEX  # the prepared index, at the top of the folder the tools read

MIN_BYTES, MAX_BYTES, MAX_ARTICLES = 1024, 16000, 8
CATALOG_RECOVERY = (
    "Run Entry preparation once before dispatch, or use READ's path-discovery fallback. Do not rebuild in a leaf."
)
BODY_RECOVERY = (
    "Run Entry preparation once before dispatch, or use READ's bounded native-file fallback. Do not rebuild in a leaf."
)
DIMENSIONS = ("bc-version", "technologies", "countries", "application-area")
DEFAULTS = {"bc-version": ["all"], "technologies": ["al"], "countries": ["w1"], "application-area": ["all"]}
SENTINELS = {"bc-version": "all", "countries": "w1", "application-area": "all"}  # technologies has none
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_PATH = re.compile(r"^(microsoft|community|custom)/knowledge/[^/]+/.+")
_BAD_CHARS = re.compile(r'[\\:*?"<>|\x00-\x1f]')
_RANGE = re.compile(r"^(\d+)\.\.(\d*)$")
GROUP = "excludedByConfiguration"  # the catalog's second group: rows of layers the search did not enable


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def source_snapshot(rows: list[dict[str, Any]]) -> str:
    """The index header's `sourceSnapshot` (§2.3): over `[{path, sha256}]` of the rows, sorted by path (ordinal)."""
    pairs = sorted(({"path": row["path"], "sha256": row["sourceSha256"]} for row in rows), key=lambda p: p["path"])
    return sha256(dumps_compact(pairs)[:-1].encode("utf-8"))


def prepared_index(rows: list[dict[str, Any]], bodies: dict[str, bytes], generated_at: str) -> bytes:
    """A strict prepared index of `rows` (bceval's index rows), each given the `sourceSha256` of its body; as the
    strict builder does (§2.2), a row that breaks a metadata rule is left out."""
    kept = [{**row, "sourceSha256": sha256(bodies[row["path"]])} for row in rows if metadata_problem(row) is None]
    kept.sort(key=lambda row: row["path"])
    header = {"version": 1, "generatedAt": generated_at, "enabledLayers": [], "knowledgeAllow": [], "knowledgeDeny": []}
    document = {**header, "articleCount": len(kept), "sourceSnapshot": source_snapshot(kept), "articles": kept}
    return dumps_compact(document).encode("utf-8")


# --- reading the prepared index (§4.1) --------------------------------------------------------------------------


def path_problem(path: Any) -> str | None:
    """Why `path` is no exact knowledge path (§4.1's path rules), or None."""
    bad = not isinstance(path, str) or not _PATH.match(path) or _BAD_CHARS.search(path)
    if bad or any(part in ("", ".", "..") or part.endswith((".", " ")) for part in path.split("/")):
        return f"Invalid knowledge path: {path}"
    return None


def _fail(text: str, recovery: str) -> ToolError:
    return ToolError(f"{text}. {recovery}")


def _strict_text(data: bytes, shown: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"Knowledge file is not valid strict UTF-8: {shown}") from None


def _generated_at_ok(value: Any) -> bool:
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return False
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment <= datetime.now(UTC) + timedelta(minutes=1)


def read_index(box: ToolBox, recovery: str) -> tuple[bytes, list[dict[str, Any]], tuple[str, ...]]:
    """(the index's raw bytes, its rows, the layers it indexes), every check of §4.1 passed, or ToolError."""
    try:
        raw = box.read(INDEX)[1]
    except ToolError:
        raise _fail(f"Knowledge index missing: {INDEX}", recovery) from None
    try:
        index = json.loads(_strict_text(raw, INDEX).removeprefix("\ufeff"))
    except ValueError as exc:
        raise _fail(f"Malformed knowledge index JSON: {exc}", recovery) from None
    ok = isinstance(index, dict) and index.get("version") == 1 and isinstance(index.get("articles"), list)
    ok = ok and all(isinstance(index.get(k), list) for k in ("enabledLayers", "knowledgeAllow", "knowledgeDeny"))
    ok = ok and type(index.get("articleCount")) is int and index["articleCount"] == len(index["articles"])
    ok = ok and isinstance(index.get("sourceSnapshot"), str) and _HEX64.match(index["sourceSnapshot"]) is not None
    layers = tuple(index["enabledLayers"]) if ok else ()
    layers = LAYERS if layers in ((), (None,)) else layers  # [] and [null]: every layer
    if not ok or not all(layer in LAYERS for layer in layers) or len(set(layers)) != len(layers):
        raise _fail("Invalid knowledge index envelope", recovery)
    if not _generated_at_ok(index.get("generatedAt")):
        raise _fail("Invalid knowledge index generatedAt", recovery)
    seen: set[str] = set()
    for row in index["articles"]:
        path = row.get("path") if isinstance(row, dict) else None
        if not isinstance(path, str):
            raise _fail("Index row has no exact path", recovery)
        problem = path_problem(path)
        if problem:
            raise ToolError(problem)
        if row.get("layer") != path.split("/", 1)[0]:
            raise _fail(f"Invalid index layer: {path}", recovery)
        if not isinstance(row.get("sourceSha256"), str) or not _HEX64.match(row["sourceSha256"]):
            raise _fail(f"Invalid source hash in knowledge index: {path}", recovery)
        if path in seen:
            raise _fail(f"Duplicate index path: {path}", recovery)
        seen.add(path)
    if source_snapshot(index["articles"]) != index["sourceSnapshot"]:
        raise _fail("Stale or internally inconsistent prepared index snapshot", recovery)
    return raw, index["articles"], layers


# --- row metadata (§4.2; the first failing rule wins) -------------------------------------------------------------


def _unquoted(value: str) -> str:
    return value.strip("\"'")


def _bc_version_problem(values: list[str]) -> str | None:
    plain = [_unquoted(value) for value in values]
    if "all" in plain:
        return None if len(plain) == 1 else "mixed bc-version sentinel"
    if len(plain) == 1 and (found := _RANGE.match(plain[0])):
        low, high = found.groups()
        if int(low) < 1 or (high and int(high) < 1):
            return "invalid bc-version range bound"
        return "descending bc-version range" if high and int(low) > int(high) else None
    ok = all(value.isascii() and value.isdigit() and int(value) > 0 for value in plain)
    return None if ok else "invalid bc-version"


def _sentinel_problem(values: list[str], field: str, sentinel: str, pattern: re.Pattern[str]) -> str | None:
    if sentinel in values:
        return None if len(values) == 1 else f"mixed {field} sentinel"
    return None if all(pattern.match(v) for v in values) else f"invalid {field}"


def metadata_problem(row: dict[str, Any]) -> str | None:
    """Why an index row's metadata is invalid (§4.2), or None."""
    if row.get("parsed") is not True:
        return "unparsed frontmatter"
    if not isinstance(row.get("domain"), str) or not _SLUG.match(row["domain"]):
        return "missing/invalid domain"
    for field in ("bc-version", "technologies", "countries", "application-area", "keywords"):
        values = row.get(field)
        if not isinstance(values, list) or not values:
            return f"missing/invalid {field}"
        if not all(isinstance(v, str) and v.strip() for v in values):
            return f"invalid {field} value"
    for field in ("title", "description"):
        value = row.get(field)
        if not isinstance(value, str) or not value.strip() or "\r" in value or "\n" in value:
            return f"missing/invalid {field}"
    technologies = row["technologies"]
    return (
        _bc_version_problem(row["bc-version"])
        or ("invalid technologies sentinel" if "all" in technologies else None)
        or (None if all(_SLUG.match(v) for v in technologies) else "invalid technologies")
        or _sentinel_problem(row["countries"], "countries", "w1", re.compile(r"^[a-z]{2}$"))
        or _sentinel_problem(row["application-area"], "application-area", "all", _SLUG)
        or (None if all(_SLUG.match(v) for v in row["keywords"]) else "invalid keywords")
    )


# --- search_knowledge (§4.3 - §4.5) ----------------------------------------------------------------------------


def _layers(arguments: dict[str, Any], not_array: str) -> list[str]:
    if "enabledLayers" not in arguments:
        return list(LAYERS)
    value = arguments["enabledLayers"]
    if not isinstance(value, list):
        raise ToolError(not_array)
    if not all(isinstance(v, str) and v in LAYERS for v in value) or len(set(value)) != len(value):
        raise ToolError("EnabledLayers must contain unique canonical lowercase layer names.")
    return value


def _bounded(arguments: dict[str, Any], name: str, shown: str, low: int, high: int, default: int) -> int:
    value = arguments.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ToolError(f"{shown} must be a whole number from {low} to {high}.")
    return value


def _snapshot(arguments: dict[str, Any]) -> str | None:
    value = arguments.get("snapshot")
    if value is not None and (not isinstance(value, str) or not _HEX64.match(value)):
        raise ToolError("Snapshot must be 64 lowercase hex characters.")
    return value


_CONTEXT = (("bcVersion", "BCVersion", "bc-version"), ("technologies", "Technologies", "technologies"))
_CONTEXT += (("countries", "Countries", "countries"), ("applicationAreas", "ApplicationAreas", "application-area"))


def _context(arguments: dict[str, Any]) -> dict[str, Any]:
    """The supplied context dimensions, by field name in field order (an omitted one is unknown)."""
    context: dict[str, Any] = {}
    for name, shown, field in _CONTEXT:
        if name not in arguments:
            continue
        value = arguments[name]
        if value is None:
            raise ToolError(f"Omit unknown context; do not pass null for {shown}.")
        if field == "bc-version":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2147483647:
                raise ToolError(f"Invalid context value for {shown}: '{value}'")
        else:
            value = value if isinstance(value, list) else [value]
            for entry in value:
                if not isinstance(entry, str) or not entry.strip() or entry != entry.strip():
                    raise ToolError(f"Invalid context value for {shown}: '{entry}'")
            if field == "technologies" and "all" in value:
                raise ToolError("Technologies has no 'all' sentinel. Omit unknown context.")
        context[field] = value
    return context


def _matches(field: str, values: list[str], wanted: Any) -> bool:
    if field != "bc-version":
        return any(value in wanted for value in values)
    plain = [_unquoted(value) for value in values]
    found = _RANGE.match(plain[0]) if len(plain) == 1 else None
    if found:
        return int(found[1]) <= wanted and (not found[2] or wanted <= int(found[2]))
    return any(int(value) == wanted for value in plain)


def catalog_row(row: dict[str, Any], context: dict[str, Any]) -> dict[str, Any] | None:
    """The catalog v2 row of an index row under `context` (§4.4), or None when a known dimension rules it out."""
    unknown = []
    for field in DIMENSIONS:
        values = row[field]
        if field in SENTINELS and SENTINELS[field] in [_unquoted(v) for v in values]:
            continue
        if field not in context:
            unknown.append(field)
        elif not _matches(field, values, context[field]):
            return None
    shown = {key: row[key] for key in ("path", "layer", "keywords", "title", "description")}
    shown.update({field: row[field] for field in DIMENSIONS if row[field] != DEFAULTS[field]})
    return {**shown, "applicability": "conditional" if unknown else "applicable", "unknownDimensions": unknown}


def _search_knowledge(box: ToolBox, arguments: dict[str, Any]) -> str:
    domain = arguments.get("domain")
    if not isinstance(domain, str) or not domain.strip():
        raise ToolError("Domain must be a non-blank string.")
    layers = _layers(arguments, "EnabledLayers must be an array; use an empty array to disable all layers.")
    context = _context(arguments)
    exclude = arguments.get("excludeConditional", False) is True
    max_bytes = _bounded(arguments, "maxBytes", "MaxBytes", MIN_BYTES, MAX_BYTES, MAX_BYTES)
    offset = _bounded(arguments, "offset", "Offset", 0, 2**31 - 1, 0)
    given = _snapshot(arguments)
    raw, rows, indexed = read_index(box, CATALOG_RECOVERY)
    if not set(layers) <= set(indexed):
        raise _fail("Index layer coverage does not cover EnabledLayers", CATALOG_RECOVERY)
    for row in rows:  # one bad row fails every search
        problem = metadata_problem(row)
        if problem:
            raise _fail(f"Malformed knowledge index row at {row['path']}: {problem}", CATALOG_RECOVERY)
        if row["layer"] not in indexed:
            raise _fail(f"Index row layer is outside index coverage: {row['path']}", CATALOG_RECOVERY)
    candidates, excluded = [], []
    for row in sorted(rows, key=lambda r: r["path"]):
        shown = catalog_row(row, context) if row["domain"] == domain else None
        if shown is not None and not (exclude and shown["unknownDimensions"]):
            (candidates if row["layer"] in layers else excluded).append(shown)
    header = {
        "version": 2,
        "domain": domain,
        "context": context,
        "enabledLayers": layers,
        "indexedLayers": list(indexed),
        "excludeConditional": exclude,
        "defaults": DEFAULTS,
        "candidateCount": len(candidates),
        "excludedByConfigurationCount": len(excluded),
    }
    lines = [sha256(raw) + "\n", dumps_compact(header), "[candidates]\n", *map(dumps_compact, candidates)]
    lines += ["[excludedByConfiguration]\n", *map(dumps_compact, excluded)]
    header["snapshot"] = sha256("".join(lines).encode("utf-8"))
    return page(header, candidates, excluded, offset, given, max_bytes)


def page(
    header: dict[str, Any], candidates: list[Any], excluded: list[Any], offset: int, given: str | None, most: int
) -> str:
    """One page of the catalog from `offset` (§4.5): as many whole rows as fit in `most` bytes, never clipped."""
    total, snapshot = len(candidates) + len(excluded), header["snapshot"]
    if offset > 0 and given is None:
        raise ToolError("Continuation requires Snapshot from the preceding page.")
    if given is not None and given != snapshot:
        raise ToolError(
            "Snapshot changed or continuation belongs to another request. Discard partial results and restart at "
            "Offset=0."
        )
    if (total == 0 and offset != 0) or (total > 0 and offset >= total):
        raise ToolError(f"Invalid Offset={offset} for totalCount={total}; no rows were returned.")
    numbered = [("candidates", row) for row in candidates] + [(GROUP, row) for row in excluded]

    def text(count: int) -> str:
        chosen, remaining = numbered[offset : offset + count], total - offset - count
        paging = {"offset": offset, "returnedCount": count, "totalCount": total, "remainingCount": remaining}
        following = {"offset": offset + count, "snapshot": snapshot} if remaining else None
        rows = {group: [row for named, row in chosen if named == group] for group in ("candidates", GROUP)}
        return dumps_compact({**header, **paging, "complete": remaining == 0, "continuation": following, **rows})

    if len(text(0).encode("utf-8")) > most:
        raise ToolError(f"Page envelope exceeds MaxBytes={most}. Use READ's path-discovery fallback; never truncate.")
    count = 0
    while offset + count < total and len(text(count + 1).encode("utf-8")) <= most:
        count += 1
    if count == 0 and total:
        group, row = numbered[offset]
        raise ToolError(
            f"One complete {group} row plus envelope exceeds MaxBytes={most} at {row['path']}. No row was clipped."
        )
    return text(count)


# --- get_articles (§4.6) --------------------------------------------------------------------------------------


def _knowledge_file(box: ToolBox, path: str) -> bytes:
    """The bytes of an exact knowledge path in the folder, reached with exact casing and through no link."""
    try:
        return box.read(path)[1]
    except Outside:
        raise ToolError(f"Linked knowledge paths are not supported: {path}") from None
    except ToolError as exc:
        if "is not a file" in str(exc) or "is a folder" in str(exc):
            raise ToolError(f"Knowledge path is not a file: {path}") from None
        raise ToolError(f"Knowledge path does not exist with exact casing: {path}") from None


def _request_snapshot(raw: bytes, layers: list[str], files: list[tuple[str, bytes, str]]) -> str:
    records = [{"path": path, "expectedSha256": expected} for path, _, expected in files]
    request = {"root": ".", "preparedIndexSha256": sha256(raw), "kind": "articles", "enabledLayers": layers}
    return sha256(dumps_compact({**request, "files": records}).encode("utf-8"))


def _requested(box: ToolBox, arguments: dict[str, Any], most: int) -> tuple[bytes, list[str], list[Any]]:
    """(the index's bytes, the enabled layers, (path, bytes, indexed hash) of each requested article), checked."""
    paths = arguments.get("paths")
    if not isinstance(paths, list) or not paths:
        raise ToolError("Paths must be a non-empty array of exact article paths.")
    if len(paths) > most:
        raise ToolError(
            f"Paths count {len(paths)} exceeds MaxArticles={most}. Split the worklist into stable chunks of at most "
            f"{most} exact paths."
        )
    layers = _layers(arguments, "EnabledLayers must be an array.")
    raw, rows, _ = read_index(box, BODY_RECOVERY)
    indexed = {row["path"]: row["sourceSha256"] for row in rows}
    files: list[tuple[str, bytes, str]] = []
    for path in paths:
        problem = path_problem(path)
        if problem:
            raise ToolError(problem)
        if not path.endswith(".md"):
            raise ToolError(f"Expected an exact article path: {path}")
        data = _knowledge_file(box, path)
        if path.split("/", 1)[0] not in layers:
            raise ToolError(f"Layer disabled for path: {path}")
        if any(path == known for known, _, _ in files):
            raise ToolError(f"Duplicate requested path: {path}")
        if path not in indexed:
            raise ToolError(f"Selected article is absent from the prepared index: {path}")
        files.append((path, data, indexed[path]))
    return raw, layers, files


def _get_articles(box: ToolBox, arguments: dict[str, Any]) -> str:
    most = _bounded(arguments, "maxArticles", "MaxArticles", 1, MAX_ARTICLES, MAX_ARTICLES)
    max_bytes = _bounded(arguments, "maxBytes", "MaxBytes", MIN_BYTES, MAX_BYTES, MAX_BYTES)
    given = _snapshot(arguments)
    raw, layers, files = _requested(box, arguments, most)
    snapshot = _request_snapshot(raw, layers, files)
    if given is not None and given != snapshot:
        raise ToolError(
            "Article snapshot changed or continuation belongs to another exact path batch. Discard partial results "
            "and restart."
        )
    bodies: list[dict[str, Any]] = []

    def text(count: int) -> str:
        rest = files[count:]
        head = {"version": 1, "kind": "articles", "snapshot": snapshot, "requestedCount": len(files)}
        head.update(returnedCount=count, complete=not rest, articles=bodies[:count])
        head["remainingPaths"] = [path for path, _, _ in rest]
        return dumps_compact(
            {**head, "continuation": {"snapshot": _request_snapshot(raw, layers, rest)} if rest else None}
        )

    for path, data, expected in files:
        if sha256(data) != expected:
            raise ToolError(f"Selected article hash does not match the prepared index: {path}")
        body = _strict_text(data, path)
        bodies.append({"path": path, "bytes": len(data), "sha256": expected, "body": body})
        if len(text(len(bodies)).encode("utf-8")) > max_bytes:
            bodies.pop()
            break
    if not bodies:
        raise ToolError(
            f"No complete body plus continuation fits MaxBytes={max_bytes} at {files[0][0]}. Use a smaller exact path "
            "batch or READ's bounded native-file fallback; never truncate."
        )
    for (path, data, _), body in zip(files, bodies, strict=False):  # read evidence: every body went out whole
        box.record_read(path, data, range(len(body["body"].splitlines())))
    return text(len(bodies))


_LAYER_LIST = {"type": "array", "items": {"type": "string", "enum": list(LAYERS)}}
_SIZE = {"type": "integer", "minimum": MIN_BYTES, "maximum": MAX_BYTES}
_TEXTS = {"type": "array", "items": {"type": "string"}}
_HEX = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
SEARCH_KNOWLEDGE = Tool(
    "search_knowledge",
    "The catalog of the knowledge articles of one domain, one page (at most maxBytes, default 16000) of rows at a "
    "time: each article's path, layer, keywords, title and description, and whether it applies to the context you "
    "give (bcVersion, technologies, countries, applicationAreas; omit what you do not know, and such rows are "
    "'conditional'). A page that is not complete has a continuation: call again with its offset and snapshot.",
    _object(
        {
            "domain": {"type": "string"},
            "enabledLayers": _LAYER_LIST,
            "bcVersion": {"type": "integer", "minimum": 1},
            "technologies": _TEXTS,
            "countries": _TEXTS,
            "applicationAreas": _TEXTS,
            "excludeConditional": {"type": "boolean"},
            "maxBytes": _SIZE,
            "offset": {"type": "integer", "minimum": 0},
            "snapshot": _HEX,
        },
        "domain",
    ),
    _search_knowledge,
)
GET_ARTICLES = Tool(
    "get_articles",
    "The exact full text of up to 8 articles, by the paths the catalog gives, each with its bytes and SHA-256. A "
    "batch that does not fit in maxBytes (default 16000) returns the bodies that fit and a continuation: call again "
    "with remainingPaths as paths and the continuation's snapshot.",
    _object(
        {
            "paths": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_ARTICLES},
            "maxArticles": {"type": "integer", "minimum": 1, "maximum": MAX_ARTICLES},
            "maxBytes": _SIZE,
            "enabledLayers": _LAYER_LIST,
            "snapshot": _HEX,
        },
        "paths",
    ),
    _get_articles,
)
BOUNDED_TOOLS: tuple[Tool, ...] = (SEARCH_KNOWLEDGE, GET_ARTICLES)


def bounded_folder(files: dict[str, bytes], rows: list[dict[str, Any]], generated_at: str) -> dict[str, bytes]:
    """What the bounded tools read: `files` (a view holding the rows' articles) and the prepared index of `rows`."""
    return {**files, INDEX: prepared_index(rows, files, generated_at)}
