"""The corpus listing and everything derived from file names alone: layers, leaves, paired articles.

All functions here are pure over a `Listing`, so the doit graph can plan tasks from one cheap
directory walk and the validation action can re-derive the same answer from a fresh walk.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from bceval.errors import BcevalError

LAYERS = ("microsoft", "community", "custom")
LAYER_RANK = {name: rank for rank, name in enumerate(LAYERS, start=1)}
SUPER_SKILL = "al-code-review.md"


def sort_key(text: str) -> tuple[str, str]:
    """bceval's one string order: ordinal on the lower-cased text, ties by ordinal on the original."""
    return (text.lower(), text)


@dataclass(frozen=True)
class Listing:
    """Relative (forward-slash) paths of the files that matter under a corpus root."""

    root: Path
    files: tuple[str, ...]

    @cached_property
    def by_dir(self) -> dict[str, set[str]]:
        grouped: dict[str, set[str]] = {}
        for rel in self.files:
            folder, name = posixpath.split(rel)
            grouped.setdefault(folder, set()).add(name)
        return grouped

    def names_in(self, folder: str) -> set[str]:
        return self.by_dir.get(folder, set())

    def has_file(self, rel: str) -> bool:
        folder, name = posixpath.split(rel)
        return name in self.names_in(folder)


def _walk(root: Path, real_root: str, folder: Path, rel: str, recursive: bool, out: list[str]) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        return
    except OSError as exc:
        raise BcevalError(f"{folder}: cannot list directory: {exc.strerror}") from None
    for entry in entries:
        if entry.name.startswith("."):
            continue  # hidden files never take part, as in the reference's listings
        entry_rel = f"{rel}/{entry.name}"
        if entry.is_symlink():
            target = os.path.realpath(entry.path)
            if os.path.commonpath([real_root, target]) != real_root:
                raise BcevalError(f"{root / entry_rel}: symbolic link leads outside the corpus")
            if not os.path.exists(target):
                raise BcevalError(f"{root / entry_rel}: symbolic link is broken")
        if entry.is_dir():
            if recursive:
                real = os.path.realpath(entry.path)
                if (
                    real == real_root
                    or os.path.realpath(folder).startswith(real + os.sep)
                    or real == os.path.realpath(folder)
                ):
                    raise BcevalError(f"{root / entry_rel}: symbolic link loops back to a folder that contains it")
                _walk(root, real_root, Path(entry.path), entry_rel, True, out)
        elif entry.is_file():
            out.append(entry_rel)


def scan_corpus(root: Path) -> Listing:
    """One walk of `<layer>/skills/review/*` and `<layer>/knowledge/**` for every layer on disk."""
    real_root = os.path.realpath(root)
    files: list[str] = []
    for layer in LAYERS:
        _walk(root, real_root, root / layer / "skills" / "review", f"{layer}/skills/review", False, files)
        _walk(root, real_root, root / layer / "knowledge", f"{layer}/knowledge", True, files)
    return Listing(root=root, files=tuple(sorted(files, key=sort_key)))


@dataclass(frozen=True)
class Leaf:
    domain: str
    layer: str
    path: str  # relative, forward slashes


def _domain_of_leaf(name: str) -> str:
    base = name[: -len(".md")]
    if base.lower().startswith("al-"):
        base = base[3:]
    if base.lower().endswith("-review"):
        base = base[: -len("-review")]
    return base


def _is_leaf_name(name: str) -> bool:
    return (
        name.startswith("al-")
        and name.endswith("-review.md")
        and len(name) > len("al--review.md")  # the domain part must not be empty
        and name.lower() != SUPER_SKILL
    )


def discover_leaves(listing: Listing) -> list[Leaf]:
    """Review leaves by domain, the highest layer winning; sorted by domain."""
    winners: dict[str, Leaf] = {}
    for layer in LAYERS:  # rank order, so a later layer replaces an earlier one
        folder = f"{layer}/skills/review"
        for name in sorted(listing.names_in(folder), key=sort_key):
            if _is_leaf_name(name):
                domain = _domain_of_leaf(name)
                winners[domain.lower()] = Leaf(domain, layer, f"{folder}/{name}")
    return sorted(winners.values(), key=lambda leaf: sort_key(leaf.domain))


@dataclass(frozen=True)
class PairedArticle:
    slug: str
    layer: str
    md_path: str  # relative, forward slashes

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.md_path)


def paired_articles(listing: Listing, domain: str) -> list[PairedArticle]:
    """Articles directly in `<layer>/knowledge/<domain>` with both samples; pairing before precedence."""
    winners: dict[str, PairedArticle] = {}
    for layer in LAYERS:
        folder = f"{layer}/knowledge/{domain}"
        names = listing.names_in(folder)
        for name in sorted(names, key=sort_key):
            if not name.endswith(".md"):
                continue
            slug = name[: -len(".md")]
            if f"{slug}.good.al" in names and f"{slug}.bad.al" in names:
                winners[slug.lower()] = PairedArticle(slug, layer, f"{folder}/{name}")
    return sorted(winners.values(), key=lambda a: sort_key(a.slug))


def article_exists(listing: Listing, domain: str, slug: str) -> bool:
    """Whether `<slug>.md` exists for the domain in any layer, paired or not."""
    return any(listing.has_file(f"{layer}/knowledge/{domain}/{slug}.md") for layer in LAYERS)


def knowledge_markdown(listing: Listing) -> list[str]:
    """Every article file the index covers, in index order (layer order, then path)."""
    rows = [rel for rel in listing.files if "/knowledge/" in rel and rel.endswith(".md")]
    return sorted(rows, key=lambda rel: (LAYER_RANK[rel.split("/", 1)[0]], *sort_key(rel)))


def layer_of(rel: str) -> str:
    return rel.split("/", 1)[0]
