"""The evaluators bceval knows, registered in one place: review, plan, implementation and development.

Their protocol and records are in bceval.evaluators.base (the evaluator modules import it, not this list).
"""

from __future__ import annotations

import importlib

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


# name -> (module, attribute): each evaluator is imported when it is first asked for, so a command that names only
# the review evaluator (an experiment of review arms, say) never loads the guidance or development ones (their
# modules and models cost about 20 ms of a command's start). Their order is the order they are listed in.
_WHERE = {
    "review": ("bceval.evaluators.review.plugin", "REVIEW_EVALUATOR"),
    "plan": ("bceval.evaluators.guidance.plugin", "PLAN_EVALUATOR"),
    "implementation": ("bceval.evaluators.guidance.plugin", "IMPLEMENTATION_EVALUATOR"),
    "development": ("bceval.evaluators.development.plugin", "DEVELOPMENT_EVALUATOR"),
}


def evaluator(name: str) -> Evaluator:
    """The registered evaluator of that name ("review", "plan", "implementation" (a guidance manifest's kind),
    "development")."""
    module, attribute = _WHERE[name]
    found: Evaluator = getattr(importlib.import_module(module), attribute)
    return found


def evaluator_names() -> tuple[str, ...]:
    return tuple(_WHERE)
