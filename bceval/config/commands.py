"""Which options each command (and experiment mode) takes, in the order of its --help, with the help line it
shows for each: the second half of the options table (bceval.config.options declares the options themselves)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Use:
    """An option as one command takes it: this command's help line, and what argparse itself checks."""

    name: str
    help: str | None = None  # None: the option's own help
    metavar: str | None = None  # None: the option's own (argparse derives one when both are None)
    checked: bool = False  # argparse refuses values outside the option's choices (else Settings does)
    required: bool = False
    group: str | None = None  # an argument group of this title, or "exclusive" for a mutually exclusive group


def _uses(*items: str | Use) -> tuple[Use, ...]:
    return tuple(item if isinstance(item, Use) else Use(item) for item in items)


_CORPUS = _uses(
    Use("corpus", "knowledge checkout (default: settings, else demo corpus)"),
    Use("manifest", "default: <corpus>/evaluation/review-fixtures.json"),
    Use("out", "output root (default: out/); requests go to DIR/review/"),
    "verbose",
)
_GATE = _uses(  # review-dialects.md §11.4, §11.5
    Use("coverage_report", "also write the coverage report (paired vs selected articles) here"),
    Use("gate_paths", "fail on a changed paired article no case selects (one path a line)", group="exclusive"),
    Use("changed_from", "the same for the files changed in REF...HEAD (git)", group="exclusive"),
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
    "validate": _CORPUS + _GATE,
    "prepare": _CORPUS + _uses("force") + _GATE,
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
