"""The pages of a review run: the run, each case (what was expected, asked and answered) and two runs compared."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bceval.jsonio import read_json_or_none
from bceval.layout import PrepareDir, RunDir
from bceval.scorecard.compare import pair
from bceval.viewer import svg
from bceval.viewer.collect import CaseRow, ReviewRun, read_text
from bceval.viewer.html import (
    badge,
    cost,
    definition,
    details,
    esc,
    filters,
    link,
    number,
    numbered,
    page,
    pre,
    row_data,
    safe_name,
    table,
)
from bceval.viewer.pages.common import case_href, compare_links, experiment_crumbs, problem_list, rate_text, ratio, up
from bceval.viewer.pages.transcript import conversation


def run_page(run: ReviewRun, compares: Sequence[tuple[str, str, str]] = ()) -> str:
    root = up(run.key)
    card = run.card or {}
    facts = [
        ("Verdict", esc(run.verdict)),
        ("Recall", esc(rate_text(*run.rate("positive")))),
        ("Clean rate", esc(rate_text(*run.rate("clean")))),
        ("Adapter", esc(run.adapter)),
        ("Model", esc(run.model)),
        ("Epoch", esc(run.record.get("epoch", "-"))),
        ("Cost", esc(cost(run.cost))),
    ]
    if card:
        corpus = card.get("corpus") or {}
        dirty = " (dirty)" if corpus.get("dirty") else ""
        limits = card.get("thresholds") or {}
        recall, clean = limits.get("minimumExpectedRecall"), limits.get("minimumCleanRate")
        facts += [
            ("Corpus", esc(f"{corpus.get('name')} at {corpus.get('commit')}{dirty}")),
            ("Request set", f"<code>{esc(corpus.get('requestSetSha256'))}</code>"),
            ("Thresholds", esc(f"recall ≥ {recall}, clean rate ≥ {clean}")),
            ("Created", esc(card.get("createdAt"))),
        ]
    crumbs = experiment_crumbs(root, run.experiment)
    if crumbs:
        facts.append(("Experiment", link(crumbs[0][0], f"{run.experiment}: arm {run.arm}, epoch {run.epoch}")))
    body = definition(facts) + problem_list(card.get("problems"))
    rows = [
        [
            link(f"cases/{safe_name(case.model_id)}.html", case.id, **{"class": "case-link"}),
            esc(case.domain),
            esc(case.kind),
            badge(case.passed, case.infra is not None),
            esc(case.reason),
            esc(cost(case.usage.get("costUsd"))),
        ]
        for case in run.cases
    ]
    attrs = [
        row_data(f"{case.id} {case.domain} {case.kind}", case.failed, case.infra is not None) for case in run.cases
    ]
    body += "<h2>Cases</h2>" + filters(failed=True, infra=True)
    body += table(["Case", "Domain", "Kind", "Verdict", "Why", "Cost"], rows, "cases", attrs)
    body += compare_links(root, compares, "Compare")
    return page(f"Run {run.name}", body, root, crumbs)


def _request_section(request: Any) -> str:
    if not isinstance(request, dict):
        return '<p class="muted">The request file is no longer in the prepare folder.</p>'
    items = [("Protocol", esc(request.get("protocol"))), ("Skill", f"<code>{esc(request.get('skill'))}</code>")]
    cases = request.get("cases") or []
    if cases and isinstance(cases[0], dict) and cases[0].get("context"):
        items.append(("Context", esc(cases[0]["context"])))
    out = definition(items)
    rows = [
        [
            f"<code>{esc(c.get('path'))}</code>",
            esc(c.get("title")),
            esc(c.get("description")),
            esc(", ".join(str(k) for k in c.get("keywords") or [])),
        ]
        for c in request.get("candidateArticles") or []
        if isinstance(c, dict)
    ]
    out += f"<h3>Candidate articles ({len(rows)})</h3>" + table(
        ["Path", "Title", "Description", "Keywords"], rows, "candidates"
    )
    if request.get("leafInstructions"):
        out += details("Leaf instructions", pre(request["leafInstructions"]))
    return out


def _view_files(transcript: Any) -> str:
    view = transcript.get("view") if isinstance(transcript, dict) else None
    files = view.get("files") if isinstance(view, dict) else None
    if not isinstance(files, list):
        return '<p class="muted">The view\'s file list is recorded for live agents only.</p>'
    rows = [
        [
            f"<code>{esc(f.get('path'))}</code>",
            esc(f.get("size", "")),
            f"<code>{esc(str(f.get('sha256', ''))[:16])}</code>",
        ]
        for f in files
        if isinstance(f, dict)
    ]
    return f"<p>View digest <code>{esc(view.get('sha256'))}</code></p>" + table(["Path", "Bytes", "SHA-256"], rows)


def case_page(run: ReviewRun, case: CaseRow) -> str:
    root = up(f"{run.key}/cases")
    asked = run.asked
    transcript = read_json_or_none(run.directory / case.transcript) if case.transcript else None
    code = read_text(PrepareDir(asked).case_file(case.model_id)) if asked else None
    verdict_rows = [[esc(path), "yes" if path in case.findings else "no"] for path in case.expected]
    verdict_rows += [[esc(path), "reported, not expected"] for path in case.findings if path not in case.expected]
    answer = "cached" if case.cached else f"shared from {case.shared_from}" if case.shared_from else "asked"
    body = f'<p class="badge infra">The agent failed: {esc(case.infra)}</p>' if case.infra else ""
    body += definition(
        [
            ("Verdict", badge(case.passed, case.infra is not None)),
            ("Why", esc(case.reason)),
            ("Case", esc(f"{case.id} ({case.model_id}), {case.domain}, {case.kind}")),
            ("Run", link("../index.html", run.name)),
            ("Answer", esc(answer)),
        ]
    )
    clean = "<p>A clean control: the right answer is no finding, and the agent reported none.</p>"
    expected = table(["Article", "Reported by the agent"], verdict_rows, "expected") if verdict_rows else clean
    body += '<h2 id="expected">Expected against the answer</h2>' + expected
    body += '<h2 id="asked">What the agent was asked</h2>'
    if asked is None:
        body += '<p class="muted">What this run was asked is kept nowhere: it was scored before bceval kept them.</p>'
    else:
        body += _request_section(read_json_or_none(PrepareDir(asked).case_request(case.model_id)))
    gone = '<p class="muted">The case file is gone.</p>'
    body += "<h3>The case code</h3>" + (numbered(code) if code is not None else gone)
    body += "<h2>The view's files</h2>" + _view_files(transcript)
    body += '<h2 id="conversation">Conversation</h2>' + conversation(transcript, RunDir(run.directory))
    body += "<h2>Cost and tokens</h2>" + definition((k, number(v)) for k, v in case.usage.items())
    return page(f"Case {case.id}", body, root, [(f"{root}/{run.key}/index.html", run.name)])


NOISE = "one sample per case cannot tell agent noise from a change"


def compare_page(old: ReviewRun, new: ReviewRun, key: str, title: str) -> str:
    """`key` is the page's folder (compare); links to both runs' case pages are relative to the root."""
    root = up(key)
    before = {c.id: c for c in old.cases}
    after = {c.id: c for c in new.cases}
    paired = pair({i: c.passed is True for i, c in before.items()}, {i: c.passed is True for i, c in after.items()})
    names = ("regressed", "fixed", "still failing", "still passing")
    groups = {name: getattr(paired, name.replace(" ", "_")) for name in names}
    changed = len(paired.fixed) + len(paired.regressed)
    body = definition(
        [
            ("Old", link(f"{root}/{old.key}/index.html", old.name)),
            ("New", link(f"{root}/{new.key}/index.html", new.name)),
            ("Paired cases", esc(sum(len(v) for v in groups.values()))),
            ("Fixed / regressed", esc(f"{len(paired.fixed)} / {len(paired.regressed)}")),
            ("Exact McNemar p", esc(f"{paired.p_value:.4g} (two-sided, over the {changed} discordant cases; {NOISE})")),
        ]
    )
    if paired.only_old or paired.only_new:
        body += f"<p>Cases in one run only: {esc(', '.join(paired.only_old + paired.only_new))}</p>"
    domains = sorted({c.domain for c in old.cases} | {c.domain for c in new.cases})

    def domain_rates(run: ReviewRun) -> tuple[str, list[float | None]]:
        per_domain = ([c.passed is True for c in run.cases if c.domain == domain] for domain in domains)
        return run.name, [ratio(sum(passes), len(passes)) for passes in per_domain]

    body += svg.grouped_bars("Pass rate per domain", domains, [domain_rates(old), domain_rates(new)])

    def answer(run: ReviewRun, case: CaseRow, label: str) -> str:
        to_case = link(f"{root}/{case_href(run.key, case.model_id)}", label)
        return f"{to_case} {badge(case.passed, case.infra is not None)}"

    changes = [(group, case_id, before[case_id], after[case_id]) for group, ids in groups.items() for case_id in ids]
    rows = [
        [esc(g), esc(i), answer(old, a, "old answer"), answer(new, b, "new answer"), esc(a.reason), esc(b.reason)]
        for g, i, a, b in changes
    ]
    attrs = [row_data(f"{g} {i}", g == "regressed") + f' class="{g.split()[0]}"' for g, i, _, _ in changes]
    headers = ["Change", "Case", old.name, new.name, "Old: why", "New: why"]
    body += "<h2>Cases</h2>" + filters(failed=False) + table(headers, rows, "compare", attrs)
    return page(title, body, root)
