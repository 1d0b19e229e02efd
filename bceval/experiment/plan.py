"""An experiment file resolved against bceval's settings: each arm's effective settings, the corpus it reads
(a git ref becomes the commit it names, exported once), and the prepare variant it shares with other arms."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import git

from bceval.agents.presets import preset_command
from bceval.agents.registry import capabilities
from bceval.config import CORPUS_SHAPE, MANIFEST_RELATIVE, Settings, agent_settings, has_leaves
from bceval.errors import BcevalError
from bceval.evaluators.base import CASE, Evaluator
from bceval.evaluators.registry import DEFAULT, evaluator
from bceval.experiment.model import ARM_FIELDS, OPTIONAL_ARM_FIELDS, ExperimentFile, load_experiment
from bceval.experiment.sequential import until_decided
from bceval.layout import ExperimentDir, OutDir

Where = Callable[[tuple[Any, ...]], str]  # a field's location -> where its value came from, for an error


@dataclass(frozen=True)
class ArmPlan:
    name: str
    control: bool
    fields: dict[str, Any]  # the arm's effective values of ARM_FIELDS (None when bceval's default applies)
    corpus: Path  # the folder this arm's cases are read from (an export for a ref)
    repository: Path | None  # the git work tree a ref is resolved in
    subdir: str  # the corpus inside that repository ("" for its root)
    commit: str | None  # what the ref named when the experiment ran
    manifest: Path | None  # set by the arm; None means the corpus's own evaluation/review-fixtures.json, if any
    variant: str  # the prepare folder it shares with every arm that reads the same corpus and manifest
    evaluator: str = DEFAULT  # the name of a registered evaluator
    workspace_map: Path | None = None  # an evaluator that needs workspaces: manifest id -> workspace

    @property
    def evaluated_by(self) -> Evaluator:
        """The registered evaluator; its traits say what the arm's runs do."""
        return evaluator(self.evaluator)

    def agent(self, default: str) -> str:
        """The arm's agent: its own, else its evaluator's default, else `default` (bceval's --adapter)."""
        return self.fields["adapter"] or self.evaluated_by.traits.default_agent or default


@dataclass(frozen=True)
class Plan:
    experiment: ExperimentFile
    source: Path | None  # the experiment file; None for `experiment ab`
    out: Path  # out/experiments/<name>
    arms: list[ArmPlan]
    differing: list[str] = field(default_factory=list)  # fields in which some arm differs from the control
    warnings: list[str] = field(default_factory=list)

    @property
    def control(self) -> ArmPlan:
        return self.arms[0]

    @property
    def folder(self) -> ExperimentDir:
        return ExperimentDir(self.out)

    def run_folders(self, arm_name: str, epoch: int) -> Path:
        """Where the whole runs of an arm's epoch go (an evaluator whose unit is a run): run-0001, ..."""
        return self.folder.guidance_runs(self.arm(arm_name).variant, arm_name, epoch)

    def budget_stop(self, arm_name: str, epoch: int) -> Path:
        """The note that the experiment's budget kept a whole-run arm's epoch from starting."""
        return self.folder.budget_stop(self.arm(arm_name).variant, arm_name, epoch)

    def arm(self, name: str) -> ArmPlan:
        return next(arm for arm in self.arms if arm.name == name)

    def budget(self, settings: Settings) -> float | None:
        """The experiment's budget in USD: its file's maxCost, else --max-cost (BCEVAL_MAX_COST); None for none."""
        return self.experiment.maxCost if self.experiment.maxCost is not None else settings.max_cost


def load_plan(settings: Settings) -> Plan:
    """The plan of the experiment file `settings` name; its arms and refs are checked before anything runs."""
    assert settings.experiment is not None
    experiment, positions = load_experiment(settings.experiment)
    if settings.cases or settings.patterns:  # --case and -k replace the file's selection
        experiment = experiment.model_copy(update={"cases": list(settings.cases), "k": list(settings.patterns)})
    if settings.until_decided:
        experiment = until_decided(experiment)
    return resolve(experiment, settings, settings.experiment, positions.where)


def _resolve_ref(corpus: Path, ref: str, where: str) -> tuple[Path, str, str]:
    """(work tree, corpus folder inside it, commit) for a ref of the repository holding `corpus`; read-only:
    nothing is checked out or fetched."""
    try:
        repo = git.Repo(corpus, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise BcevalError(f"{where}: {corpus} is not in a git repository, so a ref cannot be resolved") from None
    try:
        commit = repo.commit(ref).hexsha
        top = Path(repo.working_tree_dir).resolve()
    except (git.BadName, ValueError, git.GitCommandError):
        raise BcevalError(f"{where}: '{ref}' does not name a commit in {repo.working_tree_dir}") from None
    finally:
        repo.close()
    subdir = corpus.resolve().relative_to(top).as_posix()
    return top, "" if subdir == "." else subdir, commit


def resolve(experiment: ExperimentFile, settings: Settings, source: Path | None, where: Where) -> Plan:
    """Each arm's effective settings over `defaults` and bceval's settings; refs resolved to commits. `where`
    names where a field's value came from (its file and line, or the flag of `experiment ab` that set it)."""
    variants: dict[tuple[Any, ...], str] = {}
    base = source.parent if source is not None else Path.cwd()
    arms = [_arm_plan(experiment, index, settings, base, where, variants) for index in range(len(experiment.arms))]
    for name in dict.fromkeys(arm.evaluator for arm in arms):  # each evaluator's own rules for a set of arms
        refusal = evaluator(name).check_arms(arms, settings)
        if refusal is not None:
            index, text = refusal
            raise BcevalError(f"{where(('arms', index, 'name'))}: {text}")
    if experiment.stop is not None and experiment.stop.when == "decided":
        whole = next((index for index, arm in enumerate(arms) if arm.evaluated_by.traits.unit != CASE), None)
        if whole is not None:
            raise BcevalError(
                f"{where(('arms', whole, 'name'))}: stop: decided looks case by case; this arm's unit is a run"
            )
    plan = Plan(experiment, source, OutDir(settings.out).experiment(experiment.name).path, arms)
    for index, arm_plan in enumerate(arms):  # an arm's agent settings are checked before anything runs
        try:
            run = arm_settings(plan, arm_plan, settings, 1)
            if run.live:
                agent_settings(run)
        except BcevalError as exc:
            raise BcevalError(f"{where(('arms', index, 'name'))}: arm '{arm_plan.name}': {exc}") from None
    differing, warnings = matching(plan, settings.adapter, settings.no_share)
    return replace(plan, differing=differing, warnings=warnings)


def _arm_plan(
    experiment: ExperimentFile,
    index: int,
    settings: Settings,
    base: Path,
    where: Where,
    variants: dict[tuple[Any, ...], str],
) -> ArmPlan:
    """One arm: its fields over the defaults, the corpus it reads (a ref's export), its manifest and workspaces;
    `base`: the folder its paths are relative to."""
    arm, defaults = experiment.arms[index], experiment.defaults

    def at(key: str) -> str:  # where the arm's value of `key` came from: the arm itself, else the defaults
        return where(("arms", index, key) if getattr(arm, key) is not None else ("defaults", key))

    values = {}
    for key in ARM_FIELDS + OPTIONAL_ARM_FIELDS:  # the optional ones are carried only when given
        value = getattr(arm, key) if getattr(arm, key) is not None else getattr(defaults, key)
        if value is not None or key in ARM_FIELDS:
            values[key] = value
    if values.get("agent"):  # a preset: the command adapter with its command line, as the run records it
        try:
            values["command"] = preset_command(values["agent"], values["model"], values["command"])
        except BcevalError as exc:
            raise BcevalError(f"{at('agent')}: {exc}") from None
        values["adapter"] = "command"
    name = values["evaluator"] or DEFAULT
    traits = evaluator(name).traits
    corpus = (base / values["corpus"]).resolve() if values["corpus"] else settings.corpus
    if not corpus.is_dir():
        raise BcevalError(f"{at('corpus')}: {corpus} is not a folder")
    if traits.needs_leaves and values["ref"] is None and not has_leaves(corpus):  # a ref's tree: checked on export
        raise BcevalError(f"{at('corpus')}: {corpus}: no review leaf found: {CORPUS_SHAPE}")
    repository, subdir, commit = None, "", None
    read_from = corpus
    if values["ref"]:
        repository, subdir, commit = _resolve_ref(corpus, values["ref"], at("ref"))
        read_from = OutDir(settings.out).corpus_export(commit, subdir)
    # a manifest is relative to the corpus the arm reads; None: the corpus's own, if it has one
    manifest = (read_from / values["manifest"]) if values["manifest"] else None
    if manifest is None and traits.default_manifest is not None:
        manifest = read_from / traits.default_manifest
    if traits.needs_workspaces and not values["workspaceMap"]:
        raise BcevalError(f"{at('evaluator')}: a {name} arm needs a workspaceMap")
    # optional where the evaluator has another source of workspaces (development's checks file)
    workspace_map = (base / values["workspaceMap"]).resolve() if values["workspaceMap"] else None
    key = (str(read_from), str(manifest), name, str(workspace_map))
    return ArmPlan(
        name=arm.name,
        control=index == 0,
        fields={**values, "corpus": str(corpus)},
        corpus=read_from,
        repository=repository,
        subdir=subdir,
        commit=commit,
        manifest=manifest,
        variant=variants.setdefault(key, arm.name),
        evaluator=name,
        workspace_map=workspace_map,
    )


def matching(plan: Plan, default_adapter: str, no_share: bool) -> tuple[list[str], list[str]]:
    """The fields in which some arm differs from the control, and warnings: a matched comparison varies one thing;
    say so when an arm varies more than one, or none."""
    control, names = plan.control, ARM_FIELDS + OPTIONAL_ARM_FIELDS

    def shown(arm: ArmPlan, name: str) -> Any:  # a ref that moved is a different corpus: compare what it named
        return arm.commit if name == "ref" else arm.fields.get(name)

    differing: set[str] = set()
    warnings = []
    for arm in plan.arms[1:]:
        if arm.evaluator != control.evaluator:
            warnings.append(
                f"arm '{arm.name}' is evaluated by {arm.evaluator}, the control by {control.evaluator}: "
                "they share no case, so nothing can be compared"
            )
        differing.update(name for name in names if shown(arm, name) != shown(control, name))
        asked = (*ARM_FIELDS, "knowledge")  # knowledge is optional, yet asks another question (request, tools)
        differs = [name for name in asked if shown(arm, name) != shown(control, name)]
        if len(differs) > 1:
            warnings.append(
                f"arm '{arm.name}' differs from the control '{control.name}' in {len(differs)} fields "
                f"({', '.join(differs)}): not a matched comparison, so a difference cannot be put down to one of them"
            )
        shares = arm.evaluated_by.traits.shares_answers
        live = capabilities(arm.agent(default_adapter)).live
        if not differs and live and shares and not no_share:
            warnings.append(
                f"arm '{arm.name}' is set up exactly like the control, so it shares every answer with it and "
                "cannot differ: run with --no-share to measure the agent's own noise"
            )
        elif not differs:
            warnings.append(f"arm '{arm.name}' is set up exactly like the control: any difference is noise")
    return [name for name in names if name in differing], warnings


def arm_settings(plan: Plan, arm: ArmPlan, settings: Settings, epoch: int) -> Settings:
    """The settings of one arm in one epoch: a run of its own inside the arm's prepare variant."""
    fields = arm.fields
    agent = fields.get("agent") or (None if fields["command"] else settings.agent)
    default = arm.corpus / MANIFEST_RELATIVE  # the corpus's own manifest, if it has one
    return replace(
        settings,
        corpus=arm.corpus,
        corpus_source="experiment",
        manifest=arm.manifest or (default if default.is_file() else None),
        out=plan.folder.variant(arm.variant).path,
        adapter=arm.agent(settings.adapter),
        command=fields["command"] or settings.command,
        model=fields["model"] or settings.model,
        isolation=fields["isolation"] or settings.isolation,
        sandbox=fields["sandbox"] or settings.sandbox,
        sandbox_allow=tuple(Path(p).resolve() for p in fields["sandboxAllow"] or ()) or settings.sandbox_allow,
        sandbox_allow_rw=tuple(Path(p).resolve() for p in fields["sandboxAllowRw"] or ()) or settings.sandbox_allow_rw,
        base_url=fields.get("baseUrl") or settings.base_url,
        agent=agent,
        knowledge=fields.get("knowledge") or settings.knowledge,
        max_cost=None,  # the experiment's one budget bounds every arm and epoch (Plan.budget), not each run
        require_read=fields["requireRead"] if fields.get("requireRead") is not None else settings.require_read,
        run=f"{arm.name}-e{epoch}",
        epoch=epoch,
        cases=(),
        patterns=(),
        failed_from=None,
        shard=None,
        results=None,
        results_path=None,
        experiment=None,
        cache=OutDir(settings.out).answer_cache,  # shared by every arm: equal questions get one answer
        # --no-share: answers of one arm are never another's (the control keeps the plain key, so its cache stays)
        cache_salt=arm.name if settings.no_share and not arm.control else "",
        hide=(settings.out,),
    )
