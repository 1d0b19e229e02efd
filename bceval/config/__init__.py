"""Settings in one place. Precedence: command-line flag > environment > pyproject.toml > default."""

from __future__ import annotations

import functools
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from bceval.agents.agentconfig import config_digest
from bceval.agents.presets import PRESETS, preset_command
from bceval.agents.registry import REVIEW_NEEDS_COMMAND, agent_names, capabilities
from bceval.agents.settings import AgentSettings, EndpointSettings
from bceval.clock import source_date_epoch
from bceval.config.options import ISOLATIONS as ISOLATIONS
from bceval.config.options import OPTIONS, SETTINGS
from bceval.config.options import SANDBOXES as SANDBOXES
from bceval.config.options import environment_values as environment_values
from bceval.corpus.layers import CORPUS_SHAPE, LAYERS
from bceval.errors import BcevalError
from bceval.jsonio import read_regular_text
from bceval.layout import OutDir, RunDir
from bceval.prices import PriceTable, price_table, read_price_file
from bceval.runs.identity import Asking, asking
from bceval.runs.selection import parse_shard
from bceval.vcs import git_root

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
DEMO_CORPUS = PACKAGE_ROOT.parent / "evaluation" / "demo-corpus"
MANIFEST_RELATIVE = Path("evaluation") / "review-fixtures.json"
ADAPTERS = agent_names()  # the agent kinds that answer review questions: baseline, oracle, command
ARM_CHOICES = {
    "adapter": ADAPTERS,
    "isolation": ISOLATIONS,
    "sandbox": SANDBOXES,
    "agent": tuple(PRESETS),
}  # what an experiment arm may give
DEMO_NAME = "demo"  # `--corpus demo`: the demo corpus (a folder named demo is `./demo`)
NOT_FOUND = "no corpus found here"  # Locations.corpus_source when no corpus was given or found
RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")

# setting -> (environment variable, kind), and setting -> (lowest, highest, whether the lowest is allowed itself):
# both from the options table. Paths resolve against the current directory (flags, environment) or against
# pyproject.toml's directory ([tool.bceval]).
SOURCES: dict[str, tuple[str, str]] = {option.name: (option.env or "", option.kind) for option in SETTINGS}
RANGES: dict[str, tuple[float, float | None, bool]] = {o.name: o.range for o in SETTINGS if o.range is not None}
CHOICES = tuple(option.name for option in SETTINGS if option.choices is not None)  # the settings with choices


def _default(name: str) -> Any:
    return OPTIONS[name].default


def setting_problem(name: str, value: Any) -> str | None:
    """What is wrong with a value outside the setting's choices or range (None when nothing is)."""
    if name in CHOICES and (value is not None or OPTIONS[name].default is not None):  # None: an optional one unset
        allowed = OPTIONS[name].allowed() or ()
        if value not in allowed:
            return f"unknown {name} '{value}'; choose one of: {', '.join(allowed)}"
    if name in RANGES and value is not None:  # None: an optional setting that was not given
        low, high, low_allowed = RANGES[name]
        if not math.isfinite(value):
            return f"must be a finite number, got {value}"
        if value < low or (value == low and not low_allowed) or (high is not None and value > high):
            bound = f"at least {low}" if low_allowed else f"greater than {low}"
            span = f"{bound} and at most {high}" if high is not None else bound
            return f"must be {span}, got {value}"
    return None


@dataclass(frozen=True)
class Settings:
    """Every setting, resolved (the options table declares each; where the inputs are come first: the only fields
    without a default)."""

    corpus: Path
    manifest: Path | None  # None: no manifest, evaluate by convention with thresholds 1 and 1
    out: Path
    corpus_source: str = "--corpus"  # how the corpus was chosen, for the line every command prints
    page: Path | None = None  # published scorecard page (default: evaluation/scorecard.md)
    experiment: Path | None = None  # experiment file (doit experiment)
    # who answers, and how: the agent settings every live answer's cache key holds
    adapter: str = _default("adapter")  # one of ADAPTERS
    command: str | None = None
    agent: str | None = None  # a preset (bceval.agents.presets): --command and --adapter come from it
    model: str | None = None
    jobs: int = _default("jobs")
    timeout: float = _default("timeout")
    retries: int = _default("retries")
    retry_wait: float = _default("retry_wait")  # seconds before the first retry, doubling (with jitter) up to a cap
    epoch: int = _default("epoch")  # which repeated sample this run is; part of every live answer's cache key
    isolation: str = _default("isolation")  # one of ISOLATIONS
    sandbox: str = _default("sandbox")  # one of SANDBOXES
    sandbox_allow: tuple[Path, ...] = _default("sandbox_allow")  # extra paths the sandbox shows, read-only
    sandbox_allow_rw: tuple[Path, ...] = _default("sandbox_allow_rw")  # and those it shows read-write
    sandbox_network: str = _default("sandbox_network")  # one of SANDBOX_NETWORKS: share, or none (unshared)
    base_url: str | None = None  # the api adapter's endpoint (None: the openai package's default)
    api_key_env: str = _default("api_key_env")  # the variable holding its key (the key is never kept)
    temperature: float | None = None
    max_turns: int = _default("max_turns")
    max_output_tokens: int | None = None
    seed: int | None = None
    knowledge: str = _default("knowledge")  # one of KNOWLEDGE_MODES: how the api agent gets the candidate articles
    max_cost: float | None = None  # USD: no new case starts once the run's known cost reaches it
    prices: PriceTable | None = None  # USD per million tokens, by model
    # which cases a run answers
    shard: str | None = None
    cases: tuple[str, ...] = _default("cases")  # --case: manifest or model ids
    patterns: tuple[str, ...] = _default("patterns")  # -k: globs over manifest id and domain
    failed_from: str | None = None  # --failed-from: a run name or a scorecard/score file
    # which run the answers go to, or which results to score instead
    run: str | None = None  # run name; default: see run_name()
    results: Path | None = None  # results directory to score (default: the adapter's)
    results_path: Path | None = None  # one combined result file to score instead
    require_read: bool = _default("require_read")  # a citation without a complete read is an error of its case
    breaker: int = _default("breaker")  # a live run stops after this many answers in a row failed alike
    no_breaker: bool = _default("no_breaker")
    # what `bceval health` weighs
    health_margin: float = _default("health_margin")  # warn when a case ranks this close to the cutoff
    changed_paths: Path | None = None  # changed files, one per line (health)
    # set by an experiment for each arm, never by a flag, the environment or pyproject.toml
    until_decided: bool = False  # experiments: stop once the verdict is clear (stop: when: decided)
    no_share: bool = False  # experiments: every arm asks its own agent, even for a question another arm asked
    cache: Path | None = None  # answer cache (default <out>/cache/answers; experiments share the top one)
    cache_salt: str = ""  # part of every live answer's cache key: an experiment arm's name under --no-share
    hide: tuple[Path, ...] = ()  # more paths an agent must not reach (an experiment's own output folder)
    # what validation reports beyond its problems: the coverage report, and the changed paths it gates
    coverage_report: Path | None = None  # where the coverage report goes (JSON)
    gate_paths: Path | None = None  # --changed-paths of validate/prepare: the changed files, one per line
    changed_from: str | None = None  # or: the files changed in REF...HEAD of the corpus's git checkout
    # how the corpus is read as upstream reads it now (docs/review.md, "Upstream as it is now")
    additional_ids: str = _default("additional_ids")  # the case-id scheme of `additionalArticles`
    index: str = _default("index")  # lenient (the 841b4e7 builder) or strict (invalid articles are skipped)

    def __post_init__(self) -> None:
        for name in (*CHOICES, *RANGES):
            problem = setting_problem(name, getattr(self, name))
            if problem is not None:
                raise BcevalError(problem if name in CHOICES else f"invalid setting {name}: {problem}")
        if self.run is not None and not RUN_NAME.match(self.run):
            raise BcevalError(
                f"invalid run name '{self.run}': use letters, digits, '.', '_' and '-' (at most 100, no leading dot)"
            )

    @property
    def prepare_dir(self) -> Path:
        return OutDir(self.out).prepare.path

    @property
    def build_dir(self) -> Path:
        """Intermediate files of the graph; never read by model runners."""
        return OutDir(self.out).build.path

    @property
    def doit_db(self) -> Path:
        return OutDir(self.out).doit_db

    @property
    def run_name(self) -> str:
        """--run, else the adapter (plus the model for a live agent, plus the epoch after the first);
        results scored from elsewhere are the run "external"."""
        if self.run:
            return self.run
        if self.results is not None or self.results_path is not None:
            return "external"
        name = self.adapter
        if self.live and self.model:
            name += "-" + (re.sub(r"[^A-Za-z0-9._-]+", "-", self.model).strip("-.")[:80] or "model")
        return name + (f"-e{self.epoch}" if self.epoch > 1 else "")

    @property
    def run_dir(self) -> Path:
        """Everything of one run: results/, transcripts/, run.json, score.json, scorecard.*"""
        return OutDir(self.out).run(self.run_name).path

    @property
    def results_dir(self) -> Path:
        return self.results or RunDir(self.run_dir).results

    @property
    def answers_in_graph(self) -> bool:
        """Whether scoring answers first: only a free (not live) adapter, and only into its own directory."""
        return self.results is None and self.results_path is None and not self.live

    @property
    def live(self) -> bool:
        """Whether the adapter calls a live model (spends money, opt-in): its command and model define the run."""
        return capabilities(self.adapter).live

    @functools.cached_property
    def agent_config(self) -> str | None:
        """The digest of a preset agent's configuration folder, as the agent will be given it (its variable in this
        process's environment); None without one."""
        return config_digest(self.agent, os.environ) if self.agent and self.live else None

    @property
    def asked(self) -> Asking:
        """How this run asks its questions (bceval.runs.identity): the run's identity, the answer's up-to-date
        check and the basis for sharing answers between arms."""
        return asking(self.adapter, self, live=self.live)

    @property
    def endpoint(self) -> EndpointSettings | None:
        """The endpoint of an agent kind that talks to one itself (the `api` kind); None for the others."""
        if not capabilities(self.adapter).endpoint:
            return None
        return _same_named(EndpointSettings, self)

    @property
    def score_file(self) -> Path:
        return RunDir(self.run_dir).score

    @property
    def scorecard_json(self) -> Path:
        return RunDir(self.run_dir).scorecard()

    @property
    def cache_dir(self) -> Path:
        return self.cache or OutDir(self.out).answer_cache


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


def convert(value: Any, kind: str, base: Path, where: str) -> Any:
    """A setting's value of `kind` from a flag, the environment or pyproject.toml (`where` names it in errors);
    relative paths resolve against `base`."""
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        raise BcevalError(f"{where} must be true or false, got '{value}'")
    if kind == "prices":
        if isinstance(value, dict):  # [tool.bceval.prices."<model>"] tables
            return price_table(value, where)
        if not isinstance(value, str) or not value:
            raise BcevalError(f"{where} must be a price file (YAML) or, in pyproject.toml, a table of models")
        return read_price_file((base / value).resolve())
    if kind == "path":
        if not isinstance(value, str) or not value:
            raise BcevalError(f"{where} must be a non-empty path")
        return (base / value).resolve()
    if kind == "text":
        if not isinstance(value, str):
            raise BcevalError(f"{where} must be a string")
        return value
    if kind in ("texts", "paths"):
        # a list from a flag or pyproject.toml; one string from the environment, split on , (texts) or the
        # platform's path separator (paths, so Windows drive letters survive)
        if isinstance(value, str):
            value = [part.strip() for part in value.split("," if kind == "texts" else os.pathsep) if part.strip()]
        if not isinstance(value, list | tuple) or not all(isinstance(item, str) and item for item in value):
            raise BcevalError(f"{where} must be a list of non-empty strings")
        return tuple((base / item).resolve() for item in value) if kind == "paths" else tuple(value)
    # a whole number for an int setting, a finite one for a float setting; true/false are no numbers
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or (kind == "int" and not float(number).is_integer()):
        wanted = "a whole number" if kind == "int" else "a number"
        raise BcevalError(f"{where} must be {wanted}, got '{value}'")
    return int(number) if kind == "int" else float(number)


def bceval_table(cwd: Path) -> tuple[Path, dict[str, Any]]:
    """(cwd/pyproject.toml, its [tool.bceval] table: {} when there is no file or no table)."""
    pyproject = cwd / "pyproject.toml"
    if not pyproject.is_file():
        return pyproject, {}
    try:
        data = tomllib.loads(read_regular_text(pyproject, "utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BcevalError(f"{pyproject}: cannot read [tool.bceval]: {exc}") from None
    return pyproject, data.get("tool", {}).get("bceval", {})


def _pyproject_values(cwd: Path) -> dict[str, Any]:
    pyproject, found = bceval_table(cwd)
    table = {key: value for key, value in found.items() if key != "development"}
    names = {option.pyproject_key(): option.name for option in SETTINGS if option.pyproject}  # development: its own
    unknown = sorted(set(table) - set(names))
    if unknown:
        raise BcevalError(f"{pyproject}: [tool.bceval] has unknown setting '{unknown[0]}'")
    return {
        names[key]: convert(value, SOURCES[names[key]][1], cwd, f"{pyproject}: [tool.bceval] {key}")
        for key, value in table.items()
    }


def looks_like_corpus(folder: Path) -> bool:
    """A folder holding a layer with review leaves or a knowledge folder."""
    return has_leaves(folder) or any((folder / layer / "knowledge").is_dir() for layer in LAYERS)


def find_corpus(cwd: Path) -> Path | None:
    """The current directory, or the nearest parent up to its git root, that looks like a corpus."""
    if looks_like_corpus(cwd):
        return cwd
    root = git_root(cwd)
    if root is None:
        return None  # outside git only the current directory counts
    for folder in cwd.parents:
        if looks_like_corpus(folder):
            return folder
        if folder == root:
            break
    return None


def load_settings(cwd: Path | None = None, environ: Mapping[str, str] | None = None, **flags: Any) -> Settings:
    """Resolve every setting; `flags` are command-line values (None means not given)."""
    cwd = Path.cwd() if cwd is None else cwd
    environ = os.environ if environ is None else environ
    unknown = sorted(set(flags) - set(SOURCES))
    if unknown:
        raise TypeError(f"unknown setting {unknown[0]}")
    chosen = _pyproject_values(cwd)
    source = {key: "pyproject.toml" for key in chosen}
    for key, (env_key, kind) in SOURCES.items():
        value = flags.get(key)
        if value is not None and value != [] and value != ():
            source[key] = OPTIONS[key].flags[-1]  # the flag as users type it: --margin for health_margin, -k
            chosen[key] = convert(str(value) if kind == "path" else value, kind, cwd, source[key])
        elif environ.get(env_key):
            chosen[key] = convert(environ[env_key], kind, cwd, env_key)
            source[key] = env_key
        if key == "corpus" and key in source and str(flags.get(key) or environ.get(env_key)) == DEMO_NAME:
            chosen[key], source[key] = DEMO_CORPUS, f"{source[key]} demo: bceval's demo corpus"
    base = cwd
    if "corpus" not in chosen:
        found = find_corpus(cwd.resolve())
        # the demo corpus only when asked for: without a corpus here the commands that need one refuse
        chosen["corpus"], source["corpus"] = (found, "found here") if found else (cwd.resolve(), NOT_FOUND)
        base = found or cwd
    elif source["corpus"] == "pyproject.toml" and chosen["corpus"] == DEMO_CORPUS:
        source["corpus"] = "pyproject.toml: bceval's demo corpus"
    if "manifest" not in chosen:
        default = chosen["corpus"] / MANIFEST_RELATIVE
        chosen["manifest"] = default if default.is_file() else None  # no manifest: evaluate by convention
    chosen.setdefault("out", (base / "out").resolve())
    chosen.setdefault("page", (cwd / "evaluation" / "scorecard.md").resolve())
    chosen["corpus_source"] = source["corpus"]
    for key, value in chosen.items():  # a bad value is refused naming the flag, variable or file it came from
        problem = setting_problem(key, value) if key in source else None
        if problem is not None:
            where = source[key]
            if where == "pyproject.toml":
                where = f"{cwd / 'pyproject.toml'}: [tool.bceval] {OPTIONS[key].pyproject_key()}"
            raise BcevalError(f"{where}: {problem}" if key in CHOICES else f"{where} {problem}")
    if chosen.get("shard"):
        parse_shard(chosen["shard"])
    source_date_epoch(environ)  # fail here, in one line, rather than inside a task
    if chosen.get("results") is not None and chosen.get("results_path") is not None:
        raise BcevalError("give either a results directory or a results file, not both")
    if chosen.get("agent"):  # a preset is the command adapter with its command line
        if chosen.get("adapter", "command") != "command":
            raise BcevalError(f"--agent {chosen['agent']} is a command agent: drop --adapter {chosen['adapter']}")
        chosen.update(
            adapter="command", command=preset_command(chosen["agent"], chosen.get("model"), chosen.get("command"))
        )
    return Settings(**chosen)


def has_leaves(corpus: Path) -> bool:
    """Whether any layer of `corpus` has a review leaf (a cheap look into three folders, no walk)."""
    for layer in LAYERS:
        review = corpus / layer / "skills" / "review"
        try:
            if review.is_dir() and any(path.name.startswith("al-") for path in review.glob("al-*-review.md")):
                return True
        except OSError:
            continue
    return False


def check_inputs(settings: Settings, leaves: bool = False) -> None:
    """Fail early, in one line, when the corpus or manifest cannot be used at all. An experiment's arms name
    their own corpora (each variant is checked when it is prepared), so its own settings need none. With `leaves`
    (a review command), a corpus without a review leaf would evaluate nothing (graph validation says the same)."""
    if settings.corpus_source == NOT_FOUND:
        if settings.experiment is None:
            raise BcevalError(
                f"no corpus in {settings.corpus} or its parents up to the git root: {CORPUS_SHAPE}; "
                "give --corpus PATH, or --corpus demo for bceval's demo corpus"
            )
    elif not settings.corpus.exists():
        raise BcevalError(f"{settings.corpus}: corpus directory does not exist")
    elif not settings.corpus.is_dir():
        raise BcevalError(f"{settings.corpus}: corpus path is not a directory")
    if settings.manifest is not None:
        if not settings.manifest.exists():
            raise BcevalError(f"{settings.manifest}: review fixture manifest not found")
        if not settings.manifest.is_file():
            raise BcevalError(f"{settings.manifest}: review fixture manifest is not a file")
    if settings.out.exists() and not settings.out.is_dir():
        raise BcevalError(f"{settings.out}: output path exists and is not a directory")
    if leaves and not has_leaves(settings.corpus):
        raise BcevalError(f"{settings.corpus}: no review leaf found: {CORPUS_SHAPE}")


NOTHING_REBUILT = "bceval: everything is up to date; nothing was rebuilt"  # a graph run that found nothing to do


def context_line(settings: Settings) -> str:
    """The one line every command prints: which corpus, manifest and output directory it uses."""
    manifest = str(settings.manifest) if settings.manifest is not None else "none (by convention, thresholds 1 and 1)"
    return f"bceval: corpus {settings.corpus} ({settings.corpus_source}); manifest {manifest}; out {settings.out}"


def agent_settings(settings: Settings) -> AgentSettings:
    """A live agent's settings, from the run's settings."""
    endpoint = settings.endpoint
    if not settings.command and endpoint is None:
        raise BcevalError(REVIEW_NEEDS_COMMAND)
    if settings.knowledge != "embedded" and endpoint is None:
        raise BcevalError(f"--knowledge {settings.knowledge} needs --adapter api: its tools serve the knowledge")
    return _same_named(
        AgentSettings, settings, command=settings.command or "", paid_by=str(settings.run_dir), endpoint=endpoint
    )


def _same_named(part: Any, settings: Settings, **given: Any) -> Any:
    """A dataclass of an agent's settings, each field from the setting of its name unless `given`."""
    return part(**{f.name: getattr(settings, f.name) for f in fields(part) if f.name not in given}, **given)
