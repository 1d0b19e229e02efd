"""What a scored pr-review run writes besides score.json: per-entry records (the pairs, verdicts and chosen cells,
enough to re-score under another provider), the scorecard, BC-Bench's per-entry result fields, and the pages of
`bceval view --evaluator pr-review`: a run's numbers, and each entry's diff with gold and found comments at their
lines, matched pairs linked."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from bceval.errors import BcevalError
from bceval.escape import console, markdown
from bceval.evaluators.pr_review.answers import Review
from bceval.evaluators.pr_review.entries import read_dataset
from bceval.evaluators.pr_review.matching import Scored, normalized
from bceval.evaluators.pr_review.providers import TOLERANCE
from bceval.jsonio import dumps_compact, read_json_or_none, write_atomic
from bceval.layout import OutDir

HUNK = re.compile(r"@@ -\S+ \+(\d+)")
# The pages' markup and style, in templates/ beside this module; every value is escaped, and its control characters
# shown as escapes (`\x1b`) as on a console.
PAGES = Environment(
    loader=PackageLoader("bceval.evaluators.pr_review"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    finalize=lambda value: value if isinstance(value, Markup) or not isinstance(value, str) else console(value),
)


def _comment(c: Any) -> dict[str, Any]:
    return c.model_dump(exclude_none=True)


def entry_record(case: Any, review: Review, scored: Scored, failure: str | None) -> dict[str, Any]:
    """One entry's line of score.json."""
    s = scored.score
    clean = s.valid and s.matched == s.expected and s.incorrect == 0
    why = failure or review.problem or f"matched {s.matched} of {s.expected} gold comment(s), {s.incorrect} incorrect"
    pairs = [
        {
            "gold": p.gold,
            "found": p.found,
            "ignored": p.ignored,
            "distance": p.distance,
            "verdict": v,
            "chosen": p in scored.chosen,
        }
        for p, v in zip(scored.pairs, scored.verdicts, strict=True)
    ]
    return {
        "task": case.id,
        "instance_id": case.entry.instance_id,
        "kind": "positive" if case.entry.expected_comments else "negative",
        "area": case.entry.metadata.area,
        "view": case.view,
        "valid": s.valid,
        "clean": clean,
        "why": "" if clean else why,
        "dropped": list(review.dropped),
        **{k: getattr(s, k) for k in ("generated", "expected", "matched", "ignored", "incorrect", "missed")},
        "precision": round(s.precision, 6),
        "recall": round(s.recall, 6),
        "f1": round(s.f(1.0), 6),
        "f0_5": round(s.f(0.5), 6),
        "f2": round(s.f(2.0), 6),
        "severity_mae": round(s.severity_mae, 6),
        "severity_pairs": s.severity_pairs,
        "severity_exact": s.severity_exact,
        "gold": [_comment(c) for c in case.entry.expected_comments],
        "ignored_gold": [_comment(c) for c in case.entry.ignored_comments],
        "findings": [_comment(c) for c in review.findings],
        "pairs": pairs,
    }


def bcbench_export(document: dict[str, Any]) -> str:
    """One line per entry with the fields of BC-Bench's result, for a cross-check (verdicts: the provider's)."""
    lines = []
    for e in document["entries"]:
        line = {
            "instance_id": e["instance_id"],
            "valid_review_output": e["valid"],
            **{k: e[k] for k in ("matched", "incorrect", "missed", "ignored", "precision", "recall", "f1")},
            "f_beta_0_5": e["f0_5"],
            "f_beta_2": e["f2"],
            "severity_mae": e["severity_mae"],
            "generated_comments": e["findings"],
            "expected_comments": e["gold"],
            "ignored_comments": e["ignored_gold"],
            "judge_model": document["verdicts"]["provider"],
        }
        lines.append(dumps_compact(line))
    return "".join(lines)  # each line ends with its newline


def _header(d: dict[str, Any]) -> list[str]:
    v, n = d["verdicts"], d["numbers"]
    label = (
        "comparable with BC-Bench" if v["comparable_with_bcbench"] else "a bceval proxy, NOT comparable with BC-Bench"
    )
    views = sorted({e["view"] for e in d["entries"]})
    sensitivity = d.get("sensitivity")
    compared = f" Under {sensitivity['provider']}: micro F1 {sensitivity['micro']['f1']:.3f}." if sensitivity else ""
    return [
        f"Dataset: {d['dataset']['path']} (sha256 {d['dataset']['sha256'][:12]}); {n['entries']} entries scored, "
        f"{len(d['skipped'])} skipped (no view). View: {', '.join(views)}. Prompt: {d['prompt_version']}.",
        f"Verdicts: {v['provider']} ({label}); {v['by_article']} pair(s) confirmed by a shared article, "
        f"{v['by_location']} by file and lines alone, {v['unjudged']} unjudged. Matcher: {d['matcher']}.{compared}",
    ]


def _numbers_rows(n: dict[str, Any]) -> list[tuple[str, str]]:
    i = n["intervals"]
    rows = [(f"{k}", str(v)) for k, v in n["counts"].items()]
    for scope in ("micro", "macro"):
        rows += [(f"{scope} {k}", f"{v:.3f}") for k, v in n[scope].items()]
    rows += [
        ("micro F1 95% interval", str(i["micro_f1"])),
        ("macro F1 95% interval", str(i["macro_f1"])),
        ("severity MAE (weighted by matches)", str(n["severity"]["mae_weighted"])),
        ("severity MAE (pooled pairs)", str(n["severity"]["mae_pooled"])),
        ("severity exact agreement", str(n["severity"]["exact"])),
        ("valid-output rate", f"{n['valid_rate']:.3f}"),
        ("silent entries passed", f"{n['silent']['passed']} of {n['silent']['entries']} (Wilson {i['silent_rate']})"),
    ]
    return rows


def _article_rows(d: dict[str, Any]) -> list[tuple[str, ...]]:
    ranked = sorted((a for a in d["articles"] if a["ranked"]), key=lambda a: (-(a["recall"] or 0), a["article"]))
    shown = ranked + [a for a in d["articles"] if not a["ranked"]]
    return [
        (
            a["article"],
            str(a["recall"]),
            str(a["n"]),
            str(a["guard"]),
            str(a["guard_n"]),
            "yes" if a["ranked"] else "no (n below 3)",
        )
        for a in shown
    ]


def scorecard(d: dict[str, Any]) -> str:
    c = d["coverage"]
    lines = [
        f"# pr-review run {markdown(d['run'])} ({markdown(d['adapter'])})",
        "",
        *(markdown(h) for h in _header(d)),
        "",
    ]
    lines += ["| number | value |", "|---|---|", *(f"| {a} | {b} |" for a, b in _numbers_rows(d["numbers"]))]
    lines += ["", "| area | entries | micro P | micro R | micro F1 |", "|---|---|---|---|---|"]
    lines += [
        f"| {markdown(area)} | {n['entries']} | {n['precision']:.3f} | {n['recall']:.3f} | {n['f1']:.3f} |"
        for area, n in d["by_area"].items()
    ]
    lines += [
        "",
        f"Coverage against the corpus: {len(c['covered'])} of {c['inventory']} articles covered, "
        f"{len(c['zero_coverage'])} with no entry, {len(c['unknown'])} unknown slug(s), "
        f"{len(c['unannotated'])} entries unannotated.",
        "",
    ]
    lines += ["| article | recall | n | guard | n | ranked |", "|---|---|---|---|---|---|"]
    lines += [f"| {' | '.join(markdown(x) for x in row)} |" for row in _article_rows(d)]
    lines += [
        "",
        "| entry | kind | matched | expected | incorrect | P | R | F1 | dropped |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in d["entries"]:
        lines.append(
            f"| {markdown(e['instance_id'])} | {e['kind']} | {e['matched']} | {e['expected']} | {e['incorrect']} | "
            f"{e['precision']:.3f} | {e['recall']:.3f} | {e['f1']:.3f} | {len(e['dropped'])} |"
        )
    return "\n".join(lines) + "\n"


def _notes(comments: list[tuple[int, dict[str, Any]]], partner: dict[int, int]) -> list[dict[str, Any]]:
    return [
        {"index": i, "severity": c.get("severity") or "unspecified", "partner": partner.get(i), "body": c["body"]}
        for i, c in comments
    ]


def _diff_rows(patch: str, e: dict[str, Any]) -> list[dict[str, Any]]:
    """The patch, one row per line, with the gold and found comments of a file's new line beside it."""
    chosen = [p for p in e["pairs"] if p["chosen"] and not p["ignored"]]
    gold_partner = {p["gold"]: p["found"] for p in chosen}
    found_partner = {p["found"]: p["gold"] for p in chosen}
    rows, path, line = [], "", 0
    for text in patch.splitlines():
        here = None
        if text.startswith("+++ b/"):
            path = text[6:]
        elif text.startswith("@@"):
            line = int(HUNK.match(text).group(1)) if HUNK.match(text) else 0
        elif text.startswith(("+", " ")):
            here, line = line, line + 1
        gold = [(i, c) for i, c in enumerate(e["gold"]) if here and c["file"] == path and c["line_start"] == here]
        found = [
            (i, c)
            for i, c in enumerate(e["findings"])
            if here and normalized(c["file"]) == path and c["line_start"] == here
        ]
        rows.append(
            {
                "line": here or "",
                "text": text,
                "kind": "add" if text.startswith("+") else "del" if text.startswith("-") else "",
                "gold": _notes(gold, gold_partner),
                "found": _notes(found, found_partner),
            }
        )
    return rows


def _elsewhere(e: dict[str, Any]) -> list[str]:
    """The findings in a file with no gold comment: they pair with nothing."""
    shown = {(p["found"]) for p in e["pairs"]}
    return [
        f"f{i} at {c['file']}:{c['line_start']}, no gold comment in that file"
        for i, c in enumerate(e["findings"])
        if i not in shown
    ]


def _disagreements(e: dict[str, Any], provider: str) -> list[str]:
    """For a judge's verdicts: the pairs where location@5 would have decided otherwise."""
    if not provider.startswith(("judge", "replay")):
        return []
    return [
        f"g{p['gold']} / f{p['found']}: the judge says {'match' if p['verdict'] else 'no match'}, location@5 "
        f"(distance {p['distance']}) the opposite"
        for p in e["pairs"]
        if not p["ignored"] and p["verdict"] != (p["distance"] <= TOLERANCE)
    ]


def _run_pages(folder: Path, run: str, d: dict[str, Any]) -> tuple[str, float]:
    """A run's page and a page per entry; its row of the index."""
    dataset = Path(d["dataset"]["path"])
    patches = {e.instance_id: e.patch for e in read_dataset(dataset).entries} if dataset.is_file() else {}
    entries = []
    for e in d["entries"]:
        page = f"{run}/{e['task']}.html"
        notes = [*e["dropped"], *_elsewhere(e), *_disagreements(e, d["verdicts"]["provider"])]
        rows = _diff_rows(patches.get(e["instance_id"], ""), e)
        _render(folder / page, "entry.html", run=run, e=e, notes=notes, rows=rows)
        entries.append((page, e))
    numbers = _numbers_rows(d["numbers"])
    _render(folder / f"{run}.html", "run.html", run=run, header=_header(d), numbers=numbers, entries=entries)
    return run, d["numbers"]["micro"]["f1"]


def write_pages(out: Path, name: str) -> tuple[Path, int]:
    """OUT/view/pr-review/: an index of the scored runs (bceval's and experiments'), a page per run, a page per
    entry of each run."""
    where = OutDir(out)
    folder = where.view / name
    runs = []
    scores = [*where.runs.glob("*/score.json"), *where.path.glob("experiments/*/variants/**/score.json")]
    for path in sorted(scores):
        d = read_json_or_none(path)
        if not isinstance(d, dict) or d.get("kind") != "bceval-pr-review-score":
            continue
        below = path.parent.relative_to(where.runs if path.is_relative_to(where.runs) else where.path).parts
        run = "-".join(part for part in below if part not in ("experiments", "variants", "guidance"))
        try:
            runs.append(_run_pages(folder, run, d))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a hand edit or another version's file
            raise BcevalError(
                f"{path}: not a whole pr-review score ({type(exc).__name__} {exc}); score it again"
            ) from None
    _render(folder / "index.html", "index.html", runs=runs)
    return folder / "index.html", len(runs)


def _render(path: Path, template: str, **context: Any) -> None:
    write_atomic(path, PAGES.get_template(template).render(context))
