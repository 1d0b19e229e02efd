"""Opt-in OS sandbox for live agents, `--sandbox bwrap` (Linux): it sees the system, its installation, the view and
the files its command line names (read-only), the granted paths, and a private /tmp; never an answer key."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from bceval.errors import BcevalError
from bceval.jsonio import open_regular, read_regular_text

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
RESOLV_CONF = Path("/etc/resolv.conf")
# A `bin` directory whose parent holds one of these is an installation prefix (node, python, a venv).
PREFIX_MARKERS = ("lib", "lib64", "libexec", "node_modules", "pyvenv.cfg")
MAX_INTERPRETER_DEPTH = 4  # script -> interpreter -> ...; a shebang loop must still end
VERIFY_TIMEOUT = 30.0
NAMESPACE_FIX = (
    "usually the kernel refuses unprivileged user namespaces: enable them (sysctl kernel.unprivileged_userns_clone=1; "
    "on Ubuntu 24.04 sysctl kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap) "
    "or run without --sandbox"
)


def _require_linux() -> None:
    if not sys.platform.startswith("linux"):
        raise BcevalError("--sandbox bwrap needs Linux (bubblewrap); run without --sandbox on this system")


def _environ(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def require_bwrap(environ: Mapping[str, str] | None = None) -> str:
    """The bwrap executable, proven to work here with the flags real runs use; else a one-line fix."""
    _require_linux()
    bwrap = shutil.which("bwrap", path=_environ(environ).get("PATH"))
    if bwrap is None:
        raise BcevalError(
            "--sandbox bwrap: bwrap is not on PATH; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) "
            "or run without --sandbox"
        )
    _verify(bwrap)
    return bwrap


@functools.cache  # once per process and executable; a failure raises, so it is not cached
def _verify(bwrap: str) -> None:
    system_path = {"PATH": "/usr/bin:/bin"}
    argv = sandbox_argv(bwrap, ["true"], workdir=Path("/"), read_only=[], allow=[], hidden={}, environ=system_path)
    try:
        done = subprocess.run(
            argv, env=system_path, stdin=subprocess.DEVNULL, capture_output=True, timeout=VERIFY_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BcevalError(f"--sandbox bwrap: {bwrap} could not be run ({exc}); run without --sandbox") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = lines[0].strip()[:200] if lines else f"exit status {done.returncode}"
        raise BcevalError(f"--sandbox bwrap: bwrap could not create the sandbox ({reason}); {NAMESPACE_FIX}")


def _locate(command: str, environ: Mapping[str, str]) -> Path:
    found = shutil.which(command, path=environ.get("PATH"))
    if found is None:
        raise BcevalError(f"--sandbox bwrap: the agent command {command!r} is not an executable on PATH")
    return Path(os.path.abspath(found))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _is_system(path: Path) -> bool:
    return any(_inside(path, Path(d)) for d in SYSTEM_DIRS)


def _installation_dir(directory: Path) -> Path:
    """The prefix a `bin` directory belongs to, or the directory itself."""
    if directory.name == "bin" and any((directory.parent / m).exists() for m in PREFIX_MARKERS):
        return directory.parent
    return directory


def _venv_base(venv: Path) -> Path | None:
    """The base installation's bin directory named by a venv's pyvenv.cfg (`home = ...`)."""
    try:
        lines = read_regular_text(venv / "pyvenv.cfg", "utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip().lower() == "home" and value.strip():
            return Path(os.path.abspath(value.strip()))
    return None


def shebang(script: Path) -> list[str] | None:
    """The words of a script's `#!` line (none for a bare `#!`), or None without one."""
    with open_regular(script) as handle:
        head = handle.read(256)
    return head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split() if head.startswith(b"#!") else None


def env_command(words: list[str]) -> str | None:
    """`env [-S] [VAR=value] command`: the command env looks up on PATH."""
    return next((w for w in words[1:] if not w.startswith("-") and "=" not in w), None)


def _shebang_interpreter(script: Path, environ: Mapping[str, str]) -> Path | None:
    try:
        words = shebang(script)
    except OSError:
        return None
    if not words:
        return None
    if Path(words[0]).name != "env":
        return Path(os.path.abspath(words[0]))
    command = env_command(words)
    found = shutil.which(command, path=environ.get("PATH")) if command else None
    return Path(os.path.abspath(found)) if found else None


def _collect(executable: Path, environ: Mapping[str, str], found: list[Path], depth: int) -> None:
    target = executable.resolve()
    for path in dict.fromkeys([executable, target]):
        if _is_system(path):
            continue
        home = _installation_dir(path.parent)
        found.append(home)
        base = _venv_base(home)
        if base is not None and not _is_system(base):
            found.append(_installation_dir(base))
    interpreter = _shebang_interpreter(target, environ)
    if interpreter is not None and depth > 0:
        _collect(interpreter, environ, found, depth - 1)


def _outermost(paths: list[Path]) -> list[Path]:
    """Distinct paths, dropping any that lies inside another (its bind would be redundant)."""
    unique = list(dict.fromkeys(paths))
    return [p for p in unique if not any(q != p and _inside(p, q) for q in unique)]


def installation_paths(executable: str, environ: Mapping[str, str] | None = None) -> list[Path]:
    """What must exist in the sandbox for `executable` to run: its prefix (or directory), its symlink
    target's, and those of the interpreters its `#!` lines name; nothing under the system directories."""
    _require_linux()
    environ = _environ(environ)
    found: list[Path] = []
    _collect(_locate(executable, environ), environ, found, MAX_INTERPRETER_DEPTH)
    return _outermost(found)


def dns_config_bind(resolv_conf: Path = RESOLV_CONF) -> Path | None:
    """The file behind a resolv.conf symlink that points outside the system dirs (systemd-resolved: /run);
    without it the agent has a network but no DNS."""
    if not resolv_conf.is_symlink():
        return None
    target = resolv_conf.resolve()
    return target if target.is_file() and not _is_system(target) else None


def _refuse_exposure(binds: list[tuple[str, Path]], hidden: Mapping[str, Path]) -> None:
    for label, secret in hidden.items():
        secret_real = Path(os.path.realpath(secret))
        for what, path in binds:
            real = Path(os.path.realpath(path))
            if _inside(real, secret_real) or _inside(secret_real, real):
                advice = {
                    "--sandbox-allow": "grant a narrower path",
                    "--sandbox-allow-rw": "grant a narrower path",
                    "the file --command names,": "move it out, or keep it off the command line",
                }.get(what, "set TMPDIR outside it" if Path(path).name.startswith("bceval-") else "keep the two apart")
                raise BcevalError(f"{what} {path} would expose {label} {secret}; {advice}")


def sandbox_argv(
    bwrap: str,
    argv: list[str],
    *,
    workdir: Path,
    read_only: list[Path],
    allow: list[Path],
    hidden: Mapping[str, Path],
    allow_rw: Sequence[Path] = (),
    environ: Mapping[str, str] | None = None,
    named: Sequence[Path] = (),
    network: str = "share",
) -> list[str]:
    """`bwrap ... -- argv...`: `read_only`, `allow` (--sandbox-allow) and `named` bound read-only, `allow_rw`
    (--sandbox-allow-rw) read-write, every namespace but the network's unshared (that too with `network="none"`).
    A bind that contains or lies in a `hidden` path is refused."""
    _require_linux()
    environ = _environ(environ)
    executable = _locate(argv[0], environ)
    read_only = [Path(os.path.abspath(p)) for p in read_only]
    grants = [("--sandbox-allow", Path(os.path.abspath(p))) for p in allow]
    grants += [("--sandbox-allow-rw", Path(os.path.abspath(p))) for p in allow_rw]
    named = [Path(os.path.abspath(p)) for p in named if not _is_system(Path(os.path.abspath(p)))]
    for flag, path in grants:
        if not path.exists():
            raise BcevalError(f"{flag} {path} does not exist; create it or drop the flag")
    for path in read_only:
        if not path.exists():
            raise BcevalError(f"--sandbox bwrap: the read-only path {path} does not exist")
    system = [Path(d) for d in SYSTEM_DIRS if os.path.lexists(d)]
    dns = dns_config_bind()
    install = installation_paths(str(executable), environ)
    exposed = [("the system directory", d) for d in system if not d.is_symlink()]
    exposed += [("the DNS configuration", dns)] if dns is not None else []
    exposed += [("the agent's installation", p) for p in install]
    exposed += [("the read-only path", p) for p in read_only]
    exposed += grants
    exposed += [("the file --command names,", p) for p in named]
    _refuse_exposure(exposed, hidden)
    command = [bwrap]
    for directory in system:
        if directory.is_symlink():  # merged /usr: /bin -> usr/bin
            command += ["--symlink", os.readlink(directory), str(directory)]
        else:
            command += ["--ro-bind", str(directory), str(directory)]
    if dns is not None:
        command += ["--ro-bind", str(dns), str(dns)]
    command += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    command += ["--unshare-all", *(["--share-net"] if network != "none" else []), "--die-with-parent", "--new-session"]
    # After the tmpfs (a view under /tmp must still appear), outer paths before inner ones, so a
    # read-only view inside a granted directory stays read-only.
    binds = [("--ro-bind", p) for p in install + read_only + named]
    binds += [("--ro-bind" if flag == "--sandbox-allow" else "--bind", p) for flag, p in grants]
    for flag, path in sorted(binds, key=lambda bind: len(bind[1].parts)):
        command += [flag, str(path), str(path)]
    return [*command, "--chdir", str(workdir), "--", str(executable), *argv[1:]]
