"""`bceval skills`: build a corpus's skill index (upstream-2026-09.md §5), or check the committed one against its
skills, one line per problem."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bceval.cli.parser import add_command, settings_flags
from bceval.config import check_inputs, load_settings
from bceval.corpus.models import SkillIndex
from bceval.corpus.skills import SKILL_INDEX, skill_index
from bceval.errors import BcevalError
from bceval.evaluators.base import Command
from bceval.jsonio import dumps_compact, parse_json, read_json_bytes, write_atomic

HEADER = ("version", "skillCount", "sourceSnapshot")  # generatedAt is left out, as upstream's check masks it


def _schema_problems(where: str, committed: Any) -> list[str]:
    try:
        SkillIndex.model_validate(committed, strict=True)
    except ValidationError as exc:
        return [f"{where}: {'.'.join(map(str, error['loc'])) or '$'}: {error['msg']}" for error in exc.errors()]
    return []


def index_problems(where: str, committed: Any, built: dict[str, Any]) -> list[str]:
    """How a committed skill index differs from the one the skills give now (schema first)."""
    problems = _schema_problems(where, committed)
    if not isinstance(committed, dict):
        return problems
    for member in HEADER:
        if committed.get(member) != built[member]:
            problems.append(f"{where}: {member} is {committed.get(member)!r}, the skills give {built[member]!r}")
    records = [r for r in committed.get("skills") or [] if isinstance(r, dict)]
    indexed = {str(record.get("path")): record for record in records}
    fresh = {record["path"]: record for record in built["skills"]}
    for path, record in fresh.items():
        if path not in indexed:
            problems.append(f"{where}: {path} is missing")
            continue
        changed = [member for member in record if indexed[path].get(member) != record[member]]
        if changed:
            problems.append(f"{where}: {path}: {', '.join(changed)} differ from the skill")
    problems += [f"{where}: {path} is no action skill of the corpus" for path in indexed if path not in fresh]
    if [path for path in indexed if path in fresh] != [path for path in fresh if path in indexed]:
        problems.append(f"{where}: the skills are not in layer and path order")
    return problems


def run_skills(args: argparse.Namespace) -> int:
    settings = load_settings(**settings_flags(args, ("corpus",)))
    check_inputs(settings)
    path = Path(args.skill_index) if args.skill_index else settings.corpus / SKILL_INDEX
    try:
        built = skill_index(settings.corpus)
    except BcevalError as exc:  # a skill upstream's generator refuses: the index cannot be built
        print(f"Skill index {args.skills_mode} FAILED: {exc}")
        return 1
    if args.skills_mode == "build":
        write_atomic(path, dumps_compact(built))
        print(f"Skill index: {built['skillCount']} action skill(s). Index: {path}")
        return 0
    if not path.is_file():
        print(f"{path}: no skill index; `bceval skills build` writes it")
        return 1
    problems = index_problems(str(path), parse_json(read_json_bytes(path), str(path)), built)
    print("\n".join(problems) if problems else f"Skill index check PASSED: {built['skillCount']} action skills.")
    return 1 if problems else 0


SKILLS_COMMAND = Command(
    "skills",
    lambda commands: add_command(commands, "skills", "build or check the corpus's skill index (skill-index.json)"),
    run_skills,
)
