"""What a link job (`repodoc graph --link K/N --pages M`, `graph_job.py`) found, for each page share: the
symbol graph of a tree too large for one machine is linked by N jobs, each linking the files of its share
(the analysis split, `split.file_share`), and answered by M page-share jobs (`repodoc graph --pages J/M
--links DIR...`), each taking, from every link job, the records written for its share.

A record is what linking one file kept (`knowledge.linking.Link`, `store/sketches.encode_link`'s form),
cut to one page share J: the definitions of J's files it names (with the lines), its classes' workspace
bases (every share's records hold them: a share's pages list members inherited across shares), and, when
the file is one of J's, what its docstrings mention. The file of link share K for page share J
(`links-for-J-of-M-from-K-of-N.jsonl.gz`; format version 1), in blocks as `members.py`
writes them:

    {"format": "repodoc-links", "version": 1, "repodoc": "0.1.0", "analysis": "...", "sketches": "...",
     "tree": {...}, "pages": [J, M], "link": [K, N], "inputs": "<as answers.py's>", "files": 120}
    {"file": "pkg/a.py", "link": [<what it names, by file>, <bases>, <mentions>, []]}
    {"end": 120}
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from repodoc_lsp import __version__
from repodoc_lsp.knowledge.graph import Link
from repodoc_lsp.shard.facts_file import (
    MOST_BLOCK,
    ShardError,
    Share,
    Tree,
    analysis_version,
    check_made_alike,
    sketch_stamp,
    tree_from_json,
)
from repodoc_lsp.shard.members import BlockError, BlockWriter, blocks, compact_json, json_table
from repodoc_lsp.store.sketches import decode_link, encode_link

FORMAT = "repodoc-links"
FORMAT_VERSION = 1


def links_path(folder: Path, pages: Share, link: Share) -> Path:
    """Where link job `link` writes its records for page share `pages` in its output `folder`."""
    return folder / f"links-for-{pages[0]}-of-{pages[1]}-from-{link[0]}-of-{link[1]}.jsonl.gz"


class LinksWriter(BlockWriter):
    """One link job's records for one page share: `add` each file's, then `close`."""

    def __init__(self, path: Path, tree: Tree, pages: Share, link: Share, inputs: str, files: int) -> None:
        super().__init__(path, {"format": FORMAT, "version": FORMAT_VERSION, "repodoc": __version__,
                                "analysis": analysis_version(), "sketches": sketch_stamp(), "tree": tree.as_json(),
                                "pages": list(pages), "link": list(link), "inputs": inputs, "files": files})

    def add(self, rel: str, link: Link) -> None:
        self.line(compact_json({"file": rel, "link": encode_link(link)}))
        self.end_record()


def cut(link: Link, share_of: Callable[[str], int], own: bool, share: int) -> Link | None:
    """What of `link` (a file's) page share `share` reads: the definitions of its files (`share_of`: a file's
    page share) that the file names, its classes' bases, its mentions when `own` (the file is one of the
    share's). None: nothing."""
    out = {key: lines for key, lines in link.out.items() if share_of(key[0]) == share}
    mentioned = link.mentioned if own else {}
    if not (out or link.bases or mentioned):
        return None
    return Link(out, link.bases, mentioned, ())


def has_links(folder: Path, pages: Share) -> bool:
    """`folder` holds link records for page share `pages` (not a graph job's answers)."""
    return any(folder.glob(f"links-for-{pages[0]}-of-{pages[1]}-from-*-of-*.jsonl.gz"))


def read_links(folders: Sequence[Path], pages: Share, tree: Tree, inputs: str) -> dict[str, Link]:
    """rel -> its link as page share `pages` reads it, from every link job's records for it in `folders`,
    checked against this run (version, tree, inputs, one file of each link share). ShardError naming the
    file when one is missing, of another run, duplicated or damaged."""
    found: dict[int, Path] = {}
    n = 0
    for folder in folders:
        for path in sorted(folder.glob(f"links-for-{pages[0]}-of-{pages[1]}-from-*-of-*.jsonl.gz")):
            header = _header(path, pages, tree, inputs)
            k, its_n = header["link"]
            if n and its_n != n:
                raise ShardError(f"{path}: made by link job {k}/{its_n}, but {found[min(found)]} by one of {n}")
            n = its_n
            if k in found:
                raise ShardError(f"{found[k]} and {path} are both of link job {k}/{n}")
            found[k] = path
    if not n:
        raise ShardError(f"{folders[0] if len(folders) == 1 else ', '.join(map(str, folders))}: no link records for "
                         f"page share {pages[0]}/{pages[1]} (run `repodoc graph --link K/N --pages {pages[1]}` and "
                         "give the output folder of each)")
    missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in found]
    if missing:
        raise ShardError(f"link job{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing: no "
                         f"{links_path(Path(), pages, (int(missing[0].split('/')[0]), n)).name} in "
                         f"{', '.join(map(str, folders))}")
    links: dict[str, Link] = {}
    for k in sorted(found):
        for rel, link in _records(found[k]):
            if rel in links:
                raise ShardError(f"{found[k]}: damaged link records: {rel!r} is linked by two jobs")
            links[rel] = link
    return links


def _lines(path: Path) -> Iterator[bytes]:
    try:
        with open(path, "rb") as raw:
            for _at, data in blocks(raw, MOST_BLOCK):
                yield from data.split(b"\n")[:-1]
    except FileNotFoundError:
        raise ShardError(f"{path}: missing") from None
    except (OSError, BlockError) as exc:
        raise ShardError(f"{path}: damaged link records: {exc}") from None


def _parse(line: bytes | None, path: Path) -> dict[str, Any]:
    return json_table(line or b"", lambda why: ShardError(f"{path}: damaged link records: {why}"))


def _header(path: Path, pages: Share, tree: Tree, inputs: str) -> dict[str, Any]:
    header = _parse(next(_lines(path), None), path)
    check_made_alike(header, path, "link records", FORMAT, FORMAT_VERSION)
    made, link = tree_from_json(header.get("tree")), header.get("link")
    if made is None or type(header.get("files")) is not int or not (isinstance(link, list) and len(link) == 2
                                                                      and all(type(x) is int for x in link)
                                                                      and 1 <= link[0] <= link[1]):
        raise ShardError(f"{path}: damaged link records: its header is of the wrong form")
    if why := tree.differs(made):
        raise ShardError(f"{path}: made from another tree: {why}")
    if header.get("pages") != list(pages):
        raise ShardError(f"{path}: the records of page share {header.get('pages')}, not of {list(pages)}")
    if header.get("inputs") != inputs:
        raise ShardError(f"{path}: made from other facts files or other file contents: give every graph job the "
                         "facts files the link jobs read, on the same checkout")
    return header


def _records(path: Path) -> Iterator[tuple[str, Link]]:
    lines = _lines(path)
    total = _parse(next(lines, None), path)["files"]
    count = 0
    for line in lines:
        value = _parse(line, path)
        if "end" in value:
            if value != {"end": total} or count != total or next(lines, None) is not None:
                raise ShardError(f"{path}: damaged link records: it ends after {count} of {total} files")
            return
        rel = value.get("file")
        try:
            link = decode_link(value.get("link"))
        except ValueError:
            link = None
        if not isinstance(rel, str) or link is None or set(value) != {"file", "link"}:
            raise ShardError(f"{path}: damaged link records: a file's line of the wrong form")
        count += 1
        yield rel, link
    raise ShardError(f"{path}: damaged link records: cut short after {count} of {total} files")
