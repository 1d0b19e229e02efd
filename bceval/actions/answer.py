"""Answer-stage actions: answer the prepared requests with the configured adapter."""

from __future__ import annotations

from bceval.actions.prepare import recorded_cases, require_complete
from bceval.config import Settings


def answer(settings: Settings) -> None:
    from bceval.adapters.run import answer_cases  # adapters are only needed when answering

    require_complete(settings)
    answered, failed = answer_cases(settings, recorded_cases(settings))
    where = settings.results_dir
    note = f", {failed} infrastructure failure(s) (rerun to retry)" if failed else ""
    print(f"Answered {answered} case(s) with the {settings.adapter} adapter into {where}{note}.")

