"""Every option of bceval, declared once: its flag(s), environment variable, `[tool.bceval]` key, kind, default,
choices, range and help (bceval.config.commands says which options each command takes).

`bceval.config` reads its SOURCES and RANGES from here; `bceval.cli` builds every parser from here and from
`commands`; the doit graph reads the BCEVAL_GUIDANCE_* and BCEVAL_BENCH_* variables through `environment_values`.
No argparse here: this module only describes (so `bceval.config` stays cheap and below the command line).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ISOLATIONS = ("view", "none")
SANDBOXES = ("none", "bwrap")
SANDBOX_NETWORKS = ("share", "none")  # bwrap keeps the host's network (the model API), or has none

# kinds: path, text, int, float, bool (a flag without a value; true/false in the environment and pyproject.toml),
# prices (a YAML file, or in pyproject.toml the table itself: bceval.prices), texts (a list: repeatable flag,
# comma-separated environment), paths (a list: repeatable flag, os.pathsep-separated environment), switch (a flag
# without a value), positional.
# part: the part of Settings the option belongs to (bceval.config.Settings), or the command family it serves
# when it is no setting (command, bench, guidance).


def _adapters() -> tuple[str, ...]:
    """The agent registry's review kinds (baseline, oracle, command), read when a parser or check needs them."""
    from bceval.agents.registry import agent_names

    return agent_names()


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
    pyproject: bool = False  # whether [tool.bceval] may set it (under its name; part development: the name without
    # development_ under [tool.bceval.development])
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
    _setting("experiment", "BCEVAL_EXPERIMENT", "path", "locations", help="the experiment file `doit experiment` runs"),
    # the coverage report and the changed-paths gate of validation (review-dialects.md §11.4, §11.5); the gate's
    # --changed-paths is not health's BCEVAL_CHANGED_PATHS, which stays a health finding
    Option("coverage_report", ("--coverage-report",), "BCEVAL_COVERAGE_REPORT", "path", "gate", metavar="PATH"),
    Option("gate_paths", ("--changed-paths",), None, "path", "gate", metavar="FILE"),
    Option("changed_from", ("--changed-from",), "BCEVAL_CHANGED_FROM", "text", "gate", metavar="REF"),
    _setting(
        "sandbox_network", "BCEVAL_SANDBOX_NETWORK", "text", "agent", "share", choices=SANDBOX_NETWORKS, metavar="NET"
    ),
    # the api adapter (bceval's own agent over a chat-completions endpoint) and every live agent's budget
    _setting("base_url", "BCEVAL_BASE_URL", "text", "agent", metavar="URL"),
    _setting("api_key_env", "BCEVAL_API_KEY_ENV", "text", "agent", "OPENAI_API_KEY", metavar="NAME"),
    _setting("temperature", "BCEVAL_TEMPERATURE", "float", "agent", range=(0, 2, True), metavar="T"),
    _setting("max_turns", "BCEVAL_MAX_TURNS", "int", "agent", 12, range=(1, 1000, True), metavar="N"),
    _setting("max_output_tokens", "BCEVAL_MAX_OUTPUT_TOKENS", "int", "agent", range=(1, 10**7, True), metavar="N"),
    _setting("seed", "BCEVAL_SEED", "int", "agent", range=(0, 2**63 - 1, True), metavar="N"),
    _setting("max_cost", "BCEVAL_MAX_COST", "float", "agent", range=(0, None, False), metavar="USD"),
    _setting("prices", "BCEVAL_PRICES", "prices", "agent", metavar="FILE"),
    _setting("require_read", "BCEVAL_REQUIRE_READ", "bool", "results", False),
)

# Options that are no setting: a command's own switches and arguments, `bceval bench` (and its BCEVAL_BENCH_*
# variables for `doit bench`) and `bceval guidance` (and its BCEVAL_GUIDANCE_* variables for the doit tasks).
OTHERS: tuple[Option, ...] = (
    Option("verbose", ("-v", "--verbose"), kind="switch", help="also list every build step that runs"),
    Option("force", ("--force",), kind="switch", help="rebuild everything (what CI runs)"),
    Option(
        "evaluator",
        ("--evaluator",),
        kind="text",
        metavar="NAME",
        help="the registered evaluator (default review; `bceval evaluators` lists them)",
    ),
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
    Option("case", kind="positional", metavar="CASE", help="the case: its manifest id or model id (case-<hash>)"),
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
    # the viewer and CI outputs
    Option("serve", ("--serve",), kind="switch", help="also serve the site on 127.0.0.1 until Ctrl-C"),
    Option(
        "port",
        ("--port",),
        kind="int",
        default=8000,
        metavar="N",
        help="with --serve: the port (default 8000; 0 picks a free one)",
        parser_default=True,
    ),
    Option("junit", ("--junit",), kind="path", metavar="PATH", help="also write a JUnit XML report there"),
    Option(
        "ci_step_summary",
        env="GITHUB_STEP_SUMMARY",
        kind="path",
        part="ci",
        help="GitHub Actions' job summary file: score and experiment report append their Markdown to it",
    ),
    Option("effect", ("--effect",), kind="float", metavar="D", help="the mean per-case difference to detect"),
    Option(
        "power",
        ("--power",),
        kind="float",
        default=0.8,
        metavar="P",
        help="the chance of detecting it (default 0.8)",
        parser_default=True,
    ),
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
        default="256,16,0.2+1024,32,0.2",
        metavar="A,J,S",
        help="live throughput: A answers at --jobs J, S seconds each, beside a plain launcher's floor; several "
        "joined by '+' (default 256,16,0.2+1024,32,0.2; 'none' skips it)",
        parser_default=True,
    ),
    Option(
        "bench_experiment",
        ("--experiment",),
        "BCEVAL_BENCH_EXPERIMENT",
        part="bench",
        default="none",
        metavar="A,E,C,J,S",
        help="experiment overhead: A arms x E epochs x C cases at --jobs J, S s each, beside the floor "
        "(e.g. 4,5,512,32,0.2)",
        parser_default=True,
    ),
    Option(
        "bench_api",
        ("--api",),
        "BCEVAL_BENCH_API",
        part="bench",
        default="256,16,0.2",
        metavar="A,J,L",
        help="api agent throughput: A answers at --jobs J against a local endpoint answering after L s, two tool "
        "calls each (default 256,16,0.2; 'none' skips it)",
        parser_default=True,
    ),
    Option(
        "bench_view",
        ("--view",),
        "BCEVAL_BENCH_VIEW",
        part="bench",
        default="4,5,500",
        metavar="A,E,C",
        help="viewer: build and load time of A arms x E epochs x C cases (default 4,5,500; 'none' skips it)",
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
        help="knowledge checkout, or demo for bceval's demo corpus (default: the corpus found here)",
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
        help="run: who answers each case (oracle, command or api)",
    ),
    # development: the flags of `bceval development`, the variables of `doit development*`
    Option(
        "development_mode",
        kind="positional",
        part="development",
        default="validate",
        metavar="MODE",
        choices=("validate", "prepare", "score", "run"),
        help="validate (default), prepare, score or run",
        parser_default=True,
    ),
    Option(
        "development_root",
        ("--root",),
        "BCEVAL_DEVELOPMENT_ROOT",
        "path",
        "development",
        metavar="DIR",
        help="knowledge checkout (default: the corpus found here, else the demo corpus)",
        pyproject=True,
    ),
    Option(
        "development_manifest",
        ("--manifest",),
        "BCEVAL_DEVELOPMENT_MANIFEST",
        "path",
        "development",
        metavar="FILE",
        help="default: <root>/evaluation/development-fixtures.json",
        pyproject=True,
    ),
    Option(
        "development_capabilities",
        ("--capabilities",),
        "BCEVAL_DEVELOPMENT_CAPABILITIES",
        "path",
        "development",
        metavar="FILE",
        help="default: <root>/coverage/development-capabilities.json",
        pyproject=True,
    ),
    Option(
        "development_out",
        ("--out",),
        "BCEVAL_DEVELOPMENT_OUT",
        "path",
        "development",
        metavar="DIR",
        help="prepare: a new, empty or marked directory; run: a new run directory",
    ),
    Option(
        "development_results",
        ("--results",),
        kind="path",
        part="development",
        metavar="DIR",
        help="score: directory of result-case-<hash>.json files",
    ),
    Option(
        "development_workspace_map",
        ("--workspace-map",),
        "BCEVAL_DEVELOPMENT_WORKSPACE_MAP",
        "path",
        "development",
        metavar="MAP",
        help="run: JSON object of manifest id -> starting repository (folder, or repository@commit)",
        pyproject=True,
    ),
    Option(
        "development_checks",
        ("--checks",),
        "BCEVAL_DEVELOPMENT_CHECKS",
        "path",
        "development",
        metavar="FILE",
        help="run: the gate configuration (default: <root>/evaluation/development-checks.yaml)",
        pyproject=True,
    ),
    Option(
        "development_adapter",
        ("--adapter",),
        "BCEVAL_DEVELOPMENT_ADAPTER",
        part="development",
        default="command",
        metavar="NAME",
        help="run: who works in each copy: command (default) or api (bceval's own agent, live, opt-in)",
        pyproject=True,
    ),
    Option(
        "development_guidance",
        ("--guidance",),
        part="development",
        default="plan",
        metavar="ARM",
        choices=("none", "plan", "implementation", "both"),
        help="run: the guidance the agent gets: none, plan (default: the skill as shipped), implementation, both",
        pyproject=True,
    ),
    Option(
        "development_fail_on_overclaim",
        ("--fail-on-overclaim",),
        kind="switch",
        part="development",
        help="run: an overclaim (a check reported passed that the runner did not observe) fails its case",
        pyproject=True,
    ),
    # [tool.bceval.development] only (no flag): the starting repositories, and the checks' other keys when
    # `checks` is an inline table instead of a file (bceval.evaluators.development.config reads them)
    Option(
        "development_workspaces",
        kind="table",
        part="development",
        pyproject=True,
        help="manifest id -> starting repository (folder, or repository@commit); wins over the checks file's",
    ),
    Option(
        "development_toolchain",
        part="development",
        choices=("available", "unavailable"),
        pyproject=True,
        help="with inline checks: unavailable records every compile/tests as not-run (infrastructure)",
    ),
    Option(
        "development_cases",
        kind="table",
        part="development",
        pyproject=True,
        help="with inline checks: per-case overrides (checks, workspace), as in the checks file",
    ),
    # evidence: the flags of `bceval evidence` (spec development.md §13)
    Option(
        "kr_response", kind="positional", part="knowledge", metavar="RESPONSE", help="the al-knowledge answer (JSON)"
    ),
    Option("kr_root", ("--root",), kind="path", part="knowledge", metavar="DIR", help="the corpus (default: .)"),
    Option(
        "kr_question_file",
        ("--question-file",),
        kind="path",
        part="knowledge",
        metavar="FILE",
        help="the exact bound question, UTF-8 (a BOM is dropped, nothing is trimmed)",
    ),
    Option(
        "kr_read_evidence",
        ("--read-evidence",),
        kind="path",
        part="knowledge",
        metavar="FILE",
        help="read evidence the consumer collected from its own tool results; needed for cited answers",
    ),
    Option("kr_run_id", ("--run-id",), part="knowledge", metavar="ID", help="the current run, given by the consumer"),
    Option(
        "kr_enabled_layers",
        ("--enabled-layers",),
        part="knowledge",
        default="microsoft,community,custom",
        metavar="LIST",
        help="comma-separated layers (default: microsoft,community,custom; '' disables every layer)",
        parser_default=True,
    ),
)

OPTIONS: dict[str, Option] = {option.name: option for option in SETTINGS + OTHERS}


def environment_values(part: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings of `doit guidance*` ("guidance": BCEVAL_GUIDANCE_*) or `doit bench` ("bench": BCEVAL_BENCH_*):
    the options of that part that have a variable, read from `environ` (default: the process's; unset or empty:
    the default), by their name without the part's prefix (bench_sizes -> sizes), unconverted: the reader checks
    them. A command line gives these as flags instead."""
    environ = os.environ if environ is None else environ
    return {
        option.name.removeprefix(part + "_"): environ.get(option.env) or option.default
        for option in OPTIONS.values()
        if option.part == part and option.env
    }
