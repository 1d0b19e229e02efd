"""Inline SVG plots the viewer draws itself (no plotting library, no CDN): a forest plot of differences with
their intervals, grouped bars of rates, cost against score, and a rate per epoch. Each figure carries its
numbers in a table beside the picture, for screen readers and for copying; labels are escaped like any text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bceval.viewer.html import esc, table

COLOURS = ("#0969da", "#bf3989", "#1a7f37", "#9a6700", "#8250df", "#cf222e")
WIDTH = 520
ROW = 26
LEFT = 170  # room for labels
PAD = 24


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "unknown"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def figure(title: str, height: int, parts: list[str], headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The picture and its numbers side by side; the picture is hidden from screen readers (the table says it)."""
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'role="img" aria-hidden="true" data-plot="{esc(title)}"><g font-size="11" font-family="sans-serif">'
        f"{''.join(parts)}</g></svg>"
    )
    return (
        f'<figure class="plot"><div><figcaption>{esc(title)}</figcaption>{svg}</div>'
        f"{table(headers, rows, 'plot-data')}</figure>"
    )


def _x(value: float, low: float, high: float) -> float:
    span = (high - low) or 1.0
    return LEFT + (min(max(value, low), high) - low) / span * (WIDTH - LEFT - PAD)


@dataclass(frozen=True)
class Interval:
    label: str
    value: float | None
    low: float | None
    high: float | None


def forest(title: str, rows: Sequence[Interval], low: float = -1.0, high: float = 1.0) -> str:
    """Each row's point estimate with its interval on a shared axis, with a line at zero (no difference)."""
    height = PAD * 2 + ROW * max(1, len(rows))
    zero = _x(0.0, low, high)
    parts = [
        f'<line x1="{zero:.1f}" y1="{PAD - 8}" x2="{zero:.1f}" y2="{height - PAD + 4}" stroke="#8c959f" '
        'stroke-dasharray="3,3"/>'
    ]
    for tick in (low, (low + high) / 2, high):
        x = _x(tick, low, high)
        parts.append(f'<text x="{x:.1f}" y="{height - 6}" text-anchor="middle">{tick:+.1f}</text>')
    for number, row in enumerate(rows):
        y = PAD + ROW * number + ROW / 2
        parts.append(f'<text x="{LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">{esc(row.label[:28])}</text>')
        if row.low is not None and row.high is not None:
            parts.append(
                f'<line x1="{_x(row.low, low, high):.1f}" y1="{y:.1f}" x2="{_x(row.high, low, high):.1f}" '
                f'y2="{y:.1f}" stroke="#24292f" stroke-width="2"/>'
            )
        if row.value is not None:
            parts.append(
                f'<rect x="{_x(row.value, low, high) - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" '
                f'fill="{COLOURS[0]}"/>'
            )
    cells = [[esc(r.label), _fmt(r.value, True), _fmt(r.low, True), _fmt(r.high, True)] for r in rows]
    return figure(title, height, parts, ["Row", "Difference", "95% low", "95% high"], cells)


def grouped_bars(title: str, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]) -> str:
    """Rates from 0 to 1, one bar per series within each group (e.g. per-domain pass rate of two runs)."""
    bar = 10
    band = bar * max(1, len(series)) + 8
    height = PAD * 2 + band * max(1, len(groups)) + 14 * len(series)
    parts = []
    for tick in (0.0, 0.5, 1.0):
        x = _x(tick, 0.0, 1.0)
        parts.append(
            f'<line x1="{x:.1f}" y1="{PAD - 6}" x2="{x:.1f}" y2="{PAD + band * len(groups)}" stroke="#d0d7de"/>'
        )
        parts.append(f'<text x="{x:.1f}" y="{PAD - 10}" text-anchor="middle">{tick:.1f}</text>')
    for g, group in enumerate(groups):
        top = PAD + band * g
        parts.append(f'<text x="{LEFT - 8}" y="{top + band / 2 + 3:.1f}" text-anchor="end">{esc(group[:28])}</text>')
        for s, (_, values) in enumerate(series):
            value = values[g]
            if value is None:
                continue
            width = _x(value, 0.0, 1.0) - LEFT
            parts.append(
                f'<rect x="{LEFT}" y="{top + s * bar + 4}" width="{max(width, 1):.1f}" height="{bar - 2}" '
                f'fill="{COLOURS[s % len(COLOURS)]}"/>'
            )
    legend_top = PAD + band * len(groups) + 8
    for s, (name, _) in enumerate(series):
        y = legend_top + 14 * s
        parts.append(
            f'<rect x="{LEFT}" y="{y}" width="10" height="10" fill="{COLOURS[s % len(COLOURS)]}"/>'
            f'<text x="{LEFT + 14}" y="{y + 9}">{esc(name[:40])}</text>'
        )
    headers = ["Group", *(name for name, _ in series)]
    rows = [[esc(group), *(_fmt(values[g]) for _, values in series)] for g, group in enumerate(groups)]
    return figure(title, height, parts, headers, rows)


def scatter(title: str, points: Sequence[tuple[str, float | None, float | None]], x_label: str, y_label: str) -> str:
    """(label, x, y) points; points with an unknown coordinate are listed in the table only."""
    height = 260
    known = [(label, x, y) for label, x, y in points if x is not None and y is not None]
    top = max((x for _, x, _ in known), default=1.0) or 1.0
    parts = [
        f'<line x1="{LEFT}" y1="{height - PAD}" x2="{WIDTH - PAD}" y2="{height - PAD}" stroke="#8c959f"/>',
        f'<line x1="{LEFT}" y1="{PAD}" x2="{LEFT}" y2="{height - PAD}" stroke="#8c959f"/>',
        f'<text x="{(LEFT + WIDTH) / 2:.1f}" y="{height - 4}" text-anchor="middle">{esc(x_label)}</text>',
        f'<text x="{LEFT - 8}" y="{PAD}" text-anchor="end">{esc(y_label)} 1.0</text>',
        f'<text x="{LEFT - 8}" y="{height - PAD}" text-anchor="end">0.0</text>',
    ]
    for number, (label, x, y) in enumerate(known):
        assert x is not None and y is not None
        px = _x(x, 0.0, top * 1.1)
        py = height - PAD - y * (height - 2 * PAD)
        parts.append(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="5" fill="{COLOURS[number % len(COLOURS)]}"/>'
            f'<text x="{px + 7:.1f}" y="{py + 4:.1f}">{esc(label[:24])}</text>'
        )
    rows = [[esc(label), "unknown" if x is None else f"{x:.4f}", _fmt(y)] for label, x, y in points]
    return figure(title, height, parts, ["Point", x_label, y_label], rows)


def lines(title: str, steps: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]) -> str:
    """A rate from 0 to 1 at each step (e.g. pass rate per epoch), one line per series."""
    height = 240
    count = max(1, len(steps) - 1)
    parts = [
        f'<line x1="{LEFT}" y1="{height - PAD}" x2="{WIDTH - PAD}" y2="{height - PAD}" stroke="#8c959f"/>',
        f'<text x="{LEFT - 8}" y="{PAD + 4}" text-anchor="end">1.0</text>',
        f'<text x="{LEFT - 8}" y="{height - PAD}" text-anchor="end">0.0</text>',
    ]
    for number, step in enumerate(steps):
        x = LEFT + (WIDTH - LEFT - PAD) * number / count
        parts.append(f'<text x="{x:.1f}" y="{height - 8}" text-anchor="middle">{esc(step)}</text>')
    for s, (name, values) in enumerate(series):
        colour = COLOURS[s % len(COLOURS)]
        points = []
        for number, value in enumerate(values):
            if value is None:
                continue
            x = LEFT + (WIDTH - LEFT - PAD) * number / count
            y = height - PAD - value * (height - 2 * PAD)
            points.append(f"{x:.1f},{y:.1f}")
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>')
        if len(points) > 1:
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(points)}"/>')
        parts.append(f'<text x="{8}" y="{PAD + 14 * s + 30}" fill="{colour}">{esc(name[:22])}</text>')
    headers = ["Series", *steps]
    rows = [[esc(name), *(_fmt(v) for v in values)] for name, values in series]
    return figure(title, height, parts, headers, rows)
