"""The architecture moves code, never output: what bceval writes for the demo and the shared corpus (prepare,
oracle and baseline runs and scores, both guidance demo runs) is byte-identical to what it wrote before."""

from __future__ import annotations

import json

import golden_outputs
import pytest


def test_outputs_are_byte_identical_to_the_recorded_ones() -> None:
    expected = json.loads(golden_outputs.GOLDEN.read_text(encoding="utf-8"))
    if not golden_outputs.SHARED.is_dir():
        pytest.skip(f"needs the public BCQuality corpus at {golden_outputs.SHARED} for the 'shared' scenario")
    actual = golden_outputs.collect()
    assert sorted(actual) == sorted(expected)
    for scenario, files in expected.items():
        names = files.keys() | actual[scenario].keys()
        changed = sorted(name for name in names if files.get(name) != actual[scenario].get(name))
        assert not changed, f"{scenario}: these outputs changed: {changed}"
