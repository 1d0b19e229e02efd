"""Plan-guidance and implementation-guidance evaluators with runner-owned read-only evidence.

Modules: strictjson (strict reader, field validators), paths (safe paths, reference resolver,
root separation), manifest (both manifest kinds, workspace map), prepare (request files),
evidence (git snapshots, baseline capture and gate), report_models and report (the report models and
their checks), scoring (metrics and the per-case flow), demo (the demo workspaces). The evaluators that use
them are registered in bceval.evaluators; the command, the graph and the runner are steps.
"""

from __future__ import annotations

from bceval.errors import EXIT_FAILED, BcevalError

PLAN_SKILL_ID = "al-development-plan"
IMPLEMENTATION_SKILL_ID = "al-implementation-guidance"
# The manifest kind is decided only by this exact (case-sensitive) skill path.
IMPLEMENTATION_SKILL_PATH = "microsoft/skills/development/al-implementation-guidance.md"
PLAN = "plan"
IMPLEMENTATION = "implementation"
# Where a checkout keeps each kind's manifest (relative to its root): the default of every command and arm.
MANIFESTS = {
    PLAN: "evaluation/development-guidance-fixtures.json",
    IMPLEMENTATION: "evaluation/implementation-guidance-fixtures.json",
}


class GuidanceError(BcevalError):
    """A guidance-evaluator message: written by bceval, safe to print, never model or file text."""

    exit_code = EXIT_FAILED
