"""User-facing failures: each carries one line of text and the exit code the CLI should use."""

import difflib
from collections.abc import Iterable

EXIT_FAILED = 1  # the evaluation ran and something did not pass
EXIT_USAGE = 2  # bad usage or unreadable input
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT


class BcevalError(Exception):
    """Bad input or usage. The message is one line naming what is wrong and where."""

    exit_code = EXIT_USAGE


class EvaluationFailed(BcevalError):
    """The corpus or an answer set did not pass: a header plus one line per problem."""

    exit_code = EXIT_FAILED

    def __init__(self, header: str, problems: list[str] | None = None, verdict: bool = True) -> None:
        self.header = header
        self.problems = list(problems or [])
        self.verdict = verdict  # a verdict goes to stdout; False keeps a contract that puts failures on stderr
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join([self.header, *(f"  - {p}" for p in self.problems)])


def did_you_mean(given: str, known: Iterable[str]) -> str:
    """The hint "; did you mean X?" naming the one of `known` a mistyped `given` is closest to, else ""."""
    close = difflib.get_close_matches(given, list(known), n=1, cutoff=0.8)
    return f"; did you mean {close[0]}?" if close else ""
