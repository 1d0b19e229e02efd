"""Time as bceval writes it: SOURCE_DATE_EPOCH when set, so output never depends on the wall clock."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime

from bceval.errors import BcevalError


def source_date_epoch(environ: Mapping[str, str] | None = None) -> datetime | None:
    """SOURCE_DATE_EPOCH as a UTC time, None when unset; one clear error when it is not a usable time."""
    raw = (os.environ if environ is None else environ).get("SOURCE_DATE_EPOCH", "").strip()
    if not raw:
        return None
    try:
        return datetime.fromtimestamp(int(raw), tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise BcevalError(f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, got '{raw}'") from None


def created_at() -> str:
    """A scorecard's or report's one wall-clock field; SOURCE_DATE_EPOCH pins it for reproducible builds."""
    moment = source_date_epoch() or datetime.now(tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def generated_at(environ: Mapping[str, str] | None = None) -> str:
    """A reproducible timestamp: SOURCE_DATE_EPOCH when set, else the Unix epoch (never the clock)."""
    moment = source_date_epoch(environ) or datetime.fromtimestamp(0, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.0000000Z")
