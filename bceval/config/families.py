"""The options of the command families that are no settings: `bceval bench`, `bceval guidance`, `bceval
development`, `bceval evidence` and `bceval findings`, with the BCEVAL_BENCH_*, BCEVAL_GUIDANCE_* and
BCEVAL_DEVELOPMENT_* variables of their doit tasks. Part of the options table (`bceval.config.options`)."""

from __future__ import annotations

from functools import partial
from typing import Any

from bceval.config.option import Option


def _flagged(prefix: str, part: str, name: str, kind: str = "text", *, env: bool = False, **rest: Any) -> Option:
    """The option `<prefix>_<name>` of `part`, given as `--<name>` (dashes for underscores) and, with `env`, as the
    variable BCEVAL_<PART>_<NAME>."""
    variable = f"BCEVAL_{part}_{name}".upper() if env else None
    return Option(f"{prefix}_{name}", (f"--{name.replace('_', '-')}",), variable, kind, part, **rest)


# bench: the flags of `bceval bench`, the variables of `doit bench`
_bench = partial(_flagged, "bench", "bench", env=True, parser_default=True)
BENCH: tuple[Option, ...] = (
    _bench("sizes", default="250,2500,25000", metavar="SIZES", help="article counts, comma-separated"),
    _bench("repeat", "int", default=3, metavar="REPEAT", help="runs per measurement (the median is reported)"),
    _bench(
        "out", "path", env=False, default="out/bench.json", metavar="FILE", help="JSON report (default out/bench.json)"
    ),
    _bench(
        "corpus",
        "path",
        env=False,
        parser_default=False,
        metavar="PATH",
        help="measure a private copy of this corpus instead of --sizes",
    ),
    _bench(
        "live",
        default="256,16,0.2+1024,32,0.2",
        metavar="A,J,S",
        help="live throughput: A answers at --jobs J, S seconds each, beside a plain launcher's floor; several "
        "joined by '+' (default 256,16,0.2+1024,32,0.2; 'none' skips it)",
    ),
    _bench(
        "experiment",
        default="none",
        metavar="A,E,C,J,S",
        help="experiment overhead: A arms x E epochs x C cases at --jobs J, S s each, beside the floor "
        "(e.g. 4,5,512,32,0.2)",
    ),
    _bench(
        "api",
        default="256,16,0.2",
        metavar="A,J,L",
        help="api agent throughput: A answers at --jobs J against a local endpoint answering after L s, two tool "
        "calls each (default 256,16,0.2; 'none' skips it)",
    ),
    _bench(
        "view",
        default="4,5,500",
        metavar="A,E,C",
        help="viewer: build and load time of A arms x E epochs x C cases (default 4,5,500; 'none' skips it)",
    ),
)


# guidance: the flags of `bceval guidance`, the variables of `doit guidance_prepare` and `doit guidance`
_guidance = partial(_flagged, "guidance", "guidance")
GUIDANCE: tuple[Option, ...] = (
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
    _guidance(
        "root",
        "path",
        env=True,
        metavar="DIR",
        help="knowledge checkout, or demo for bceval's demo corpus (default: the corpus found here)",
    ),
    _guidance(
        "manifest",
        "path",
        env=True,
        metavar="FILE",
        help="default: <root>/evaluation/development-guidance-fixtures.json",
    ),
    _guidance(
        "out",
        "path",
        env=True,
        metavar="DIR",
        help="prepare, demo-workspaces: a new or empty directory; run: a new run directory",
    ),
    _guidance(
        "workspace_map",
        "path",
        env=True,
        metavar="MAP",
        help="prepare, capture, run: JSON object of manifest id -> absolute target repository",
    ),
    _guidance("baseline", "path", metavar="FILE", help="capture: file to create; score: the captured baseline"),
    _guidance("baseline_sha256", metavar="HEX", help="score: the digest capture printed, kept by the runner"),
    _guidance("results", "path", metavar="DIR", help="score: directory of result-case-<hash>.json files"),
    _guidance(
        "adapter",
        env=True,
        default="oracle",
        metavar="NAME",
        help="run: who answers each case (oracle, command or api)",
    ),
)


# development: the flags of `bceval development`, the variables of `doit development*`
_development = partial(_flagged, "development", "development", pyproject=True)
DEVELOPMENT: tuple[Option, ...] = (
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
    _development(
        "root",
        "path",
        env=True,
        metavar="DIR",
        help="knowledge checkout (default: the corpus found here, else the demo corpus)",
    ),
    _development(
        "manifest", "path", env=True, metavar="FILE", help="default: <root>/evaluation/development-fixtures.json"
    ),
    _development(
        "capabilities", "path", env=True, metavar="FILE", help="default: <root>/coverage/development-capabilities.json"
    ),
    _development(
        "out",
        "path",
        env=True,
        pyproject=False,
        metavar="DIR",
        help="prepare: a new, empty or marked directory; run: a new run directory",
    ),
    _development(
        "results", "path", pyproject=False, metavar="DIR", help="score: directory of result-case-<hash>.json files"
    ),
    _development(
        "workspace_map",
        "path",
        env=True,
        metavar="MAP",
        help="run: JSON object of manifest id -> starting repository (folder, or repository@commit)",
    ),
    _development(
        "checks",
        "path",
        env=True,
        metavar="FILE",
        help="run: the gate configuration (default: <root>/evaluation/development-checks.yaml)",
    ),
    _development(
        "adapter",
        env=True,
        default="command",
        metavar="NAME",
        help="run: who works in each copy: command (default) or api (bceval's own agent, live, opt-in)",
    ),
    _development(
        "guidance",
        default="plan",
        metavar="ARM",
        choices=("none", "plan", "implementation", "both"),
        help="run: the guidance the agent gets: none, plan (default: the skill as shipped), implementation, both",
    ),
    _development(
        "fail_on_overclaim",
        "switch",
        help="run: an overclaim (a check reported passed that the runner did not observe) fails its case",
    ),
    # [tool.bceval.development] only (no flag): the starting repositories, and the checks' other keys when
    # `checks` is an inline table instead of a file (bceval.evaluators.development.cli reads them)
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
)


# evidence: the flags of `bceval evidence` (spec development.md §13)
_knowledge = partial(_flagged, "kr", "knowledge")
KNOWLEDGE: tuple[Option, ...] = (
    Option(
        "kr_response", kind="positional", part="knowledge", metavar="RESPONSE", help="the al-knowledge answer (JSON)"
    ),
    _knowledge("root", "path", metavar="DIR", help="the corpus (default: .)"),
    _knowledge(
        "question_file",
        "path",
        metavar="FILE",
        help="the exact bound question, UTF-8 (a BOM is dropped, nothing is trimmed)",
    ),
    _knowledge(
        "read_evidence",
        "path",
        metavar="FILE",
        help="read evidence the consumer collected from its own tool results; needed for cited answers",
    ),
    _knowledge("run_id", metavar="ID", help="the current run, given by the consumer"),
    _knowledge(
        "enabled_layers",
        default="microsoft,community,custom",
        metavar="LIST",
        help="comma-separated layers (default: microsoft,community,custom; '' disables every layer)",
        parser_default=True,
    ),
)


# findings: the flags of `bceval findings validate` (spec upstream-2026-09.md §3.2: upstream's validator parameters)
_findings = partial(_flagged, "findings", "findings")
_positional = partial(Option, kind="positional", part="findings")
FINDINGS: tuple[Option, ...] = (
    _positional("findings_action", metavar="validate", choices=("validate",), help="check REPORT (exit 1: rejected)"),
    _positional("findings_report", metavar="REPORT", help="the findings-report (JSON)"),
    _findings("corpus", "path", metavar="DIR", help="the checkout cited knowledge paths must exist in (default: .)"),
    _findings("retrieved", "paths", metavar="PATH", help="a knowledge path retrieved in full (repeatable)"),
    _findings("source_root", "path", metavar="DIR", help="where location files are read to count their lines"),
    _findings("source", "paths", metavar="PATH", help="a source path findings may point at (repeatable)"),
    _findings("super", "switch", help="a super-skill report (default: a leaf report)"),
    _findings("expected_composition", "path", metavar="FILE", help="with --super: the coordinator's leaves (JSON)"),
    _findings("normalize", "switch", help="accept a report that bounded normalization repairs (ids, ranges)"),
)
