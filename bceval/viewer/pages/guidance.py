"""The pages of a guidance run: the run and each case (expected knowledge against the agent's report)."""

from __future__ import annotations

from bceval.viewer.collect import GuidanceCaseRow, GuidanceRun
from bceval.viewer.html import render
from bceval.viewer.pages.common import case_page_of, experiment_crumbs, up


def guidance_page(run: GuidanceRun) -> str:
    root = up(run.key)
    usage = run.record.get("usage") if isinstance(run.record.get("usage"), dict) else {}
    evidence = [_evidence(case) for case in run.cases]
    return render(
        "guidance_run.html",
        title=f"Guidance run {run.name}",
        root=root,
        crumbs=experiment_crumbs(root, run.experiment),
        run=run,
        cost=usage.get("costUsd"),
        rows=list(zip(run.cases, evidence, strict=True)),
    )


def _evidence(case: GuidanceCaseRow) -> str:
    changed = [p for p in case.problems if "changed since the baseline" in p]
    if changed:
        where = f"workspace {case.workspace}" if case.workspace else "the knowledge checkout"
        files = "; ".join(case.changes) or "which file is not known (the workspace is gone or its change was undone)"
        return f"{where} changed: {files}"
    return "untouched" if case.passed is not None else "not scored"


def guidance_case_page(run: GuidanceRun, case: GuidanceCaseRow) -> str:
    expected = [(p, "required") for p in case.required] + [(p, "optional") for p in case.optional]
    expected += [(p, "not expected") for p in case.reported if p not in case.required and p not in case.optional]
    title = f"Guidance case {case.id}"
    return case_page_of("guidance_case.html", title, run, case, evidence=_evidence(case), expected=expected)
