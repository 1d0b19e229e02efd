"""Every option of bceval, declared once (bceval.config.commands says which options each command takes). No
argparse here: `bceval.cli` builds the parsers from this table, and `bceval.config` stays below the command line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from bceval.agents.presets import PRESETS
from bceval.agents.registry import agent_names
from bceval.config.families import BENCH, DEVELOPMENT, FINDINGS, GUIDANCE, KNOWLEDGE
from bceval.config.option import Option as Option

ISOLATIONS = ("view", "none")
SANDBOXES = ("none", "bwrap")
SANDBOX_NETWORKS = ("share", "none")  # bwrap keeps the host's network (the model API), or has none
ADDITIONAL_IDS = ("curabis", "microsoft")  # the case-id schemes of `additionalArticles` (docs/review.md)
INDEXES = ("lenient", "strict")  # the knowledge index builders: 841b4e7's, and upstream's strict one
KNOWLEDGE_MODES = ("embedded", "bounded")  # the api agent is handed the candidate rows, or finds them with its tools


def _flag(name: str, kind: str = "text", **rest: Any) -> Option:
    """An option whose flag is its name (`--retry-wait` for retry_wait)."""
    return Option(name, (f"--{name.replace('_', '-')}",), kind=kind, **rest)


def _setting(name: str, env: str, kind: str, part: str, default: Any = None, **rest: Any) -> Option:
    """A setting whose flag is its name and whose pyproject key is its name."""
    return _flag(name, kind, env=env, part=part, default=default, pyproject=True, **rest)


# The settings, in the order load_settings reads them (its first failing source is the one it reports).
SETTINGS: tuple[Option, ...] = (
    _setting("corpus", "BCEVAL_CORPUS", "path", "locations", metavar="PATH"),
    _setting("manifest", "BCEVAL_MANIFEST", "path", "locations", metavar="FILE"),
    _setting("out", "BCEVAL_OUT", "path", "locations", metavar="DIR"),
    _setting("adapter", "BCEVAL_ADAPTER", "text", "agent", "baseline", choices=agent_names),
    _setting("results", "BCEVAL_RESULTS", "path", "results", metavar="DIR"),
    _setting("results_path", "BCEVAL_RESULTS_PATH", "path", "results", metavar="FILE"),
    _setting("command", "BCEVAL_COMMAND", "text", "agent"),
    _setting("agent", "BCEVAL_AGENT", "text", "agent", choices=tuple(PRESETS)),
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
        range=(0, None, True),
        help="warn when a case's article scores less than M above the first excluded candidate",
        metavar="M",
        pyproject=True,
    ),
    _setting("changed_paths", "BCEVAL_CHANGED_PATHS", "path", "health", metavar="FILE"),
    _setting("run", "BCEVAL_RUN", "text", "results", metavar="NAME"),
    _setting("epoch", "BCEVAL_EPOCH", "int", "agent", 1, range=(1, 10_000, True), metavar="N"),
    _setting("retry_wait", "BCEVAL_RETRY_WAIT", "float", "agent", 5.0, range=(0, 3600, True), metavar="S"),
    _setting("isolation", "BCEVAL_ISOLATION", "text", "agent", "view", choices=ISOLATIONS),
    _setting("sandbox", "BCEVAL_SANDBOX", "text", "agent", "none", choices=SANDBOXES),
    _setting("sandbox_allow", "BCEVAL_SANDBOX_ALLOW", "paths", "agent", (), metavar="PATH"),
    _setting("sandbox_allow_rw", "BCEVAL_SANDBOX_ALLOW_RW", "paths", "agent", (), metavar="PATH"),
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
    _setting("knowledge", "BCEVAL_KNOWLEDGE", "text", "agent", "embedded", choices=KNOWLEDGE_MODES, metavar="MODE"),
    _setting("max_cost", "BCEVAL_MAX_COST", "float", "agent", range=(0, None, False), metavar="USD"),
    _setting("prices", "BCEVAL_PRICES", "prices", "agent", metavar="FILE"),
    _setting("require_read", "BCEVAL_REQUIRE_READ", "bool", "results", False),
    # a live run stops once this many answers in a row failed with the same infrastructure cause
    _setting("breaker", "BCEVAL_BREAKER", "int", "agent", 5, range=(1, 10_000, True), metavar="N"),
    _setting("no_breaker", "BCEVAL_NO_BREAKER", "bool", "agent", False),
    _flag(
        "additional_ids",
        env="BCEVAL_ADDITIONAL_IDS",
        part="corpus",
        default="curabis",
        choices=ADDITIONAL_IDS,
        pyproject="additional-ids",
        metavar="SCHEME",
        help="case ids of a manifest's additionalArticles: curabis (<domain>-<kind>-<slug>) or microsoft "
        "(<domain>-<name>-<kind>, the override's context on every case)",
    ),
    _setting(
        "index",
        "BCEVAL_INDEX",
        "text",
        "corpus",
        "lenient",
        choices=INDEXES,
        metavar="BUILDER",
        help="the knowledge index: lenient (every article, as at 841b4e7) or strict (invalid articles skipped with "
        "a warning, rows with sourceSha256)",
    ),
)

# Options that are no setting: a command's own switches and arguments, `bceval bench` (and its BCEVAL_BENCH_*
# variables for `doit bench`) and `bceval guidance` (and its BCEVAL_GUIDANCE_* variables for the doit tasks).
OTHERS: tuple[Option, ...] = (
    Option("verbose", ("-v", "--verbose"), kind="switch", help="also list every build step that runs"),
    _flag("force", "switch", help="rebuild everything (what CI runs)"),
    _flag(
        "evaluator", metavar="NAME", help="the registered evaluator (default review; `bceval evaluators` lists them)"
    ),
    _flag("no_gate", "switch", help="report the verdict but exit 0 when it fails"),
    _flag("strict", "switch", help="exit 1 when any finding is an error"),
    _flag("doit", "switch", help="also write dodo.py and [tool.bceval] in pyproject.toml"),
    Option("old", kind="positional", metavar="OLD", help="a run name (in --out) or a scorecard.json"),
    Option("new", kind="positional", metavar="NEW", help="a run name (in --out) or a scorecard.json"),
    _flag("fail_on_regression", "switch", help="exit 1 when any case regressed"),
    _flag("allow_different_inputs", "switch", help="compare even when the request sets differ"),
    # experiments
    Option("file", kind="positional", metavar="FILE", help="the experiment file (YAML)"),
    Option("case", kind="positional", metavar="CASE", help="the case: its manifest id or model id (case-<hash>)"),
    _flag(
        "no_share",
        "switch",
        part="arm",
        help="every arm asks its own agent, even a question another arm asked with the same view and settings",
    ),
    Option("base", ("--base",), metavar="REF", help="the control: a git ref of the corpus repository"),
    _flag("name", metavar="NAME", help="the experiment's name (default: ab-<base>-<head>); one per agent tried"),
    Option("head", ("--head",), metavar="REF", help="the treatment"),
    _flag("epochs", "int", default=1, metavar="N", help="samples per case and arm (default 1)", parser_default=True),
    _flag("report", "switch", help="only write the report from the answers there are"),
    # the viewer and CI outputs
    _flag("site", "path", metavar="DIR", help="write the site there (default: <out>/view/; e.g. for a read-only out)"),
    _flag("serve", "switch", help="also serve the site on 127.0.0.1 until Ctrl-C"),
    _flag(
        "port",
        "int",
        default=8000,
        metavar="N",
        help="with --serve: the port (default 8000; 0 picks a free one)",
        parser_default=True,
    ),
    _flag("junit", "path", metavar="PATH", help="also write a JUnit XML report there"),
    Option(
        "ci_step_summary",
        env="GITHUB_STEP_SUMMARY",
        kind="path",
        part="ci",
        help="GitHub Actions' job summary file: score and experiment report append their Markdown to it",
    ),
    _flag("effect", "float", metavar="D", help="the mean per-case difference to detect"),
    _flag(
        "power", "float", default=0.8, metavar="P", help="the chance of detecting it (default 0.8)", parser_default=True
    ),
    # `bceval skills` (upstream-2026-09.md §5)
    Option(
        "skills_mode",
        kind="positional",
        part="skills",
        default="check",
        metavar="MODE",
        choices=("build", "check"),
        help="build (write the skill index) or check (default: compare it with the skills, one line a problem)",
        parser_default=True,
    ),
    Option("skill_index", ("--skill-index",), kind="path", metavar="FILE", help="default: <corpus>/skill-index.json"),
    _flag("seeds", "int", default=2000, metavar="N", help="simulated experiments (default 2000)", parser_default=True),
    _flag("json", "path", metavar="OUT", help="write the figures there as JSON"),
    _flag("base_rates", "text", metavar="P,...", help="the control's pass rates, cases drawn from them (e.g. 0.5)"),
    _flag("until_decided", "switch", help="answer epoch by epoch and stop once the verdict is clear (stop: decided)"),
    *BENCH,
    *GUIDANCE,
    *DEVELOPMENT,
    *KNOWLEDGE,
    *FINDINGS,
)

OPTIONS: dict[str, Option] = {option.name: option for option in SETTINGS + OTHERS}


def environment_values(part: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The variables of a part's options (`doit guidance*`: BCEVAL_GUIDANCE_*, `doit bench`: BCEVAL_BENCH_*), unset
    or empty: the default, by name without the part's prefix (bench_sizes -> sizes), unconverted."""
    environ = os.environ if environ is None else environ
    return {
        option.name.removeprefix(part + "_"): environ.get(option.env) or option.default
        for option in OPTIONS.values()
        if option.part == part and option.env
    }
