"""The strict knowledge index (upstream-2026-09.md §2): an invalid article is skipped with a warning instead of
indexed, each row carries the SHA-256 of its source bytes, and the header a `sourceSnapshot` over them."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from bceval.corpus.articles import LIST_FIELDS, frontmatter, index_row
from bceval.errors import BcevalError
from bceval.jsonio import read_regular_bytes

STRICT = "strict"  # the `index` setting that asks for it
_SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_COUNTRY = re.compile("[a-z]{2}")
_RANGE = re.compile(r"([0-9]+)\.\.([0-9]+)?")
_REQUIRED = ("bc-version", "keywords", "technologies", "countries", "application-area")  # the order of the check


def _bracket_problem(keyed: list[tuple[str, str]]) -> str | None:
    """Every list field written once or more, each time as a non-empty bracket list without a blank item."""
    seen = set()
    for key, raw in keyed:
        if key.lower() not in LIST_FIELDS:
            continue
        value = raw.strip()
        inner = value[1:-1].strip() if value.startswith("[") and value.endswith("]") else ""
        if not inner or any(not item.strip() for item in inner.split(",")):
            return f"frontmatter field '{key}' must use non-empty bracket-array syntax"
        seen.add(key.lower())
    missing = [field for field in _REQUIRED if field not in seen]
    return f"frontmatter field '{missing[0]}' must use non-empty bracket-array syntax" if missing else None


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'" else value


def _version_problem(values: list[str]) -> str | None:
    versions = [_unquoted(value) for value in values]
    if "all" in versions:
        return "mixed bc-version sentinel" if len(versions) != 1 else None
    span = _RANGE.fullmatch(versions[0]) if len(versions) == 1 else None
    if span:
        start, end = int(span.group(1)), span.group(2)
        if start <= 0 or (end is not None and int(end) <= 0):
            return "invalid bc-version range bound"
        return "descending bc-version range" if end is not None and start > int(end) else None
    if any(not version.isascii() or not version.isdigit() or int(version) <= 0 for version in versions):
        return "invalid bc-version"
    return None


def _list_problem(row: dict[str, Any]) -> str | None:
    technologies, countries, areas = row["technologies"], row["countries"], row["application-area"]
    if not all(map(_SLUG.fullmatch, technologies)):
        return "invalid technologies"
    if "all" in technologies:
        return "invalid technologies sentinel"
    if "w1" in countries:
        if len(countries) != 1:
            return "mixed countries sentinel"
    elif not all(map(_COUNTRY.fullmatch, countries)):
        return "invalid countries"
    if not all(area == "all" or _SLUG.fullmatch(area) for area in areas):
        return "invalid application-area"
    if "all" in areas and len(areas) != 1:
        return "mixed application-area sentinel"
    return "invalid keywords" if not all(map(_SLUG.fullmatch, row["keywords"])) else None


def metadata_problem(row: dict[str, Any]) -> str | None:
    """The first rule of upstream's row metadata check (§4.2) a built row breaks. The bracket check and the
    required domain, title and description already hold its list, title and description rules."""
    if not _SLUG.fullmatch(row["domain"]):
        return "missing/invalid domain"
    return _version_problem(row["bc-version"]) or _list_problem(row)


def strict_row(rel: str, data: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(the row of an article, None) or (None, why the strict builder skips it), checks in upstream's order."""
    try:
        text = data.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        return None, "invalid UTF-8"
    found = frontmatter(text)
    if found is None:
        return None, "missing or unterminated frontmatter"
    problem = _bracket_problem(found[0])
    if problem is not None:
        return None, problem
    row = index_row(rel, text)
    domains = [raw.strip() for key, raw in found[0] if key.lower() == "domain" and raw.strip()]
    row["domain"] = domains[-1] if domains else ""  # as written: a bracket list is no domain
    for label, value in (("domain", row["domain"]), ("H1 title", row["title"]), ("Description", row["description"])):
        if not value.strip():
            return None, f"missing {label}"
    problem = metadata_problem(row)
    if problem is not None:
        return None, problem
    return {**row, "sourceSha256": hashlib.sha256(data).hexdigest()}, None


def read_article(root: Path, rel: str) -> bytes:
    try:
        return read_regular_bytes(root / rel)
    except OSError as exc:
        raise BcevalError(f"{root / rel}: cannot read: {exc.strerror}") from None


def strict_rows(root: Path, rels: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of the valid articles among `rels`, and a warning line for each invalid one."""
    rows, warnings = [], []
    for rel in rels:
        row, reason = strict_row(rel, read_article(root, rel))
        if row is None:
            warnings.append(f"bceval: warning: Skipping invalid knowledge article '{rel}': {reason}.")
        else:
            rows.append(row)
    return rows, warnings


def skipped_articles(root: Path, rels: list[str]) -> dict[str, str]:
    """Each of `rels` the strict builder would skip, and why (an unreadable file is someone else's error)."""
    skipped = {}
    for rel in rels:
        try:
            reason = strict_row(rel, read_article(root, rel))[1]
        except BcevalError:
            continue
        if reason is not None:
            skipped[rel] = reason
    return skipped


def manifest_digest(rows: list[dict[str, Any]]) -> str:
    """SHA-256 of the compact JSON `[{"path":…,"sha256":…},…]` of the rows' paths and `sourceSha256`, in order."""
    manifest = [{"path": row["path"], "sha256": row["sourceSha256"]} for row in rows]
    return hashlib.sha256(json.dumps(manifest, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()


def source_snapshot(rows: list[dict[str, Any]]) -> str:
    """The index's `sourceSnapshot`: the manifest digest over the rows in ordinal path order (§2.3)."""
    return manifest_digest(sorted(rows, key=lambda row: row["path"]))
