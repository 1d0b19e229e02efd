"""`bceval prompt CASE`: what the agent of a run is given for one case, without running anything: the exact bytes
it reads on stdout (its prompt, or the request file it reads), its view's files and the prompt's SHA-256 on stderr,
all from the code the agent answers with (bceval.agents.view.build_view, the review evaluator's prompt).
"""

from __future__ import annotations

import hashlib
import sys

from bceval.agents.base import case_input
from bceval.agents.settings import placeholders
from bceval.agents.view import build_view
from bceval.config import Settings
from bceval.errors import BcevalError, did_you_mean
from bceval.evaluators.registry import DEFAULT, evaluator


def print_prompt(settings: Settings, wanted: str) -> int:
    derivation, _ = evaluator(DEFAULT).derive(settings)
    if derivation.problems:
        raise BcevalError(f"the corpus does not validate ({derivation.problems[0]}); bceval validate says why")
    case = next((case for case in derivation.cases if wanted in (case.id, case.modelId)), None)
    if case is None:
        guess = did_you_mean(wanted, [case.id for case in derivation.cases]) or " (bceval validate lists them)"
        raise BcevalError(f"{wanted}: no case has that manifest or model id{guess}")
    where = case_input(settings.prepare_dir, settings.corpus, case)
    view = build_view(where.request_path.parent, where.corpus, where.model_id)
    isolated = not settings.live or settings.isolation == "view"
    files = view.manifest()
    err = sys.stderr
    err.write(f"bceval: run {settings.run_name} ({settings.adapter}), case {case.id} ({case.modelId})\n")
    err.write(f"bceval: its view {view.digest[:16]} holds {len(files)} file(s)")
    err.write(":\n" if isolated else " (under --isolation none the agent may read the whole corpus):\n")
    for item in files:
        err.write(f"  {item['path']}  {item['size']} bytes  sha256 {item['sha256'][:16]}\n")
    if settings.live and settings.command and "request" not in placeholders(settings.command):
        text = evaluator(DEFAULT).prompt(view, isolated)
        data = text.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        err.write(f"bceval: the prompt on the agent's standard input ({len(data)} bytes, promptSha256 {digest}):\n")
    else:
        text = view.text(view.request_name)
        who = "the command names {request}" if settings.live else f"the {settings.adapter} adapter takes no prompt"
        err.write(f"bceval: {who}: it reads the request file {view.request_name}, which follows; stdin stays empty\n")
    err.flush()
    sys.stdout.write(text)
    return 0
