"""What the task generators of every stage share, read at most once per graph (generators run on every doit
command, so each is cheap): the corpus listing, the planned cases, the knowledge groups and their stat signatures,
the leaf domains and the run's selection."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from doit.exceptions import InvalidTask

from bceval import __version__
from bceval.config import Settings, check_inputs
from bceval.corpus.layers import Listing, discover_leaves, scan_corpus
from bceval.errors import BcevalError
from bceval.evaluators.registry import DEFAULT, evaluator
from bceval.runs.selection import shard_cases
from bceval.steps import prepare as steps
from bceval.steps.answer import selected_cases

if TYPE_CHECKING:  # annotations only: the frame reaches the review evaluator through its plugin
    from bceval.evaluators.review.cases import Derivation, ReviewCase


class GraphInputs:
    """The shared, cached inputs of one graph (one set of settings)."""

    def __init__(self, settings: Settings, listing: Listing | None = None) -> None:
        self.settings = settings
        if listing is not None:  # scanned by the caller (after the same input checks)
            self.__dict__["listing"] = listing
        self.prep = settings.prepare_dir
        # what every prepare task's output depends on besides its own inputs
        self.basics: dict[str, Any] = {"bceval": __version__, "corpus": str(settings.corpus), "out": str(settings.out)}

    @cached_property
    def listing(self) -> Listing:
        try:
            check_inputs(self.settings)
            return scan_corpus(self.settings.corpus)
        except BcevalError as exc:
            raise InvalidTask(str(exc)) from None

    @cached_property
    def plan(self) -> Derivation | None:
        """Cases as the graph expects them; None when validation will fail (its task reports why)."""
        return evaluator(DEFAULT).planned_cases(self.settings, self.listing)

    @cached_property
    def group_folders(self) -> dict[str, list[str]]:
        """Every knowledge group with a listed file, and its folders (steps.group_folders)."""
        return steps.group_folders(self.listing)

    @cached_property
    def groups(self) -> list[str]:
        """The knowledge groups that hold an article: one rows task each (steps.article_group), in ordinal order."""
        listing = self.listing
        return [group for group, folders in self.group_folders.items() if steps.group_files(listing, folders, ".md")]

    @cached_property
    def loose_samples(self) -> list[list[str]]:
        """The samples of each group without an article (validation reads them: no rows task does)."""
        listing, with_rows = self.listing, set(self.groups)
        loose = [steps.group_files(listing, fs, ".al") for g, fs in self.group_folders.items() if g not in with_rows]
        return [rels for rels in loose if rels]

    @cached_property
    def signatures(self) -> dict[str, str]:
        """A stat signature per knowledge group: of every listed file in its folders (steps.group_signatures)."""
        folders = {group: self.group_folders[group] for group in self.groups}
        return steps.group_signatures(self.settings.corpus, self.listing, folders)

    @cached_property
    def domains(self) -> list[str]:
        return [leaf.domain for leaf in discover_leaves(self.listing)]

    @cached_property
    def model_ids(self) -> list[str]:
        """The planned cases' model ids (none when validation will fail)."""
        return [case.modelId for case in self.plan.cases] if self.plan else []

    @cached_property
    def selection(self) -> tuple[list[ReviewCase] | None, list[ReviewCase]]:
        """(the selected cases or None for all, the cases this shard answers); empty when validation fails."""
        derivation = self.plan
        if derivation is None:
            return None, []
        try:
            selected = selected_cases(self.settings, derivation.cases)
            return selected, shard_cases(selected or derivation.cases, self.settings.shard)
        except BcevalError as exc:
            raise InvalidTask(str(exc)) from None
