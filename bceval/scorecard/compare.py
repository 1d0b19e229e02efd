"""Compare two scorecards case by case: fixed, regressed, unchanged, per-domain deltas, McNemar."""

from __future__ import annotations

from dataclasses import dataclass, field

from bceval.errors import BcevalError
from bceval.escape import markdown_cell, markdown_code
from bceval.scorecard.model import Scorecard
from bceval.scorecard.stats import mcnemar_exact


@dataclass
class Comparison:
    fixed: list[str] = field(default_factory=list)
    regressed: list[str] = field(default_factory=list)
    still_passing: list[str] = field(default_factory=list)
    still_failing: list[str] = field(default_factory=list)
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    domains: list[tuple[str, int, int, int, int]] = field(default_factory=list)  # domain, old p/t, new p/t

    @property
    def p_value(self) -> float:
        return mcnemar_exact(len(self.regressed), len(self.fixed))


def pair(old: dict[str, bool], new: dict[str, bool]) -> Comparison:
    """What became of each case between two runs (case id -> passed), in the new run's order; no domains."""
    result = Comparison(only_old=[case_id for case_id in old if case_id not in new])
    for case_id, passed in new.items():
        if case_id not in old:
            result.only_new.append(case_id)
        elif old[case_id] and passed:
            result.still_passing.append(case_id)
        elif old[case_id]:
            result.regressed.append(case_id)
        elif passed:
            result.fixed.append(case_id)
        else:
            result.still_failing.append(case_id)
    return result


def compare(old: Scorecard, new: Scorecard, allow_different_inputs: bool = False) -> Comparison:
    if old.corpus.requestSetSha256 != new.corpus.requestSetSha256 and not allow_different_inputs:
        raise BcevalError(
            "the two runs saw different request sets "
            f"({old.corpus.requestSetSha256[:12]} vs {new.corpus.requestSetSha256[:12]}), so a paired comparison "
            "would mislead; pass --allow-different-inputs to compare the cases they share"
        )
    result = pair({row.id: row.passed for row in old.cases}, {row.id: row.passed for row in new.cases})
    before, after = (
        {d.domain: (d.positivePassed + d.cleanPassed, d.positiveTotal + d.cleanTotal) for d in card.domains}
        for card in (old, new)
    )
    for domain in sorted(set(before) | set(after), key=lambda d: (d.lower(), d)):  # a domain only one run has: 0/0
        result.domains.append((domain, *before.get(domain, (0, 0)), *after.get(domain, (0, 0))))
    return result


def render_comparison(old: Scorecard, new: Scorecard, result: Comparison) -> str:
    lines = [
        "## bceval compare",
        "",
        f"- Old: {markdown_cell(old.adapter.name)} {markdown_code(old.adapter.model)}, {markdown_cell(old.verdict)}, "
        f"run {markdown_code(old.runId[:12])}, {markdown_cell(old.createdAt)}",
        f"- New: {markdown_cell(new.adapter.name)} {markdown_code(new.adapter.model)}, {markdown_cell(new.verdict)}, "
        f"run {markdown_code(new.runId[:12])}, {markdown_cell(new.createdAt)}",
        f"- Fixed {len(result.fixed)}, regressed {len(result.regressed)}, unchanged {len(result.still_passing)} "
        f"passing and {len(result.still_failing)} failing",
        f"- Exact McNemar p-value (two-sided, {len(result.regressed) + len(result.fixed)} discordant cases): "
        f"{result.p_value:.4g}",
    ]
    if result.only_old or result.only_new:
        lines.append(f"- Not paired: {len(result.only_old)} case(s) only in old, {len(result.only_new)} only in new")
    lines += ["", "| Domain | Old | New | Delta |", "|---|---|---|---|"]
    for domain, old_passed, old_total, new_passed, new_total in result.domains:
        lines.append(
            f"| {markdown_cell(domain)} | {old_passed}/{old_total} | {new_passed}/{new_total} "
            f"| {new_passed - old_passed:+d} |"
        )
    for title, ids in (("Regressed", result.regressed), ("Fixed", result.fixed)):
        if ids:
            lines += ["", f"### {title}", ""] + [f"- {markdown_cell(case_id)}" for case_id in ids]
    return "\n".join(lines) + "\n"
