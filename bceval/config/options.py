"""Every option of bceval, declared once: its flag(s), environment variable, `[tool.bceval]` key, kind, default,
choices, range and help, and which options each command takes, in the order of its --help.

`bceval.config` reads its SOURCES and RANGES from here; `bceval.cli` builds every parser from here; the doit graph
reads the BCEVAL_GUIDANCE_* and BCEVAL_BENCH_* variables through `environment_values`. No argparse here: this
module only describes (so `bceval.config` stays cheap and below the command line).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ISOLATIONS = ("view", "none")
SANDBOXES = ("none", "bwrap")

# kinds: path, text, int, float, texts (a list: repeatable flag, comma-separated environment), paths (a list:
# repeatable flag, os.pathsep-separated environment), switch (a flag without a value), positional.
# part: the part of Settings the option belongs to (bceval.config.Settings), or the command family it serves
# when it is no setting (command, bench, guidance).


def _adapters() -> tuple[str, ...]:
    from bceval.config import ADAPTERS  # the agent registry's names; read when a parser or check needs them

    return ADAPTERS


@dataclass(frozen=True)
class Option:
    name: str  # the Settings field, or the argparse destination of an option that is no setting
    flags: tuple[str, ...] = ()  # () for a positional argument
    env: str | None = None  # the environment variable, if any
    kind: str = "text"
    part: str = "command"
    default: Any = None  # the value when no source gives one (Settings' defaults come from here)
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None
    range: tuple[float, float | None, bool] | None = None  # (lowest, highest, whether the lowest is allowed)
    help: str | None = None
    metavar: str | None = None
    pyproject: bool = False  # whether [tool.bceval] may set it (under its name)
    parser_default: bool = False  # argparse fills in the default (the command reads no other source for it)

    def allowed(self) -> tuple[str, ...] | None:
        return self.choices() if callable(self.choices) else self.choices


def _setting(name: str, env: str, kind: str, part: str, default: Any = None, **rest: Any) -> Option:
    """A setting whose flag is its name (`--retry-wait` for retry_wait) and whose pyproject key is its name."""
    return Option(name, (f"--{name.replace('_', '-')}",), env, kind, part, default, pyproject=True, **rest)


# The settings, in the order load_settings reads them (its first failing source is the one it reports).
SETTINGS: tuple[Option, ...] = (
    _setting("corpus", "BCEVAL_CORPUS", "path", "locations", metavar="PATH"),
    _setting("manifest", "BCEVAL_MANIFEST", "path", "locations", metavar="FILE"),
    _setting("out", "BCEVAL_OUT", "path", "locations", metavar="DIR"),
    _setting("adapter", "BCEVAL_ADAPTER", "text", "agent", "baseline", choices=_adapters),
    _setting("results", "BCEVAL_RESULTS", "path", "results", metavar="DIR"),
    _setting("results_path", "BCEVAL_RESULTS_PATH", "path", "results", metavar="FILE"),
    _setting("command", "BCEVAL_COMMAND", "text", "agent"),
    _setting("model", "BCEVAL_MODEL", "text", "agent"),
    _setting("jobs", "BCEVAL_JOBS", "int", "agent", 1, range=(1, 64, True), metavar="N"),
    _setting("timeout", "BCEVAL_TIMEOUT", "float", "agent", 300.0, range=(0, None, False), metavar="S"),
    _setting("retries", "BCEVAL_RETRIES", "int", "agent", 2, range=(0, 10, True), metavar="N"),
    _setting("shard", "BCEVAL_SHARD", "text", "selection", metavar="K/N"),
    _setting("page", "BCEVAL_PAGE", "path", "locations", metavar="PATH"),
    Option(
        "health_margin",
        ("--margin",),
        "BCEVAL_HEALTH_MARGIN",
        "float",
        "health",
        1.0,
        None,
        (0, None, True),
        "warn when a case's article scores less than M above the first excluded candidate",
        "M",
        pyproject=True,
    ),
    _setting("changed_paths", "BCEVAL_CHANGED_PATHS", "path", "health", metavar="FILE"),
    _setting("run", "BCEVAL_RUN", "text", "results", metavar="NAME"),
    _setting("epoch", "BCEVAL_EPOCH", "int", "agent", 1, range=(1, 10_000, True), metavar="N"),
    _setting("retry_wait", "BCEVAL_RETRY_WAIT", "float", "agent", 5.0, range=(0, 3600, True), metavar="S"),
    _setting("isolation", "BCEVAL_ISOLATION", "text", "agent", "view", choices=ISOLATIONS),
    _setting("sandbox", "BCEVAL_SANDBOX", "text", "agent", "none", choices=SANDBOXES),
    _setting("sandbox_allow", "BCEVAL_SANDBOX_ALLOW", "paths", "agent", (), metavar="PATH"),
    Option("cases", ("--case",), "BCEVAL_CASES", "texts", "selection", (), metavar="ID", pyproject=True),
    Option("patterns", ("-k",), "BCEVAL_K", "texts", "selection", (), metavar="PATTERN", pyproject=True),
    _setting("failed_from", "BCEVAL_FAILED_FROM", "text", "selection", metavar="RUN|FILE"),
    _setting("experiment", "BCEVAL_EXPERIMENT", "path", "locations"),
)

# Options that are no setting: a command's own switches and arguments, `bceval bench` (and its BCEVAL_BENCH_*
# variables for `doit bench`) and `bceval guidance` (and its BCEVAL_GUIDANCE_* variables for the doit tasks).
OTHERS: tuple[Option, ...] = (
    Option("verbose", ("-v", "--verbose"), kind="switch", help="also list every build step that runs"),
    Option("force", ("--force",), kind="switch", help="rebuild everything (what CI runs)"),
    Option("no_gate", ("--no-gate",), kind="switch", help="report the verdict but exit 0 when it fails"),
    Option("strict", ("--strict",), kind="switch", help="exit 1 when any finding is an error"),
    Option("doit", ("--doit",), kind="switch", help="also write dodo.py and [tool.bceval] in pyproject.toml"),
    Option("old", kind="positional", metavar="OLD", help="a run name (in --out) or a scorecard.json"),
    Option("new", kind="positional", metavar="NEW", help="a run name (in --out) or a scorecard.json"),
    Option("fail_on_regression", ("--fail-on-regression",), kind="switch", help="exit 1 when any case regressed"),
    Option(
        "allow_different_inputs",
        ("--allow-different-inputs",),
        kind="switch",
        help="compare even when the request sets differ",
    ),
    # experiments
    Option("file", kind="positional", metavar="FILE", help="the experiment file (YAML)"),
    Option(
        "no_share",
        ("--no-share",),
        kind="switch",
        part="arm",
        help="every arm asks its own agent, even a question another arm asked with the same view and settings",
    ),
    Option("base", ("--base",), metavar="REF", help="the control: a git ref of the corpus repository"),
    Option("head", ("--head",), metavar="REF", help="the treatment"),
    Option(
        "epochs",
        ("--epochs",),
        kind="int",
        default=1,
        metavar="N",
        help="samples per case and arm (default 1)",
        parser_default=True,
    ),
    Option("report", ("--report",), kind="switch", help="only write the report from the answers there are"),
    # bench: the flags of `bceval bench`, the variables of `doit bench`
    Option(
        "bench_sizes",
        ("--sizes",),
        "BCEVAL_BENCH_SIZES",
        part="bench",
        default="250,2500,25000",
        metavar="SIZES",
        help="article counts, comma-separated",
        parser_default=True,
    ),
    Option(
        "bench_repeat",
        ("--repeat",),
        "BCEVAL_BENCH_REPEAT",
        "int",
        "bench",
        3,
        metavar="REPEAT",
        help="runs per measurement (the median is reported)",
        parser_default=True,
    ),
    Option(
        "bench_out",
        ("--out",),
        kind="path",
        part="bench",
        default="out/bench.json",
        metavar="FILE",
        help="JSON report (default out/bench.json)",
        parser_default=True,
    ),
    Option(
        "bench_corpus",
        ("--corpus",),
        kind="path",
        part="bench",
        metavar="PATH",
        help="measure a private copy of this corpus instead of --sizes",
    ),
    Option(
        "bench_live",
        ("--live",),
        "BCEVAL_BENCH_LIVE",
        part="bench",
        default="256,16,0.5",
        metavar="A,J,S",
        help="live throughput: A answers at --jobs J, S seconds each (default 256,16,0.5; 'none' skips it)",
        parser_default=True,
    ),
    Option(
        "bench_experiment",
        ("--experiment",),
        "BCEVAL_BENCH_EXPERIMENT",
        part="bench",
        default="none",
        metavar="A,E,C,J,S",
        help="experiment overhead: A arms x E epochs x C cases at --jobs J, S s each (e.g. 4,5,64,16,0.5)",
        parser_default=True,
    ),
    # guidance: the flags of `bceval guidance`, the variables of `doit guidance_prepare` and `doit guidance`
    Option(
        "guidance_mode",
        kind="positional",
        part="guidance",
        default="validate",
        metavar="MODE",
        choices=("validate", "prepare", "capture", "score", "run", "demo-workspaces"),
        help="validate (default), prepare, capture, score, run or demo-workspaces",
        parser_default=True,
    ),
    Option(
        "guidance_root",
        ("--root",),
        "BCEVAL_GUIDANCE_ROOT",
        "path",
        "guidance",
        metavar="DIR",
        help="knowledge checkout (default: the corpus found here, else the demo corpus)",
    ),
    Option(
        "guidance_manifest",
        ("--manifest",),
        "BCEVAL_GUIDANCE_MANIFEST",
        "path",
        "guidance",
        metavar="FILE",
        help="default: <root>/evaluation/development-guidance-fixtures.json",
    ),
    Option(
        "guidance_out",
        ("--out",),
        "BCEVAL_GUIDANCE_OUT",
        "path",
        "guidance",
        metavar="DIR",
        help="prepare, demo-workspaces: a new or empty directory; run: a new run directory",
    ),
    Option(
        "guidance_workspace_map",
        ("--workspace-map",),
        "BCEVAL_GUIDANCE_WORKSPACE_MAP",
        "path",
        "guidance",
        metavar="MAP",
        help="prepare, capture, run: JSON object of manifest id -> absolute target repository",
    ),
    Option(
        "guidance_baseline",
        ("--baseline",),
        kind="path",
        part="guidance",
        metavar="FILE",
        help="capture: file to create; score: the captured baseline",
    ),
    Option(
        "guidance_baseline_sha256",
        ("--baseline-sha256",),
        part="guidance",
        metavar="HEX",
        help="score: the digest capture printed, kept by the runner",
    ),
    Option(
        "guidance_results",
        ("--results",),
        kind="path",
        part="guidance",
        metavar="DIR",
        help="score: directory of result-case-<hash>.json files",
    ),
    Option(
        "guidance_adapter",
        ("--adapter",),
        "BCEVAL_GUIDANCE_ADAPTER",
        part="guidance",
        default="oracle",
        metavar="NAME",
        help="run: who answers each case (oracle or command)",
    ),
)

OPTIONS: dict[str, Option] = {option.name: option for option in SETTINGS + OTHERS}


@dataclass(frozen=True)
class Use:
    """An option as one command takes it: this command's help line, and what argparse itself checks."""

    name: str
    help: str | None = None  # None: the option's own help
    metavar: str | None = None  # None: the option's own (argparse derives one when both are None)
    checked: bool = False  # argparse refuses values outside the option's choices (else Settings does)
    required: bool = False
    group: str | None = None  # an argument group of this title, or "exclusive" for a mutually exclusive group
    dest: str | None = None  # None: the option's name


def _uses(*items: str | Use) -> tuple[Use, ...]:
    return tuple(item if isinstance(item, Use) else Use(item) for item in items)


_CORPUS = _uses(
    Use("corpus", "knowledge checkout (default: settings, else demo corpus)"),
    Use("manifest", "default: <corpus>/evaluation/review-fixtures.json"),
    Use("out", "output root (default: out/); requests go to DIR/review/"),
    "verbose",
)
_RUN = Use("run", "the run (default: the adapter, plus the model of a live agent)")
_EXPERIMENT_COMMON = _uses(
    Use("out", "output root (default: out/); reports go to DIR/experiments/"),
    Use("corpus", "the corpus arms default to (default: found here)"),
    "verbose",
)
_EXPERIMENT_RUNNING = _uses(
    Use("jobs", "answers side by side (default 1)"),
    Use("shard", "answer only the cases of shard K of N (by case id)"),
    "no_share",
)
_EXPERIMENT_AGENT = _uses(
    Use("timeout", "seconds per attempt (default 300)"),
    Use("retries", "retries after an infrastructure failure"),
    Use("retry_wait", "pause before a retry, doubling (default 5)"),
)
_LIVE = "run --adapter command (a live agent; needs BCEVAL_LIVE=1)"

# The options of each command (and experiment mode), in the order of its --help.
COMMANDS: dict[str, tuple[Use, ...]] = {
    "validate": _CORPUS,
    "prepare": _CORPUS + _uses("force"),
    "answer": _CORPUS
    + _uses(
        Use("adapter", "oracle, baseline (default) or command (live, opt-in)", checked=True),
        _RUN,
        Use("command", "agent command line, e.g. 'claude -p --model {model} --output-format json'"),
        Use("model", "the model; pinned only when the command passes it on through {model}"),
        Use("epoch", "which repeated sample this is (default 1)"),
        Use("isolation", "view (default: each case in a folder of its own) or none"),
        Use("sandbox", "none (default) or bwrap (Linux: hide the rest of the machine)"),
        Use("sandbox_allow", "a path the sandbox shows the agent (repeatable)"),
        Use("jobs", "cases answered side by side (default 1)"),
        Use("timeout", "seconds per attempt before it is an infra failure"),
        Use("retries", "retries after an infrastructure failure (default 2)"),
        Use("retry_wait", "pause before a retry, doubling (default 5)"),
        Use("shard", "answer only shard K of N (deterministic split)"),
        Use("cases", "answer this case (repeatable)"),
        Use("patterns", "cases whose id or domain fit"),
        Use("failed_from", "the cases that did not pass in that run or file"),
    ),
    "score": _CORPUS
    + _uses(
        Use("adapter", "score this adapter's run (default: baseline)", checked=True),
        _RUN,
        Use("model", "with --adapter command: the model, to find the default run name"),
        Use("results", "score these result-case-*.json or result-*.json files", group="exclusive"),
        Use("results_path", "score one combined result file", group="exclusive"),
        "no_gate",
    ),
    "publish": _CORPUS
    + _uses(
        Use("adapter", "publish this adapter's run (default: baseline)", checked=True),
        _RUN,
        Use("model", "with --adapter command: the model, to find the default run name"),
        Use("results", "score this results directory instead"),
        Use("page", "page to update (default: evaluation/scorecard.md)"),
    ),
    "runs": _uses(Use("out", "output root (default: out/)")),
    "health": _CORPUS
    + _uses(
        "strict",
        "health_margin",
        Use("changed_paths", "changed files, one per line (e.g. from a PR diff)"),
    ),
    "bench": _uses("bench_sizes", "bench_repeat", "bench_out", "bench_corpus", "bench_live", "bench_experiment"),
    "init": _uses(Use("corpus", "the corpus checkout (default: found from the current folder)"), "doit"),
    "compare": _uses(
        "old",
        "new",
        Use("out", "where the named runs are (default: out/)"),
        "fail_on_regression",
        "allow_different_inputs",
    ),
    "experiment run": _uses("file") + _EXPERIMENT_COMMON + _EXPERIMENT_RUNNING + _EXPERIMENT_AGENT,
    "experiment report": _uses(Use("file", "")) + _EXPERIMENT_COMMON,
    "experiment publish": _uses(Use("file", ""), Use("page", "default: evaluation/experiments.md"))
    + _EXPERIMENT_COMMON,
    "experiment ab": _uses(
        Use("base", required=True),
        Use("head", required=True),
        "epochs",
        "report",
    )
    + _EXPERIMENT_COMMON
    + _EXPERIMENT_RUNNING
    + _uses(
        Use("adapter", "oracle, baseline (default) or command"),
        Use("command", "agent command line (command adapter)"),
        Use("model", "the model; pinned only through {model}"),
        Use("isolation", "view (default) or none"),
        Use("sandbox", "none (default) or bwrap"),
        Use("sandbox_allow", "a path the sandbox shows (repeatable)"),
    )
    + _EXPERIMENT_AGENT,
    # The guidance modes take the runner's paths on the command line only (spec §0); the agent settings come
    # from these flags, else BCEVAL_* and [tool.bceval], as for the review commands.
    "guidance": _uses(
        Use("guidance_mode", checked=True),
        "guidance_root",
        "guidance_manifest",
        "guidance_out",
        "guidance_workspace_map",
        "guidance_baseline",
        "guidance_baseline_sha256",
        "guidance_results",
        "guidance_adapter",
        Use("command", "the agent command line (default: $BCEVAL_COMMAND)", "GUIDANCE_COMMAND", group=_LIVE),
        Use("model", "the model; pinned only through {model}", "GUIDANCE_MODEL", group=_LIVE),
        Use("timeout", "seconds per attempt", group=_LIVE),
        Use("retries", "retries after a failure", group=_LIVE),
        Use("retry_wait", "first pause", group=_LIVE),
        Use("sandbox", "none (default) or bwrap: mount read-only", "GUIDANCE_SANDBOX", group=_LIVE),
        Use("sandbox_allow", "grant a path", group=_LIVE),
    ),
}


def environment_values(part: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """The options of one part that have a variable, read from `environ` (unset or empty: the default), by their
    name without the part's prefix (bench_sizes -> sizes), unconverted: the reader checks them."""
    return {
        option.name.removeprefix(part + "_"): environ.get(option.env) or option.default
        for option in OPTIONS.values()
        if option.part == part and option.env
    }
