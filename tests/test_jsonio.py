"""Strict JSON reads and canonical, atomic writes (README "Decisions": UTF-8, BOM accepted, LF, no BOM written)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

import bceval.jsonio as jsonio
from bceval.errors import BcevalError
from bceval.jsonio import decode_utf8, dumps, parse_json, read_json, write_atomic

# --- parse_json -------------------------------------------------------------------------------------


def test_parse_json_reads_a_document():
    assert parse_json(b'{"a": [1, 2.5, "x", null, true]}', "m.json") == {"a": [1, 2.5, "x", None, True]}


def test_duplicate_top_level_key_is_rejected_with_key_and_path():
    with pytest.raises(BcevalError) as info:
        parse_json(b'{"version": 2, "version": 3}', "m.json")
    message = str(info.value)
    assert message.startswith("m.json: invalid JSON: ")
    assert "duplicate key 'version' at $" in message


def test_duplicate_nested_key_names_json_path():
    data = b'{"overrides": {"performance": {}, "performance": {"context": "x"}}}'
    with pytest.raises(BcevalError, match=r"duplicate key 'performance' at \$\.overrides$"):
        parse_json(data, "m.json")


def test_duplicate_key_inside_array_names_index_path():
    with pytest.raises(BcevalError, match=r"duplicate key 'id' at \$\.cases\[1\]$"):
        parse_json(b'{"cases": [{"id": 1}, {"id": 1, "id": 2}]}', "r.json")


def test_same_key_in_different_objects_is_fine():
    assert parse_json(b'[{"id": 1}, {"id": 2}]', "r.json") == [{"id": 1}, {"id": 2}]


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_rejected(constant):
    with pytest.raises(BcevalError, match="invalid JSON") as info:
        parse_json(b'{"minimumCleanRate": ' + constant + b"}", "m.json")
    assert constant.decode().lstrip("-") in str(info.value)


def test_syntax_error_names_file_line_and_column():
    with pytest.raises(BcevalError, match=r"^m\.json: invalid JSON: .* at line 2 column \d+$"):
        parse_json(b'{"a": 1,\n}', "m.json")


def test_non_utf8_is_rejected_naming_byte_and_offset():
    with pytest.raises(BcevalError) as info:
        parse_json(b'{"a": "\xff"}', "m.json")
    assert str(info.value) == "m.json: not valid UTF-8 (byte 0xFF at offset 7)"


def test_bom_is_accepted():
    assert parse_json(b'\xef\xbb\xbf{"a": "\xc3\xa9"}', "m.json") == {"a": "\u00e9"}


def nested(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


def test_nesting_of_64_levels_is_accepted():
    value = parse_json(b"[" * 64 + b"1" + b"]" * 64, "deep.json")
    for _ in range(64):
        value = value[0]
    assert value == 1


def test_nesting_deeper_than_64_is_rejected():
    with pytest.raises(BcevalError, match="nesting deeper than 64 levels"):
        parse_json(nested(66), "deep.json")


def test_extremely_deep_nesting_is_a_clean_error():
    with pytest.raises(BcevalError, match="nesting deeper than 64 levels"):
        parse_json(nested(100_000), "deep.json")


def test_oversized_input_is_rejected(monkeypatch):
    monkeypatch.setattr(jsonio, "MAX_JSON_BYTES", 16)
    assert parse_json(b'"' + b"x" * 14 + b'"', "ok.json") == "x" * 14
    with pytest.raises(BcevalError, match=r"^big\.json: larger than "):
        parse_json(b'"' + b"x" * 15 + b'"', "big.json")


# --- read_json --------------------------------------------------------------------------------------


def test_read_json_reads_file(tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes(b'{"k": [1]}')
    assert read_json(path) == {"k": [1]}


def test_read_json_missing_file_message(tmp_path):
    path = tmp_path / "absent.json"
    with pytest.raises(BcevalError) as info:
        read_json(path)
    assert str(info.value) == f"{path}: file not found"


def test_read_json_directory_message(tmp_path):
    with pytest.raises(BcevalError, match="is a directory"):
        read_json(tmp_path)


def test_read_json_oversized_file_is_rejected_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonio, "MAX_JSON_BYTES", 8)
    path = tmp_path / "big.json"
    path.write_bytes(b'"0123456789"')
    with pytest.raises(BcevalError) as info:
        read_json(path)
    assert str(info.value).startswith(f"{path}: larger than ")


def test_read_json_errors_name_the_file(tmp_path):
    path = tmp_path / "dup.json"
    path.write_bytes(b'{"a": 1, "a": 2}')
    with pytest.raises(BcevalError) as info:
        read_json(path)
    assert str(info.value).startswith(f"{path}: invalid JSON: duplicate key 'a'")


# --- decode_utf8 ------------------------------------------------------------------------------------


def test_decode_utf8_strips_one_bom():
    assert decode_utf8(b"\xef\xbb\xbf\xef\xbb\xbfx", "f") == "\ufeffx"


def test_decode_utf8_keeps_line_ends():
    assert decode_utf8(b"a\r\nb\rc\n", "f") == "a\r\nb\rc\n"


def test_decode_utf8_rejects_utf16():
    with pytest.raises(BcevalError, match=r"^a\.md: not valid UTF-8 \(byte 0xFF at offset 0\)$"):
        decode_utf8("x".encode("utf-16"), "a.md")


def test_decode_utf8_reports_offset_of_truncated_sequence():
    with pytest.raises(BcevalError, match=r"byte 0xC3 at offset 3"):
        decode_utf8(b"abc\xc3", "f")


# --- dumps ------------------------------------------------------------------------------------------


def test_dumps_is_two_space_indented_with_one_trailing_newline():
    assert dumps({"a": [1, {"b": None}], "c": "x"}) == (
        '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ],\n  "c": "x"\n}\n'
    )


def test_dumps_keeps_non_ascii():
    text = dumps({"t": "caf\u00e9 \u2026 \U0001f600"})
    assert "caf\u00e9 \u2026 \U0001f600" in text
    assert "\\u" not in text


def test_dumps_keeps_member_order_and_empty_containers():
    assert dumps({"z": [], "a": {}}) == '{\n  "z": [],\n  "a": {}\n}\n'


def test_dumps_round_trips():
    value = {"k": ["\u00e9", 1.5, True]}
    assert json.loads(dumps(value)) == value


# --- write_atomic -----------------------------------------------------------------------------------


def test_write_atomic_creates_parent_directories(tmp_path):
    path = tmp_path / "a" / "b" / "out.json"
    assert write_atomic(path, "x\n") is True
    assert path.read_bytes() == b"x\n"


def test_write_atomic_writes_utf8_without_bom_and_keeps_lf(tmp_path):
    path = tmp_path / "out.json"
    write_atomic(path, "\u00e9\nz\n")
    assert path.read_bytes() == b"\xc3\xa9\nz\n"


def test_write_atomic_accepts_bytes(tmp_path):
    path = tmp_path / "out.bin"
    assert write_atomic(path, b"\x00\x01") is True
    assert path.read_bytes() == b"\x00\x01"


def test_write_atomic_skips_equal_content_and_keeps_mtime(tmp_path):
    path = tmp_path / "out.json"
    write_atomic(path, "same\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    assert write_atomic(path, "same\n") is False
    assert path.stat().st_mtime_ns == 1_000_000_000


def test_write_atomic_replaces_different_content(tmp_path):
    path = tmp_path / "out.json"
    write_atomic(path, "old\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    assert write_atomic(path, "new\n") is True
    assert path.read_bytes() == b"new\n"
    assert path.stat().st_mtime_ns != 1_000_000_000


def test_write_atomic_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "out.json"
    write_atomic(path, "one\n")
    write_atomic(path, "two\n")
    write_atomic(path, "two\n")
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_write_atomic_cleans_up_temporary_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "out.json"

    def failing_replace(src, dst):
        raise OSError("simulated")

    monkeypatch.setattr(jsonio.os, "replace", failing_replace)
    with pytest.raises(OSError, match="simulated"):
        write_atomic(path, "x\n")
    assert list(tmp_path.iterdir()) == []


def test_write_atomic_keeps_the_mode_of_a_replaced_file(tmp_path):
    target = tmp_path / "page.md"
    target.write_text("old")
    target.chmod(0o640)
    write_atomic(target, "new")
    assert target.stat().st_mode & 0o777 == 0o640


@pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")
def test_write_atomic_gives_a_new_file_the_umask_mode_and_keeps_wider_modes(tmp_path):
    fresh = tmp_path / "fresh.json"
    write_atomic(fresh, "x")
    assert fresh.stat().st_mode & 0o777 == jsonio._DEFAULT_MODE
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o777)  # bits a umask of 022 would take from a new file
    write_atomic(script, "new")
    assert script.stat().st_mode & 0o777 == 0o777


def test_write_atomic_on_a_full_disk_names_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    path = tmp_path / "out.json"

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonio.os, "write", full)
    with pytest.raises(OSError) as caught:
        write_atomic(path, "x\n")
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(path)
    assert list(tmp_path.iterdir()) == []


def test_dumps_is_json_dumps_indented_for_every_json_type_and_their_subclasses():
    import enum
    import math
    import random
    import struct

    class Level(enum.IntEnum):
        HIGH = 3

    class Name(str):
        pass

    pick = random.Random(25)
    scalars = [0, -2, 10**30, 1.5, -0.0, 2.5e-8, 1e300, True, False, None, "", 'é\u2028"\\\n', Level.HIGH, Name("n")]
    # floats of every kind (finite ones from random bit patterns: subnormal, huge, negative zero), as json writes them
    bits = (struct.unpack("<d", pick.randbytes(8))[0] for _ in range(4000))
    floats = [value for value in bits if math.isfinite(value)] + [5e-324, 1.7976931348623157e308, 0.1, 1e16]

    def document(depth: int):
        roll = pick.random()
        if depth > 4 or roll < 0.3:
            return pick.choice(floats if pick.random() < 0.3 else scalars)
        if roll < 0.6:
            return [document(depth + 1) for _ in range(pick.randint(0, 4))]
        if roll < 0.7:
            return tuple(document(depth + 1) for _ in range(pick.randint(0, 3)))
        keys = ["a", "ü", 1, 2.5, True, None, Name("k")]
        return {pick.choice(keys): document(depth + 1) for _ in range(pick.randint(0, 4))}

    for _ in range(3000):
        value = document(0)
        assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="Out of range float values"):
            dumps({"x": [bad]})


def test_read_regular_bytes_reads_every_byte_whatever_the_size_says(tmp_path, monkeypatch):
    from bceval.jsonio import read_regular_bytes

    empty, large = tmp_path / "empty", tmp_path / "large"
    empty.write_bytes(b"")
    data = bytes(range(256)) * 1000  # more than one read of the size it had plus one
    large.write_bytes(data)
    assert read_regular_bytes(empty) == b"" and read_regular_bytes(large) == data
    real_fstat = os.fstat

    def smaller(handle):  # the file was 10 bytes when it was opened and has grown since
        info = real_fstat(handle)
        return type("Stat", (), {"st_mode": info.st_mode, "st_size": 10})()

    monkeypatch.setattr(jsonio.os, "fstat", smaller)
    assert read_regular_bytes(large) == data
    monkeypatch.undo()
    status = Path("/proc/self/status")
    if status.exists():  # a file whose size says 0 and that is not empty: read to its end all the same
        assert status.stat().st_size == 0 and b"Name:" in read_regular_bytes(status)
