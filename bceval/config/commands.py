"""Which options each command (and experiment mode) takes, in the order of its --help, with the help line it
shows for each: the second half of the options table (bceval.config.options declares the options themselves)."""

from __future__ import annotations

from dataclasses import dataclass

from bceval.config.families import BENCH, DEVELOPMENT, FINDINGS, GUIDANCE, KNOWLEDGE
from bceval.config.option import Option


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


def _family(options: tuple[Option, ...], *given: Use) -> tuple[Use, ...]:
    """A command family's own options (those with a flag, and its positional ones) in the table's order, argparse
    checking their choices; `given` replaces the use of an option of its name."""
    replaced = {use.name: use for use in given}
    return tuple(
        replaced.get(option.name, Use(option.name, checked=option.choices is not None))
        for option in options
        if option.flags or option.kind == "positional"
    )


_CORPUS = _uses(
    Use("corpus", "knowledge checkout, or demo (default: settings, else the corpus found here)"),
    Use("manifest", "default: <corpus>/evaluation/review-fixtures.json"),
    Use("out", "output root (default: out/); requests go to DIR/review/"),
    "verbose",
    Use("additional_ids", "additionalArticles case ids: curabis (default) or microsoft"),
    Use("index", "the knowledge index: lenient (default) or strict"),
)
_GATE = _uses(  # review-dialects.md §11.4, §11.5
    Use("coverage_report", "also write the coverage report (paired vs selected articles) here"),
    Use("gate_paths", "fail on a changed paired article no case selects (one path a line)", group="exclusive"),
    Use("changed_from", "the same for the files changed in REF...HEAD (git)", group="exclusive"),
)
_RUN = Use("run", "the run (default: the adapter, plus the model of a live agent)")
_EXPERIMENT_COMMON = _uses(
    Use("out", "output root (default: out/); reports go to DIR/experiments/"),
    Use("corpus", "the corpus arms default to, or demo (default: settings, else the corpus found here)"),
    "verbose",
)
_EXPERIMENT_RUNNING = _uses(
    Use("jobs", "answers side by side (default 1)"),
    Use("shard", "answer only the cases of shard K of N (by case id)"),
    "no_share",
)
_BREAKER = _uses(
    Use("breaker", "stop after N answers in a row failed the same way (default 5)"),
    Use("no_breaker", "answer every case however many fail alike"),
)
_EXPERIMENT_AGENT = (
    _uses(
        Use("timeout", "seconds per attempt (default 300)"),
        Use("retries", "retries after an infrastructure failure"),
        Use("retry_wait", "pause before a retry, doubling (default 5)"),
    )
    + _BREAKER
)
_JUNIT = _uses(Use("junit", "also write a JUnit XML report (one test per arm, epoch and case) there"))
_LIVE = "run --adapter command (a live agent; needs BCEVAL_LIVE=1)"
_API = "the api adapter (bceval's own chat-completions agent; needs BCEVAL_LIVE=1)"
_API_USES = _uses(
    Use("base_url", "the endpoint (default: the openai package's, OpenAI)", group=_API),
    Use("api_key_env", "the variable holding its key (default OPENAI_API_KEY)", group=_API),
    Use("temperature", "sampling temperature (default: the endpoint's)", group=_API),
    Use("max_turns", "responses per case before it fails (default 12)", group=_API),
    Use("max_output_tokens", "tokens per response (default: the endpoint's)", group=_API),
    Use("seed", "sampling seed, for endpoints that take one", group=_API),
)
# review questions only: how the api agent gets the candidate articles (docs/live-agents.md)
_KNOWLEDGE = Use(
    "knowledge", "embedded (default: the request holds the candidates) or bounded (found with tools)", group=_API
)
_BUDGET = _uses(
    Use("max_cost", "no new case starts once the run's known cost reaches USD"),
    Use("prices", "price table (YAML): USD per million tokens, by model"),
)
# The agent and selection flags of `answer`, which the experiment commands take too (as the arms' defaults).
_AGENT = _uses(
    Use("agent", "claude-code or codex: the command adapter with that CLI, set up (or give --command)"),
    Use("command", "agent command line, e.g. 'claude -p --model {model} --output-format json'"),
    Use("model", "the model; pinned only when the command passes it on through {model}"),
)
_SANDBOXING = _uses(
    Use("isolation", "view (default: each case in a folder of its own) or none"),
    Use("sandbox", "none (default) or bwrap (Linux: hide the rest of the machine)"),
    Use("sandbox_allow", "a path the sandbox shows the agent, read-only (repeatable)"),
    Use("sandbox_allow_rw", "a path the sandbox shows the agent, writable (repeatable)"),
    Use("sandbox_network", "share (default: the agent reaches its API) or none"),
)
_SELECTING = _uses(Use("cases", "answer this case (repeatable)"), Use("patterns", "cases whose id or domain fit"))
_EXPERIMENT_ARMS = (
    _uses(Use("adapter", "oracle, baseline (default), command or api (live, opt-in)"))
    + _AGENT
    + _SANDBOXING
    + _EXPERIMENT_AGENT
    + _SELECTING
    + _JUNIT
    + _uses(
        Use("max_cost", "the whole experiment's budget, unless its file sets maxCost"),
        Use("prices", "price table (YAML): USD per million tokens, by model"),
    )
    + _API_USES
)
_REQUIRE_READ = Use("require_read", "a citation without a complete read of it fails its case (api adapter)")

# The options a command may also be given before its name (`bceval --corpus X prepare`): each command that takes
# one takes it in either place.
COMMON = ("corpus", "manifest", "out", "verbose", "evaluator")

# The options of each command (and experiment mode), in the order of its --help.
COMMANDS: dict[str, tuple[Use, ...]] = {
    "validate": _CORPUS + _GATE,
    "prepare": _CORPUS + _uses("evaluator", "force") + _GATE,
    "answer": _CORPUS
    + _uses("evaluator")
    + _uses(
        Use("adapter", "oracle, baseline (default), command or api (live, opt-in)", checked=True),
        _RUN,
    )
    + _AGENT
    + _uses(Use("epoch", "which repeated sample this is (default 1)"))
    + _SANDBOXING
    + _uses(
        Use("jobs", "cases answered side by side (default 1)"),
        Use("timeout", "seconds per attempt before it is an infra failure"),
        Use("retries", "retries after an infrastructure failure (default 2)"),
        Use("retry_wait", "pause before a retry, doubling (default 5)"),
        *_BREAKER,
        Use("shard", "answer only shard K of N (deterministic split)"),
    )
    + _SELECTING
    + _uses(Use("failed_from", "the cases that did not pass in that run or file"))
    + _BUDGET
    + _API_USES
    + (_KNOWLEDGE,),
    "score": _CORPUS
    + _uses("evaluator")
    + _uses(
        Use("adapter", "score this adapter's run (default: baseline)", checked=True),
        _RUN,
        Use("model", "with --adapter command: the model, to find the default run name"),
        Use("results", "score these result-case-*.json or result-*.json files", group="exclusive"),
        Use("results_path", "score one combined result file", group="exclusive"),
        "no_gate",
        _REQUIRE_READ,
        Use("junit", "also write a JUnit XML report (one test per case) there"),
    ),
    "publish": _CORPUS
    + _uses("evaluator")
    + _uses(
        Use("adapter", "publish this adapter's run (default: baseline)", checked=True),
        _RUN,
        Use("model", "with --adapter command: the model, to find the default run name"),
        Use("results", "score this results directory instead"),
        Use("page", "page to update (default: evaluation/scorecard.md)"),
        _REQUIRE_READ,
    ),
    "runs": _uses(Use("out", "output root (default: out/)")),
    "prompt": _uses("case")
    + _CORPUS
    + _uses(
        Use("run", "the run whose agent it is (default: the agent these flags describe)"),
        Use("adapter", "oracle, baseline (default) or command", checked=True),
        Use("command", "agent command line, as for bceval answer"),
        Use("model", "the model, as for bceval answer"),
        Use("isolation", "view (default) or none"),
    ),
    "view": _uses(
        Use("out", "output root (default: out/); the site goes to DIR/view/"),
        Use("corpus", "the corpus whose out/ to show (default: the corpus found here)"),
        "site",
        "evaluator",
        "serve",
        "port",
    ),
    "evaluators": (),
    "health": _CORPUS
    + _uses("strict", "health_margin", Use("changed_paths", "changed files, one per line (e.g. from a PR diff)")),
    "bench": _family(BENCH),
    "skills": _uses(
        Use("skills_mode", checked=True),
        Use("corpus", "the corpus checkout (default: settings, else the corpus found here)"),
        "skill_index",
    ),
    "init": _uses(Use("corpus", "the corpus checkout (default: found from the current folder)"), "doit"),
    "compare": _uses(
        "old",
        "new",
        Use("out", "where the named runs are (default: out/)"),
        "fail_on_regression",
        "allow_different_inputs",
    ),
    "experiment run": _uses("file", "until_decided") + _EXPERIMENT_COMMON + _EXPERIMENT_RUNNING + _EXPERIMENT_ARMS,
    "experiment report": _uses(Use("file", "")) + _EXPERIMENT_COMMON + _JUNIT,
    "experiment publish": _uses(Use("file", ""), Use("page", "default: evaluation/experiments.md"))
    + _EXPERIMENT_COMMON,
    "experiment plan": _uses(Use("file", ""), Use("effect", "e.g. 0.1: cases pass 10 points more often", required=True))
    + _uses("power")
    + _EXPERIMENT_COMMON,
    "experiment simulate": _uses(Use("file", ""), "seeds", Use("json", required=True), "base_rates")
    + _EXPERIMENT_COMMON,
    "experiment ab": _uses(
        Use("base", required=True),
        Use("head", required=True),
        "name",
        "epochs",
        "report",
        "until_decided",
        Use("manifest", "the manifest of both arms (default: each ref's own, else by convention)"),
    )
    + _EXPERIMENT_COMMON
    + _EXPERIMENT_RUNNING
    + _EXPERIMENT_ARMS,
    # The guidance modes take the runner's paths on the command line only (spec §0); the agent settings come
    # from these flags, else BCEVAL_* and [tool.bceval], as for the review commands.
    "guidance": _family(GUIDANCE)
    + _uses(
        Use("junit", "run: also write a JUnit XML report (one test per case) there"),
        Use("command", "the agent command line (default: $BCEVAL_COMMAND)", "GUIDANCE_COMMAND", group=_LIVE),
        Use("model", "the model; pinned only through {model}", "GUIDANCE_MODEL", group=_LIVE),
        Use("timeout", "seconds per attempt", group=_LIVE),
        Use("retries", "retries after a failure", group=_LIVE),
        Use("retry_wait", "first pause", group=_LIVE),
        Use("sandbox", "none (default) or bwrap: mount read-only", "GUIDANCE_SANDBOX", group=_LIVE),
        Use("sandbox_allow", "grant a path, read-only", group=_LIVE),
        Use("sandbox_allow_rw", "grant a path, writable", group=_LIVE),
        Use("sandbox_network", "share (default) or none", group=_LIVE),
        Use("max_cost", "run: no new case starts once the run's known cost reaches USD", group=_LIVE),
        Use("prices", "price table (YAML): USD per million tokens, by model", group=_LIVE),
    )
    + _API_USES,
    "development": _family(DEVELOPMENT)
    + _uses(
        Use("command", "the agent command line, run in the copy (default: $BCEVAL_COMMAND)", group="run"),
        Use("model", "the model; pinned only through {model}", group="run"),
        Use("epoch", "which repeated sample this is (default 1)", group="run"),
        Use("timeout", "seconds the agent may work on one case", group="run"),
        Use("sandbox", "none (default) or bwrap: only the copy is writable", group="run"),
        Use("sandbox_allow", "a path the sandbox shows the agent, read-only (repeatable)", group="run"),
        Use("sandbox_allow_rw", "a path the sandbox shows the agent, writable (repeatable)", group="run"),
    )
    + _API_USES,
    "evidence": _family(KNOWLEDGE, Use("kr_question_file", required=True), Use("kr_run_id", required=True)),
    "findings": _family(FINDINGS),
}


# `bceval guidance MODE --help`: each mode's one-line description and the options it takes (a subset of
# "guidance"'s, in the same order; the guidance CLI's check_arguments refuses the others).
GUIDANCE_MODES: dict[str, tuple[str, tuple[str, ...]]] = {
    "validate": ("check a guidance manifest against its knowledge checkout", ("root", "manifest", "workspace_map")),
    "prepare": (
        "write the neutral guidance requests into a new or empty directory",
        ("root", "manifest", "out", "workspace_map"),
    ),
    "capture": (
        "record the workspaces' pre-run state (the baseline) before any agent runs",
        ("root", "manifest", "workspace_map", "baseline"),
    ),
    "score": (
        "score result files against the captured baseline and its digest",
        ("root", "manifest", "baseline", "baseline_sha256", "results"),
    ),
    "run": (
        "prepare, capture, answer with an adapter and score, into a new run directory",
        ("root", "manifest", "out", "workspace_map", "adapter", "live"),
    ),
    "demo-workspaces": ("build the demo knowledge checkout, workspaces and maps from the demo corpus", ("out",)),
}
_GUIDANCE_LIVE = (
    "command",
    "model",
    "timeout",
    "retries",
    "retry_wait",
    "sandbox",
    "sandbox_allow",
    "sandbox_allow_rw",
)
for _mode, (_text, _names) in GUIDANCE_MODES.items():
    _wanted = {"guidance_" + name for name in _names} | (set(_GUIDANCE_LIVE) if "live" in _names else set())
    COMMANDS[f"guidance {_mode}"] = tuple(use for use in COMMANDS["guidance"] if use.name in _wanted)
