"""The skill index (upstream-2026-09.md §5): every action skill of `<layer>/skills/**` as one record, built and
checked by `bceval skills`; the review super-skill's declared sub-skills give bceval its leaf order."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from bceval.clock import generated_at
from bceval.corpus.articles import LINE_BREAK
from bceval.corpus.layers import LAYER_RANK, scan_corpus
from bceval.corpus.strict import manifest_digest
from bceval.errors import BcevalError
from bceval.jsonio import parse_json, read_json_bytes, read_regular_bytes
from bceval.ordering import sort_key

SKILL_INDEX = "skill-index.json"
REQUIRED = ("id", "version", "title", "description", "inputs", "outputs")
FILTERS = ("bc-version", "technologies", "countries", "application-area")
REVIEW_SUPER_SKILL = "al-code-review"
_KEY = re.compile(r"([a-zA-Z][\w-]*)\s*:\s*(.*)")  # from column 1
_ITEM = re.compile(r"\s+-\s+(.+?)\s*")
_INT = re.compile(r"[+-]?[0-9]+")
_LEAF = re.compile(r"al-(.+)-review\.md")


def _scalar(text: str, key: str) -> Any:
    value = text.strip().strip("\"'")
    return int(value) if key == "bc-version" and _INT.fullmatch(value) and abs(int(value)) < 2**31 else value


def skill_frontmatter(text: str, where: str) -> dict[str, Any]:
    """Keys (lower-cased; the last wins) -> a string, or a list (`[a, b]`, or an empty value over `  - item` lines)."""
    lines = LINE_BREAK.split(text.lstrip("\ufeff"))
    if len(lines) < 3 or lines[0].strip() != "---":
        raise BcevalError(f"Missing frontmatter in '{where}'.")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise BcevalError(f"Unterminated frontmatter in '{where}'.")
    fields: dict[str, Any] = {}
    number = 1
    while number < end:
        match = _KEY.fullmatch(lines[number])
        number += 1
        if not match:
            continue
        key, value = match.group(1).lower(), match.group(2).strip()
        if not value:
            items = []
            while number < end and (item := _ITEM.fullmatch(lines[number])):
                items.append(item.group(1).strip().strip("\"'"))
                number += 1
            fields[key] = items
        elif value.startswith("[") and value.endswith("]"):
            inner = value[1:-1].strip()
            fields[key] = [_scalar(item, key) for item in inner.split(",")] if inner else []
        else:
            fields[key] = value.strip("\"'")
    return fields


def _text(value: Any) -> str:
    return " ".join(str(item) for item in value) if isinstance(value, list) else str(value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def skill_record(root: Path, rel: str) -> dict[str, Any] | None:
    """The record of one skill file, or None when it is no action skill."""
    full = str(root / rel)
    try:
        data = read_regular_bytes(root / rel)
    except OSError as exc:
        raise BcevalError(f"{full}: cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BcevalError(f"Invalid UTF-8 in '{full}'.") from None
    fields = skill_frontmatter(text, full)
    if _text(fields.get("kind", "")).lower() != "action-skill":
        return None
    for key in REQUIRED:
        if not _text(fields.get(key, "")).strip():
            raise BcevalError(f"Action skill '{full}' is missing required frontmatter '{key}'.")
    version = _text(fields["version"]).strip()
    if not _INT.fullmatch(version) or not 0 < int(version) < 2**31:
        raise BcevalError(f"Action skill '{rel}' has an invalid version.")
    if "sub-skills" in fields and not _list(fields["sub-skills"]):
        raise BcevalError(f"Super-skill '{rel}' has an empty sub-skills list.")
    return {
        "path": rel,
        "layer": rel.partition("/")[0],
        "id": _text(fields["id"]),
        "version": int(version),
        "title": _text(fields["title"]),
        "description": _text(fields["description"]),
        "inputs": [str(item) for item in _list(fields["inputs"])],
        "outputs": [str(item) for item in _list(fields["outputs"])],
        # an absent filter is [] where upstream writes null (which its own schema refuses)
        "filters": {key: _list(fields[key]) if key in fields else [] for key in FILTERS},
        "subSkills": [str(item) for item in _list(fields.get("sub-skills", []))],
        "sourceSha256": hashlib.sha256(data).hexdigest(),
    }


def _check_composition(records: list[dict[str, Any]]) -> None:
    """Ids unique within a layer (case ignored; another layer may override one), sub-skills indexed leaves that
    produce findings reports."""
    by_id: dict[tuple[str, str], list[str]] = {}
    for record in records:
        by_id.setdefault((record["layer"], record["id"].lower()), []).append(f"{record['layer']}:{record['id']}")
    repeated = [names[0] for names in by_id.values() if len(names) > 1]
    if repeated:
        raise BcevalError(f"Duplicate action-skill IDs within a layer: {', '.join(repeated)}")
    by_path = {record["path"]: record for record in records}
    for record in records:
        seen: set[str] = set()
        for sub in record["subSkills"]:
            if sub in seen:
                raise BcevalError(f"Super-skill '{record['path']}' declares duplicate sub-skill '{sub}'.")
            seen.add(sub)
            if sub not in by_path:
                raise BcevalError(f"Super-skill '{record['path']}' references missing action skill '{sub}'.")
            if by_path[sub]["subSkills"]:
                raise BcevalError(f"Nested super-skills are not supported: '{record['path']}' references '{sub}'.")
            if by_path[sub]["outputs"] != ["findings-report"]:
                raise BcevalError(f"Sub-skill '{sub}' must produce findings-report.")


def skill_index(root: Path) -> dict[str, Any]:
    """The skill index of a corpus: records by layer, then path (`sort_key`); the first invalid skill raises."""
    listing = scan_corpus(root, (("skills", True),))
    rels = [rel for rel in listing.files if rel.endswith(".md")]
    rels.sort(key=lambda rel: (LAYER_RANK[rel.split("/")[0]], sort_key(rel)))
    records = [record for record in (skill_record(root, rel) for rel in rels) if record is not None]
    _check_composition(records)
    return {
        "version": 1,
        "generatedAt": generated_at(),
        "skillCount": len(records),
        "sourceSnapshot": manifest_digest(records),  # in record order
        "skills": records,
    }


def read_skill_index(root: Path) -> Any | None:
    """The corpus's committed skill index (parsed, unchecked), or None when it has none."""
    path = root / SKILL_INDEX
    return parse_json(read_json_bytes(path), str(path)) if path.is_file() else None


def declared_leaf_order(index: Any) -> list[str]:
    """The lower-cased domains of the review super-skill's sub-skills, in its declared order (the highest layer's
    `al-code-review` wins); [] when the index has none."""
    skills = index.get("skills") if isinstance(index, dict) else None
    supers = [s for s in skills or [] if isinstance(s, dict) and s.get("id") == REVIEW_SUPER_SKILL]
    supers = [s for s in supers if isinstance(s.get("subSkills"), list)]
    if not supers:
        return []
    chosen = max(supers, key=lambda s: LAYER_RANK.get(str(s.get("layer")), 0))
    names = (str(path).rsplit("/", 1)[-1] for path in chosen["subSkills"])
    return [match.group(1).lower() for match in map(_LEAF.fullmatch, names) if match]
