"""The four arms of spec §12 (none, plan, implementation, both): what the coding agent gets in each, what they must
share, and their secondary outcomes over every finished epoch."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from bceval.evaluators.base import DEVELOPMENT
from bceval.evaluators.development import CHECKS_RELATIVE, PINNED, DevelopmentError
from bceval.evaluators.development.checks import read_checks, starting_repositories
from bceval.evaluators.development.manifest import load, read_skill
from bceval.evaluators.development.processes import tree_digest
from bceval.evaluators.development.report import SEVERITIES
from bceval.jsonio import dumps, read_json_or_none, write_atomic
from bceval.steps.experiment_report import completed_run

GUIDANCE_ARMS = ("none", "plan", "implementation", "both")
IMPLEMENTATION_SKILL = "microsoft/skills/development/al-implementation-guidance.md"
# Where implementation guidance may be consulted: the runner's policy, identical across arms.
CHECKPOINTS = ("before-the-first-edit", "after-the-last-edit-before-validation")
NEUTRAL_SKILL = "none"
NEUTRAL_PROMPT = (
    "Implement the development request in the repository you are given (your working directory): make the "
    "change, keep it in the working tree, run the repository's own compile and test commands if it has any, and "
    "answer with the implementation report in the shape of resultSchema. No BCQuality guidance is given for this "
    "task, so do not claim knowledge-backed work."
)


def arm_request(document: dict[str, Any], guidance: str, root: Path) -> dict[str, Any]:
    """A prepared request as this arm's agent receives it (implementationGuidance follows skillInstructions)."""
    if guidance not in GUIDANCE_ARMS:
        raise DevelopmentError(f"--guidance {guidance}: one of {', '.join(GUIDANCE_ARMS)}")
    changed = dict(document)
    if guidance not in ("plan", "both"):
        changed["skill"] = NEUTRAL_SKILL
        changed["skillInstructions"] = NEUTRAL_PROMPT
    if guidance in ("implementation", "both"):
        skill = root / IMPLEMENTATION_SKILL
        if not skill.is_file():
            raise DevelopmentError(f"--guidance {guidance}: the implementation-guidance skill {skill} does not exist")
        ordered: dict[str, Any] = {}
        for key, value in changed.items():
            ordered[key] = value
            if key == "skillInstructions":
                ordered["implementationGuidance"] = {
                    "skill": IMPLEMENTATION_SKILL,
                    "instructions": read_skill(skill),
                    "checkpoints": list(CHECKPOINTS),
                }
        changed = ordered
    return changed


# What every arm of a development experiment must share (§12: "arms differ only in guidance"), in the order the
# refusal names the first difference: the record field, and its name in the message.
MATCHED = (
    ("startingRepositories", "starting repository"),
    ("checks", "gate configuration"),
    ("model", "model"),
    ("checkout", "checkout"),
)


def unmatched(identities: list[tuple[str, dict[str, Any]]]) -> str | None:
    """The refusal of arms that differ from the control (the first pair) in more than guidance, else None."""
    if not identities:
        return None
    control, reference = identities[0]
    for name, identity in identities[1:]:
        for key, label in MATCHED:
            if identity.get(key) != reference.get(key):
                return (
                    f"arm '{name}' differs from arm '{control}' in its {label} ({key}); the arms of a development "
                    "experiment may differ only in guidance"
                )
    return None


def arm_identity(arm: Any, model: str | None, checkout: str) -> dict[str, Any]:
    """What an arm holds constant: starting repositories (digest or pinned commit), checks, model, checkout (bad
    input: one line)."""
    loaded, checks = load(arm.corpus, arm.manifest), development_checks(arm)
    config = read_checks(checks)
    sources = starting_repositories(loaded, config, checks, arm.workspace_map)
    starting = {}
    for case, source in sorted(sources.items()):
        pinned = PINNED.match(source)
        starting[case] = f"commit {pinned['commit'].lower()}" if pinned else tree_digest(Path(source))
    return {"startingRepositories": starting, "checks": config.digest(), "model": model, "checkout": checkout}


def development_checks(arm: Any) -> Path:
    return arm.corpus / (arm.fields["checks"] or CHECKS_RELATIVE)


def check_arms(arms: list[Any], model: str | None) -> tuple[int, str] | None:
    """§12: the arms differ from the control only in guidance; else (the arm's index, why)."""
    for index, arm in enumerate(arms):
        if arm.evaluator != DEVELOPMENT:
            return index, "every arm of a development experiment uses evaluator development"
    identities = []
    for arm in arms:
        checkout = f"{arm.corpus}" + (f"@{arm.commit}" if arm.commit else "")
        identities.append((arm.name, arm_identity(arm, arm.fields["model"] or model, checkout)))
    refusal = unmatched(identities)
    if refusal is None:
        return None
    return next(i for i, arm in enumerate(arms) if refusal.startswith(f"arm '{arm.name}' ")), refusal


def development_inputs(arm: Any) -> dict[str, Any]:
    """What an arm's epoch reads besides its fields; a change to any runs the epoch again."""
    try:
        identity = arm_identity(arm, arm.fields["model"], str(arm.corpus))
    except (DevelopmentError, OSError):
        return {"development": "unreadable"}
    manifest = arm.manifest.read_bytes() if arm.manifest and arm.manifest.is_file() else b""
    return {"manifest": hashlib.sha256(manifest).hexdigest(), **identity}


KNOWLEDGE = ("KnowledgeRecall", "KnowledgePrecision")


def arm_summary(name: str, guidance: str, runs: list[Path]) -> dict[str, Any]:
    """One arm's numbers over its finished runs (each a development run directory)."""
    units = gates = overclaims = errors = 0
    findings = dict.fromkeys(SEVERITIES, 0)
    means: dict[str, list[float]] = {f"{kind}{measure}": [] for kind in ("claimed", "read") for measure in KNOWLEDGE}
    seconds = 0.0
    for run in runs:
        for folder in sorted((run / "development").glob("case-*")):
            verdict = read_json_or_none(folder / "verdict.json")
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
            review = read_json_or_none(folder / "checks" / "review.json")
            counts = ((review or {}).get("merged") or {}).get("summary", {}).get("counts", {})
            for severity in SEVERITIES:
                findings[severity] += int(counts.get(severity, 0))
            envelope = read_json_or_none(folder / "agent" / "envelope.json") or {}
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
