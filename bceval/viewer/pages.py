"""The viewer's pages as HTML strings, from what `collect` read: index, run, case, compare, experiment and guidance
run. Pure rendering: each function returns a page; `site` decides where it goes and writes it.

Every page is given `root`, the relative path back to the site's root, so links stay relative."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from bceval.layout import OutDir, RunDir
from bceval.scorecard.stats import mcnemar_exact, wilson_interval
from bceval.viewer import markdown, svg
from bceval.viewer.collect import CaseRow, Experiment, GuidanceCaseRow, GuidanceRun, ReviewRun, Site, read_json
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

CASES_PER_PAGE = 100  # an experiment's case grid is split into pages of this many cases
FLAKY_LISTED = 50  # flaky (arm, case) pairs listed with their cells at the top of the experiment page


def up(key: str) -> str:
    """From a page in folder `key` back to the root ('runs/x' -> '../..')."""
    return "/".join(".." for _ in key.split("/")) if key else ""


def case_href(run_key: str, model_id: str) -> str:
    return f"{run_key}/cases/{safe_name(model_id)}.html"


def rate_text(passed: int, total: int) -> str:
    if not total:
        return "-"
    low, high = wilson_interval(passed, total)
    return f"{passed / total:.3f} ({passed}/{total}), Wilson 95% {low:.2f}–{high:.2f}"


def _ratio(passed: int, total: int) -> float | None:
    return passed / total if total else None


# --- index -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    kind: str
    name: str
    href: str
    adapter: str
    model: str
    verdict: str
    score: str
    cost: str
    date: str


def index_page(site: Site, compares: Sequence[tuple[str, str, str]]) -> str:
    entries: list[Entry] = []
    for run in site.runs:
        positive, clean = run.rate("positive"), run.rate("clean")
        score = f"recall {_short(*positive)}, clean rate {_short(*clean)}"
        entries.append(
            Entry(
                "run",
                run.name,
                f"{run.key}/index.html",
                run.adapter,
                run.model,
                run.verdict,
                score,
                cost(run.cost),
                run.date,
            )
        )
    for experiment in site.experiments:
        report = experiment.report
        arms = report.get("arms") or []
        verdicts = "; ".join(
            f"{c.get('arm')}: {(c.get('result') or {}).get('verdict', '-')}" for c in report.get("comparisons") or []
        )
        adapters = ", ".join(sorted({str((a.get("settings") or {}).get("adapter") or "-") for a in arms}))
        models = ", ".join(sorted({str((a.get("settings") or {}).get("model") or "-") for a in arms}))
        spent = [
            a.get("usage", {}).get("costUsd")
            for a in arms
            if isinstance(a.get("usage", {}).get("costUsd"), int | float)
        ]
        entries.append(
            Entry(
                "experiment",
                experiment.name,
                f"experiments/{safe_name(experiment.name)}/index.html",
                adapters,
                models,
                verdicts or "-",
                f"{len(arms)} arms × {report.get('epochs')} epochs",
                cost(sum(spent)) if spent else "unknown",
                str(report.get("createdAt") or ""),
            )
        )
    for run in site.guidance:
        agreed = sum(c.reported_outcome == c.expected_outcome for c in run.cases)
        verdict = {True: "passed", False: "failed", None: "unfinished"}[run.passed]
        usage = run.record.get("usage") if isinstance(run.record.get("usage"), dict) else {}
        model = (run.record.get("agent") or {}).get("model") if isinstance(run.record.get("agent"), dict) else None
        entries.append(
            Entry(
                "guidance run",
                run.name,
                f"{run.key}/index.html",
                str(run.record.get("adapter", "-")),
                str(model or "-"),
                verdict,
                f"outcome agreement {_short(agreed, len(run.cases))}",
                cost(usage.get("costUsd")),
                "",
            )
        )
    entries.sort(key=lambda e: e.date, reverse=True)  # newest first; undated ones keep their order at the end
    rows = [
        [
            esc(e.kind),
            link(e.href, e.name),
            esc(e.adapter),
            esc(e.model),
            esc(e.verdict),
            esc(e.score),
            esc(e.cost),
            esc(e.date[:19].replace("T", " ")),
        ]
        for e in entries
    ]
    attrs = [row_data(" ".join([e.kind, e.name, e.adapter, e.model, e.verdict])) for e in entries]
    body = filters() + table(
        ["Kind", "Name", "Adapter", "Model", "Verdict", "Score", "Cost", "Date"], rows, "index", attrs
    )
    if not entries:
        body = (
            f"<p>Nothing to show yet in {esc(site.out)}: run <code>bceval score</code>, an experiment or a "
            "guidance run.</p>"
        )
    if compares:
        items = "".join(f"<li>{link(href, f'{a} → {b}')}</li>" for a, b, href in compares)
        body += f'<h2>Compare runs</h2><ul class="compares">{items}</ul>'
    return page("Runs, experiments and guidance runs", body, "")


def _short(passed: int, total: int) -> str:
    return f"{passed / total:.3f} ({passed}/{total})" if total else "-"


# --- run ---------------------------------------------------------------------------------------------------------


def _why(case: CaseRow) -> str:
    return case.reason


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
        thresholds = card.get("thresholds") or {}
        facts += [
            (
                "Corpus",
                esc(f"{corpus.get('name')} at {corpus.get('commit')}" + (" (dirty)" if corpus.get("dirty") else "")),
            ),
            ("Request set", f"<code>{esc(corpus.get('requestSetSha256'))}</code>"),
            (
                "Thresholds",
                esc(
                    f"recall ≥ {thresholds.get('minimumExpectedRecall')}, clean rate ≥ "
                    f"{thresholds.get('minimumCleanRate')}"
                ),
            ),
            ("Created", esc(card.get("createdAt"))),
        ]
    if run.experiment:
        facts.append(
            (
                "Experiment",
                link(
                    f"{root}/experiments/{safe_name(run.experiment)}/index.html",
                    f"{run.experiment}: arm {run.arm}, epoch {run.epoch}",
                ),
            )
        )
    body = definition(facts)
    problems = card.get("problems") or []
    if problems:
        body += "<h2>Problems</h2><ul>" + "".join(f"<li>{esc(p)}</li>" for p in problems) + "</ul>"
    body += "<h2>Cases</h2>" + filters(failed=True, infra=True) + _case_table(run, "")
    if compares:
        body += (
            "<h2>Compare</h2><ul>"
            + "".join(f"<li>{link(f'{root}/{h}', f'{a} → {b}')}</li>" for a, b, h in compares)
            + "</ul>"
        )
    crumbs = [(f"{root}/experiments/{safe_name(run.experiment)}/index.html", run.experiment)] if run.experiment else []
    return page(f"Run {run.name}", body, root, crumbs)


def _case_table(run: ReviewRun, prefix: str) -> str:
    rows, attrs = [], []
    for case in run.cases:
        rows.append(
            [
                link(f"{prefix}cases/{safe_name(case.model_id)}.html", case.id, **{"class": "case-link"}),
                esc(case.domain),
                esc(case.kind),
                badge(case.passed, case.infra is not None),
                esc(_why(case)),
                esc(cost(case.usage.get("costUsd"))),
            ]
        )
        attrs.append(row_data(f"{case.id} {case.domain} {case.kind}", case.failed, case.infra is not None))
    return table(["Case", "Domain", "Kind", "Verdict", "Why", "Cost"], rows, "cases", attrs)


# --- case --------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _cached_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


@lru_cache(maxsize=4096)
def _cached_request(path: Path) -> Any:
    text = _cached_text(path)
    try:
        return json.loads(text) if text is not None else None
    except ValueError:
        return None


@lru_cache(maxsize=1024)
def _asked(path: Path) -> str:
    """The request section of a request file (experiment arms and epochs share one request: rendered once)."""
    return _request_section(_cached_request(path))


@lru_cache(maxsize=1024)
def _numbered_file(path: Path) -> str:
    return numbered(_cached_text(path) or "")


def forget_files() -> None:
    """Drop what was read and rendered from files: a new build reads them afresh."""
    for cached in (_cached_text, _cached_request, _asked, _numbered_file):
        cached.cache_clear()


def _request_section(request: Any) -> str:
    if not isinstance(request, dict):
        return '<p class="muted">The request file is no longer in the prepare folder.</p>'
    items = [("Protocol", esc(request.get("protocol"))), ("Skill", f"<code>{esc(request.get('skill'))}</code>")]
    cases = request.get("cases") or []
    if cases and isinstance(cases[0], dict) and cases[0].get("context"):
        items.append(("Context", esc(cases[0]["context"])))
    out = definition(items)
    candidates = request.get("candidateArticles") or []
    rows = [
        [
            f"<code>{esc(c.get('path'))}</code>",
            esc(c.get("title")),
            esc(c.get("description")),
            esc(", ".join(str(k) for k in c.get("keywords") or [])),
        ]
        for c in candidates
        if isinstance(c, dict)
    ]
    out += f"<h3>Candidate articles ({len(rows)})</h3>" + table(
        ["Path", "Title", "Description", "Keywords"], rows, "candidates"
    )
    if request.get("leafInstructions"):
        out += details("Leaf instructions", pre(request["leafInstructions"]))
    return out


KNOWN_TRANSCRIPT = {"schemaVersion", "run", "answeredBy", "case", "attempts", "usage", "view", "outcome"}
KNOWN_ATTEMPT = {"stdout", "stderr"}


def _events(stdout: str) -> list[dict[str, Any]]:
    """The JSON events of an agent's stream output (one object a line), if it is one."""
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def _event_text(event: dict[str, Any]) -> str:
    message = event.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        texts = []
        for part in message["content"]:
            if isinstance(part, dict):
                texts.append(str(part.get("text") or part.get("name") or part.get("type") or ""))
        return " ".join(texts)
    if "result" in event:
        return str(event.get("result"))
    return json.dumps({k: v for k, v in event.items() if k not in ("type", "subtype")})[:2000]


def _value(value: Any) -> str:
    """Any JSON value of a transcript, readable: scalars as text, the rest as indented JSON (escaped)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return esc(value)
    return pre(json.dumps(value, indent=2, ensure_ascii=False))


def _turns(items: list[Any]) -> str:
    """A list of turns or tool calls (an api agent's), each as a table of its fields."""
    out = []
    for number_, item in enumerate(items, 1):
        if isinstance(item, dict):
            out.append(
                f"<h4>#{number_} {esc(item.get('role') or item.get('type') or item.get('tool') or '')}</h4>"
                + definition((str(k), _value(v)) for k, v in item.items())
            )
        else:
            out.append(_value(item))
    return "".join(out)


def conversation(transcript: Any, prompts: RunDir) -> str:
    """A transcript as a reader follows it: per attempt the wait, the prompt, the outcome, the output and the
    agent's events; anything else it holds (turns, tool calls, read evidence of an api agent) generically."""
    if not isinstance(transcript, dict):
        return '<p class="muted">No transcript: this answer did not come from a live agent.</p>'
    out = []
    described = transcript.get("answeredBy")
    if isinstance(described, dict):
        out.append(definition((str(k), _value(v)) for k, v in described.items()))
    if transcript.get("cached"):
        out.append("<p>Answered from the cache: the attempts below are those of the answer that was cached.</p>")
    for key, value in transcript.items():
        if key in KNOWN_TRANSCRIPT or key in ("cached", "cacheKey"):
            continue
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out.append(f"<h3>{esc(key)}</h3>" + _turns(value))
        else:
            out.append(definition([(key, _value(value))]))
    attempts = transcript.get("attempts") or []
    for attempt in attempts if isinstance(attempts, list) else []:
        if not isinstance(attempt, dict):
            continue
        head = f"Attempt {attempt.get('attempt', '?')}: {attempt.get('outcome', '-')}"
        facts = [
            (str(k), _value(v)) for k, v in attempt.items() if k not in KNOWN_ATTEMPT and not isinstance(v, list | dict)
        ]
        body = definition(facts)
        digest = attempt.get("promptSha256") or transcript.get("promptSha256")
        if isinstance(digest, str):
            text = _cached_text(prompts.prompt(digest)) if len(digest) == 64 and digest.isalnum() else None
            body += details(
                f"Prompt sent ({digest[:12]})",
                pre(text) if text is not None else '<p class="muted">Prompt text not stored (older run).</p>',
            )
        for key in ("argv", "usage"):
            if key in attempt:
                body += details(key, _value(attempt[key]))
        for key, value in attempt.items():  # an api agent's turns, tool calls and reads, whatever their names
            if key in ("argv", "usage") or not isinstance(value, list | dict):
                continue
            if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
                body += f"<h4>{esc(key)}</h4>" + _turns(value)
            else:
                body += details(key, _value(value))
        stdout = str(attempt.get("stdout") or "")
        events = _events(stdout)
        if events:
            rows = [[esc(e.get("type")), esc(e.get("subtype")), esc(_event_text(e)[:4000])] for e in events]
            body += "<h4>Agent events</h4>" + table(["Type", "Subtype", "Content"], rows, "events")
        body += details("stdout", pre(stdout, "stdout"), open_=not events) + details(
            "stderr", pre(attempt.get("stderr") or "", "stderr")
        )
        out.append(f'<section class="attempt"><h3>{esc(head)}</h3>{body}</section>')
    return "".join(out)


def _view_files(transcript: Any) -> str:
    view = transcript.get("view") if isinstance(transcript, dict) else None
    files = view.get("files") if isinstance(view, dict) else None
    if not isinstance(files, list):
        return '<p class="muted">The view\'s file list is recorded for live agents only.</p>'
    rows = [
        [
            f"<code>{esc(f.get('path'))}</code>",
            esc(f.get("bytes", "")),
            f"<code>{esc(str(f.get('sha256', ''))[:16])}</code>",
        ]
        for f in files
        if isinstance(f, dict)
    ]
    return f"<p>View digest <code>{esc(view.get('sha256'))}</code></p>" + table(["Path", "Bytes", "SHA-256"], rows)


def case_page(run: ReviewRun, case: CaseRow) -> str:
    key = f"{run.key}/cases"
    root = up(key)
    prepare = OutDir(run.out).prepare
    run_dir = RunDir(run.directory)
    transcript = read_json(run.directory / case.transcript) if case.transcript else None
    code = _cached_text(prepare.case_file(case.model_id))
    verdict_rows = [[esc(path), "yes" if path in case.findings else "no"] for path in case.expected]
    verdict_rows += [[esc(path), "reported, not expected"] for path in case.findings if path not in case.expected]
    body = definition(
        [
            ("Verdict", badge(case.passed, case.infra is not None)),
            ("Why", esc(_why(case))),
            ("Case", esc(f"{case.id} ({case.model_id}), {case.domain}, {case.kind}")),
            ("Run", link("../index.html", run.name)),
            (
                "Answer",
                esc("cached" if case.cached else f"shared from {case.shared_from}" if case.shared_from else "asked"),
            ),
        ]
    )
    body += '<h2 id="expected">Expected against the answer</h2>'
    body += (
        table(["Article", "Reported by the agent"], verdict_rows, "expected")
        if verdict_rows
        else ("<p>A clean control: the right answer is no finding, and the agent reported none.</p>")
    )
    body += '<h2 id="asked">What the agent was asked</h2>'
    body += _asked(prepare.case_request(case.model_id))
    gone = '<p class="muted">The case file is gone.</p>'
    body += "<h3>The case code</h3>" + (_numbered_file(prepare.case_file(case.model_id)) if code is not None else gone)
    body += "<h2>The view's files</h2>" + _view_files(transcript)
    body += '<h2 id="conversation">Conversation</h2>' + conversation(transcript, run_dir)
    usage = case.usage
    body += "<h2>Cost and tokens</h2>" + definition((k, number(v)) for k, v in usage.items())
    crumbs = [(f"{root}/{run.key}/index.html", run.name)]
    return page(f"Case {case.id}", body, root, crumbs)


# --- compare -----------------------------------------------------------------------------------------------------


def compare_page(old: ReviewRun, new: ReviewRun, key: str, title: str) -> str:
    """`key` is the page's folder (compare); links to both runs' case pages are relative to the root."""
    root = up(key)
    before = {c.id: c for c in old.cases}
    after = {c.id: c for c in new.cases}
    groups: dict[str, list[str]] = {"regressed": [], "fixed": [], "still failing": [], "still passing": []}
    for case_id, row in after.items():
        if case_id not in before:
            continue
        was, now = before[case_id].passed is True, row.passed is True
        group = "still passing" if was and now else "regressed" if was else "fixed" if now else "still failing"
        groups[group].append(case_id)
    only_old = [c for c in before if c not in after]
    only_new = [c for c in after if c not in before]
    p = mcnemar_exact(len(groups["regressed"]), len(groups["fixed"]))
    body = definition(
        [
            ("Old", link(f"{root}/{old.key}/index.html", old.name)),
            ("New", link(f"{root}/{new.key}/index.html", new.name)),
            ("Paired cases", esc(sum(len(v) for v in groups.values()))),
            ("Fixed / regressed", esc(f"{len(groups['fixed'])} / {len(groups['regressed'])}")),
            (
                "Exact McNemar p",
                esc(
                    f"{p:.4g} (two-sided, over the {len(groups['fixed']) + len(groups['regressed'])} "
                    "discordant cases; one sample per case cannot tell agent noise from a change)"
                ),
            ),
        ]
    )
    if only_old or only_new:
        body += f"<p>Cases in one run only: {esc(', '.join(only_old + only_new))}</p>"
    domains = sorted({c.domain for c in old.cases} | {c.domain for c in new.cases})

    def domain_rate(run: ReviewRun, domain: str) -> float | None:
        rows = [c for c in run.cases if c.domain == domain]
        return _ratio(sum(c.passed is True for c in rows), len(rows))

    body += svg.grouped_bars(
        "Pass rate per domain",
        domains,
        [(old.name, [domain_rate(old, d) for d in domains]), (new.name, [domain_rate(new, d) for d in domains])],
    )
    rows, attrs = [], []
    for group in ("regressed", "fixed", "still failing", "still passing"):
        for case_id in groups[group]:
            a, b = before[case_id], after[case_id]
            rows.append(
                [
                    esc(group),
                    esc(case_id),
                    link(f"{root}/{case_href(old.key, a.model_id)}", "old answer")
                    + " "
                    + badge(a.passed, a.infra is not None),
                    link(f"{root}/{case_href(new.key, b.model_id)}", "new answer")
                    + " "
                    + badge(b.passed, b.infra is not None),
                    esc(_why(a)),
                    esc(_why(b)),
                ]
            )
            attrs.append(row_data(f"{group} {case_id}", group == "regressed") + f' class="{group.split()[0]}"')
    body += (
        "<h2>Cases</h2>"
        + filters(failed=False)
        + table(["Change", "Case", old.name, new.name, "Old: why", "New: why"], rows, "compare", attrs)
    )
    return page(title, body, root)


# --- guidance run ------------------------------------------------------------------------------------------------


def guidance_page(run: GuidanceRun) -> str:
    root = up(run.key)
    record = run.record
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    body = definition(
        [
            ("Verdict", esc({True: "passed", False: "failed", None: "unfinished"}[run.passed])),
            ("Adapter", esc(record.get("adapter"))),
            ("Manifest", f"<code>{esc(record.get('manifest'))}</code>"),
            ("Manifest SHA-256", f"<code>{esc(record.get('manifestSha256'))}</code>"),
            ("Cost", esc(cost(usage.get("costUsd")))),
        ]
    )
    problems = record.get("problems") or []
    if problems:
        body += "<h2>Problems</h2><ul>" + "".join(f"<li>{esc(p)}</li>" for p in problems) + "</ul>"
    rows, attrs = [], []
    for case in run.cases:
        rows.append(
            [
                link(f"cases/{safe_name(case.model_id)}.html", case.id, **{"class": "case-link"}),
                badge(case.passed),
                esc(case.expected_outcome),
                esc(case.reported_outcome or "no report"),
                esc(", ".join(case.required) or "none"),
                esc(", ".join(case.reported) or "none"),
                esc(_evidence(case)),
            ]
        )
        attrs.append(row_data(case.id, case.passed is False))
    body += (
        "<h2>Cases</h2>"
        + filters(failed=True)
        + table(
            [
                "Case",
                "Verdict",
                "Expected outcome",
                "Reported outcome",
                "Required knowledge",
                "Reported knowledge",
                "Evidence",
            ],
            rows,
            "cases",
            attrs,
        )
    )
    crumbs = [(f"{root}/experiments/{safe_name(run.experiment)}/index.html", run.experiment)] if run.experiment else []
    return page(f"Guidance run {run.name}", body, root, crumbs)


def _evidence(case: GuidanceCaseRow) -> str:
    changed = [p for p in case.problems if "changed since the baseline" in p]
    if changed:
        where = f"workspace {case.workspace}" if case.workspace else "the knowledge checkout"
        files = (
            "; ".join(case.changes)
            if case.changes
            else "which file is not known (the workspace is gone or its change was undone)"
        )
        return f"{where} changed: {files}"
    return "untouched" if case.passed is not None else "not scored"


def guidance_case_page(run: GuidanceRun, case: GuidanceCaseRow) -> str:
    root = up(f"{run.key}/cases")
    transcript = read_json(run.directory / case.transcript) if case.transcript else None
    body = definition(
        [
            ("Verdict", badge(case.passed)),
            ("Problems", esc("; ".join(case.problems) or "none")),
            ("Expected outcome", esc(case.expected_outcome)),
            ("Reported outcome", esc(case.reported_outcome or "no report")),
            ("Evidence", esc(_evidence(case))),
        ]
    )
    rows = [[f"<code>{esc(p)}</code>", "required", "yes" if p in case.reported else "no"] for p in case.required]
    rows += [[f"<code>{esc(p)}</code>", "optional", "yes" if p in case.reported else "no"] for p in case.optional]
    rows += [
        [f"<code>{esc(p)}</code>", "not expected", "yes"]
        for p in case.reported
        if p not in case.required and p not in case.optional
    ]
    body += '<h2 id="expected">Expected against the report</h2>' + table(["Article", "Expected", "Reported"], rows)
    body += "<h2>The report</h2>" + _value(case.report)
    body += '<h2 id="conversation">Conversation</h2>' + conversation(transcript, RunDir(run.directory))
    return page(f"Guidance case {case.id}", body, root, [(f"{root}/{run.key}/index.html", run.name)])


# --- experiment --------------------------------------------------------------------------------------------------


def _interval(value: Any) -> tuple[float | None, float | None]:
    if isinstance(value, dict):
        return value.get("low"), value.get("high")
    return None, None


def _pooled(summary: dict[str, Any]) -> float | None:
    recall, clean = summary.get("recall") or {}, summary.get("clean_rate") or {}
    total = (recall.get("total") or 0) + (clean.get("total") or 0)
    return _ratio((recall.get("passed") or 0) + (clean.get("passed") or 0), total)


def experiment_plots(report: dict[str, Any]) -> str:
    arms = report.get("arms") or []
    forest_rows = []
    for comparison in report.get("comparisons") or []:
        result = comparison.get("result") or {}
        for measure, label in (("recall", "recall"), ("clean_rate", "clean rate")):
            part = result.get(measure) or {}
            low, high = _interval(part.get("interval"))
            forest_rows.append(svg.Interval(f"{comparison.get('arm')} {label}", part.get("difference"), low, high))
    out = ""
    if forest_rows:
        out += svg.forest("Difference against the control (95% paired bootstrap interval)", forest_rows)
    points = [
        (str(a.get("name")), (a.get("usage") or {}).get("costUsd"), _pooled(a.get("summary") or {})) for a in arms
    ]
    if any(x is not None for _, x, _ in points):
        out += svg.scatter("Cost against score per arm", points, "cost (USD)", "pass rate")
    else:
        out += '<p class="muted">Cost against score: no arm\'s agent reported a cost.</p>'
    epochs = int(report.get("epochs") or 1)
    series = []
    for arm in arms:
        per_epoch = (arm.get("summary") or {}).get("per_epoch") or []
        series.append((str(arm.get("name")), [_pooled(e) for e in per_epoch][:epochs]))
    out += svg.lines("Pass rate per epoch", [f"epoch {n}" for n in range(1, epochs + 1)], series)
    return out


def _cell(experiment: Experiment, root: str, arm: str, epoch: int, model_id: str, passed: Any) -> str:
    run = experiment.runs.get((arm, epoch))
    mark = {True: "✓", False: "✗", None: "–"}.get(passed, "–")
    label = {True: "passed", False: "failed", None: "no answer"}.get(passed, "no answer")
    if run is None:
        return f'<span title="{esc(label)}">{mark}</span>'
    href = case_href(run.key, model_id)
    here = f"experiments/{safe_name(experiment.name)}/"  # the experiment's pages: its runs are below them
    href = href[len(here) :] if href.startswith(here) else f"{root}/{href}"
    return link(href, mark, title=f"{arm} e{epoch} {label}", data_cell=f"{arm}|{epoch}")


def experiment_grid(experiment: Experiment, cases: Sequence[dict[str, Any]], root: str) -> str:
    arms = [str(a.get("name")) for a in experiment.report.get("arms") or []]
    flaky = _flaky(experiment.report)
    rows, attrs = [], []
    for line in cases:
        outcomes = line.get("outcomes") or {}
        cells = [esc(line.get("id")), esc(line.get("kind"))]
        for arm in arms:
            marks = [
                _cell(experiment, root, arm, n, str(line.get("modelId")), v)
                for n, v in enumerate(outcomes.get(arm) or [], 1)
            ]
            note = ' <span class="badge infra">flaky</span>' if (arm, line.get("id")) in flaky else ""
            cells.append(" ".join(marks) + note)
        rows.append(cells)
        failing = any(v is False for values in outcomes.values() for v in values or [])
        attrs.append(row_data(f"{line.get('id')} {line.get('domain')}", failing) + ' class="cell"')
    return filters(failed=True) + table(["Case", "Kind", *arms], rows, "grid", attrs)


def _flaky(report: dict[str, Any]) -> set[tuple[str, Any]]:
    found = set()
    for arm in report.get("arms") or []:
        for case in (arm.get("summary") or {}).get("flaky_cases") or []:
            found.add((str(arm.get("name")), case if isinstance(case, str) else (case or {}).get("id")))
    return found


def experiment_page(experiment: Experiment, key: str, pages: int, compares: Sequence[tuple[str, str, str]]) -> str:
    root = up(key)
    report = experiment.report
    lines_ = [
        f"{c.get('arm')} vs {c.get('control')} (control): {(c.get('result') or {}).get('verdict', '-')}; "
        f"{(c.get('result') or {}).get('explanation', '')}"
        for c in report.get("comparisons") or []
    ]
    body = '<ul class="verdicts">' + "".join(f"<li>{esc(line)}</li>" for line in lines_) + "</ul>"
    body += experiment_plots(report)
    flaky = sorted(_flaky(report), key=lambda pair: (pair[0], str(pair[1])))
    if flaky:
        by_id = {line.get("id"): line for line in report.get("cases") or []}
        items = []
        for arm, case_id in flaky[:FLAKY_LISTED]:
            line = by_id.get(case_id) or {}
            marks = " ".join(
                _cell(experiment, root, arm, n, str(line.get("modelId")), v)
                for n, v in enumerate((line.get("outcomes") or {}).get(arm) or [], 1)
            )
            items.append(f'<li class="flaky">{esc(arm)}: {esc(case_id)} {marks}</li>')
        more = len(flaky) - FLAKY_LISTED
        rest = f"<p>{more} more, each marked flaky in the grid below.</p>" if more > 0 else ""
        body += f"<h2>Flaky cases ({len(flaky)})</h2><ul>" + "".join(items) + "</ul>" + rest
    if compares:
        body += (
            "<h2>Arms side by side</h2><ul>"
            + "".join(f"<li>{link(f'{root}/{h}', f'{a} → {b}')}</li>" for a, b, h in compares)
            + "</ul>"
        )
    runs = sorted(experiment.runs.items())
    if runs:
        body += (
            "<h2>Runs</h2><ul>"
            + "".join(
                f"<li>{link(f'{root}/{run.key}/index.html', f'{arm} epoch {epoch}')}</li>" for (arm, epoch), run in runs
            )
            + "</ul>"
        )
    body += "<h2>Report</h2>" + (
        markdown.render(experiment.markdown) if experiment.markdown else '<p class="muted">report.md is missing.</p>'
    )
    cases = report.get("cases") or []
    body += f"<h2>Every cell ({len(cases)} cases)</h2>"
    if pages > 1:
        body += _pager(1, pages)
    body += experiment_grid(experiment, cases[:CASES_PER_PAGE], root)
    return page(f"Experiment {experiment.name}", body, root)


def _pager(current: int, pages: int) -> str:
    links = []
    for n in range(1, pages + 1):
        href = "index.html" if n == 1 else f"cases-{n}.html"
        links.append(f"<strong>{n}</strong>" if n == current else link(href, str(n)))
    return f'<nav class="pages">Pages: {" ".join(links)}</nav>'


def experiment_cases_page(experiment: Experiment, key: str, number_: int, pages: int) -> str:
    root = up(key)
    cases = (experiment.report.get("cases") or [])[(number_ - 1) * CASES_PER_PAGE : number_ * CASES_PER_PAGE]
    body = _pager(number_, pages) + experiment_grid(experiment, cases, root)
    return page(f"Experiment {experiment.name}: cases, page {number_}", body, root, [("index.html", experiment.name)])
