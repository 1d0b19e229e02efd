"""The corpus listing and everything derived from file names alone (pure over a `Listing`): layers, leaves,
paired articles."""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from bceval.errors import BcevalError
from bceval.jsonio import utf8_encodable
from bceval.ordering import sort_key, sorted_texts

LAYERS = ("microsoft", "community", "custom")
LAYER_RANK = {name: rank for rank, name in enumerate(LAYERS, start=1)}
SUPER_SKILL = "al-code-review.md"
CORPUS_SHAPE = (
    "a corpus has review leaves <layer>/skills/review/al-<domain>-review.md (layers: " + ", ".join(LAYERS) + ")"
)


@dataclass(frozen=True)
class Listing:
    """The files that matter under a corpus root, as file names by folder (relative, forward slashes)."""

    root: Path
    by_dir: dict[str, frozenset[str]]

    @cached_property
    def sorted_names(self) -> dict[str, list[str]]:
        """Folder -> its file names, folders and names sorted ordinally (sorted once for every reader)."""
        return {folder: sorted(self.by_dir[folder]) for folder in sorted(self.by_dir)}

    @cached_property
    def files(self) -> tuple[str, ...]:
        """Every relative path, in a fixed order (folders and names sorted ordinally)."""
        return tuple(f"{folder}/{name}" for folder, names in self.sorted_names.items() for name in names)

    @cached_property
    def digest(self) -> str:
        """sha256 of the listing: any added, removed or renamed file changes it."""
        text = "".join(f"\n{folder}\0" + "\0".join(names) for folder, names in self.sorted_names.items())
        return hashlib.sha256(text.encode()).hexdigest()

    def names_in(self, folder: str) -> frozenset[str]:
        return self.by_dir.get(folder, frozenset())

    def has_file(self, rel: str) -> bool:
        folder, name = posixpath.split(rel)
        return name in self.names_in(folder)


def _inside(real_root: str, target: str) -> bool:
    try:
        return os.path.commonpath([real_root, target]) == real_root
    except ValueError:  # another drive on Windows
        return False


def _check_link(root: Path, real_root: str, path: str, rel: str, is_dir: bool, folder: str) -> None:
    target = os.path.realpath(path)
    if not _inside(real_root, target):
        raise BcevalError(f"{root / rel}: symbolic link leads outside the corpus")
    if not os.path.exists(target):
        raise BcevalError(f"{root / rel}: symbolic link is broken")
    real_folder = os.path.realpath(folder)
    if is_dir and (target == real_root or target == real_folder or real_folder.startswith(target + os.sep)):
        raise BcevalError(f"{root / rel}: symbolic link loops back to a folder that contains it")


def _walk(
    root: Path,
    real_root: str,
    folder: str,
    rel: str,
    recursive: bool,
    by_dir: dict[str, frozenset[str]],
    walking: tuple[str, ...] = (),  # real paths of the folders above: a link to one loops (aa/l->../bb, bb/l->../aa)
) -> None:
    real_folder = os.path.realpath(folder)
    if real_folder in walking:
        raise BcevalError(f"{root / rel}: symbolic link loops back to a folder being listed")
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise BcevalError(f"{folder}: cannot list directory: {exc.strerror}") from None
    names = []
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue  # hidden files never take part, as in the reference's listings
        if not name.isascii() and not utf8_encodable(name):  # undecodable bytes list as surrogates
            raise BcevalError(f"{root / rel / name}: file name is not valid UTF-8; rename it")
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
        except OSError as exc:  # e.g. a link to itself: "too many levels of symbolic links"
            raise BcevalError(f"{root / rel / name}: cannot be followed: {exc.strerror}") from None
        if entry.is_symlink():
            _check_link(root, real_root, entry.path, f"{rel}/{entry.name}", is_dir, folder)
        if is_dir:
            if recursive:
                _walk(root, real_root, entry.path, f"{rel}/{entry.name}", True, by_dir, (*walking, real_folder))
        elif is_file:
            names.append(entry.name)
    if names:
        by_dir[rel] = frozenset(names)


def scan_corpus(
    root: Path, parts: tuple[tuple[str, bool], ...] = (("skills/review", False), ("knowledge", True))
) -> Listing:
    """One walk of `<layer>/skills/review/*` and `<layer>/knowledge/**` (or of `parts`: (folder, recursive)) for
    every layer on disk."""
    real_root = os.path.realpath(root)
    by_dir: dict[str, frozenset[str]] = {}
    for layer in LAYERS:
        for rel, recursive in ((f"{layer}/{part}", recursive) for part, recursive in parts):
            start = os.path.join(root, *rel.split("/"))
            if os.path.isdir(start) and not _inside(real_root, os.path.realpath(start)):
                raise BcevalError(f"{root / rel}: leads outside the corpus through a symbolic link")
            _walk(root, real_root, start, rel, recursive, by_dir)
    return Listing(root=root, by_dir=by_dir)


@dataclass(frozen=True)
class Leaf:
    domain: str
    layer: str
    path: str  # relative, forward slashes


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
                domain = name[len("al-") : -len("-review.md")]
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
        for name in sorted_texts(name for name in names if name.endswith(".md")):
            slug = name[: -len(".md")]
            if f"{slug}.good.al" in names and f"{slug}.bad.al" in names:
                winners[slug.lower()] = PairedArticle(slug, layer, f"{folder}/{name}")
    return sorted(winners.values(), key=lambda a: sort_key(a.slug))


def article_exists(listing: Listing, domain: str, slug: str) -> bool:
    """Whether `<slug>.md` exists for the domain in any layer, paired or not."""
    return any(listing.has_file(f"{layer}/knowledge/{domain}/{slug}.md") for layer in LAYERS)


def knowledge_markdown(listing: Listing) -> list[str]:
    """Every article file the index covers, in index order (layer order, then path)."""
    rows = [
        f"{folder}/{name}"
        for folder, names in listing.by_dir.items()
        if folder.split("/", 2)[1] == "knowledge"
        for name in names
        if name.endswith(".md")
    ]
    return index_order(rows)


def index_order(rels: Iterable[str]) -> list[str]:
    """Article paths in index order: layer order, then `sort_key` order of the path."""
    return sorted(sorted_texts(rels), key=lambda rel: LAYER_RANK[rel[: rel.index("/")]])  # stable: path order kept


def layer_of(rel: str) -> str:
    return rel.partition("/")[0]
