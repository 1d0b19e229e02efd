"""`bceval evidence`: spec development.md §13's validator on files. It prints one JSON line
`{"valid": bool, "errors": [...]}` and exits 0 when valid, 1 when invalid, 2 when a file cannot be read or is not
strict JSON (that one line then names the file)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.evaluators.development.knowledge_response import validate_response
from bceval.jsonio import decode_utf8, parse_json, read_regular_bytes


def _read(path: Path, what: str) -> bytes:
    try:
        return read_regular_bytes(path)
    except OSError as exc:
        raise BcevalError(f"{what} {path} cannot be read ({exc.strerror or exc})") from None


def run_validator(args: argparse.Namespace, out: Any = None) -> int:
    out = out or sys.stdout
    try:
        if not args.kr_response:
            raise BcevalError("evidence needs RESPONSE, the al-knowledge answer (JSON)")
        response = parse_json(_read(Path(args.kr_response), "RESPONSE"), str(args.kr_response))
        question = decode_utf8(_read(Path(args.kr_question_file), "--question-file"), str(args.kr_question_file))
        evidence = None
        if args.kr_read_evidence:
            evidence = parse_json(_read(Path(args.kr_read_evidence), "--read-evidence"), str(args.kr_read_evidence))
        root = Path(args.kr_root or ".")
        if not root.is_dir():
            raise BcevalError(f"--root {root} is not a folder")
    except BcevalError as exc:
        print(json.dumps({"valid": False, "errors": [str(exc)]}), file=out)
        return 2
    layers = [layer.strip() for layer in args.kr_enabled_layers.split(",") if layer.strip()]
    errors = validate_response(
        response, question=question, root=root, run_id=args.kr_run_id, evidence=evidence, enabled_layers=layers
    )
    print(json.dumps({"valid": not errors, "errors": errors}), file=out)
    return 1 if errors else 0
