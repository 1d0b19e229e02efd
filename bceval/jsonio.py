"""JSON in and out: strict reads of files we did not write, canonical and atomic writes."""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from bceval.errors import BcevalError

MAX_JSON_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64


_UMASK = os.umask(0)  # read once at import, before any threads start (reading it means setting it)
os.umask(_UMASK)
_DEFAULT_MODE = 0o666 & ~_UMASK  # a new file's mode


class _Duplicate(dict):
    """Stands in for a JSON object that repeated a key, so the reader can report its path."""

    def __init__(self, pairs: list[tuple[str, Any]], key: str) -> None:
        super().__init__(pairs)
        self.duplicate_key = key


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return _Duplicate(pairs, key)
        seen.add(key)
    return dict(pairs)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def utf8_encodable(text: str) -> bool:
    """False for text holding a lone surrogate: a JSON escape or an undecodable file name that is no
    UTF-8 we could write back."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _find_problem(value: Any, path: str, depth: int) -> str | None:
    """The first duplicate key or over-deep nesting in a parsed document, as a message."""
    if isinstance(value, dict | list) and depth >= MAX_DEPTH:
        return f"nesting deeper than {MAX_DEPTH} levels at {path}"
    if isinstance(value, _Duplicate):
        return f"duplicate key '{value.duplicate_key}' at {path}"
    if isinstance(value, str):
        return None if utf8_encodable(value) else f"string with an unpaired surrogate escape at {path}"
    if isinstance(value, dict):
        for key in value:
            if not utf8_encodable(key):
                return f"key with an unpaired surrogate escape at {path}"
        children = ((f"{path}.{k}", v) for k, v in value.items())
    elif isinstance(value, list):
        children = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next(filter(None, (_find_problem(child, where, depth + 1) for where, child in children)), None)


def decode_utf8(data: bytes, where: str) -> str:
    """UTF-8 text with an optional BOM removed; anything else is a one-line error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BcevalError(f"{where}: not valid UTF-8 (byte 0x{data[exc.start]:02X} at offset {exc.start})") from None
    return text[1:] if text.startswith("\ufeff") else text


def parse_json(data: bytes, where: str) -> Any:
    """Parse untrusted JSON strictly: UTF-8, no duplicate keys, no NaN/Infinity, bounded depth."""
    if len(data) > MAX_JSON_BYTES:
        raise BcevalError(f"{where}: larger than {MAX_JSON_BYTES // (1024 * 1024)} MiB")
    try:
        value = json.loads(decode_utf8(data, where), object_pairs_hook=_pairs_hook, parse_constant=_reject_constant)
    except RecursionError:
        raise BcevalError(f"{where}: invalid JSON: nesting deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise BcevalError(f"{where}: invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise BcevalError(f"{where}: invalid JSON: {exc}") from None
    problem = _find_problem(value, "$", 0)
    if problem:
        raise BcevalError(f"{where}: invalid JSON: {problem}")
    return value


def parse_json_text(text: str, missing: Any = None) -> Any:
    """parse_json of text an agent printed, or `missing` when it is not strict JSON (lone surrogates are kept,
    so they are refused rather than crash the encoder)."""
    try:
        return parse_json(text.encode("utf-8", "surrogatepass"), "agent output")
    except BcevalError:
        return missing


class NotRegularFile(OSError):
    """A path bceval would read that is a FIFO, a device or a socket: never opened for reading, since that blocks."""


_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


def open_regular(path: Path | str) -> BinaryIO:
    """A binary reader of `path` when it is a regular file (links followed); else the OSError open would give, or
    IsADirectoryError, or NotRegularFile. Opening never blocks: a FIFO opened without waiting is refused."""
    handle = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(handle)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file (a FIFO, device or socket)", str(path))
        os.set_blocking(handle, True)
        return os.fdopen(handle, "rb")
    except BaseException:
        os.close(handle)
        raise


def read_regular_bytes(path: Path | str) -> bytes:
    """The bytes of a regular file (see open_regular), read to its end."""
    with open_regular(path) as handle:
        return handle.read()


def read_regular_text(path: Path | str, encoding: str = "utf-8", errors: str = "strict") -> str:
    """The text of a regular file (see open_regular), decoded as Path.read_text would (universal newlines)."""
    text = read_regular_bytes(path).decode(encoding, errors)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_json(path: Path) -> Any:
    """Read a JSON file we did not write ourselves (manifest, results, reports)."""
    return parse_json(read_json_bytes(path), str(path))


def read_json_bytes(path: Path) -> bytes:
    """The bytes of a JSON file we did not write ourselves, within the size limit; one-line errors."""
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise BcevalError(f"{path}: larger than {MAX_JSON_BYTES // (1024 * 1024)} MiB")
        return read_regular_bytes(path)
    except FileNotFoundError:
        raise BcevalError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise BcevalError(f"{path}: is a directory, expected a JSON file") from None
    except OSError as exc:
        raise BcevalError(f"{path}: cannot read: {exc.strerror}") from None


def dumps(value: Any) -> str:
    """Indented JSON as bceval writes it: 2 spaces, non-ASCII kept, LF, trailing newline; NaN and Infinity refused."""
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def dumps_compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


TEMP_PREFIX = ".bceval-tmp-"  # a name no editor uses; the pid says whether the writer may still be running


def temp_prefix() -> str:
    """The start of an atomic write's temporary name: `.bceval-tmp-<pid>-` (mkstemp adds 8 random characters)."""
    return f"{TEMP_PREFIX}{os.getpid()}-"


def write_atomic(path: Path, content: str | bytes) -> bool:
    """Write through a temporary file in the same folder and a rename, skipping the write when the bytes are equal
    (so mtimes stay stable and doit reruns nothing that depends on the file). True when the file changed."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        info = path.stat()
        # the size first: a large output that grew or shrank is not read back just to compare
        if stat.S_ISREG(info.st_mode) and info.st_size == len(data) and read_regular_bytes(path) == data:
            return False
        mode = info.st_mode & 0o7777  # keep the mode of a file we replace
    except FileNotFoundError:
        mode = _DEFAULT_MODE
    try:
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(), dir=path.parent)
    except FileNotFoundError:  # the folder is new
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(), dir=path.parent)
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)  # mkstemp makes it 0600
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno is not None and exc.filename is None:  # a full disk names no file
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    return True


def create_exclusive(path: Path, data: bytes) -> bool:
    """Create a new file whole or not at all, never replacing one; False when `path` already exists. The bytes go
    to a temporary sibling, then are hard-linked into place, which fails instead of overwriting."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(), dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:  # a filesystem without hard links: exclusive create, then write
            try:
                out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return False
            with os.fdopen(out, "wb") as handle:
                handle.write(data)
    finally:
        os.unlink(tmp)
    return True


_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC


def append_text(path: Path, text: str) -> None:
    """Append `text` (UTF-8, LF) to `path` in one write, creating the file but not its folder (FileNotFoundError)."""
    fd = os.open(path, _APPEND, 0o666)
    try:
        write_all(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to the descriptor `fd` (one write may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_json_or_none(path: Path) -> Any:
    """A JSON file's value, or None when it is missing, unreadable or not JSON (what a page or a rerun can skip)."""
    try:
        return json.loads(read_regular_text(path))
    except (OSError, ValueError):  # a UnicodeDecodeError is a ValueError
        return None


def load_own_json(path: Path) -> Any:
    """Read an intermediate file that bceval wrote itself (trusted, no limits)."""
    return json.loads(read_regular_bytes(path))
