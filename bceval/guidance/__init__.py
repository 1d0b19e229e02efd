"""Plan-guidance and implementation-guidance evaluators with runner-owned read-only evidence.

Modules: strictjson (strict reader, field validators), paths (safe paths, reference resolver,
root separation), manifest (both manifest kinds, workspace map), prepare (request files),
evidence (git snapshots, baseline capture and gate), report (report models and checks),
scoring (metrics and the per-case flow), cli and graph (the two entry points).
"""

from __future__ import annotations

from bceval.errors import EXIT_FAILED, BcevalError

PLAN_SKILL_ID = "al-development-plan"
IMPLEMENTATION_SKILL_ID = "al-implementation-guidance"
# The manifest kind is decided only by this exact (case-sensitive) skill path.
IMPLEMENTATION_SKILL_PATH = "microsoft/skills/development/al-implementation-guidance.md"
PLAN = "plan"
IMPLEMENTATION = "implementation"


class GuidanceError(BcevalError):
    """A guidance-evaluator message: written by bceval, safe to print, never model or file text."""

    exit_code = EXIT_FAILED
