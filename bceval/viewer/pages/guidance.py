"""The pages of a guidance run: the run and each case (expected knowledge against the agent's report)."""

from __future__ import annotations

from bceval.jsonio import read_json_or_none
from bceval.layout import RunDir
from bceval.viewer.collect import GuidanceCaseRow, GuidanceRun
from bceval.viewer.html import badge, cost, definition, esc, filters, link, page, row_data, safe_name, table
from bceval.viewer.pages.common import experiment_crumbs, problem_list, up
from bceval.viewer.pages.transcript import conversation, json_value


def guidance_page(run: GuidanceRun) -> str:
    root = up(run.key)
    record = run.record
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    body = definition(
        [
            ("Verdict", esc(run.verdict)),
            ("Adapter", esc(record.get("adapter"))),
            ("Manifest", f"<code>{esc(record.get('manifest'))}</code>"),
            ("Manifest SHA-256", f"<code>{esc(record.get('manifestSha256'))}</code>"),
            ("Cost", esc(cost(usage.get("costUsd")))),
        ]
    )
    body += problem_list(record.get("problems"))
    rows = [
        [
            link(f"cases/{safe_name(case.model_id)}.html", case.id, **{"class": "case-link"}),
            badge(case.passed),
            esc(case.expected_outcome),
            esc(case.reported_outcome or "no report"),
            esc(", ".join(case.required) or "none"),
            esc(", ".join(case.reported) or "none"),
            esc(_evidence(case)),
        ]
        for case in run.cases
    ]
    attrs = [row_data(case.id, case.passed is False) for case in run.cases]
    headers = ["Case", "Verdict", "Expected outcome", "Reported outcome", "Required knowledge", "Reported knowledge"]
    body += "<h2>Cases</h2>" + filters(failed=True) + table([*headers, "Evidence"], rows, "cases", attrs)
    return page(f"Guidance run {run.name}", body, root, experiment_crumbs(root, run.experiment))


def _evidence(case: GuidanceCaseRow) -> str:
    changed = [p for p in case.problems if "changed since the baseline" in p]
    if changed:
        where = f"workspace {case.workspace}" if case.workspace else "the knowledge checkout"
        files = "; ".join(case.changes) or "which file is not known (the workspace is gone or its change was undone)"
        return f"{where} changed: {files}"
    return "untouched" if case.passed is not None else "not scored"


def guidance_case_page(run: GuidanceRun, case: GuidanceCaseRow) -> str:
    root = up(f"{run.key}/cases")
    transcript = read_json_or_none(run.directory / case.transcript) if case.transcript else None
    body = definition(
        [
            ("Verdict", badge(case.passed)),
            ("Problems", esc("; ".join(case.problems) or "none")),
            ("Expected outcome", esc(case.expected_outcome)),
            ("Reported outcome", esc(case.reported_outcome or "no report")),
            ("Evidence", esc(_evidence(case))),
        ]
    )
    expected = [(p, "required") for p in case.required] + [(p, "optional") for p in case.optional]
    expected += [(p, "not expected") for p in case.reported if p not in case.required and p not in case.optional]
    rows = [[f"<code>{esc(p)}</code>", how, "yes" if p in case.reported else "no"] for p, how in expected]
    body += '<h2 id="expected">Expected against the report</h2>' + table(["Article", "Expected", "Reported"], rows)
    body += "<h2>The report</h2>" + json_value(case.report)
    body += '<h2 id="conversation">Conversation</h2>' + conversation(transcript, RunDir(run.directory))
    return page(f"Guidance case {case.id}", body, root, [(f"{root}/{run.key}/index.html", run.name)])
