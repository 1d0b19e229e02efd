"""The options table: every parser is built from it, its --help is what it was before the table (recorded in
tests/golden/help at 80 columns), and config's sources, ranges and the doit graph's variables come from it."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from bceval.cli import main
from bceval.config import RANGES, SOURCES, Settings, environment_values, load_settings
from bceval.config.commands import COMMANDS
from bceval.config.options import OPTIONS, SETTINGS

HELP = Path(__file__).parent / "golden" / "help"
SETTINGS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "settings.md"


@pytest.mark.parametrize("page", sorted(p.stem for p in HELP.glob("*.txt")))
def test_help_of_every_command_is_unchanged(page, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as done:
        main([*page.split("-")[1:], "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out == (HELP / f"{page}.txt").read_text(encoding="utf-8")


def test_every_command_takes_only_declared_options():
    for command, uses in COMMANDS.items():
        for use in uses:
            assert use.name in OPTIONS, (command, use.name)


def test_settings_sources_and_ranges_come_from_the_table():
    assert list(SOURCES) == [option.name for option in SETTINGS]
    assert SOURCES["sandbox_allow"] == ("BCEVAL_SANDBOX_ALLOW", "paths")
    assert RANGES["jobs"] == (1, 64, True) and RANGES["timeout"] == (0, None, False)
    every_flag_setting = {use.name for uses in COMMANDS.values() for use in uses} & set(SOURCES)
    assert set(SOURCES) - every_flag_setting == {"experiment"}  # given as the experiment FILE argument


def test_settings_defaults_are_the_tables(tmp_path):
    settings = load_settings(cwd=tmp_path, environ={})
    for option in SETTINGS:
        if option.default is not None:
            assert getattr(settings, option.name) == option.default, option.name


def test_every_variable_is_on_the_settings_page():
    text = SETTINGS_PAGE.read_text(encoding="utf-8")
    for option in OPTIONS.values():
        if option.env:
            assert f"`{option.env}`" in text, option.env


def test_the_graphs_variables_come_through_the_table():
    assert environment_values("bench", {}) == {
        "sizes": "250,2500,25000",
        "repeat": 3,
        "live": "256,16,0.2+1024,32,0.2",
        "experiment": "none",
        "api": "256,16,0.2",
        "view": "4,5,500",
    }
    assert environment_values("ci", {"GITHUB_STEP_SUMMARY": "s.md"}) == {"step_summary": "s.md"}
    given = environment_values("guidance", {"BCEVAL_GUIDANCE_ROOT": "r", "BCEVAL_GUIDANCE_OUT": ""})
    assert given == {"root": "r", "manifest": None, "out": None, "workspace_map": None, "adapter": "oracle"}


def test_each_setting_of_the_table_is_a_field_of_settings():
    declared = {field.name for field in fields(Settings)}
    for option in SETTINGS:
        assert option.name in declared, option.name
    # besides the table's settings, only what load_settings derives and what an experiment sets for an arm
    arm = {"corpus_source", "no_share", "until_decided", "cache", "cache_salt", "hide"}
    assert declared == {option.name for option in SETTINGS} | arm
    assert OPTIONS["no_share"].part == "arm"
