"""The runner's gate configuration (spec §11.6); YAML is read with BaseLoader (every scalar a string)."""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from bceval.evaluators.development import CHECK_IDS, PINNED, DevelopmentError, anchored
from bceval.evaluators.development.manifest import Case, Loaded
from bceval.jsonio import dumps_compact


@dataclass(frozen=True)
class Check:
    id: str
    kind: str  # "command" (compile, tests) or "review"
    argv: tuple[str, ...]
    timeout_s: float
    env: dict[str, str]  # sorted by name
    pass_exit_codes: tuple[int, ...]
    unavailable: bool  # toolchain: unavailable -> recorded not-run (infrastructure), never passed


@dataclass
class ChecksConfig:
    path: Path | None
    defaults: dict[str, Check] = field(default_factory=dict)
    per_case: dict[str, dict[str, Check]] = field(default_factory=dict)
    workspaces: dict[str, str] = field(default_factory=dict)

    def checks_for(self, case: str) -> dict[str, Check]:
        return {**self.defaults, **self.per_case.get(case, {})}

    def digest(self) -> str:
        """The configuration's identity: part of the run identity, and equal across the arms of an experiment."""
        described = {
            "defaults": {k: asdict(v) for k, v in sorted(self.defaults.items())},
            "cases": {c: {k: asdict(v) for k, v in sorted(m.items())} for c, m in sorted(self.per_case.items())},
        }
        return hashlib.sha256(dumps_compact(described).encode("utf-8")).hexdigest()


def _number(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise DevelopmentError(f"{where} must be a number of seconds") from None
    if not number > 0:
        raise DevelopmentError(f"{where} must be more than 0 seconds")
    return number


def _check(check_id: str, value: Any, where: str, unavailable: bool) -> Check:
    if check_id not in CHECK_IDS:
        raise DevelopmentError(f"{where}: unsupported check '{check_id}' (compile, tests or review)")
    if not isinstance(value, dict):
        raise DevelopmentError(f"{where}: check '{check_id}' must be a mapping")
    known = {"argv", "timeout_s", "env", "pass_exit_codes", "kind"}
    extra = sorted(set(value) - known)
    if extra:
        raise DevelopmentError(f"{where}: check '{check_id}' has unknown key '{extra[0]}'")
    kind = value.get("kind", "review" if check_id == "review" else "command")
    if kind != ("review" if check_id == "review" else "command"):
        raise DevelopmentError(f"{where}: check '{check_id}' has kind '{kind}'; review is 'review', others 'command'")
    argv = value.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
        raise DevelopmentError(f"{where}: check '{check_id}' needs argv, a non-empty list of strings (no shell)")
    env = value.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise DevelopmentError(f"{where}: check '{check_id}' env must map names to strings")
    codes = value.get("pass_exit_codes", ["0"])
    if not isinstance(codes, list) or not all(isinstance(c, str) and c.isdigit() for c in codes) or not codes:
        raise DevelopmentError(f"{where}: check '{check_id}' pass_exit_codes must be a list of exit codes")
    return Check(
        check_id,
        kind,
        tuple(argv),
        _number(value.get("timeout_s", "900"), f"{where}: check '{check_id}' timeout_s"),
        dict(sorted(env.items())),
        tuple(int(c) for c in codes),
        unavailable and kind == "command",
    )


def _checks(value: Any, where: str, unavailable: bool) -> dict[str, Check]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DevelopmentError(f"{where}: checks must be a mapping of check id -> settings")
    return {key: _check(key, item, where, unavailable) for key, item in value.items()}


def read_checks(path: Path, table: dict[str, Any] | None = None) -> ChecksConfig:
    """Parse a checks file, or with `table` pyproject.toml's inline checks (path: that file) by the same rules and
    messages; every problem is one line naming the file."""
    if table is not None:
        return _config({"version": "1", **_text_scalars(table)}, f"{path}: [tool.bceval.development]", path)
    try:
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    except OSError:
        raise DevelopmentError(f"--checks {path} does not exist or cannot be read") from None
    except (yaml.YAMLError, UnicodeDecodeError):
        raise DevelopmentError(f"--checks {path} is not valid UTF-8 YAML") from None
    return _config(document, str(path), path)


def _text_scalars(value: Any) -> Any:
    """A TOML value as BaseLoader YAML gives it: numbers as text."""
    if isinstance(value, dict):
        return {key: _text_scalars(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_text_scalars(item) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def _config(document: Any, where: str, path: Path) -> ChecksConfig:
    if not isinstance(document, dict) or document.get("version") != "1":
        raise DevelopmentError(f"{where}: must be a mapping with version: 1")
    extra = sorted(set(document) - {"version", "checks", "cases", "toolchain", "workspaces"})
    if extra:
        raise DevelopmentError(f"{where}: unknown key '{extra[0]}'")
    toolchain = document.get("toolchain", "available")
    if toolchain not in ("available", "unavailable"):
        raise DevelopmentError(f"{where}: toolchain must be available or unavailable")
    unavailable = toolchain == "unavailable"
    config = ChecksConfig(path, _checks(document.get("checks"), where, unavailable))
    cases = document.get("cases") or {}
    if not isinstance(cases, dict):
        raise DevelopmentError(f"{where}: cases must map manifest ids to overrides")
    for case, override in cases.items():
        if not isinstance(override, dict) or set(override) - {"checks", "workspace"}:
            raise DevelopmentError(f"{where}: case '{case}' may set only checks and workspace")
        config.per_case[case] = _checks(override.get("checks"), f"{where}: case '{case}'", unavailable)
        if "workspace" in override:
            config.workspaces[case] = _workspace_text(override["workspace"], f"{where}: case '{case}'")
    workspaces = document.get("workspaces") or {}
    if not isinstance(workspaces, dict):
        raise DevelopmentError(f"{where}: workspaces must map manifest ids to starting repositories")
    for case, source in workspaces.items():
        config.workspaces.setdefault(case, _workspace_text(source, f"{where}: workspaces"))
    return config


def _workspace_text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise DevelopmentError(f"{where}: a starting repository is a folder or a git repository@commit")
    return value


def require_configured(loaded: Loaded, config: ChecksConfig) -> None:
    """Every required check of every case has a configured check: else stop before any agent runs (§11.6)."""
    for case in loaded.cases:
        configured = config.checks_for(case.id)
        for check in case.checks:
            if check.lower() not in configured:
                raise DevelopmentError(
                    f"{config.path or 'checks'}: required check '{check}' of case '{case.id}' has no configured "
                    "check (add it under checks:)"
                )


def expand(
    argv: tuple[str, ...], case: Case, workspace: Path, artifacts: Path, checks_file: Path, **more: str
) -> list[str]:
    """The spec's placeholders {workspace}, {case}, {case_id} and {artifacts}, bceval's {python} (this interpreter)
    and {checks_dir} (the checks file's folder), and `more`, in each argument."""
    values = {
        "workspace": str(workspace),
        "case": case.id,
        "case_id": case.model_id,
        **more,
        "artifacts": str(artifacts),
        "python": sys.executable,
        "checks_dir": str(checks_file.resolve().parent),
    }
    expanded = []
    for argument in argv:
        for name, value in values.items():
            argument = argument.replace("{" + name + "}", value)
        expanded.append(argument)
    return expanded


def starting_repositories(
    loaded: Loaded, config: ChecksConfig, checks_file: Path, workspace_map: Path | None
) -> dict[str, str]:
    """Manifest id -> starting repository (the map's, else the checks file's), relative to its file."""
    sources = {case: anchored(source, checks_file.parent) for case, source in config.workspaces.items()}
    if workspace_map is not None:
        try:
            mapping = json.loads(workspace_map.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise DevelopmentError(f"--workspace-map {workspace_map} is not a readable JSON object") from None
        if not isinstance(mapping, dict) or not all(isinstance(v, str) and v for v in mapping.values()):
            raise DevelopmentError(f"--workspace-map {workspace_map} must map manifest ids to repositories")
        sources.update({case: anchored(source, workspace_map.parent) for case, source in mapping.items()})
    for case in loaded.cases:
        source = sources.get(case.id)
        if source is None:
            raise DevelopmentError(f"case '{case.id}' has no starting repository (--workspace-map or workspaces:)")
        pinned = PINNED.match(source)
        if pinned is None and not (Path(source) / "app.json").is_file():
            raise DevelopmentError(f"case '{case.id}': starting repository {source} is not a folder with app.json")
        if pinned and "://" not in source and not Path(pinned["repo"]).exists():
            raise DevelopmentError(f"case '{case.id}': starting repository {pinned['repo']} does not exist")
    return sources
