"""The plan-guidance and implementation-guidance evaluators (spec/guidance.md), with runner-owned read-only
evidence; registered by bceval.evaluators.guidance.plugin."""

from __future__ import annotations

from pathlib import Path

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
DEFAULT_MANIFEST = Path(MANIFESTS[PLAN])  # a plan manifest unless told otherwise


class GuidanceError(BcevalError):
    """A guidance-evaluator message: written by bceval, safe to print, never model or file text."""

    exit_code = EXIT_FAILED
