"""The facts file: what an analysis job (`repodoc analyze --shard K/N`) hands to the page jobs.

Format (version 3; described in examples/README.md): JSON lines in UTF-8, gzip-compressed in blocks
(`members.py`: gzip members, each holding whole records; the header alone in the first), data only (a
shard file is untrusted input: nothing in it is run or unpickled, every value is checked against the
facts model on load, and a line longer than MAX_LINE is refused unread).

    {"format": "repodoc-facts", "version": 2, "repodoc": "0.1.0", "analysis": "0.1.0-12",
     "sketches": "<what a sketch is made by>",
     "tree": {"root": "proj", "files": 1234, "paths": "<blake2b of the input paths>"},
     "shard": [2, 3], "files": 411}                                  <- the header
    {"path": "pkg/a.py", "digest": "<blake2b of its bytes>", "size": 120, "pages": true,
     "imports": [...], "sketch": [...]}                              <- a file analysed, then
    {"language": "python", ...}                                      <- its facts, the next line
    {"path": "img/x.svg", "digest": "...", "size": 9, "skipped": "not text (...)"}
    {"path": "locked.py", "skipped": "unreadable: Permission denied"}
    {"index": [["pkg/a.py", "<digest>", 120, true, true, 1234], ["img/x.svg", "<digest>", 9, "not text (...)"],
               ...]}                                                  <- every file's index row, in order
    {"end": 411, "index": 56789}                                      <- a file cut short has none

The index (`index_row`) says of every file what its first line says but its imports and sketch: its path,
digest, size, and whether it has pages and a sketch and where its block starts, or why it is skipped; the
end line, alone in a block stored uncompressed and padded to TAIL bytes, says where the index starts. A page
job reads every file's row there and the blocks of its own files only (`FactsReader.indexed`): every other
block is read by the page job of its files' folders, each of which checks its files' lines against their rows.

A file's facts are the facts model as the analysis cache stores it (`store/cache.py`'s `encode`); the
line before them says what a page share needs of every file without reading its facts: whether it has
pages of its own (`render/own_pages.py`), its imports, and the symbol graph's sketch of it
(`store/sketches.py`'s form; null for a file of no graph). `tree` names the checkout: the root
folder's name, how many inputs discovery found and a digest of their paths (the settings that choose
inputs are in it); `analysis` is the analysis cache's version (with the `blank_macros` setting's tag),
which facts depend on; `sketches` what the sketches depend on besides (the renderer's page-splitting rule).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import stat
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from repodoc_lsp import __version__
from repodoc_lsp.analysis.model import FileFacts, Import, Language
from repodoc_lsp.analysis.treesitter import blank_macros_variant
from repodoc_lsp.knowledge.views import Sketch, sketch_of
from repodoc_lsp.render.own_pages import has_pages
from repodoc_lsp.render.parts import definition_parts
from repodoc_lsp.render.stamp import render_stamp
from repodoc_lsp.shard.members import BLOCK, BlockError, BlockWriter, block_at, blocks, compact_json, json_table
from repodoc_lsp.store import sketches
from repodoc_lsp.store.cache import ANALYSIS_VERSION, encode, structure_facts, structure_imports

FORMAT = "repodoc-facts"
FORMAT_VERSION = 3
MAX_LINE = 64 << 20  # a line (one file's facts) longer than this is damage, never read whole
MOST_BLOCK = BLOCK + 2 * MAX_LINE + 2  # a block holds whole records: what it inflates to at most
INDEX_LINE = 1024  # files of an index line
Share = tuple[int, int]


class ShardError(Exception):
    """A shard (facts file or page folder) that cannot be used; the message names it and says why."""


@dataclass(frozen=True, slots=True)
class Tree:
    """The checkout a shard was made from."""

    root: str  # the root folder's name
    files: int  # inputs found by discovery
    paths: str  # digest of their paths

    def as_json(self) -> dict[str, Any]:
        return {"root": self.root, "files": self.files, "paths": self.paths}

    def differs(self, other: Tree) -> str:
        """Why `other` is not this tree ("" when it is)."""
        if other.root != self.root:
            return f"its root folder is {other.root!r}, this one is {self.root!r}"
        if other.files != self.files:
            return f"it has {other.files} input files, this one {self.files}"
        if other.paths != self.paths:
            return "its input paths differ (another commit, or other include/exclude settings)"
        return ""


def tree_of(root: Path, files: Sequence[str]) -> Tree:
    """The tree of the inputs `files` (discovery's list, sorted) under `root`."""
    h = hashlib.blake2b(digest_size=20)
    for rel in files:
        h.update(rel.encode("utf-8", "surrogatepass") + b"\x00")
    return Tree(root.resolve().name, len(files), h.hexdigest())


def tree_from_json(value: object) -> Tree | None:
    if not isinstance(value, dict) or set(value) != {"root", "files", "paths"}:
        return None
    root, files, paths = value["root"], value["files"], value["paths"]
    if not (isinstance(root, str) and type(files) is int and isinstance(paths, str)):
        return None
    return Tree(root, files, paths)


def analysis_version() -> str:
    """What facts depend on besides the file: the analysis version and the `blank_macros` setting."""
    return ANALYSIS_VERSION + blank_macros_variant()


def sketch_stamp() -> str:
    """What a file's sketch depends on besides its facts: the renderer (its page-splitting rule)."""
    return f"{render_stamp()} {definition_parts.__module__}.{definition_parts.__qualname__}"


def check_made_alike(header: dict[str, Any], name: object, what: str, fmt: str, version: int) -> None:
    """ShardError naming `name` unless `header` (of a file of `what`, e.g. "graph answers") is of format
    `fmt` in `version`, made by this repodoc with this analysis and renderer."""
    if header.get("format") != fmt:
        raise ShardError(f"{name}: not a repodoc {what} file")
    if header.get("version") != version:
        raise ShardError(f"{name}: {what} format version {header.get('version')!r}, this repodoc reads "
                         f"version {version}")
    if header.get("repodoc") != __version__:
        raise ShardError(f"{name}: made by repodoc {header.get('repodoc')}, this is {__version__}: every job must "
                         "run the same version")
    if header.get("analysis") != analysis_version() or header.get("sketches") != sketch_stamp():
        raise ShardError(f"{name}: made with another analysis or renderer: every job must run the same repodoc "
                         "with the same settings")


@dataclass(frozen=True, slots=True)
class Header:
    repodoc: str
    analysis: str
    tree: Tree
    shard: Share
    files: int
    sketches: str = ""


@dataclass(frozen=True, slots=True)
class Record:
    """One input of the shard: its facts, or why it is skipped (no digest: it could not be read).
    Read back, a file analysed also says whether it has pages, its imports and its graph sketch; its
    facts are None when they were not read (`at`: where its block starts in its facts file)."""

    path: str
    digest: str = ""
    size: int = 0
    facts: FileFacts | None = None
    skipped: str = ""
    pages: bool = False
    imports: tuple[Import, ...] = ()
    sketch: Sketch | None = None
    at: int = -1
    sketched: bool = False  # it has a sketch (decoded or not)

    @property
    def analysed(self) -> bool:
        """The file has facts (held here, or left in its facts file)."""
        return self.facts is not None or self.at >= 0


_json = compact_json


def facts_from_json(value: object) -> FileFacts:
    """The facts `encode` wrote as JSON (parsed); ValueError when `value` is not exactly that."""
    if not isinstance(value, dict):
        raise ValueError("facts are not a table")
    try:
        return structure_facts(value)
    except Exception as exc:  # any way the data does not fit the model
        raise ValueError(f"facts of the wrong form ({type(exc).__name__})") from None


class FactsWriter(BlockWriter):
    """Writes a facts file: `add` each record, then `close`; the file appears whole (renamed into
    place) only then, and a writer left unclosed (a failure) leaves nothing behind."""

    def __init__(self, path: Path, tree: Tree, shard: Share, files: int) -> None:
        super().__init__(path, {"format": FORMAT, "version": FORMAT_VERSION, "repodoc": __version__,
                                "analysis": analysis_version(), "sketches": sketch_stamp(), "tree": tree.as_json(),
                                "shard": list(shard), "files": files}, header_alone=True)
        self._rows: list[list[Any]] = []  # each file's index row (`index_row`)

    def add(self, record: Record) -> None:
        at = self._raw.tell()  # the lines held and this record's are written as the block that starts here
        value: dict[str, Any] = {"path": record.path}
        if record.digest:
            value.update(digest=record.digest, size=record.size)
        if record.facts is None:
            value["skipped"] = record.skipped
            self.line(_json(value))
        else:
            facts = record.facts
            row = encode(facts)
            sketch = sketch_of(facts, definition_parts(facts)) if facts.language is Language.PYTHON else None
            record = replace(record, pages=has_pages(facts), sketched=sketch is not None)
            value["pages"] = record.pages
            head = _json(value)[:-1]
            self.line(f'{head},"imports":{row.imports},"sketch":{_json(sketch and sketches.encode(sketch))}}}')
            self.line(row.data)
        self._rows.append(index_row(record if record.digest else replace(record, size=0),  # (as its line says)
                                    None if record.facts is None else at))
        self.end_record()

    def close(self) -> None:
        """The index after the records, then the end line saying where it starts, alone in a block of TAIL
        bytes (`_tail`: a reader finds it from the file's end); the file renamed into place."""
        self._block()
        at = self._raw.tell()
        for start in range(0, len(self._rows), INDEX_LINE):
            self.line(_json({"index": self._rows[start:start + INDEX_LINE]}))
            self.end_record(counted=False)
        self._block()
        self._raw.write(_tail(self.count, at))
        self._raw.close()
        os.replace(self._temp, self.path)


def index_row(record: Record, at: int | None) -> list[Any]:
    """A file's row in the index: what its first line says but its imports and sketch, and `at`, where its
    block starts (a file analysed); or (`at` None) why it is skipped."""
    if at is None:
        return [record.path, record.digest, record.size, record.skipped]
    return [record.path, record.digest, record.size, record.pages, record.sketched, at]


_TAIL_LINE = 64  # bytes of the end line, padded with spaces


def _tail(count: int, at: int) -> bytes:
    """The end line (`count` files, the index at `at`) as a gzip member stored uncompressed: TAIL bytes."""
    line = _json({"end": count, "index": at}).encode().ljust(_TAIL_LINE - 1) + b"\n"
    return gzip.compress(line, compresslevel=0, mtime=0)


TAIL = len(_tail(0, 0))  # the same for every end line


class FactsReader:
    """A facts file read: `header` on opening, then `records()`; every damage is a ShardError naming
    the file (and its shard, once known)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = str(path)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise ShardError(f"{path}: not a file")
            self._raw: BinaryIO = open(path, "rb")  # noqa: SIM115 (closed by `close`)
        except OSError as exc:
            raise ShardError(f"{path}: cannot read the facts file: {exc.strerror or exc}") from None
        self._lines = self._all_lines()
        first = next(self._lines, None)
        if first is None:
            raise self.damaged("empty")
        self.header = self._header(self.parse(first[1]))
        self.name = f"{path} (shard {self.header.shard[0]}/{self.header.shard[1]})"

    def damaged(self, why: str) -> ShardError:
        return ShardError(f"{self.name}: damaged facts file: {why}")

    def _all_lines(self) -> Iterator[tuple[int, bytes]]:
        """(offset of its block, line) of each line, in order."""
        try:
            for at, data in blocks(self._raw, MOST_BLOCK):
                yield from ((at, line) for line in self.lines_of(data))
        except (OSError, BlockError) as exc:
            raise self.damaged(str(exc) or type(exc).__name__) from None

    def lines_of(self, data: bytes) -> list[bytes]:
        """The lines of one block (whole lines: a block ends at a line's end)."""
        if not data.endswith(b"\n"):
            raise self.damaged("a block is cut short inside a line")
        lines = data.split(b"\n")
        lines.pop()
        if any(len(line) > MAX_LINE for line in lines):
            raise self.damaged("a line is longer than a file's facts can be")
        return lines

    def parse(self, line: bytes) -> dict[str, Any]:
        return json_table(line, self.damaged)

    def _header(self, value: dict[str, Any]) -> Header:
        if value.get("format") != FORMAT:
            raise ShardError(f"{self.path}: not a repodoc facts file")
        if value.get("version") != FORMAT_VERSION:
            raise ShardError(f"{self.path}: facts file format version {value.get('version')!r}, "
                             f"this repodoc reads version {FORMAT_VERSION}")
        repodoc, analysis, shard, files, made = (value.get(k) for k in ("repodoc", "analysis", "shard", "files",
                                                                        "sketches"))
        tree = tree_from_json(value.get("tree"))
        if not (isinstance(repodoc, str) and isinstance(analysis, str) and tree is not None and type(files) is int
                and isinstance(made, str) and isinstance(shard, list) and len(shard) == 2
                and all(type(x) is int for x in shard) and 1 <= shard[0] <= shard[1]):
            raise self.damaged("its header is of the wrong form")
        return Header(repodoc, analysis, tree, (shard[0], shard[1]), files, made)

    def records(self, wanted: Callable[[str], bool] = lambda _path: True, *, light: bool = False,
                with_sketch: bool = True, light_others: bool = False) -> Iterator[Record]:
        """Each record, checked, with its facts when `wanted(path)` (else `at`: where its block starts);
        a ShardError at the first damage, or when the file ends early or its index does not say what its
        records say. `light`: neither imports nor sketch decoded (a check that needs the digests alone);
        `with_sketch` False: no sketch decoded (a page job given the graph's answers); `light_others`: the
        records not `wanted` read as `light`."""
        count = 0
        lines = self._lines
        rows = hashlib.blake2b(digest_size=20)  # every record's index row, as its lines say
        while (line := next(lines, None)) is not None:
            value = self.parse(line[1])
            if "index" in value or "end" in value:
                self._check_index(value, count, rows.digest())
                return
            path = value.get("path")
            lite = light or (light_others and not (isinstance(path, str) and wanted(path)))
            record = self.record(value, lite, with_sketch)
            if "pages" in value:  # its facts follow
                facts = next(lines, None)
                if facts is None or facts[0] != line[0]:
                    raise self.damaged(f"{record.path}: its facts are not in its block")
                record = self.with_facts(record, facts[1]) if wanted(record.path) and not lite \
                    else _at(record, line[0])
            rows.update(_json(index_row(record, line[0] if "pages" in value else None)).encode())
            yield record
            count += 1
        raise self.damaged(f"cut short: no end after {count} of its {self.header.files} files")

    def _check_index(self, value: dict[str, Any], count: int, rows: bytes) -> None:
        """The index lines from `value` on and the end line, after `count` records whose index rows have the
        digest `rows`: ShardError unless they say the same, and nothing follows."""
        if count != self.header.files:
            raise self.damaged(f"it ends after {count} of {self.header.files} files")
        index = hashlib.blake2b(digest_size=20)
        while "end" not in value:
            for row in self._index_line(value):
                index.update(_json(index_row(row, row.at if row.at >= 0 else None)).encode())
            line = next(self._lines, None)
            if line is None:
                raise self.damaged(f"cut short: no end after {count} of its {self.header.files} files")
            value = self.parse(line[1])
        if set(value) != {"end", "index"} or value["end"] != count:
            raise self.damaged(f"it ends after {count} of {self.header.files} files")
        if index.digest() != rows:
            raise self.damaged("its index does not say what its records say")
        if next(self._lines, None) is not None:
            raise self.damaged("lines after its end")

    def indexed(self, wanted: Callable[[str], bool], *, with_sketch: bool = True) -> Iterator[Record]:
        """Each record as its index row says it (as `records(light=True)` reads it: neither imports nor
        sketch), but those `wanted`, read from their blocks with their facts, imports and (`with_sketch`)
        sketch, each checked against its row; the blocks of the other files are not read (each is checked by
        the page job of its files' folders). A ShardError when the index or a block read is damaged."""
        read: dict[str, Record] = {}
        try:
            with open(self.path, "rb") as raw:
                index = self._index(raw)
                by_block: dict[int, list[Record]] = defaultdict(list)
                for record in index:
                    if record.at >= 0 and wanted(record.path):
                        by_block[record.at].append(record)
                for at, rows in by_block.items():
                    read.update(self._from_block(block_at(raw, at, MOST_BLOCK), rows, with_sketch))
        except (OSError, BlockError) as exc:
            raise self.damaged(str(exc) or type(exc).__name__) from None
        for record in index:
            yield read.get(record.path, record)

    def _index(self, raw: BinaryIO) -> list[Record]:
        """Every file's record as the index says (`index_row`), found from the end line (`_tail`)."""
        end_at = os.fstat(raw.fileno()).st_size - TAIL
        if end_at <= 0:
            raise self.damaged("cut short: no end")
        value = self.parse(block_at(raw, end_at, _TAIL_LINE))
        at = value.get("index")
        if set(value) != {"end", "index"} or value["end"] != self.header.files or type(at) is not int \
                or not 0 < at <= end_at:
            raise self.damaged(f"its end does not say where the index of its {self.header.files} files is")
        found: list[Record] = []
        offset = at
        for offset, data in blocks(raw, MOST_BLOCK, at):
            if offset >= end_at:
                break
            for line in self.lines_of(data):
                found.extend(self._index_line(self.parse(line)))
        if offset != end_at or len(found) != self.header.files:
            raise self.damaged(f"its index does not hold its {self.header.files} files")
        return found

    def _index_line(self, value: dict[str, Any]) -> list[Record]:
        rows = value.get("index")
        if set(value) != {"index"} or not isinstance(rows, list):
            raise self.damaged("a line of its index is of the wrong form")
        return [self._row(row) for row in rows]

    def _row(self, row: object) -> Record:
        """The record an index row says (`index_row`); ShardError when it is of another form."""
        if isinstance(row, list) and len(row) == 6:
            path, key, size, pages, sketched, at = row
            if isinstance(path, str) and isinstance(key, str) and key and type(size) is int and size >= 0 \
                    and type(pages) is bool and type(sketched) is bool and type(at) is int and at > 0:
                return Record(path, key, size, pages=pages, at=at, sketched=sketched)
        elif isinstance(row, list) and len(row) == 4:
            path, key, size, skipped = row
            if isinstance(path, str) and isinstance(key, str) and type(size) is int and size >= 0 \
                    and isinstance(skipped, str):
                return Record(path, key, size, None, skipped)
        raise self.damaged("a row of its index is of the wrong form")

    def _from_block(self, data: bytes, rows: list[Record], with_sketch: bool) -> dict[str, Record]:
        """path -> the record of each of `rows` (index rows of files analysed, all of this block), read from the
        block's lines `data` with its facts; ShardError when one is not there or not what its row says."""
        lines = self.lines_of(data)
        found: dict[str, Record] = {}
        for row in rows:
            head = head_of(row.path)
            i = next((i for i, line in enumerate(lines) if line.startswith(head)), len(lines))
            if i + 1 >= len(lines):
                raise self.damaged(f"{row.path}: not in the block its index row names")
            record = self.record(self.parse(lines[i]), with_sketch=with_sketch)
            if index_row(record, row.at) != index_row(row, row.at):
                raise self.damaged(f"{row.path}: its index row does not say what its record says")
            found[row.path] = self.with_facts(record, lines[i + 1])
        return found

    def record(self, value: dict[str, Any], light: bool = False, with_sketch: bool = True) -> Record:
        """The record of a file's first line, without its facts (`light`: nor its imports and sketch;
        `with_sketch` False: nor its sketch)."""
        path, key, size = value.get("path"), value.get("digest", ""), value.get("size", 0)
        if not (isinstance(path, str) and isinstance(key, str) and type(size) is int and size >= 0):
            raise self.damaged("a file's record is of the wrong form")
        if "pages" in value:
            if set(value) != {"path", "digest", "size", "pages", "imports", "sketch"} or not key \
                    or type(value["pages"]) is not bool:
                raise self.damaged(f"{path}: a record of the wrong form")
            if light:
                return Record(path, key, size, pages=value["pages"], sketched=value["sketch"] is not None)
            try:
                imports = structure_imports(value["imports"])
                sketch = None if value["sketch"] is None or not with_sketch else sketches.decode(value["sketch"])
            except Exception:  # any way the data does not fit the model
                raise self.damaged(f"{path}: its imports or its sketch are of the wrong form") from None
            return Record(path, key, size, pages=value["pages"], imports=imports, sketch=sketch,
                          sketched=value["sketch"] is not None)
        skipped = value.get("skipped")
        if not isinstance(skipped, str) or not set(value) <= {"path", "digest", "size", "skipped"}:
            raise self.damaged(f"{path}: a record of the wrong form")
        return Record(path, key, size, None, skipped)

    def with_facts(self, record: Record, line: bytes) -> Record:
        """`record` with the facts of its facts line."""
        try:
            facts = facts_from_json(self.parse(line))
        except ValueError as exc:
            raise self.damaged(f"{record.path}: {exc}") from None
        return replace(record, facts=facts)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._raw.close()


def _at(record: Record, at: int) -> Record:
    return replace(record, at=at)


def head_of(path: str) -> bytes:
    """How a file's first line in a facts file starts: `{"path":"<its path>",` (as the writer writes it)."""
    return (json.dumps({"path": path}, ensure_ascii=False, separators=(",", ":"))[:-1] + ",").encode(
        "utf-8", "surrogatepass")
