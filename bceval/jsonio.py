"""JSON in and out: strict reads of files we did not write, canonical and atomic writes."""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import threading
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError

MAX_JSON_BYTES = 32 * 1024 * 1024


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_DEFAULT_MODE = 0o666 & ~_umask()  # read once at import, before any threads start
MAX_DEPTH = 64


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
    for child_path, child in children:
        found = _find_problem(child, child_path, depth + 1)
        if found:
            return found
    return None


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
    text = decode_utf8(data, where)
    repeated: list[str] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict:
        value = _pairs_hook(pairs)
        if isinstance(value, _Duplicate):
            repeated.append(value.duplicate_key)
        return value

    try:
        value = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=_reject_constant)
    except RecursionError:
        raise BcevalError(f"{where}: invalid JSON: nesting deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise BcevalError(f"{where}: invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise BcevalError(f"{where}: invalid JSON: {exc}") from None
    # The walk finds a repeated key, a lone surrogate (only an escape can make one) or nesting deeper than
    # MAX_DEPTH (which needs that many brackets); most documents can hold none, and skip it.
    if repeated or "\\u" in text or text.count("{") + text.count("[") >= MAX_DEPTH:
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


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


_READ_AT_ONCE = 64 * 1024 * 1024  # the most one read asks for (a sparse file may claim any size)


def _open_regular_fd(path: Path | str) -> tuple[int, int]:
    """A blocking descriptor of `path` and its size when it is a regular file (see open_regular)."""
    handle = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(handle)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file (a FIFO, device or socket)", str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(handle, True)
    except BaseException:
        os.close(handle)
        raise
    return handle, info.st_size


def open_regular(path: Path | str) -> Any:
    """A binary reader of `path` when it is a regular file (links followed); else the OSError open would give, or
    IsADirectoryError, or NotRegularFile. Opening never blocks: a FIFO opened without waiting is refused."""
    handle, _ = _open_regular_fd(path)
    try:
        return os.fdopen(handle, "rb")
    except BaseException:
        os.close(handle)
        raise


def read_regular_bytes(path: Path | str) -> bytes:
    """The bytes of a regular file (see open_regular), read to its end. Plain reads on the descriptor: every
    answer reads a dozen files, and a file object costs as many system calls again."""
    handle, size = _open_regular_fd(path)
    try:
        hint = min(size, _READ_AT_ONCE) + 1  # the size it had (one read) and a byte more, to see the end
        first = os.read(handle, hint)
        if not first or len(first) < hint:  # a regular file reads short only at its end: that was all of it
            return first
        chunks = [first]
        while chunk := os.read(handle, max(hint, 65536)):  # larger, grown meanwhile, or /proc says size 0
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)


def read_regular_text(path: Path | str, encoding: str = "utf-8", errors: str = "strict") -> str:
    """The text of a regular file (see open_regular), decoded as Path.read_text would (universal newlines)."""
    text = read_regular_bytes(path).decode(encoding, errors)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_json(path: Path) -> Any:
    """Read a JSON file we did not write ourselves (manifest, results, reports)."""
    return parse_json(read_json_bytes(path), str(path))


def read_json_bytes(path: Path) -> bytes:
    """The bytes of a JSON file we did not write ourselves, within the size limit; one-line errors."""
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise BcevalError(f"{path}: larger than {MAX_JSON_BYTES // (1024 * 1024)} MiB")
        data = read_regular_bytes(path)
    except FileNotFoundError:
        raise BcevalError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise BcevalError(f"{path}: is a directory, expected a JSON file") from None
    except OSError as exc:
        raise BcevalError(f"{path}: cannot read: {exc.strerror}") from None
    return data


_encode_string = json.encoder.encode_basestring  # the C implementation, non-ASCII kept
_encode_scalar = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def _indented(value: Any, pad: str, out: list[str]) -> None:
    """Append the text of json.dumps(value, indent=2, ensure_ascii=False), byte for byte.

    The standard library falls back to its pure-Python encoder whenever `indent` is set; this
    direct version is about three times faster on the large candidate lists of big corpora. The
    exact built-in types are told apart by `type` first (one lookup, not a chain of isinstance
    calls); subclasses and anything else take the general path.
    """
    kind = type(value)
    if kind is str:
        out.append(_encode_string(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = pad + "  "
        between = ",\n" + inner
        out.append("{\n" + inner)
        first = True
        for key, item in value.items():
            if first:
                first = False
            else:
                out.append(between)
            out.append(_encode_string(key if type(key) is str else _key_text(key)))
            out.append(": ")
            _indented(item, inner, out)
        out.append("\n" + pad + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = pad + "  "
        between = ",\n" + inner
        out.append("[\n" + inner)
        first = True
        for item in value:
            if first:
                first = False
            else:
                out.append(between)
            _indented(item, inner, out)
        out.append("\n" + pad + "]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float and value - value == 0.0:  # finite (inf - inf and nan - nan are nan): json's own repr
        out.append(float.__repr__(value))
    else:
        _indented_other(value, pad, out)


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) else json.dumps(key)


def _indented_other(value: Any, pad: str, out: list[str]) -> None:
    """Subclasses of the JSON types (a str or dict subclass, an int enum) and floats, as json.dumps has them."""
    if isinstance(value, str):
        out.append(_encode_string(value))
    elif isinstance(value, dict):
        _indented(dict(value), pad, out)
    elif isinstance(value, list | tuple):
        _indented(list(value), pad, out)
    else:
        out.append(_encode_scalar(value))


def dumps(value: Any) -> str:
    """Indented JSON as bceval writes it: 2 spaces, non-ASCII kept, LF, trailing newline."""
    out: list[str] = []
    _indented(value, "", out)
    out.append("\n")
    return "".join(out)


def dumps_compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


TEMP_PREFIX = ".bceval-tmp-"  # a name no editor uses; the pid says whether the writer may still be running


def temp_prefix() -> str:
    """The start of an atomic write's temporary name: `.bceval-tmp-<pid>-` (mkstemp adds 8 random characters)."""
    return f"{TEMP_PREFIX}{os.getpid()}-"


def write_atomic(path: Path, content: str | bytes) -> bool:
    """Write through a temporary file and rename, skipping the write when the bytes are equal.

    Returns True when the file changed. Skipping equal content keeps mtimes stable, so doit
    does not rerun the tasks that depend on the file.
    """
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        info = path.stat()
        # the size first: a large output that grew or shrank is not read back just to compare
        if stat.S_ISREG(info.st_mode) and info.st_size == len(data) and read_regular_bytes(path) == data:
            return False
        mode = info.st_mode & 0o7777  # keep the mode of a file we replace
    except FileNotFoundError:
        mode = _DEFAULT_MODE
        if _LINK_NEW and _write_new(path, data):
            return True
    try:
        fd, tmp = _create_temp(path.parent, mode)
    except FileNotFoundError:  # the folder is new (asking for it every time costs a syscall per write)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temp(path.parent, mode)
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        if mode & ~_DEFAULT_MODE:  # bits the umask takes from a new file, which the file we replace had
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if (named := _naming(exc, path)) is not None:
            raise named from None
        raise
    return True


def _naming(exc: BaseException, path: Path) -> OSError | None:
    """The error of a write that names no file (a full disk), as one that names `path`; None for any other."""
    if isinstance(exc, OSError) and exc.errno is not None and exc.filename is None:
        return OSError(exc.errno, exc.strerror, str(path))
    return None


# Linux: a new file is written unnamed (O_TMPFILE) and linked in once whole, through /proc/self/fd: one name
# made instead of a temporary one and a rename, and a write cut short leaves nothing behind at all.
_LINK_NEW = sys.platform.startswith("linux") and hasattr(os, "O_TMPFILE")
_UNNAMED = getattr(os, "O_TMPFILE", 0) | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
_root: list[int] = []  # "/" held open: os.link follows /proc/self/fd/N (linkat) only when given a folder fd
_root_lock = threading.Lock()


def _root_fd() -> int:
    with _root_lock:
        if not _root:
            _root.append(os.open("/", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)))
        return _root[0]


def _write_new(path: Path, data: bytes) -> bool:
    """Write the new file `path` unnamed and link it in (see _LINK_NEW). False, having left nothing, where it
    cannot be done so (a filesystem without O_TMPFILE, no /proc, or a file of that name made meanwhile): the
    caller writes it through a named temporary file."""
    folder = os.path.dirname(path) or "."
    try:
        fd = os.open(folder, _UNNAMED, 0o666)
    except FileNotFoundError:  # the folder is new
        os.makedirs(folder, exist_ok=True)
        try:
            fd = os.open(folder, _UNNAMED, 0o666)
        except OSError:
            return False
    except OSError:
        return False
    try:
        try:
            write_all(fd, data)
        except OSError as exc:
            if (named := _naming(exc, path)) is not None:
                raise named from None
            raise
        try:
            os.link(f"/proc/self/fd/{fd}", path, src_dir_fd=_root_fd(), follow_symlinks=True)
        except OSError:  # made meanwhile (the caller replaces it), or /proc is not there
            return False
    finally:
        os.close(fd)
    return True


_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def append_text(path: Path, text: str) -> None:
    """Append `text` (UTF-8, LF) to `path` in one write, creating the file but not its folder (FileNotFoundError):
    a journal line per answer, where a file object would cost as much again."""
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


_TEMP_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"
_temp_names: Any = None  # a random.Random, made on the first write (a no-op run writes nothing)


def _temp_letters() -> str:
    global _temp_names
    if _temp_names is None:
        import random

        _temp_names = random.Random()  # names, not secrets: O_EXCL is what makes a name ours
    return "".join(_temp_names.choices(_TEMP_LETTERS, k=8))


def _create_temp(folder: Path, mode: int) -> tuple[int, str]:
    """A new file `<temp_prefix()><8 letters>` in `folder`, created with `mode` (less the umask), and its name:
    what tempfile.mkstemp does, without the chmod its 0600 needs afterwards (a syscall per write)."""
    for _ in range(100):
        name = os.path.join(folder, temp_prefix() + _temp_letters())
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode), name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def load_own_json(path: Path) -> Any:
    """Read an intermediate file that bceval wrote itself (trusted, no limits)."""
    return json.loads(read_regular_bytes(path))
