"""`python -m bceval` and the `bceval` script: the command line, guarded as a whole process.

Beyond what `bceval.cli.main` maps to exit codes: Ctrl-C while Python is still importing bceval, or just
after the work finished, a standard output that was closed (`| head -c0`) or is full (`> /dev/full`), and a
current folder that was deleted each end in one line (or, for a closed pipe, quietly) with the right exit
code, never a traceback.
"""

from __future__ import annotations

import errno
import os
import signal
import sys

EXIT_USAGE = 2  # as bceval.errors has them; repeated so nothing is imported before the guards stand
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM: what CI cancellation and `docker stop` send
EXIT_PIPE = 141  # 128 + SIGPIPE: what shells report for a writer whose reader went away


class _Output:
    """Standard output that keeps bceval running when writing fails: the first failure is kept and every
    later write is dropped, so a closed pipe or a full disk cannot break a task halfway."""

    def __init__(self, stream: object) -> None:
        self._stream = stream
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        if self.failure is None:
            try:
                return self._stream.write(text)  # type: ignore[attr-defined]
            except OSError as exc:
                self.failure = exc
        return len(text)

    def flush(self) -> None:
        if self.failure is None:
            try:
                self._stream.flush()  # type: ignore[attr-defined]
            except OSError as exc:
                self.failure = exc

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _quiet_exit(code: int) -> None:
    """Leave without Python flushing a broken stdout again at shutdown (that would print "Exception ignored")."""
    sys.stderr.flush()
    os._exit(code)


_signals: list[int] = []  # SIGTERM once it came: handled as Ctrl-C is (agents and views gone, one line)


def _terminate(signum: int, _frame: object) -> None:
    _signals.append(signum)
    raise KeyboardInterrupt


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def run() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    output = _Output(sys.stdout)
    sys.stdout = output  # type: ignore[assignment]
    try:
        try:
            os.getcwd()
        except FileNotFoundError:
            print("bceval: the current folder no longer exists; change to one that does", file=sys.stderr)
            _quiet_exit(EXIT_USAGE)
        from bceval.cli import main  # here, not at the top: Ctrl-C while importing is caught below

        code = main()
        _ignore_interrupts()  # the work is done: a late Ctrl-C changes nothing now
    except KeyboardInterrupt:  # while importing, or between main's own guard and here
        _ignore_interrupts()
        print("bceval: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED and _signals:
        code = EXIT_TERMINATED
    output.flush()
    failure = output.failure
    if failure is not None:
        if failure.errno == errno.EPIPE:
            _quiet_exit(EXIT_PIPE)  # the reader stopped reading: nothing to tell anybody
        print(f"bceval: cannot write to standard output: {failure.strerror}", file=sys.stderr)
        _quiet_exit(code or EXIT_USAGE)
    # an interrupt Python saw pass through an import would end the process by SIGINT
    if code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        _quiet_exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
