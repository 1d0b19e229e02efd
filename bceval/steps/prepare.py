"""The corpus-wide half of the prepare stage: knowledge rows, the index, the incomplete marker, pruning (the
review evaluator's own half is bceval.evaluators.review.steps). Intermediate files live in `<out>/.build/review/`;
only the prepare directory is for model runners."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from bceval.clock import generated_at
from bceval.config import Settings
from bceval.corpus.articles import index_row
from bceval.corpus.index import candidate_paths, index_document
from bceval.corpus.layers import Listing, index_order, sorted_texts
from bceval.corpus.prepdir import strays
from bceval.corpus.rows import encode_group, index_chunks, read_group, row_count, snapshot
from bceval.corpus.strict import STRICT, strict_rows
from bceval.errors import BcevalError
from bceval.jsonio import decode_utf8, read_regular_bytes, write_atomic
from bceval.layout import BuildDir, PrepareDir

INCOMPLETE_TEXT = "A bceval prepare run started writing here and has not finished; these requests are incomplete.\n"


def article_group(rel: str) -> str:
    """The knowledge folder an article's row is built with: `<layer>/knowledge/<first folder>`.

    One task per folder rather than per article: at 25,000 articles doit's per-task bookkeeping cost
    more than parsing (measured by `bceval bench`), while a folder re-parses in milliseconds.
    """
    parts = rel.split("/")
    return "/".join(parts[:3]) if len(parts) >= 4 else "/".join(parts[:2])


def group_folders(listing: Listing) -> dict[str, list[str]]:
    """Every knowledge group (`article_group`) with a listed file, and its folders; both in ordinal order. Folder
    by folder: the graph plans a rows task per group on every run, and reads a group's files only to build it."""
    folders: dict[str, list[str]] = {}
    for folder in listing.sorted_names:
        if folder.split("/", 2)[1:2] == ["knowledge"]:
            folders.setdefault(article_group(f"{folder}/x"), []).append(folder)
    return {group: folders[group] for group in sorted(folders)}


def group_files(listing: Listing, folders: list[str], suffix: str) -> list[str]:
    """The paths in `folders` whose names end in `suffix`, in ordinal order."""
    names = listing.sorted_names
    return sorted(f"{folder}/{name}" for folder in folders for name in names[folder] if name.endswith(suffix))


def sample_groups(listing: Listing) -> dict[str, list[str]]:
    """Every AL sample (`*.al`) by `article_group`: the rows task of a group checks them too, so validation
    reads every file preparing could, and a sample that is not UTF-8 is an error even when no case uses it."""
    grouped = {group: group_files(listing, folders, ".al") for group, folders in group_folders(listing).items()}
    return {group: rels for group, rels in grouped.items() if rels}


def read_text(path: Path) -> str:
    try:
        data = read_regular_bytes(path)
    except OSError as exc:
        raise BcevalError(f"{path}: cannot read: {exc.strerror}") from None
    return decode_utf8(data, str(path))


def write_group_rows(settings: Settings, listing: Listing, group: str, folders: list[str]) -> None:
    """The rows file of one knowledge group given by its folders (see bceval.corpus.rows), rows in path
    order; the group's samples are only read, to prove they are UTF-8."""
    for rel in group_files(listing, folders, ".al"):
        read_text(settings.corpus / rel)
    ordered = sorted_texts(group_files(listing, folders, ".md"))  # one layer, so path order is index order
    if settings.index == STRICT:
        rows, warnings = strict_rows(settings.corpus, ordered)
        for line in warnings:
            print(line, file=sys.stderr)
    else:
        rows = [index_row(rel, read_text(settings.corpus / rel)) for rel in ordered]
    write_atomic(BuildDir(settings.build_dir).rows(group), encode_group(rows))


def mark_incomplete(settings: Settings) -> None:
    marker = PrepareDir(settings.prepare_dir).incomplete  # present from a prepare run's first write until it ends
    if not marker.exists():
        write_atomic(marker, INCOMPLETE_TEXT)


def require_complete(settings: Settings) -> None:
    """Answering or scoring a half-written request set would mislead; refuse in one line."""
    if PrepareDir(settings.prepare_dir).incomplete.exists():
        raise BcevalError(
            f"{settings.prepare_dir}: the last prepare did not finish, so the requests are incomplete; "
            "fix what it reported and run bceval prepare"
        )


def write_index(settings: Settings, groups: list[str], domains: list[str]) -> None:
    """knowledge-index.json and the candidate rows of each leaf domain."""
    mark_incomplete(settings)
    read = [read_group(BuildDir(settings.build_dir).rows(group)) for group in groups]
    write_atomic(
        PrepareDir(settings.prepare_dir).knowledge_index,
        index_document(index_chunks(read), row_count(read), generated_at(), snapshot(read, settings.index)),
    )
    texts: dict[str, bytes] = {}
    domain_of: dict[str, str] = {}
    for group in read:
        for path, domain, text in group.entries():
            texts[path], domain_of[path] = text, domain
    chosen = candidate_paths([(path, domain_of[path]) for path in index_order(texts)], domains)
    for domain, paths in chosen.items():
        write_atomic(
            BuildDir(settings.build_dir).domain_articles(domain), b"[" + b",".join([texts[p] for p in paths]) + b"]\n"
        )


def build_strays(settings: Settings, groups: list[str], domains: list[str]) -> list[Path]:
    """Intermediate files of vanished folders and domains."""
    build = BuildDir(settings.build_dir)
    keep = {build.rows(group) for group in groups}
    keep |= {build.domain_cases(d) for d in domains} | {build.domain_articles(d) for d in domains}
    return [
        path
        for folder in BuildDir.FOLDERS
        for path in sorted((build.review / folder).glob("*.json"))
        if path not in keep
    ]


def nothing_to_prune(settings: Settings, groups: list[str], domains: list[str], model_ids: list[str]) -> bool:
    """Whether the prepare and build directories hold exactly what the graph builds.

    A failed run can leave files of cases or domains that a later edit takes away again, with every
    input back as it was at the last success; the prepare task checks the directories themselves.
    """
    expected = PrepareDir.expected_names(domains, model_ids)
    return not strays(settings.prepare_dir, expected) and not build_strays(settings, groups, domains)


def group_signatures(root: Path, listing: Listing, groups: Mapping[str, list[str]]) -> dict[str, str]:
    """What the rows tasks' up-to-date checks compare: a stat signature of each knowledge group in `groups` (group ->
    its folders, see group_folders), of the names, sizes and modification times of every listed file in its folders
    (its articles and samples, and anything else there, which only makes a rebuild more eager)."""
    signatures = {}
    for group, folders in groups.items():
        digest = hashlib.sha256()
        for folder in folders:
            for name in listing.sorted_names[folder]:
                try:
                    info = os.stat(root / folder / name)
                    state = f"{info.st_size}\0{info.st_mtime_ns}"
                except OSError:  # listed, then gone: a state of its own
                    state = "gone"
                digest.update(f"{folder}/{name}\0{state}\n".encode())
        signatures[group] = digest.hexdigest()
    return signatures
