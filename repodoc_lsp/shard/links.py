"""What a link job (`repodoc graph --link K/N --pages M`, `graph_job.py`) found, for each page share: the
symbol graph of a tree too large for one machine is linked by N jobs, each linking the files of its share
(whole folders, as page shares are: `graph_job.link_shares`), and answered by M page-share jobs (`repodoc
graph --pages J/M --links DIR...`), each taking, from every link job, the records written for its share.

A record is what linking one file kept (`knowledge.linking.Link`, `store/sketches.encode_link`'s form),
cut to one page share J: the definitions of J's files it names (with the lines), its classes' workspace
bases (every share's records hold them: a share's pages list members inherited across shares), and, when
the file is one of J's, what its docstrings mention; and who imports whom, which a page job otherwise
learns by decoding every file's imports: the files of J each file imports (a page lists its file's
importers and tests), and how many of K's files import each file not of J (a folder's index and llms.txt
rank the most imported; K's counts added up over every link job are the whole tree's: each file is of one
link share). The file of link share K for page share J (`links-for-J-of-M-from-K-of-N.jsonl.gz`; format
version 3: version 2's link shares were the analysis split's), in blocks as `members.py` writes them:

    {"format": "repodoc-links", "version": 3, "repodoc": "0.1.0", "analysis": "...", "sketches": "...",
     "tree": {...}, "pages": [J, M], "link": [K, N], "inputs": "<as answers.py's>", "files": 120,
     "counted": 300}
    {"file": "pkg/a.py", "link": [<what it names, by file>, <bases>, <mentions>, []] or null,
     "imports": ["pkg/b.py", ...]}                           <- each file with a link or imports of J's
    {"counts": [["pkg/c.py", 3], ...]}                       <- up to COUNTS_LINE files a line, 300 in all
    {"end": 120}
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repodoc_lsp import __version__
from repodoc_lsp.analysis.relations import Relations
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
from repodoc_lsp.shard.share_facts import ShareFacts
from repodoc_lsp.store.sketches import decode_link, encode_link

FORMAT = "repodoc-links"
FORMAT_VERSION = 3  # 2: a link share was the analysis split's files (`split.file_share`), not whole folders
COUNTS_LINE = 1024  # files of a counts line


_NAME = "links-for-{}-of-{}-from-{}-of-{}.jsonl.gz"  # page share J of M, from link share K of N


def links_path(folder: Path, pages: Share, link: Share) -> Path:
    """Where link job `link` writes its records for page share `pages` in its output `folder`."""
    return folder / _NAME.format(*pages, *link)


class LinksWriter(BlockWriter):
    """One link job's records for one page share: `add` each file's, then `close`."""

    def __init__(self, path: Path, tree: Tree, pages: Share, link: Share, inputs: str, files: int,
                 counted: int) -> None:
        super().__init__(path, {"format": FORMAT, "version": FORMAT_VERSION, "repodoc": __version__,
                                "analysis": analysis_version(), "sketches": sketch_stamp(), "tree": tree.as_json(),
                                "pages": list(pages), "link": list(link), "inputs": inputs, "files": files,
                                "counted": counted})

    def add(self, rel: str, link: Link | None, imports: Sequence[str]) -> None:
        """`rel`'s link as the share reads it (`cut`), and the share's files it imports."""
        self.line(compact_json({"file": rel, "link": link and encode_link(link), "imports": list(imports)}))
        self.end_record()

    def counts(self, counted: Sequence[tuple[str, int]]) -> None:
        """How many of the link share's files import each of `counted`'s files (none of the page share's)."""
        for at in range(0, len(counted), COUNTS_LINE):
            self.line(compact_json({"counts": counted[at:at + COUNTS_LINE]}))
            self.end_record(counted=False)  # the end line counts the files' lines


@dataclass
class Records:
    """What a page share reads of every link job's records: each file's link; who imports each of its files;
    how many files import each other file (`Relations.importer_count`)."""

    links: dict[str, Link] = field(default_factory=dict)
    importers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    counts: Counter[str] = field(default_factory=Counter)

    def take_links(self) -> dict[str, Link]:
        """`links`, no longer held here (the graph made of them holds what it keeps: 4 MB more at the peak of
        a page job of the bench's tree when they were held through it)."""
        links, self.links = self.links, {}
        return links


def imported(facts: ShareFacts, relations: Relations, files: Iterable[str]) -> dict[str, set[str]]:
    """file -> the other files it imports (as `Relations` resolves its imports), of each of `files` (a link
    job's: their imports read again from their facts files, one file at a time)."""
    found: dict[str, set[str]] = {}
    for rel in files:
        targets = {target for imp in facts.imports_of(rel) for target, _name in relations.resolve(rel, imp)}
        targets.discard(rel)
        if targets:
            found[rel] = targets
    return found


def write_share(path: Path, writer_args: tuple[Tree, Share, Share, str], cuts: Mapping[str, Link],
                imports: Mapping[str, set[str]], share_of: Callable[[str], int]) -> None:
    """Page share `writer_args[1]`'s records of one link job at `path`: `cuts` (rel -> its `cut`), and of
    `imports` (a link share's file -> the files it imports) the share's files each imports, and how many
    import each other file."""
    share = writer_args[1][0]
    mine = {rel: sorted(t for t in targets if share_of(t) == share) for rel, targets in imports.items()}
    rows = sorted({*cuts, *(rel for rel, targets in mine.items() if targets)})
    counts = Counter(t for targets in imports.values() for t in targets if share_of(t) != share)
    writer = LinksWriter(path, *writer_args, len(rows), len(counts))
    try:
        for rel in rows:
            writer.add(rel, cuts.get(rel), mine.get(rel, ()))
        writer.counts(sorted(counts.items()))
        writer.close()
    except BaseException:
        writer.discard()
        raise


def cut(link: Link, share_of: Callable[[str], int], own: bool, share: int) -> Link | None:
    """What of `link` (a file's) page share `share` reads: the definitions of its files (`share_of`: a file's
    page share) that the file names, its classes' bases, its mentions when `own` (the file is one of the
    share's). None: nothing."""
    out = {key: lines for key, lines in link.out.items() if share_of(key[0]) == share}
    mentioned = link.mentioned if own else {}
    if not (out or link.bases or mentioned):
        return None
    return Link(out, link.bases, mentioned, ())


def _records_in(folder: Path, pages: Share) -> list[Path]:
    """The link records for page share `pages` in `folder` (every link job's, by `links_path`'s name)."""
    return sorted(folder.glob(_NAME.format(*pages, "*", "*")))


def has_links(folder: Path, pages: Share) -> bool:
    """`folder` holds link records for page share `pages` (not a graph job's answers)."""
    return bool(_records_in(folder, pages))


def read_links(folders: Sequence[Path], pages: Share, tree: Tree, inputs: str) -> dict[str, Link]:
    """rel -> its link as page share `pages` reads it (`read_records`)."""
    return read_records(folders, pages, tree, inputs).links


def read_records(folders: Sequence[Path], pages: Share, tree: Tree, inputs: str) -> Records:
    """What page share `pages` reads of every link job's records for it in `folders`, checked against this
    run (version, tree, inputs, one file of each link share). ShardError naming the file when one is
    missing, of another run, duplicated or damaged."""
    found: dict[int, Path] = {}
    n = 0
    for folder in folders:
        for path in _records_in(folder, pages):
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
    records = Records()
    for k in sorted(found):
        _read(found[k], records)
    return records


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
    counts_ok = type(header.get("files")) is int and type(header.get("counted")) is int
    if made is None or not counts_ok or not (isinstance(link, list) and len(link) == 2
                                             and all(type(x) is int for x in link) and 1 <= link[0] <= link[1]):
        raise ShardError(f"{path}: damaged link records: its header is of the wrong form")
    if why := tree.differs(made):
        raise ShardError(f"{path}: made from another tree: {why}")
    if header.get("pages") != list(pages):
        raise ShardError(f"{path}: the records of page share {header.get('pages')}, not of {list(pages)}")
    if header.get("inputs") != inputs:
        raise ShardError(f"{path}: made from other facts files or other file contents: give every graph job the "
                         "facts files the link jobs read, on the same checkout")
    return header


def _read(path: Path, records: Records) -> None:
    """The records of `path` added to `records`."""
    lines = _lines(path)
    header = _parse(next(lines, None), path)
    total, counted = header["files"], header["counted"]
    count = counts = 0
    for line in lines:
        value = _parse(line, path)
        if "end" in value:
            if value != {"end": total} or count != total or counts != counted or next(lines, None) is not None:
                raise ShardError(f"{path}: damaged link records: it ends after {count} of {total} files and "
                                 f"{counts} of {counted} counts")
            return
        if "counts" in value:
            counts += _add_counts(value, path, records.counts)
            continue
        rel, link, imports = value.get("file"), value.get("link"), value.get("imports")
        if counts or not isinstance(rel, str) or set(value) != {"file", "link", "imports"} \
                or not (isinstance(imports, list) and all(isinstance(t, str) for t in imports)):
            raise ShardError(f"{path}: damaged link records: a file's line of the wrong form")
        if link is not None:
            if rel in records.links:
                raise ShardError(f"{path}: damaged link records: {rel!r} is linked by two jobs")
            records.links[rel] = _link(link, path)
        for target in imports:
            records.importers[target].add(rel)
        count += 1
    raise ShardError(f"{path}: damaged link records: cut short after {count} of {total} files")


def _link(raw: object, path: Path) -> Link:
    try:
        return decode_link(raw)
    except ValueError:
        raise ShardError(f"{path}: damaged link records: a file's line of the wrong form") from None


def _add_counts(value: dict[str, Any], path: Path, counts: Counter[str]) -> int:
    """A counts line's counts added to `counts`; how many files it counts."""
    pairs = value["counts"]
    if set(value) != {"counts"} or not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and type(p[1]) is int and p[1] > 0
            for p in pairs):
        raise ShardError(f"{path}: damaged link records: a counts line of the wrong form")
    for target, n in pairs:
        counts[target] += n
    return len(pairs)
