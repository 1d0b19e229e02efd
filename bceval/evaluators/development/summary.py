"""The secondary outcomes of a development experiment (spec §12), per arm over every finished epoch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bceval.evaluators.development.report import SEVERITIES
from bceval.jsonio import dumps, write_atomic
from bceval.steps.experiment_report import completed_run

KNOWLEDGE = ("KnowledgeRecall", "KnowledgePrecision")


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def arm_summary(name: str, guidance: str, runs: list[Path]) -> dict[str, Any]:
    """One arm's numbers over its finished runs (each a development run directory)."""
    units = gates = overclaims = errors = 0
    findings = dict.fromkeys(SEVERITIES, 0)
    means: dict[str, list[float]] = {f"{kind}{measure}": [] for kind in ("claimed", "read") for measure in KNOWLEDGE}
    seconds = 0.0
    for run in runs:
        for folder in sorted((run / "development").glob("case-*")):
            verdict = _read(folder / "verdict.json")
            if not isinstance(verdict, dict):
                continue
            units += 1
            gates += bool(verdict.get("gatesPassed"))
            overclaims += verdict.get("overclaims", 0) > 0
            errors += verdict.get("verdict") == "error"
            measures = verdict.get("measures") or {}
            read = measures.get("knowledgeEvidence") == "read"  # the api agent: what bceval saw it read
            for measure in KNOWLEDGE if read or "knowledgeRecall" in measures else ():
                own = "k" + measure[1:]
                means[f"claimed{measure}"].append(measures[f"claimed{measure}" if read else own])
                if read:
                    means[f"read{measure}"].append(measures[own])
            review = _read(folder / "checks" / "review.json")
            counts = ((review or {}).get("merged") or {}).get("summary", {}).get("counts", {})
            for severity in SEVERITIES:
                findings[severity] += int(counts.get(severity, 0))
            envelope = _read(folder / "agent" / "envelope.json") or {}
            seconds += float(envelope.get("seconds") or 0.0)
    return {
        "arm": name,
        "guidance": guidance,
        "runs": len(runs),
        "units": units,
        "gatesPassed": gates,
        "findings": findings,
        "overclaimRate": overclaims / units if units else None,
        "infrastructureErrors": errors,
        **{key: sum(values) / len(values) if values else None for key, values in means.items()},
        "agentSeconds": round(seconds, 3),
    }


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def render_markdown(experiment: str, arms: list[dict[str, Any]]) -> str:
    lines = [
        f"# Development experiment {_cell(experiment)}: secondary outcomes",
        "",
        "Per arm, over every finished (epoch, case). *Gates passed* is the primary outcome: compile passed, tests "
        "passed and the runner's independent review had no blocker or major finding; its paired comparison with "
        "the control is in report.md (there it is the arm's recall). Findings are the runner's review's. An "
        "overclaim is a case whose report said a check passed (or fewer gating findings) than the runner observed. "
        "Claimed recall and precision are the reports' own; read recall and precision count only entries bceval saw "
        "the agent read in full (the api agent; n/a for a command agent). Infrastructure errors are kept apart.",
        "",
        "| Arm | Guidance | Gates passed | Blocker | Major | Minor | Info | Overclaim rate | Infra errors | "
        "Claimed recall | Claimed precision | Read recall | Read precision | Agent seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for arm in arms:
        f = arm["findings"]
        lines.append(
            f"| {_cell(arm['arm'])} | {_cell(arm['guidance'])} | {arm['gatesPassed']}/{arm['units']} | "
            f"{f['blocker']} | {f['major']} | {f['minor']} | {f['info']} | {_cell(arm['overclaimRate'])} | "
            f"{arm['infrastructureErrors']} | {_cell(arm['claimedKnowledgeRecall'])} | "
            f"{_cell(arm['claimedKnowledgePrecision'])} | {_cell(arm['readKnowledgeRecall'])} | "
            f"{_cell(arm['readKnowledgePrecision'])} | {arm['agentSeconds']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def write_summary(plan: Any) -> None:
    """development-summary.json and .md in the experiment's folder, from every arm's finished runs so far."""
    arms = []
    for arm in plan.arms:
        runs = [completed_run(plan.run_folders(arm.name, e)) for e in range(1, plan.experiment.epochs + 1)]
        arms.append(arm_summary(arm.name, arm.fields["guidance"] or "plan", [r for r in runs if r is not None]))
    plan.folder.path.mkdir(parents=True, exist_ok=True)
    summary = {"experiment": plan.experiment.name, "arms": arms}
    write_atomic(plan.folder.development_summary("json"), dumps(summary))
    write_atomic(plan.folder.development_summary("md"), render_markdown(plan.experiment.name, arms))
