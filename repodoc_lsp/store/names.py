"""What `repodoc check` reads of every file, as its last check left it: each file's definitions by name
(`knowledge.index.Entry` rows, its module's entry aside), the names its module assigns and its imports,
kept in one file per workspace in the cache folder. A check after an edit (`--staged`, `--since`) reads it
instead of loading every file's facts (and imports) from the facts cache.

Data only (gzip-compressed JSON, `kept`), versioned, stamped with the analysis the facts are made by, read
up to a bound. Every value is checked: a damaged, foreign or forged file, or one of another version or
stamp, is ignored (every file's facts are read, as without it); a file's rows are used only for the
content digest they were made of. Strings are kept a column a field, joined by line breaks, and numbers
as lists checked into arrays: checked at C speed (checking each field in Python was most of a read).
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from sys import intern
from typing import Any, NamedTuple

from repodoc_lsp.analysis.model import Import
from repodoc_lsp.knowledge.index import Entry
from repodoc_lsp.store import kept
from repodoc_lsp.store.scan import Stat, as_stat

VERSION = 3
# a column's strings are joined by a character JSON writes as it is (line breaks, escaped, made the file's
# JSON half again as slow to read)
SEP = "|"
_DEFAULT = "="  # an anchor made of its entry's kind and qualified name (`function-Class.name`): most are
_SAME = "="  # an import's local names are the names it takes (one tuple for both: decoding it twice was a fifth)
FOLDER = "checks"  # inside the facts cache folder
MAX_BYTES = 256 << 20  # inflated past this the file is ignored (about 2 KB a Python file: 100,000 files)


class Details(NamedTuple):
    """The columns of a file's entries beside their names, made into an entry only when one is asked for."""

    kinds: list[str]
    containers: list[str]
    anchors: list[str]
    lines: array[int]
    cols: array[int]
    ends: array[int]


@dataclass(slots=True)
class FileNames:
    """One file's entries, a column a field (its module's entry aside: it depends on the other files), the
    names its module assigns at its top level, the words of its docstrings (each run of word characters,
    once, between spaces: what a check after an edit looks for without reading the file) and the dotted
    names its code spells as strings. An entry is made when asked for (`entry`)."""

    names: list[str]
    assigned: tuple[str, ...]
    words: str
    strings: tuple[str, ...]
    # the other columns, or as the table has them (checked: kinds, containers and anchors joined by line
    # breaks, then each entry's line, column and last line, joined by commas), split when first used
    detail: Details | tuple[str, str, str, str]

    @classmethod
    def of(cls, entries: list[Entry], assigned: tuple[str, ...], words: str, strings: tuple[str, ...]) -> FileNames:
        return cls([e.name for e in entries], assigned, words, strings, Details(
            [e.kind for e in entries], [e.container for e in entries], [e.anchor for e in entries],
            array("i", [e.line for e in entries]), array("i", [e.col for e in entries]),
            array("i", [e.end_line for e in entries])))

    def details(self) -> Details:
        """The columns beside the names, split from the table's text on first use (a check after an edit
        makes the entries of few files: splitting every file's was a sixth of reading the table)."""
        detail = self.detail
        if isinstance(detail, Details):
            return detail
        kinds, containers, anchors, positions = detail
        n = len(self.names)
        numbers = array("i", map(int, positions.split(","))) if n else array("i")
        kinds_, containers_ = _split(kinds, n), _split(containers, n)
        anchors_ = [_anchor(*row) if a == _DEFAULT else a
                    for *row, a in zip(kinds_, containers_, self.names, _split(anchors, n), strict=True)]
        self.detail = found = Details(kinds_, containers_, anchors_, numbers[0::3], numbers[1::3], numbers[2::3])
        return found

    def entry(self, rel: str, i: int) -> Entry:
        d = self.details()
        return Entry(intern(self.names[i]), d.kinds[i], intern(d.containers[i]), rel, d.lines[i], d.cols[i],
                     d.ends[i], d.anchors[i])


def table_path(cache: Path, root: Path) -> Path:
    """The kept names of the workspace at `root`, in the cache folder `cache`."""
    name = hashlib.blake2b(root.as_posix().encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return cache / FOLDER / f"{name}.json.gz"


def _anchor(kind: str, container: str, name: str) -> str:
    return f"{kind}-{container}.{name}" if container else f"{kind}-{name}"


def _joined(values: list[str], *, sep: str = SEP) -> str | None:
    """`values` joined by `sep`; None when one holds it (or SEP): it would not split back."""
    if any(sep in v or SEP in v for v in values):
        return None
    return sep.join(values)


def _split(text: Any, n: int, sep: str = SEP) -> list[str]:
    if type(text) is not str:
        raise ValueError("not a column")
    found = text.split(sep) if n else []
    if len(found) != n or (not n and text):
        raise ValueError("a column of another length")
    return found


def _numbers(values: Any, n: int, code: str = "i") -> array[int]:
    found = array(code, values)  # a value that is no 32-bit (or 8-bit) int raises
    if len(found) != n:
        raise ValueError("a column of another length")
    return found


_POSITIONS = re.compile(r"-?[0-9]{1,9}(?:,-?[0-9]{1,9})*")  # 32-bit ints, as `details` reads them


def _column(text: Any, n: int) -> str:
    """A column of `n` strings joined by SEP, checked as `_split` would find it."""
    if type(text) is not str or (text.count(SEP) + 1 if n else int(bool(text))) != n:
        raise ValueError("a column of another length")
    return text


def _positions(text: Any, n: int) -> str:
    """The line, column and last line of `n` entries, joined by commas, checked as `details` reads them."""
    if type(text) is not str or (text.count(",") + 1 if text else 0) != 3 * n \
            or (n and not _POSITIONS.fullmatch(text)):
        raise ValueError("positions of another form")
    return text


def encode_names(names: FileNames) -> list[Any] | None:
    texts = [_joined(names.names), _joined(list(names.assigned)), _joined(list(names.strings))]
    d = names.detail
    if isinstance(d, Details):
        numbers = [str(n) for row in zip(d.lines, d.cols, d.ends, strict=True) for n in row]
        if _DEFAULT in d.anchors:
            return None  # an anchor of that text would read back as its default
        rows = zip(d.kinds, d.containers, names.names, d.anchors, strict=True)
        anchors = [_DEFAULT if a == _anchor(*row) else a for *row, a in rows]
        texts += [_joined(d.kinds), _joined(d.containers), _joined(anchors), ",".join(numbers)]
    else:
        texts += d
    if any(t is None for t in texts) or "\n" in names.words:
        return None
    return [*texts[:3], len(names.assigned), len(names.strings), names.words, *texts[3:]]


def decode_names(raw: Any) -> FileNames:
    """The names `encode_names` wrote; ValueError (TypeError) when `raw` is not that."""
    if not (isinstance(raw, list) and len(raw) == 10 and type(raw[0]) is str and type(raw[3]) is int
            and type(raw[4]) is int and type(raw[5]) is str):
        raise ValueError("not a file's names")
    names = raw[0].split(SEP) if raw[0] else []
    n = len(names)
    detail = (_column(raw[6], n), _column(raw[7], n), _column(raw[8], n), _positions(raw[9], n))
    return FileNames(names, tuple(_split(raw[1], raw[3])), raw[5], tuple(_split(raw[2], raw[4])), detail)


def encode_imports(imports: tuple[Import, ...]) -> list[Any] | None:
    texts = [_joined([i.module for i in imports]), _joined([i.anchor for i in imports])]
    lists = [[_joined(list(i.names), sep=",") for i in imports],
             [_SAME if i.asnames == i.names and i.names else _joined(list(i.asnames), sep=",") for i in imports]]
    if any(t is None for t in texts) or any(v is None for names in lists for v in names):
        return None
    return [*texts, *(SEP.join(v for v in names if v is not None) for names in lists),
            [i.line for i in imports], [i.level for i in imports], [int(i.star) for i in imports]]


def decode_imports(raw: Any) -> tuple[Import, ...]:
    """The imports `encode_imports` wrote; ValueError (TypeError, OverflowError) when `raw` is not that."""
    if not (isinstance(raw, list) and len(raw) == 7 and isinstance(raw[4], list)):
        raise ValueError("not a file's imports")
    n = len(raw[4])
    modules, anchors, names, asnames = (_split(t, n) for t in raw[:4])
    lines, levels, stars = _numbers(raw[4], n), _numbers(raw[5], n), _numbers(raw[6], n, "b")
    return tuple(Import(intern(m), (got := _tuple(ns)), line, level, intern(a), got if asn == _SAME else _tuple(asn),
                        bool(star))
                 for m, ns, line, level, a, asn, star in zip(modules, names, lines, levels, anchors, asnames, stars,
                                                            strict=True))


def _tuple(names: str) -> tuple[str, ...]:
    return tuple(map(intern, names.split(","))) if names else ()


@dataclass(frozen=True, slots=True)
class Row:
    """What the table holds of one file: the digest of the content it was made of, its names and imports,
    and the file's stat when its scan read it (`Stat`: size, modification and status change times, inode)."""

    key: str
    names: FileNames
    imports: tuple[Import, ...]
    stat: Stat


@dataclass(frozen=True, slots=True)
class Table:
    """The rows of the files, and when the scan that read them began (`time.time_ns()`)."""

    rows: dict[str, Row]
    began: int = 0


def held(saved: Mapping[str, Any]) -> Table:
    """The rows `saved` (as `load` read it) holds of each file that decode, all parts (what does not is left
    out: its facts are read instead). Strings of imports are interned."""
    found: dict[str, Row] = {}
    files, began = saved.get("files"), saved.get("began")
    if not isinstance(files, dict) or type(began) is not int:
        return Table({})
    for rel, entry in files.items():
        if isinstance(entry, list) and len(entry) == 4 and type(entry[0]) is str:
            try:
                found[rel] = Row(entry[0], decode_names(entry[1]), decode_imports(entry[2]), _stat(entry[3]))
            except (ValueError, TypeError, OverflowError):
                continue
    return Table(found, began)


def _stat(raw: Any) -> Stat:
    if (stat := as_stat(raw)) is None:
        raise ValueError("not a stat")
    return stat


def load(path: Path, stamp: str) -> dict[str, Any]:
    """The table as written (its rows checked by `held`); empty when the file is missing, unreadable, too
    large, of another version or stamp, or not of that form."""
    data = kept.read(path, MAX_BYTES)
    if not isinstance(data, dict) or data.get("version") != VERSION or data.get("stamp") != stamp:
        return {}
    return data


def save(path: Path, stamp: str, table: Table) -> None:
    """Record the table atomically; a failure (a read-only cache folder) only means the next check reads
    every file's facts."""
    rows = {rel: [row.key, names, imports, list(row.stat)] for rel, row in table.rows.items()
            if (names := encode_names(row.names)) is not None and (imports := encode_imports(row.imports)) is not None}
    kept.write(path, {"version": VERSION, "stamp": stamp, "began": table.began, "files": rows}, level=1)
