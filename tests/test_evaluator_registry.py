"""The evaluator registry: bceval's own evaluators, plugins found by entry point, and `bceval evaluators`."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from bceval.evaluators.base import Evaluator
from bceval.evaluators.registry import BUILT_IN, evaluator, registered

PLUGIN = """
from dataclasses import dataclass, field
from bceval.evaluators.base import Traits

@dataclass(frozen=True)
class Toy:
    name: str = "toy"
    description: str = "a toy evaluator <b>\\x1b[31m</b>"
    question: str = "toy"
    traits: Traits = field(default_factory=Traits)
    def load(self, root, manifest): return None
    def cases(self, loaded): return []
    def model_id(self, case): return case
    def case_kind(self, case): return "positive"
    def outcomes(self, loaded, problems): return []
    def measures(self, loaded, results_dir): return None
    def commands(self): return ()
    def tasks(self, inputs): return {}
    def verb(self, verb, args): return 0
    def check_arms(self, arms, settings): return None
    def run_unit(self, plan, arm, run, epoch, settings): return None
    def unit_inputs(self, arm): return {}

TOY = Toy()
"""


def _installed(tmp_path, name, value):
    """A distribution named toy-dist on a path of its own, declaring one evaluator entry point."""
    site = tmp_path / "site"
    (site / "toy_plugin.py").parent.mkdir(parents=True, exist_ok=True)
    (site / "toy_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "toy_dist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-dist\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[bceval.evaluators]\n{name} = {value}\n", encoding="utf-8")
    return site


def _bceval(site, *given):
    args = list(given)
    code = f"import sys; sys.path.insert(0, {str(site)!r}); from bceval.cli.main import main; sys.exit(main({args!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_the_built_in_evaluators_keep_the_protocol_in_listed_order():
    names = [entry.name for entry in registered() if entry.origin == BUILT_IN]
    assert names == ["review", "plan", "implementation", "development", "pr-review"]
    for name in names:
        assert isinstance(evaluator(name), Evaluator)
        assert evaluator(name).description


def test_a_plugin_is_listed_with_its_distribution_and_escaped_text(tmp_path):
    site = _installed(tmp_path, "toy", "toy_plugin:TOY")
    done = _bceval(site, "evaluators")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["review", "built-in"],
        ["plan", "built-in"],
        ["implementation", "built-in"],
        ["development", "built-in"],
        ["pr-review", "built-in"],
        ["toy", "toy-dist"],
    ]
    assert "\x1b" not in done.stdout  # a plugin's text is data: escaped for the console


def test_a_plugin_that_cannot_load_is_listed_with_why_and_refused_in_one_line(tmp_path):
    site = _installed(tmp_path, "broken", "no_such_module:THING")
    listed = _bceval(site, "evaluators")
    assert listed.returncode == 0 and "broken" in listed.stdout and "cannot be loaded" in listed.stdout
    used = _bceval(site, "prepare", "--evaluator", "broken", "--corpus", "demo", "--out", str(tmp_path / "out"))
    assert used.returncode == 2 and "Traceback" not in used.stderr
    assert used.stderr.strip().splitlines()[-1].startswith("bceval: evaluator 'broken' of toy-dist cannot be loaded")


def test_a_plugin_cannot_take_a_built_in_name(tmp_path):
    site = _installed(tmp_path, "review", "toy_plugin:TOY")
    done = _bceval(site, "evaluators")
    assert done.returncode == 2 and "clashes with the one of built-in" in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_evaluator_is_refused_naming_the_registered_ones(tmp_path):
    done = _bceval(tmp_path, "prepare", "--evaluator", "nope", "--corpus", "demo", "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "no evaluator named 'nope' (registered: review, plan, implementation, development, pr-review)"
    )
    assert not (tmp_path / "out").exists()


def test_the_frame_runs_a_plugins_verb(tmp_path):
    site = _installed(tmp_path, "toy", "toy_plugin:TOY")
    done = _bceval(site, "score", "--evaluator", "toy", "--corpus", "demo", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert textwrap.dedent(done.stdout) == ""


def test_each_built_in_declares_the_subcommands_it_adds():
    for entry in registered():
        if entry.origin == BUILT_IN:
            assert entry.commands == tuple(command.name for command in evaluator(entry.name).commands()), entry.name


def test_a_review_command_loads_no_other_evaluator(tmp_path):
    """Start-up time: `bceval prepare` loads the review evaluator alone, not guidance's git or development's
    experiment statistics (0.63 s before, with every evaluator and the bench and viewer loaded)."""
    others = ("bceval.evaluators.guidance", "bceval.evaluators.development", "bceval.bench", "bceval.viewer")
    code = (
        "import sys\nfrom bceval.cli.main import main\n"
        f"code = main(['prepare', '--corpus', 'demo', '--out', {str(tmp_path / 'out')!r}])\n"
        f"print(sorted(m for m in sys.modules if m.startswith({others!r})))\nsys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_plugins_subcommand_is_offered_and_runs(tmp_path):
    site = _installed(tmp_path, "toy", "toy_plugin:TOY")
    command = (
        "    def commands(self):\n"
        "        from bceval.evaluators.base import Command\n"
        "        add = lambda subparsers: subparsers.add_parser('toy-hello', help='say hello')\n"
        "        return (Command('toy-hello', add, lambda args: print('hello from toy') or 3),)\n"
    )
    plugin = site / "toy_plugin.py"
    plugin.write_text(plugin.read_text().replace("    def commands(self): return ()\n", command), encoding="utf-8")
    done = _bceval(site, "toy-hello")
    assert (done.returncode, done.stdout) == (3, "hello from toy\n"), done.stderr
    assert "toy-hello" in _bceval(site, "--help").stdout
    assert "invalid choice" in _bceval(site, "toy-nope").stderr


def test_bcevals_own_help_lists_every_subcommand_whatever_follows(tmp_path, capsys):
    from bceval.cli.main import main

    for given in (["--help"], ["-h", "prepare"]):
        with pytest.raises(SystemExit):
            main(given)
        shown = capsys.readouterr().out
        assert all(name in shown for name in ("prepare", "guidance", "development", "evidence", "health", "compare"))
