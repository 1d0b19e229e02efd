"""The rules of the house, enforced: the import layers of pyproject.toml's import-linter contracts hold, and no
core module prints, exits or starts a process (only steps print; cli and graph wire; agents run processes)."""

from __future__ import annotations

import ast
import functools
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "bceval"
CORE = ("corpus", "evaluators", "scorecard", "runs", "experiment", "viewer")
CORE_CONTRACT = "an evaluator's core never imports git, agents' process code, steps, graph or cli"


def test_the_import_contracts_hold(capsys: pytest.CaptureFixture[str]) -> None:
    from importlinter.cli import lint_imports

    code = lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True, no_logo=True)
    assert code == 0, capsys.readouterr().out


@functools.cache
def _graph():  # every import of bceval's modules (also one inside a function), and the outside modules they import
    import grimp

    return grimp.build_graph(
        "bceval", include_external_packages=True, exclude_type_checking_imports=True, cache_dir=None
    )


def _import_cycles() -> list[list[str]]:
    """Groups of bceval modules that import each other, directly or through others (imports only for type checking
    do not count)."""
    graph = _graph()
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


def _evaluator_edge() -> set[str]:
    """An evaluator package's edge: its modules that reach, directly or through others, what pyproject.toml's
    contract forbids an evaluator's core (process code, git, the frame's steps, graph and cli). Like the frame's
    cli, graph and steps they may print, exit and start processes; the rest of the package is its core."""
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    forbidden = next(c for c in contracts["contracts"] if c["name"] == CORE_CONTRACT)["forbidden_modules"]
    graph = _graph()
    reaching = set().union(*(graph.find_downstream_modules(module, as_package=True) for module in forbidden))
    return reaching & graph.find_descendants("bceval.evaluators")


def test_no_core_module_prints_exits_or_starts_a_process() -> None:
    edge = _evaluator_edge()
    offenders = {}
    for package in CORE:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
            if module in edge:
                continue
            calls = _calls(path)
            if calls:
                offenders[path.relative_to(REPO).as_posix()] = calls
    assert not offenders, offenders


def test_the_check_sees_what_it_must(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import subprocess, sys\nprint('x')\nsys.exit(1)\nsubprocess.run(['x'])\n", encoding="utf-8")
    assert len(_calls(sample)) == 4
