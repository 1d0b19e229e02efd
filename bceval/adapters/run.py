"""Answer every prepared case of a shard with one adapter, writing one result file per case."""

from __future__ import annotations

import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bceval.adapters.base import Adapter, case_input, result_document
from bceval.adapters.baseline import BaselineAdapter
from bceval.adapters.command import CommandAdapter
from bceval.adapters.naming import infra_name, result_name, shard_cases
from bceval.adapters.oracle import OracleAdapter
from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.jsonio import dumps, parse_json, write_atomic
from bceval.review.cases import ReviewCase
from bceval.review.scoring import InfraFailure


def make_adapter(settings: Settings, cases: list[ReviewCase]) -> Adapter:
    if settings.adapter == "oracle":
        return OracleAdapter(cases)
    if settings.adapter == "baseline":
        return BaselineAdapter(settings.corpus)
    if not settings.command:
        raise BcevalError("the command adapter needs --command (or BCEVAL_COMMAND), e.g. --command 'claude -p'")
    return CommandAdapter(
        settings.command, settings.model, settings.cache_dir, timeout=settings.timeout, retries=settings.retries
    )


_OWN_FILE = re.compile(r"^(result|infra)-case-[0-9a-f]{8}\.json$")


def _written_by_bceval(path: Path) -> bool:
    """Result and infra files this runner writes carry an `answeredBy` block; hand-written ones do not."""
    try:
        document = parse_json(path.read_bytes(), str(path))
    except (BcevalError, OSError):
        return False
    return isinstance(document, dict) and isinstance(document.get("answeredBy"), dict)


def prune_vanished(results_dir: Path, cases: list[ReviewCase]) -> None:
    """Remove per-case files this runner wrote for cases that no longer exist (any shard's are kept).

    Only files named exactly like ours and carrying our `answeredBy` block go; anything else stays.
    """
    known = {result_name(c.modelId) for c in cases} | {infra_name(c.modelId) for c in cases}
    for path in sorted(results_dir.iterdir()):
        if path.name not in known and _OWN_FILE.match(path.name) and path.is_file() and _written_by_bceval(path):
            path.unlink()


def answer_cases(settings: Settings, cases: list[ReviewCase]) -> tuple[int, int]:
    """Answer the shard's cases; returns (answered, infrastructure failures)."""
    results_dir = settings.results_dir
    if results_dir.resolve() == settings.prepare_dir.resolve():
        raise BcevalError(f"{results_dir}: results must not go into the prepare directory; choose another one")
    adapter = make_adapter(settings, cases)
    described = adapter.describe()
    results_dir.mkdir(parents=True, exist_ok=True)
    prune_vanished(results_dir, cases)
    selected = shard_cases(cases, settings.shard)
    lock = threading.Lock()
    progress = {"done": 0, "failed": 0}

    def one(case: ReviewCase) -> None:
        outcome = adapter.answer(case_input(settings.prepare_dir, case))
        result_path = results_dir / result_name(case.modelId)
        infra_path = results_dir / infra_name(case.modelId)
        if isinstance(outcome, InfraFailure):
            record = outcome.model_copy(update={"answeredBy": described})
            write_atomic(infra_path, dumps(record.model_dump()))
            result_path.unlink(missing_ok=True)  # a stale answer to an older request must not be scored
            status = f"infrastructure failure: {outcome.kind}"
        else:
            write_atomic(result_path, result_document(outcome, described))
            infra_path.unlink(missing_ok=True)
            status = "answered"
        with lock:
            progress["done"] += 1
            progress["failed"] += isinstance(outcome, InfraFailure)
            print(f"[{progress['done']}/{len(selected)}] {case.modelId} {status}", file=sys.stderr)

    workers = settings.jobs if settings.adapter == "command" else 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, selected))
    return progress["done"], progress["failed"]
