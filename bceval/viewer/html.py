"""How the viewer writes HTML: Jinja2 templates (bceval/viewer/templates/, autoescape on) fed plain data, so markup
lives apart from what it shows. Every value a template prints passes `_printed`: text is escaped with `esc`
(quotes too, for attribute values), markup only when a template, `svg` or `markdown` built it. The page's one
script (filters.js) only toggles rows by their data attributes; its hash is the page policy's only script."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Iterable, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader
from markupsafe import Markup

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def esc(value: Any) -> str:
    """Text or attribute value, escaped (None is empty)."""
    return "" if value is None else html.escape(str(value), quote=True)


def _printed(value: Any) -> Any:
    """What `{{ value }}` prints: markup as it is, anything else escaped (autoescape would also escape it; this
    keeps one escaping function for the whole site)."""
    return value if isinstance(value, Markup) else Markup(esc(value))


def safe_name(text: str) -> str:
    """A file name for `text` (a run, arm or case id written by anyone): its safe characters, plus a short hash
    whenever anything was replaced or it could clash (so two names never share a file)."""
    cleaned = _SAFE_NAME.sub("_", text).strip("._") or "x"
    if cleaned != text or cleaned.lower() in ("index", "cases", "compare"):
        cleaned = f"{cleaned[:60]}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"
    return cleaned


def number(value: Any) -> str:
    if value is None:
        return "unknown"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def cost(value: Any) -> str:
    return f"${value:.4f}" if isinstance(value, int | float) else "unknown"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "", row_attrs: Any = None) -> str:
    """A table whose cells are markup already (escape data with `esc` first); `row_attrs[i]` adds attributes."""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in headers)
    lines = zip(rows, row_attrs or repeat(""), strict=False)
    body = "".join(f"<tr{attrs}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row, attrs in lines)
    klass = f' class="{esc(cls)}"' if cls else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def bullets(items: Iterable[str], cls: str = "") -> str:
    klass = f' class="{esc(cls)}"' if cls else ""
    return f"<ul{klass}>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


_TEMPLATES = Environment(
    loader=PackageLoader("bceval.viewer"),
    autoescape=True,
    finalize=_printed,
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,  # the templates are the package's own: one stat each per page would add up
)
_TEMPLATES.filters.update(
    cost=cost,
    number=number,
    safe_name=safe_name,
    pretty=lambda value: json.dumps(value, indent=2, ensure_ascii=False),
    words=lambda values: ", ".join(str(value) for value in values or []),
)
_TEMPLATES.tests.update(
    nested=lambda value: isinstance(value, list | dict),
    turns=lambda value: isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value),
)

SCRIPT = (Path(__file__).parent / "templates" / "filters.js").read_text(encoding="utf-8")
# The page's policy lets only this one script run (by its hash): an injected script or event handler is refused
# by the browser even if escaping ever failed. Escaping is what the tests check first.
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
POLICY = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{SCRIPT_HASH}'"


def render(template: str, **context: Any) -> Markup:
    """A template with `context`; a page's `root` is the relative path from it to the site's root ('' or
    '../..'), `prefix` the same with its slash."""
    root = context.get("root", "")
    prefix = f"{root}/" if root else ""
    shared = {"script": Markup(SCRIPT), "policy": Markup(POLICY), "prefix": prefix, "crumbs": ()}
    return Markup(_TEMPLATES.get_template(template).render({**shared, **context}))


def fragment(markup: str) -> Markup:
    """Markup the viewer built itself (an svg plot, rendered Markdown), for a template to print as it is."""
    return Markup(markup)
