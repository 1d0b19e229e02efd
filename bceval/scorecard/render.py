"""Scorecard to Markdown and to one self-contained HTML page (inline CSS, no network assets)."""

from __future__ import annotations

from bceval.escape import html as escape
from bceval.escape import html_id, markdown, markdown_cell, markdown_code, markdown_id
from bceval.scorecard.model import Rate, Scorecard

BAR_WIDTH = 10


def percent(passed: int, total: int) -> str:
    return f"{100 * passed / total:.1f}%" if total else "n/a"


def text_bar(passed: int, total: int) -> str:
    filled = round(BAR_WIDTH * passed / total) if total else 0
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def _rate_text(label: str, rate: Rate) -> str:
    low, high = rate.wilson95
    return f"{label}: {rate.value:.4g} ({rate.passed}/{rate.total}), 95% CI {low:.3f}–{high:.3f}"


# The summary is one list of lines for both formats; each line is segments of a kind, written per format:
# "text" as it is (escaped in HTML), "code" inline code, "warn" bold in Markdown and a warning in HTML, "note" plain
# in Markdown and a warning in HTML.
Segment = tuple[str, str]
_MARKDOWN = {"text": str, "code": markdown_code, "warn": lambda s: f"**{s}**", "note": str}
_HTML = {
    "text": escape,
    "code": lambda s: f"<code>{escape(s)}</code>",
    "warn": lambda s: f'<span class="warn">{escape(s)}</span>',
    "note": lambda s: f'<span class="warn">{escape(s)}</span>',
}


def _run_line(card: Scorecard) -> list[Segment]:
    """Which run this is, how it was isolated, and whether it covers the whole corpus."""
    if card.run is None:
        return [("text", "run not recorded (version 1 scorecard)")]
    parts: list[Segment] = [("text", "run "), ("code", card.run.name), ("text", f", epoch {card.run.epoch}")]
    if card.adapter.isolation is not None:
        isolation = ("text", "agent view") if card.adapter.isolation == "view" else ("warn", "not isolated")
        parts += [("text", "; isolation "), isolation, ("text", f", sandbox {card.adapter.sandbox or 'none'}")]
    if card.run.partial:
        partial = f"partial: {card.run.selectedCases} of {card.run.totalCases} cases, not a gate result"
        parts += [("text", "; "), ("warn", partial)]
    return parts


def _summary(card: Scorecard) -> list[list[Segment]]:
    commit = card.corpus.commit if card.corpus.commit == "unknown" else card.corpus.commit[:12]
    dirty: list[Segment] = [("text", " "), ("note", "(uncommitted changes)")] if card.corpus.dirty else []
    pin = ("text", "pinned") if card.adapter.pinned else ("warn", "unpinned: not reproducible")
    usage, reads = _usage_text(card), _reads_text(card)
    return [
        [("text", _rate_text("Recall", card.recall))],
        [("text", _rate_text("Clean rate", card.cleanRate))],
        [("text", "Corpus: "), ("code", card.corpus.name), ("text", " at "), ("code", commit), *dirty],
        [("text", "Adapter: "), ("code", card.adapter.name), ("text", ", model "), ("code", card.adapter.model)]
        + [("text", " ("), pin, ("text", "), version "), ("code", card.adapter.version)],
        [("text", "Run: "), *_run_line(card)],
        *([[("text", usage)]] if usage else []),
        *([[("text", reads)]] if reads else []),
        [("text", "Inputs: requests "), ("code", card.corpus.requestSetSha256[:12]), ("text", ", manifest ")]
        + [("code", (card.corpus.manifestSha256 or "none")[:12])],
        [("text", f"Created {card.createdAt} by bceval {card.tool.bceval} on Python {card.tool.python}; run ")]
        + [("code", card.runId[:12])],
    ]


def _line(segments: list[Segment], form: dict) -> str:
    return "".join(form[kind](text) for kind, text in segments)


def _money(value: float | None) -> str:
    return f"${value:.4f}" if value is not None else "unknown"


def _usage_text(card: Scorecard) -> str | None:
    usage = card.usage
    if usage is None or not usage.answers or (usage.wallSeconds is None and usage.costUsd is None):
        return None
    cost = _money(usage.costUsd)
    if usage.costUsd is not None and usage.costKnown < usage.answers:
        cost += f" (reported for {usage.costKnown} of {usage.answers} answers)"
    seconds = (("wall", usage.wallSeconds), ("agent", usage.agentSeconds))
    times = [f"{label} {value:.1f} s" for label, value in seconds if value is not None]
    tokens = ""
    if usage.inputTokens is not None or usage.outputTokens is not None:
        tokens = f"; tokens in {usage.inputTokens or 0:,}, out {usage.outputTokens or 0:,}"
    if usage.cachedShare is not None:
        without = f", {_money(usage.uncachedCostUsd)} without caching" if usage.uncachedCostUsd is not None else ""
        tokens += f" ({usage.cachedShare:.0%} of prompt tokens read from the provider's cache{without})"
    cached = f"; {usage.cached} answer(s) from the cache" if usage.cached else ""
    return (
        f"Cost {cost}, {_money(usage.costPerPassedCase)} per passed case; {', '.join(times) or 'time unknown'}"
        f"{tokens}{cached}"
    )


def _reads_text(card: Scorecard) -> str | None:
    """One line on the run's read evidence (bceval's own record of its agent's reads), when it has any."""
    reads = card.readEvidence
    if reads is None:
        return None
    share = f"{reads.backedShare:.0%}" if reads.backedShare is not None else "no citations"
    opened = f"{reads.meanOpened:.1f}" if reads.meanOpened is not None else "-"
    rule = "; an unbacked citation fails its case (--require-read)" if reads.requireRead else ""
    return (
        f"Reads: {reads.citationsBacked} of {reads.citations} citations backed by a complete read ({share}); "
        f"{opened} articles opened per case, {reads.candidatesOpened} of {reads.candidates} candidates; "
        f"evidence for {reads.casesWithEvidence} case(s), unknown for {reads.casesWithoutEvidence}{rule}"
    )


def render_markdown(card: Scorecard, heading: str = "##") -> str:
    lines = [
        f"{heading} {card.verdict.upper()}: {markdown_cell(card.adapter.name)} on {markdown_cell(card.corpus.name)}",
        "",
        *(f"- {_line(line, _MARKDOWN)}" for line in _summary(card)),
        "",
        f"{heading}# Domains",
        "",
        "| Domain | Positive | Clean | Passed |",
        "|---|---|---|---|",
    ]
    for d in card.domains:
        passed, total = d.positivePassed + d.cleanPassed, d.positiveTotal + d.cleanTotal
        lines.append(
            f"| {markdown_cell(d.domain)} | {d.positivePassed}/{d.positiveTotal} | {d.cleanPassed}/{d.cleanTotal} "
            f"| `{text_bar(passed, total)}` {percent(passed, total)} |"
        )
    failing = [row for row in card.cases if not row.passed and row.infrastructureFailure is None]
    if failing:
        lines += ["", f"{heading}# Failing cases", "", "| Case | Kind | Missing | Unexpected |", "|---|---|---|---|"]
        for row in failing:
            missing = ", ".join(map(markdown_id, row.missing)) or "–"
            unexpected = ", ".join(map(markdown_id, row.unexpected)) or "–"
            lines.append(f"| {markdown_cell(row.id)} | {row.kind} | {missing} | {unexpected} |")
    infra = [row for row in card.cases if row.infrastructureFailure is not None]
    if infra:
        lines += ["", f"{heading}# Infrastructure failures (not model misses)", ""]
        lines += [f"- {markdown_cell(row.id)}: {markdown(row.infrastructureFailure or '')}" for row in infra]
    return "\n".join(lines) + "\n"


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:60rem;color:#1b1f24}
h1{font-size:1.6rem}.passed{color:#1a7f37}.failed{color:#cf222e}
table{border-collapse:collapse;margin:1rem 0;width:100%}th,td{border:1px solid #d0d7de;padding:.3rem .6rem;
text-align:left;vertical-align:top}th{background:#f6f8fa}code{font-size:.85em}
.bar{background:#eaeef2;width:8rem;height:.8rem;display:inline-block;vertical-align:middle}
.fill{background:#2da44e;height:100%}.warn{color:#9a6700;font-weight:600}
"""


def _html_bar(passed: int, total: int) -> str:
    width = 100 * passed / total if total else 0
    return f'<span class="bar"><span class="fill" style="width:{width:.1f}%;display:block"></span></span>'


def render_html(card: Scorecard) -> str:
    e = escape
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>bceval scorecard: {e(card.verdict)}</title><style>{_CSS}</style></head><body>",
        f'<h1 class="{e(card.verdict)}">{e(card.verdict.upper())}: {e(card.adapter.name)} on '
        f"{e(card.corpus.name)}</h1>",
        "<ul>",
        *(f"<li>{_line(line, _HTML)}</li>" for line in _summary(card)),
        "</ul>",
        "<h2>Domains</h2><table><tr><th>Domain</th><th>Positive</th><th>Clean</th><th>Passed</th></tr>",
    ]
    for d in card.domains:
        passed, total = d.positivePassed + d.cleanPassed, d.positiveTotal + d.cleanTotal
        parts.append(
            f"<tr><td>{e(d.domain)}</td><td>{d.positivePassed}/{d.positiveTotal}</td><td>{d.cleanPassed}/"
            f"{d.cleanTotal}</td><td>{_html_bar(passed, total)} {percent(passed, total)}</td></tr>"
        )
    parts.append("</table>")
    parts.append(
        "<h2>Cases</h2><table><tr><th>Case</th><th>Kind</th><th>Verdict</th><th>Missing</th><th>Unexpected</th>"
        "<th>Cost</th><th>Transcript</th></tr>"
    )
    for row in card.cases:
        missing = "<br>".join(map(html_id, row.missing)) or "–"
        unexpected = "<br>".join(map(html_id, row.unexpected)) or "–"
        verdict = "passed" if row.passed else ("infrastructure failure" if row.infrastructureFailure else "failed")
        cost = (row.usage or {}).get("costUsd")
        link = f'<a href="{e(row.transcript)}">{e(row.modelId)}</a>' if row.transcript else "–"
        parts.append(
            f'<tr><td>{e(row.id)}</td><td>{e(row.kind)}</td><td class="{"passed" if row.passed else "failed"}">'
            f"{e(verdict)}{' (cached)' if row.cached else ''}</td><td>{missing}</td><td>{unexpected}</td>"
            f"<td>{e(_money(cost)) if isinstance(cost, int | float) else '–'}</td><td>{link}</td></tr>"
        )
    parts.append("</table>")
    infra = [row for row in card.cases if row.infrastructureFailure is not None]
    if infra:
        parts.append("<h2>Infrastructure failures (not model misses)</h2><ul>")
        parts += [f"<li>{e(row.id)}: {e(row.infrastructureFailure or '')}</li>" for row in infra]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
