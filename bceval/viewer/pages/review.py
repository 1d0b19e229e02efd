"""The pages of a review run: the run, each case (what was expected, asked and answered) and two runs compared."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bceval.jsonio import read_json_or_none
from bceval.layout import PrepareDir
from bceval.scorecard.compare import pair
from bceval.viewer import svg
from bceval.viewer.collect import CaseRow, ReviewRun, read_text
from bceval.viewer.html import fragment, render
from bceval.viewer.pages.common import case_href, case_page_of, experiment_crumbs, rate_text, ratio, up


def run_page(run: ReviewRun, compares: Sequence[tuple[str, str, str]] = ()) -> str:
    root = up(run.key)
    rates = {"recall": rate_text(*run.rate("positive")), "clean": rate_text(*run.rate("clean"))}
    crumbs = experiment_crumbs(root, run.experiment)
    return render(
        "run.html", title=f"Run {run.name}", root=root, crumbs=crumbs, run=run, rates=rates, compares=compares
    )


def _view(transcript: Any) -> dict[str, Any]:
    """The agent's view as its transcript records it (a live agent's only), and its files."""
    view = transcript.get("view") if isinstance(transcript, dict) else None
    files = view.get("files") if isinstance(view, dict) else None
    if not isinstance(files, list):
        return {"view": None, "files": []}
    return {"view": view, "files": [entry for entry in files if isinstance(entry, dict)]}


def case_page(run: ReviewRun, case: CaseRow) -> str:
    asked = run.asked  # what THIS run was asked, not what the prepare folder holds today
    verdicts = [(path, "yes" if path in case.findings else "no") for path in case.expected]
    verdicts += [(path, "reported, not expected") for path in case.findings if path not in case.expected]
    return case_page_of(
        "case.html",
        f"Case {case.id}",
        run,
        case,
        answer="cached" if case.cached else f"shared from {case.shared_from}" if case.shared_from else "asked",
        verdicts=verdicts,
        asked=asked is not None,
        request=read_json_or_none(PrepareDir(asked).case_request(case.model_id)) if asked else None,
        code=read_text(PrepareDir(asked).case_file(case.model_id)) if asked else None,
        transcript=_view,
    )


NOISE = "one sample per case cannot tell agent noise from a change"


def compare_page(old: ReviewRun, new: ReviewRun, key: str, title: str) -> str:
    """`key` is the page's folder (compare); links to both runs' case pages are relative to the root."""
    root = up(key)
    before = {c.id: c for c in old.cases}
    after = {c.id: c for c in new.cases}
    paired = pair({i: c.passed is True for i, c in before.items()}, {i: c.passed is True for i, c in after.items()})
    names = ("regressed", "fixed", "still failing", "still passing")
    groups = {name: getattr(paired, name.replace(" ", "_")) for name in names}
    domains = sorted({c.domain for c in old.cases} | {c.domain for c in new.cases})

    def domain_rates(run: ReviewRun) -> tuple[str, list[float | None]]:
        per_domain = ([c.passed is True for c in run.cases if c.domain == domain] for domain in domains)
        return run.name, [ratio(sum(passes), len(passes)) for passes in per_domain]

    plot = svg.grouped_bars("Pass rate per domain", domains, [domain_rates(old), domain_rates(new)])
    changes = [
        (group, case_id, [(old, before[case_id], "old answer"), (new, after[case_id], "new answer")])
        for group, ids in groups.items()
        for case_id in ids
    ]
    hrefs = {
        (run.key, case.id): f"{root}/{case_href(run.key, case.model_id)}" for run in (old, new) for case in run.cases
    }
    changed = len(paired.fixed) + len(paired.regressed)
    p_value = f"{paired.p_value:.4g} (two-sided, over the {changed} discordant cases; {NOISE})"
    return render(
        "compare.html",
        title=title,
        root=root,
        old=old,
        new=new,
        paired=paired,
        count=sum(len(v) for v in groups.values()),
        p_value=p_value,
        plot=fragment(plot),
        changes=changes,
        hrefs=hrefs,
    )
