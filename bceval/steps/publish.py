"""Publish-stage action: add the scored run to the committed scorecard page."""

from __future__ import annotations

from bceval.config import Settings
from bceval.scorecard.model import read_scorecard
from bceval.scorecard.publish import publish


def publish_page(settings: Settings) -> None:
    assert settings.page is not None
    card = read_scorecard(settings.scorecard_json)
    changed = publish(settings.page, card)
    state = "updated" if changed else "already up to date"
    print(f"Published run {card.runId[:12]} ({card.verdict}) to {settings.page}: {state}.")
