"""The `guidance_prepare` doit task: validate the guidance manifest, then write its requests.

Settings the shared Settings model does not carry come from the environment:
BCEVAL_GUIDANCE_ROOT (knowledge checkout, default: the corpus setting), BCEVAL_GUIDANCE_MANIFEST
(default: <root>/evaluation/development-guidance-fixtures.json), BCEVAL_GUIDANCE_OUT (default:
<out>/guidance) and BCEVAL_GUIDANCE_WORKSPACE_MAP (optional).

The generator only reads the small manifest leniently to name its inputs and outputs; the action
does the real validation, so a broken manifest fails the task with its own message instead of
breaking every doit command.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from doit.tools import config_changed

from bceval import __version__
from bceval.config import Settings
from bceval.corpus.index import generated_at
from bceval.corpus.layers import knowledge_markdown, scan_corpus
from bceval.doitlib import action
from bceval.errors import BcevalError, EvaluationFailed
from bceval.guidance import GuidanceError
from bceval.review.neutral import model_id

REFERENCE_KEYS = ("requiredKnowledge", "optionalKnowledge", "expectedOmitted")


@dataclass(frozen=True)
class GuidanceSettings:
    root: str
    manifest: str
    out: str
    workspace_map: str | None


def guidance_settings(settings: Settings, environ: Mapping[str, str] | None = None) -> GuidanceSettings:
    environ = os.environ if environ is None else environ
    root = Path(environ.get("BCEVAL_GUIDANCE_ROOT") or settings.corpus).absolute()
    manifest = environ.get("BCEVAL_GUIDANCE_MANIFEST") or root / "evaluation" / "development-guidance-fixtures.json"
    out = environ.get("BCEVAL_GUIDANCE_OUT") or settings.out / "guidance"
    workspace_map = environ.get("BCEVAL_GUIDANCE_WORKSPACE_MAP") or None
    return GuidanceSettings(
        root=str(root),
        manifest=str(Path(manifest).absolute()),
        out=str(Path(out).absolute()),
        workspace_map=str(Path(workspace_map).absolute()) if workspace_map else None,
    )


def _inputs(cfg: GuidanceSettings) -> tuple[list[str], list[str]]:
    """(files to depend on, request ids) from a lenient read; the action reports any real problem."""
    root = Path(cfg.root)
    if not os.path.isfile(cfg.manifest):
        return [], []  # nothing to depend on; the action says in one line that the manifest is missing
    files = [cfg.manifest] + ([cfg.workspace_map] if cfg.workspace_map else [])
    ids: list[str] = []
    try:
        document = json.loads(Path(cfg.manifest).read_text(encoding="utf-8-sig"))
        cases = document.get("cases", []) if isinstance(document, dict) else []
        named = [document.get("skill")] if isinstance(document, dict) else []
        for case in cases if isinstance(cases, list) else []:
            if isinstance(case, dict):
                ids += [case["id"]] if isinstance(case.get("id"), str) else []
                named += [p for key in REFERENCE_KEYS if isinstance(case.get(key), list) for p in case[key]]
        files += [str(root / rel) for rel in named if isinstance(rel, str) and ".." not in rel]
    except (OSError, ValueError, AttributeError):
        pass
    files = [f for f in files if os.path.isfile(f)]
    try:  # the index covers every article of the checkout, not only the referenced ones
        files += [os.path.join(root, rel) for rel in knowledge_markdown(scan_corpus(root))]
    except BcevalError:
        pass
    return sorted(set(files)), ids


def prepare_guidance(cfg: GuidanceSettings) -> None:
    """Validate, then (re)write the guidance prepare directory; one line on stderr when it passes."""
    from bceval.guidance.evidence import protected_roots  # only when the task runs
    from bceval.guidance.manifest import load_manifest, load_workspace_map
    from bceval.guidance.paths import check_separation
    from bceval.guidance.prepare import refresh

    title = "Development guidance preparation"
    try:
        manifest = load_manifest(cfg.root, cfg.manifest)
        workspaces = load_workspace_map(cfg.workspace_map, manifest) if cfg.workspace_map else None
        artifacts = [
            (f"Workspace map path {cfg.workspace_map}", cfg.workspace_map),
            (f"Prepare directory {cfg.out}", cfg.out),
        ]
        check_separation(
            protected_roots(manifest, workspaces), [(label, Path(p) if p else None) for label, p in artifacts]
        )
        directory = refresh(manifest, workspaces, Path(cfg.out))
    except GuidanceError as exc:
        raise EvaluationFailed(f"{title} FAILED: {exc}", verdict=False) from None
    except Exception:  # noqa: BLE001 - never a traceback or foreign text
        raise EvaluationFailed(f"{title} FAILED: the input could not be read safely", verdict=False) from None
    print(f"{title} PASSED: {len(manifest.cases)} case(s) prepared in {directory}")


def guidance_tasks(settings: Settings) -> dict[str, Callable[[], dict[str, Any]]]:
    """Task creators to merge into the bceval doit namespace."""

    def task_guidance_prepare() -> dict[str, Any]:
        """Validate the guidance manifest and write its requests (BCEVAL_GUIDANCE_* settings)."""
        cfg = guidance_settings(settings)
        files, ids = _inputs(cfg)
        out = Path(cfg.out)
        return {
            "actions": [action(prepare_guidance, cfg)],
            "file_dep": files,
            "targets": [str(out / "knowledge-index.json")] + [str(out / f"request-{model_id(i)}.json") for i in ids],
            "uptodate": [config_changed({"bceval": __version__, **asdict(cfg), "inputs": files, "at": generated_at()})],
            "verbosity": 1,
        }

    return {"task_guidance_prepare": task_guidance_prepare}
