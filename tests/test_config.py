"""Settings: precedence flag > environment > pyproject.toml > default, and one-line errors for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from bceval.config import DEMO_CORPUS, NOT_FOUND, Settings, load_settings
from bceval.errors import BcevalError


def _pyproject(folder: Path, body: str) -> None:
    (folder / "pyproject.toml").write_text(f"[tool.bceval]\n{body}\n", encoding="utf-8")


def test_defaults_without_any_source(tmp_path):
    settings = load_settings(cwd=tmp_path, environ={})
    assert (settings.corpus, settings.corpus_source) == (tmp_path.resolve(), NOT_FOUND)  # never the demo unasked
    assert settings.manifest is None
    assert settings.out == (tmp_path / "out").resolve()
    demo = load_settings(cwd=tmp_path, environ={"BCEVAL_CORPUS": "demo"})
    assert demo.corpus == DEMO_CORPUS and demo.corpus_source == "BCEVAL_CORPUS demo: bceval's demo corpus"
    assert demo.manifest == DEMO_CORPUS / "evaluation" / "review-fixtures.json"
    assert (settings.adapter, settings.jobs, settings.timeout, settings.retries) == ("baseline", 1, 300.0, 2)


def test_flag_beats_environment_beats_pyproject(tmp_path):
    _pyproject(tmp_path, 'out = "from-pyproject"\njobs = 3\nadapter = "oracle"')
    settings = load_settings(cwd=tmp_path, environ={"BCEVAL_OUT": "from-env", "BCEVAL_JOBS": "5"})
    assert settings.out == (tmp_path / "from-env").resolve()
    assert (settings.jobs, settings.adapter) == (5, "oracle")
    settings = load_settings(cwd=tmp_path, environ={"BCEVAL_OUT": "from-env"}, out="from-flag", jobs=7)
    assert (settings.out, settings.jobs) == ((tmp_path / "from-flag").resolve(), 7)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("jobs", 0, "--jobs must be at least 1 and at most 64, got 0"),
        ("jobs", 65, "--jobs must be at least 1 and at most 64, got 65"),
        ("timeout", 0, "--timeout must be greater than 0, got 0.0"),
        ("retries", 11, "--retries must be at least 0 and at most 10, got 11"),
        ("health_margin", -0.5, "--margin must be at least 0, got -0.5"),
        ("adapter", "gpt", "--adapter: unknown adapter 'gpt'; choose one of: baseline, oracle, command, api"),
    ],
)
def test_out_of_range_values_fail_in_one_line(tmp_path, name, value, message):
    with pytest.raises(BcevalError) as caught:
        load_settings(cwd=tmp_path, environ={}, **{name: value})
    assert str(caught.value) == message
    with pytest.raises(BcevalError):
        Settings(corpus=tmp_path, manifest=tmp_path / "m.json", out=tmp_path / "o", **{name: value})


def test_bounds_themselves_are_accepted(tmp_path):
    settings = load_settings(cwd=tmp_path, environ={}, jobs=64, retries=0, health_margin=0, timeout=0.5)
    assert (settings.jobs, settings.retries, settings.health_margin, settings.timeout) == (64, 0, 0, 0.5)


def test_bad_environment_and_pyproject_values_name_their_source(tmp_path):
    with pytest.raises(BcevalError, match="^BCEVAL_JOBS must be a whole number, got 'many'$"):
        load_settings(cwd=tmp_path, environ={"BCEVAL_JOBS": "many"})
    _pyproject(tmp_path, "colour = 1")
    with pytest.raises(BcevalError, match=r"\[tool.bceval\] has unknown setting 'colour'$"):
        load_settings(cwd=tmp_path, environ={})


def test_settings_are_frozen(tmp_path):
    settings = load_settings(cwd=tmp_path, environ={})
    with pytest.raises(AttributeError):
        settings.jobs = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"BCEVAL_TIMEOUT": "nan"}, "BCEVAL_TIMEOUT must be a number, got 'nan'"),
        ({"BCEVAL_HEALTH_MARGIN": "inf"}, "BCEVAL_HEALTH_MARGIN must be a number, got 'inf'"),
        ({"BCEVAL_JOBS": "2.9"}, "BCEVAL_JOBS must be a whole number, got '2.9'"),
    ],
)
def test_non_finite_and_fractional_numbers_are_refused(tmp_path, environ, message):
    with pytest.raises(BcevalError) as caught:
        load_settings(cwd=tmp_path, environ=environ)
    assert str(caught.value) == message


def test_flags_and_pyproject_values_get_the_same_number_checks(tmp_path):
    with pytest.raises(BcevalError, match="^--timeout must be a number, got 'nan'$"):
        load_settings(cwd=tmp_path, environ={}, timeout=float("nan"))
    _pyproject(tmp_path, "jobs = true")
    with pytest.raises(BcevalError, match=r"\[tool.bceval\] jobs must be a whole number, got 'True'$"):
        load_settings(cwd=tmp_path, environ={})
    _pyproject(tmp_path, "jobs = 3.0\ntimeout = 5")
    settings = load_settings(cwd=tmp_path, environ={})
    assert (settings.jobs, settings.timeout) == (3, 5.0)
    with pytest.raises(BcevalError, match="^invalid setting timeout: must be a finite number, got nan$"):
        Settings(corpus=tmp_path, manifest=tmp_path / "m.json", out=tmp_path, timeout=float("nan"))
