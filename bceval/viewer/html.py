"""HTML building blocks of the viewer: escaping, the page shell (inline CSS and one inline script), tables and
safe file names. Every string that reaches a page goes through `esc` (text and attribute values alike) unless it
is markup this module or `svg` built; the script only toggles rows by their data attributes."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Any

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def esc(value: Any) -> str:
    """Text or attribute value, escaped (None is empty)."""
    return "" if value is None else html.escape(str(value), quote=True)


def safe_name(text: str) -> str:
    """A file name for `text` (a run, arm or case id written by anyone): its safe characters, plus a short hash
    whenever anything was replaced or it could clash (so two names never share a file)."""
    cleaned = _SAFE_NAME.sub("_", text).strip("._") or "x"
    if cleaned != text or cleaned.lower() in ("index", "cases", "compare"):
        cleaned = f"{cleaned[:60]}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"
    return cleaned


def link(href: str, text: Any, **attrs: str) -> str:
    extra = "".join(f' {esc(key.rstrip("_").replace("_", "-"))}="{esc(value)}"' for key, value in attrs.items())
    return f'<a href="{esc(href)}"{extra}>{esc(text)}</a>'


def badge(passed: bool | None, infra: bool = False) -> str:
    if infra:
        return '<span class="badge infra">infra failure</span>'
    if passed is None:
        return '<span class="badge none">no answer</span>'
    return '<span class="badge pass">pass</span>' if passed else '<span class="badge fail">fail</span>'


def number(value: Any) -> str:
    if value is None:
        return "unknown"
    return f"{value:.3f}" if isinstance(value, float) else esc(value)


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


def definition(items: Iterable[tuple[str, str]]) -> str:
    """A definition list of (label, markup)."""
    return "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"


def pre(text: Any, cls: str = "") -> str:
    klass = f' class="{esc(cls)}"' if cls else ""
    return f"<pre{klass}>{esc(text)}</pre>"


def numbered(text: str) -> str:
    """Source text with line numbers (a table, so copying the code column copies the code alone)."""
    lines = text.splitlines() or [""]
    rows = "".join(
        f'<tr><td class="ln">{n}</td><td><code>{esc(line)}</code></td></tr>' for n, line in enumerate(lines, 1)
    )
    return f'<table class="code"><tbody>{rows}</tbody></table>'


def details(summary: str, body: str, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{esc(summary)}</summary>{body}</details>"


CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fff}
header{background:#24292f;color:#fff;padding:.6em 1.2em}header a{color:#fff}
main{padding:1em 1.2em;max-width:1400px}
h1{font-size:1.4em;margin:.2em 0 .6em}h2{font-size:1.15em;margin:1.4em 0 .5em}h3{font-size:1em}
table{border-collapse:collapse;margin:.4em 0 1em}th,td{border:1px solid #d0d7de;padding:.25em .5em;text-align:left;
vertical-align:top}th{background:#f6f8fa}
table.code td{border:none;padding:0 .5em}table.code code{white-space:pre}
table.code td.ln{color:#8c959f;text-align:right;user-select:none}
pre{background:#f6f8fa;padding:.6em;overflow:auto;max-height:40em;white-space:pre-wrap;word-break:break-word}
.badge{padding:0 .45em;border-radius:.6em;font-size:.85em;white-space:nowrap}.pass{background:#dafbe1}
.fail{background:#ffebe9}.infra{background:#fff8c5}.none{background:#eaeef2}
.fixed{background:#dafbe1}.regressed{background:#ffebe9}
dl{display:grid;grid-template-columns:max-content auto;gap:.15em 1em}dt{font-weight:600}dd{margin:0}
.plot{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}.plot svg{max-width:100%;height:auto}
.filters{margin:.4em 0}.filters label{margin-right:1em}.muted{color:#57606a}
nav.pages a{margin-right:.5em}td.cell a{text-decoration:none}
"""

# Filters: rows carry data-failed / data-infra / data-text; the controls only hide rows, never write markup.
SCRIPT = """
(function(){
  function apply(){
    var text=document.getElementById('filter-text');
    var failed=document.getElementById('filter-failed');
    var infra=document.getElementById('filter-infra');
    var needle=text?text.value.toLowerCase():'';
    document.querySelectorAll('tr[data-text]').forEach(function(row){
      var show=row.getAttribute('data-text').indexOf(needle)>=0;
      if(failed&&failed.checked&&row.getAttribute('data-failed')!=='1'){show=false;}
      if(infra&&infra.checked&&row.getAttribute('data-infra')!=='1'){show=false;}
      row.hidden=!show;
    });
  }
  document.querySelectorAll('.filters input').forEach(function(input){
    input.addEventListener('input',apply);input.addEventListener('change',apply);
  });
})();
"""


def filters(failed: bool = False, infra: bool = False) -> str:
    parts = ['<label>Filter <input id="filter-text" type="search" placeholder="text"></label>']
    if failed:
        parts.append('<label><input id="filter-failed" type="checkbox"> failed only</label>')
    if infra:
        parts.append('<label><input id="filter-infra" type="checkbox"> infra failures only</label>')
    return f'<div class="filters">{"".join(parts)}</div>'


def row_data(text: str, failed: bool = False, infra: bool = False) -> str:
    """Attributes of a filterable row: its searchable text (lower-cased, escaped) and its flags."""
    return f' data-text="{esc(text.lower())}" data-failed="{int(failed)}" data-infra="{int(infra)}"'


# The page's policy lets only this one script run (by its hash): an injected script or event handler is refused
# by the browser even if escaping ever failed. Escaping is what the tests check first.
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
POLICY = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{SCRIPT_HASH}'"


def page(title: str, body: str, root: str, crumbs: Sequence[tuple[str, str]] = ()) -> str:
    """A whole page; `root` is the relative path from this page to the site's root ('' or '../..')."""
    prefix = f"{root}/" if root else ""
    trail = " / ".join([link(f"{prefix}index.html", "bceval")] + [link(href, text) for href, text in crumbs])
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<header>{trail}</header><main><h1>{esc(title)}</h1>{body}</main>"
        f"<script>{SCRIPT}</script></body></html>\n"
    )
