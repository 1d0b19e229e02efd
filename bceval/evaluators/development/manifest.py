"""The manifest and the capability file (spec §3–§5): validation with every upstream message, and coverage."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.evaluators.base import model_id
from bceval.evaluators.development import CAPABILITIES_RELATIVE, CHECK_IDS, MANIFEST_RELATIVE, DevelopmentError, inside
from bceval.evaluators.development.values import (
    MISSING,
    as_double,
    as_int,
    blank,
    member,
    number_text,
    one_of,
    same,
    text,
    wrap,
)
from bceval.jsonio import decode_utf8, parse_json

REQUEST_KINDS = ("auto", "feature", "bug", "refactor", "upgrade", "maintenance")
EXPECTED_KINDS = REQUEST_KINDS[1:]
STATUSES = ("planned", "fixture", "validated")
COVERED = ("fixture", "validated")
# §10.1 tighten: kebab-case is checked case-sensitively (ids are lower-case by contract)
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z")
ROUND_LIMIT = re.compile(r"^quality-round-limit:[ \t]*([0-9]+)[ \t\r]*$", re.MULTILINE)


@dataclass(frozen=True)
class Case:
    id: str  # the manifest id, cast to a string
    raw: dict[str, Any]
    index: int  # position in the manifest

    @property
    def model_id(self) -> str:
        return model_id(self.id)

    @property
    def request(self) -> Any:
        return member(self.raw, "development-request")

    @property
    def expected_kind(self) -> str:
        return text(member(self.raw, "expectedKind"))

    def texts(self, name: str) -> list[str]:
        return [text(item) for item in wrap(self.raw[name])]

    required = property(lambda self: self.texts("requiredKnowledge"))
    optional = property(lambda self: self.texts("optionalKnowledge"))
    checks = property(lambda self: self.texts("requiredChecks"))
    capabilities = property(lambda self: self.texts("capabilities"))


@dataclass
class Loaded:
    """A read manifest and capability file, with the problems validation found (empty: it validates)."""

    root: Path
    manifest_path: Path
    manifest: dict[str, Any]
    capability_file: dict[str, Any]
    cases: list[Case]
    skill_text: str | None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    covered: int = 0
    capability_count: int = 0

    @property
    def minimum_coverage(self) -> float:
        value = member(self.capability_file, "minimumFixtureCoverage")
        return -1.0 if value is MISSING else as_double(value, "minimumFixtureCoverage")

    @property
    def review_rounds(self) -> int:
        return as_int(member(self.manifest, "maximumReviewRounds"), f"{self.manifest_path}: maximumReviewRounds")


def read_document(path: Path, label: str) -> dict[str, Any]:
    """A whole JSON file, strictly parsed (§10.15); missing, unreadable or unparsable is bad input."""
    try:
        data = path.read_bytes()
    except OSError:
        raise DevelopmentError(f"{label} {path} does not exist or cannot be read") from None
    try:
        value = parse_json(data, str(path))
    except BcevalError as exc:
        raise DevelopmentError(f"{label} {exc}") from None
    if not isinstance(value, dict):
        raise DevelopmentError(f"{label} {path} must hold a JSON object")
    return value


def required(value: Any, name: str, where: str) -> Any:
    """A member the reference reads without a guard: its absence is the reference's strict-mode crash."""
    found = member(value, name)
    if found is MISSING:
        raise DevelopmentError(f"{where}: member '{name}' is missing")
    return found


def load(root: Path, manifest_path: Path | None = None, capabilities_path: Path | None = None) -> Loaded:
    """Read both files and validate them (§4.3, §5). A missing root or file is bad input."""
    if not root.is_dir():
        raise DevelopmentError(f"--root {root} is not a directory")
    manifest_path = manifest_path or root / MANIFEST_RELATIVE
    capabilities_path = capabilities_path or root / CAPABILITIES_RELATIVE
    manifest = read_document(manifest_path, "manifest")
    capability_file = read_document(capabilities_path, "capability file")
    where, cwhere = str(manifest_path), str(capabilities_path)
    raw_cases = required(manifest, "cases", where)
    cases = []
    for i, raw in enumerate(wrap(raw_cases)):
        if not isinstance(raw, dict):
            raise DevelopmentError(f"{where}: cases[{i}] must be an object")
        cases.append(Case(text(required(raw, "id", f"{where}: cases[{i}]")), raw, i))
    loaded = Loaded(root, manifest_path, manifest, capability_file, cases, None)
    problems = loaded.problems
    _check_top(loaded, raw_cases, where, cwhere)

    registered: dict[str, Case] = {}  # by lower-cased id
    for case in cases:
        _check_case(loaded, case, registered, where)

    # hashed ids (§6.2 tighten: a collision fails validation)
    by_model: dict[str, str] = {}
    for case in cases:
        first = by_model.setdefault(case.model_id, case.id)
        if first != case.id:
            problems.append(f"Fixture ids '{first}' and '{case.id}' hash to the same request id {case.model_id}.")

    _check_capabilities(loaded, registered, cwhere)
    return loaded


def _check_top(loaded: Loaded, raw_cases: Any, where: str, cwhere: str) -> None:
    manifest, capability_file, problems = loaded.manifest, loaded.capability_file, loaded.problems
    version = required(manifest, "version", where)
    if not (isinstance(version, int) and not isinstance(version, bool) and version == 1):  # §4.1 tighten
        problems.append(f"Unsupported development fixture version: {text(version)}")
    cap_version = required(capability_file, "version", cwhere)
    if not _loosely_one(cap_version):
        problems.append(f"Unsupported capability manifest version: {text(cap_version)}")
    if not 0 <= loaded.minimum_coverage <= 1:
        problems.append("minimumFixtureCoverage must be between 0 and 1.")
    rounds = member(manifest, "maximumReviewRounds")
    rounds_ok = isinstance(rounds, int) and not isinstance(rounds, bool) and rounds >= 1  # §4.1 tighten
    if not rounds_ok:
        problems.append("maximumReviewRounds must be a positive integer.")
    for name in ("minimumKnowledgeRecall", "minimumKnowledgePrecision"):
        value = required(manifest, name, where)
        # §4.1 tighten: a JSON number, not a string or a boolean
        if isinstance(value, bool) or not (isinstance(value, int | float) and 0 <= value <= 1):
            problems.append(f"{name} must be between 0 and 1.")
    skill = text(required(manifest, "skill", where))
    skill_file = loaded.root.joinpath(*skill.split("/")) if skill else loaded.root
    if not skill or not skill_file.is_file():
        problems.append(f"Development skill does not exist: {skill}")
    else:
        loaded.skill_text = read_skill(skill_file)
        limit = ROUND_LIMIT.search(loaded.skill_text)
        if limit is None or not rounds_ok or int(limit.group(1)) != rounds:
            problems.append("maximumReviewRounds must match the development skill quality-round-limit.")
    if not isinstance(raw_cases, list) or not raw_cases:  # §4.1 tighten
        problems.append("cases must be a non-empty array.")


def _check_capabilities(loaded: Loaded, registered: dict[str, Case], cwhere: str) -> None:
    """Each capability (§5.2), the links between cases and capabilities both ways (§5.3), and coverage (§5.4)."""
    capability_file, problems = loaded.capability_file, loaded.problems
    raw_capabilities = wrap(required(capability_file, "capabilities", cwhere))
    by_id: dict[str, Any] = {}  # the first capability of each id
    for i, capability in enumerate(raw_capabilities):
        cw = f"{cwhere}: capabilities[{i}]"
        cid = text(required(capability, "id", cw))
        status = required(capability, "status", cw)
        fixture_ids = wrap(required(capability, "fixtureIds", cw))
        if cid in by_id:
            problems.append(f"Duplicate capability id: {cid}")
        by_id.setdefault(cid, capability)
        if not one_of(status, STATUSES):
            problems.append(f"{cid}: invalid capability status '{text(status)}'.")
        if one_of(status, COVERED) and not fixture_ids:
            problems.append(f"{cid}: status '{text(status)}' requires at least one fixture.")
        for fixture_id in fixture_ids:
            linked = registered.get(text(fixture_id).lower())
            if linked is None:
                problems.append(f"{cid}: unknown fixture id '{text(fixture_id)}'.")
            elif not any(same(c, cid) for c in linked.capabilities):
                problems.append(f"{cid}: fixture '{text(fixture_id)}' does not link back to the capability.")

    # case -> capability links (§5.3)
    for case in loaded.cases:
        for cid in case.capabilities:
            if cid not in by_id:
                problems.append(f"{case.id}: unknown capability '{cid}'.")
                continue
            back = wrap(member(by_id[cid], "fixtureIds"))
            if not any(same(f, case.id) for f in back):
                problems.append(f"{case.id}: capability '{cid}' does not link back to the fixture.")

    # coverage (§5.4)
    loaded.capability_count = len(by_id)
    loaded.covered = sum(1 for c in raw_capabilities if one_of(member(c, "status"), COVERED))
    coverage = loaded.covered / len(raw_capabilities) if raw_capabilities else 0
    minimum = loaded.minimum_coverage
    if coverage < minimum:
        problems.append(
            f"Fixture-backed capability coverage {number_text(coverage)} is below minimumFixtureCoverage "
            f"{number_text(minimum)}."
        )


def _loosely_one(value: Any) -> bool:
    """PowerShell's `value -eq 1` (the capability version): 1, 1.0, "1" and true are 1; "1.0" is not."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value == 1
    return isinstance(value, str) and value == "1"


def read_skill(path: Path) -> str:
    """The whole skill file, BOM stripped, line ends kept."""
    try:
        return decode_utf8(path.read_bytes(), str(path)).removeprefix("\ufeff")
    except (OSError, BcevalError):
        raise DevelopmentError(f"development skill {path} cannot be read as UTF-8") from None


def _check_case(loaded: Loaded, case: Case, registered: dict[str, Case], where: str) -> None:
    problems, cid = loaded.problems, case.id
    cw = f"{where}: case '{cid}'"
    required(case.raw, "capabilities", cw)
    if not KEBAB.match(cid):
        problems.append(f"Fixture id must be kebab-case: '{cid}'.")
    elif cid.lower() in registered:
        problems.append(f"Duplicate fixture id: {cid}")
    else:
        registered[cid.lower()] = case
    request = case.request
    if request is MISSING or request is None:
        problems.append(f"{cid}: development-request is required.")
        return
    kind = required(request, "kind", f"{cw}: development-request")
    for name in ("requiredKnowledge", "optionalKnowledge", "requiredChecks"):
        required(case.raw, name, cw)
    if not one_of(kind, REQUEST_KINDS):
        problems.append(f"{cid}: development-request.kind must be one of {', '.join(REQUEST_KINDS)}.")
    if blank(member(request, "description")) and blank(member(request, "plan")):
        problems.append(f"{cid}: development-request requires description or plan.")
    if not wrap(member(request, "acceptance-criteria")):
        problems.append(f"{cid}: development-request.acceptance-criteria must not be empty.")
    expected = member(case.raw, "expectedKind")
    if not one_of(expected, EXPECTED_KINDS):
        problems.append(f"{cid}: expectedKind must be one of {', '.join(EXPECTED_KINDS)}.")
    if not same(kind, "auto") and not same(kind, expected):
        problems.append(f"{cid}: explicit request kind '{text(kind)}' must equal expectedKind '{text(expected)}'.")
    paths = case.required + case.optional
    if len({p.lower() for p in paths}) != len(paths):
        problems.append(f"{cid}: requiredKnowledge and optionalKnowledge contain duplicates.")
    for path in paths:
        file = inside(loaded.root, path) if path.endswith(".md") else None
        if file is None:  # §10.3 tighten: a plain relative `.md` path inside the root
            problems.append(f"{cid}: invalid knowledge path: {path}")
        elif not file.is_file():
            problems.append(f"{cid}: knowledge article does not exist: {path}")
    for check in case.checks:
        if check.lower() not in CHECK_IDS:
            problems.append(f"{cid}: unsupported required check '{check}'.")
    lowered = [c.lower() for c in case.checks]
    if len(set(lowered)) != len(lowered):  # §10.9 tighten
        problems.append(f"{cid}: requiredChecks contains duplicate check ids.")
    if not lowered:
        loaded.warnings.append(f"{cid}: requiredChecks is empty, so no check is required.")
