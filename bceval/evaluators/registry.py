"""The evaluators bceval knows, registered in one place: review, plan, implementation and development.

Their protocol and records are in bceval.evaluators.base (the evaluator modules import it, not this list).
"""

from __future__ import annotations

from bceval.evaluators.base import (
    CASE,
    GUIDANCE,
    REVIEW,
    RUN,
    CaseOutcome,
    Evaluator,
    RunEvaluator,
    Traits,
)

__all__ = ["CASE", "GUIDANCE", "REVIEW", "RUN", "CaseOutcome", "Evaluator", "RunEvaluator", "Traits"]


def _registered() -> dict[str, Evaluator]:
    # Imported when first asked for: the guidance evaluators load pydantic models, which preparing never needs.
    from bceval.evaluators.development import DEVELOPMENT_EVALUATOR
    from bceval.evaluators.guidance import IMPLEMENTATION_EVALUATOR, PLAN_EVALUATOR
    from bceval.evaluators.review import REVIEW_EVALUATOR

    evaluators = (REVIEW_EVALUATOR, PLAN_EVALUATOR, IMPLEMENTATION_EVALUATOR, DEVELOPMENT_EVALUATOR)
    return {e.name: e for e in evaluators}


def evaluator(name: str) -> Evaluator:
    """The registered evaluator of that name ("review", "plan", "implementation" (a guidance manifest's kind),
    "development")."""
    return _registered()[name]


def evaluator_names() -> tuple[str, ...]:
    return tuple(_registered())
