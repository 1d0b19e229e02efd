"""The rules of the house, enforced: the import layers of pyproject.toml's import-linter contracts hold, and no
core module prints, exits or starts a process (only steps print; cli and graph wire; agents run processes)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "bceval"
CORE = ("corpus", "evaluators", "scorecard", "runs", "experiment", "viewer")
# An evaluator package's edge: its CLI verbs, task generators and the steps and runners they call may print, exit
# and start processes, as the frame's cli, graph and steps do; the rest of the package is its core.
EVALUATOR_EDGE = {
    *("plugin", "cli", "verbs", "tasks", "steps", "runner"),
    *("evidence_cli", "verdict", "demo", "config", "processes"),
}


def test_the_import_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    from importlinter.cli import lint_imports

    code = lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True, no_logo=True)
    assert code == 0, capsys.readouterr().out


def _import_cycles() -> list[list[str]]:
    """Groups of bceval modules that import each other, directly or through others (any import, also one inside
    a function; imports only for type checking do not count)."""
    import grimp

    graph = grimp.build_graph("bceval", exclude_type_checking_imports=True, cache_dir=None)
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in sorted(graph.find_modules_directly_imported_by(module)):
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in order:
            visit(module)
    return cycles


def test_no_module_imports_itself_through_others() -> None:
    assert _import_cycles() == []


def _calls(path: Path) -> list[str]:
    """`print(...)`, `sys.exit(...)`, `exit(...)` and any use of `subprocess` or `os.system`/`os.exec*` in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "exit"):
            found.append(f"{node.func.id}() at line {node.lineno}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            pair = (node.value.id, node.attr)
            if pair == ("sys", "exit") or node.value.id == "subprocess" or pair == ("os", "system"):
                found.append(f"{node.value.id}.{node.attr} at line {node.lineno}")
            elif node.value.id == "os" and node.attr.startswith(("exec", "spawn", "popen")):
                found.append(f"os.{node.attr} at line {node.lineno}")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            if "subprocess" in names:
                found.append(f"import of subprocess at line {node.lineno}")
    return found


def test_no_core_module_prints_exits_or_starts_a_process() -> None:
    offenders = {}
    for package in CORE:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            if package == "evaluators" and path.stem in EVALUATOR_EDGE:
                continue
            calls = _calls(path)
            if calls:
                offenders[path.relative_to(REPO).as_posix()] = calls
    assert not offenders, offenders


def test_the_check_sees_what_it_must(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import subprocess, sys\nprint('x')\nsys.exit(1)\nsubprocess.run(['x'])\n", encoding="utf-8")
    assert len(_calls(sample)) == 4
