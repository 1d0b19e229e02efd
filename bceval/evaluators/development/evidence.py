"""Runner mode (spec §11.5–§11.10): the agent's claims against the runner's gates, and a case's verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bceval.evaluators.development.manifest import Case
from bceval.evaluators.development.report import gating_count
from bceval.evaluators.development.values import MISSING, member, same, text, wrap

PASS, FAIL, ERROR = "pass", "fail", "error"


@dataclass(frozen=True)
class GateResult:
    """One runner-owned check as it ran: becomes a runner validation entry (§11.5.5)."""

    id: str
    command: str
    status: str  # passed | failed | not-run
    details: str  # never blank
    exit_code: int | None = None
    duration_s: float = 0.0
    log_path: str | None = None
    infrastructure: bool = False  # not-run because the tool could not start, or the toolchain is unavailable

    def entry(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "command": self.command,
            "status": self.status,
            "details": self.details,
            "exitCode": self.exit_code,
            "durationS": round(self.duration_s, 3),
            "logPath": self.log_path,
        }


@dataclass
class Comparison:
    diagnostics: list[str] = field(default_factory=list)
    overclaims: list[str] = field(default_factory=list)
    underclaims: list[str] = field(default_factory=list)


def compare(case: Case, report: Any, gates: list[GateResult], runner_review: dict[str, Any] | None) -> Comparison:
    """The agent's self-reported validation and review against the runner's (§11.7)."""
    result = Comparison()
    claimed = wrap(member(report, "validation")) if report is not MISSING else []
    for gate in gates:
        entries = [e for e in claimed if same(member(e, "id"), gate.id)]
        if len(entries) != 1:
            result.diagnostics.append(f"{case.id}: validation '{gate.id}' was not reported by the agent.")
            continue
        status = text(member(entries[0], "status"))
        if status.lower() == gate.status:
            continue
        line = f"{case.id}: validation '{gate.id}' reported '{status}' but the runner observed '{gate.status}'."
        result.diagnostics.append(line)
        if status.lower() == "passed":
            result.overclaims.append(line)
        elif gate.status == "passed":
            result.underclaims.append(line)
    agent_review = member(report, "review") if report is not MISSING else MISSING
    if runner_review is not None and agent_review is not MISSING:
        claimed_gating, observed = gating_count(agent_review), gating_count(runner_review)
        if claimed_gating != observed:
            line = (
                f"{case.id}: review reported {claimed_gating} gating finding(s) but the runner's review found "
                f"{observed}."
            )
            result.diagnostics.append(line)
            (result.overclaims if claimed_gating < observed else result.underclaims).append(line)
    return result


def gates_passed(gates: list[GateResult]) -> bool:
    """The primary outcome of §12: compile, tests and the review all passed (not run is never a pass)."""
    by_id = {g.id: g.status for g in gates}
    return all(by_id.get(check) == "passed" for check in ("compile", "tests", "review"))


def verdict(
    problems: list[str],
    gates: list[GateResult],
    agent_infra: str | None,
    fail_on_overclaim: bool,
    comparison: Comparison,
) -> str:
    """§11.10: error (infrastructure), else fail when any rule failed, else pass."""
    if agent_infra is not None or any(g.infrastructure for g in gates):
        return ERROR
    if problems or (fail_on_overclaim and comparison.overclaims):
        return FAIL
    return PASS
