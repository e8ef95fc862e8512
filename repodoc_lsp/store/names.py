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
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from sys import intern
from typing import Any

from repodoc_lsp.analysis.model import Import
from repodoc_lsp.knowledge.index import Entry
from repodoc_lsp.store import kept

VERSION = 1
_SAME = "="  # an import's local names are the names it takes (one tuple for both: decoding it twice was a fifth)
FOLDER = "checks"  # inside the facts cache folder
MAX_BYTES = 256 << 20  # inflated past this the file is ignored (about 2 KB a Python file: 100,000 files)


@dataclass(frozen=True, slots=True)
class FileNames:
    """One file's entries, a column a field (its module's entry aside: it depends on the other files), the
    names its module assigns at its top level, the words of its docstrings (each run of word characters,
    once, between spaces: what a check after an edit looks for without reading the file) and the dotted
    names its code spells as strings. An entry is made when asked for (`entry`)."""

    names: list[str]
    kinds: list[str]
    containers: list[str]
    anchors: list[str]
    lines: array[int]
    cols: array[int]
    ends: array[int]
    assigned: tuple[str, ...]
    words: str
    strings: tuple[str, ...]

    @classmethod
    def of(cls, entries: list[Entry], assigned: tuple[str, ...], words: str, strings: tuple[str, ...]) -> FileNames:
        return cls([e.name for e in entries], [e.kind for e in entries], [e.container for e in entries],
                   [e.anchor for e in entries], array("i", [e.line for e in entries]),
                   array("i", [e.col for e in entries]), array("i", [e.end_line for e in entries]), assigned, words,
                   strings)

    def entry(self, rel: str, i: int) -> Entry:
        return Entry(intern(self.names[i]), self.kinds[i], intern(self.containers[i]), rel, self.lines[i],
                     self.cols[i], self.ends[i], self.anchors[i])


def table_path(cache: Path, root: Path) -> Path:
    """The kept names of the workspace at `root`, in the cache folder `cache`."""
    name = hashlib.blake2b(root.as_posix().encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return cache / FOLDER / f"{name}.json.gz"


def _joined(values: list[str], *, sep: str = "\n") -> str | None:
    """`values` joined by `sep`; None when one holds it (or a line break): it would not split back."""
    if any(sep in v or "\n" in v for v in values):
        return None
    return sep.join(values)


def _split(text: Any, n: int, sep: str = "\n") -> list[str]:
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


def encode_names(names: FileNames) -> list[Any] | None:
    texts = [_joined(names.names), _joined(names.kinds), _joined(names.containers), _joined(names.anchors),
             _joined(list(names.assigned)), _joined(list(names.strings))]
    if any(t is None for t in texts) or "\n" in names.words:
        return None
    return [*texts, len(names.assigned), names.lines.tolist(), names.cols.tolist(), names.ends.tolist(),
            names.words, len(names.strings)]


def decode_names(raw: Any) -> FileNames:
    """The names `encode_names` wrote; ValueError (TypeError, OverflowError) when `raw` is not that."""
    if not (isinstance(raw, list) and len(raw) == 12 and type(raw[6]) is int and isinstance(raw[7], list)
            and type(raw[10]) is str and type(raw[11]) is int):
        raise ValueError("not a file's names")
    n = len(raw[7])
    names, kinds, containers, anchors = (_split(t, n) for t in raw[:4])
    return FileNames(names, kinds, containers, anchors, _numbers(raw[7], n), _numbers(raw[8], n),
                     _numbers(raw[9], n), tuple(_split(raw[4], raw[6])), raw[10], tuple(_split(raw[5], raw[11])))


def encode_imports(imports: tuple[Import, ...]) -> list[Any] | None:
    texts = [_joined([i.module for i in imports]), _joined([i.anchor for i in imports])]
    lists = [[_joined(list(i.names), sep=",") for i in imports],
             [_SAME if i.asnames == i.names and i.names else _joined(list(i.asnames), sep=",") for i in imports]]
    if any(t is None for t in texts) or any(v is None for names in lists for v in names):
        return None
    return [*texts, *("\n".join(v for v in names if v is not None) for names in lists),
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


def held(saved: Mapping[str, Any]) -> dict[str, tuple[str, FileNames, tuple[Import, ...]]]:
    """file -> (content digest, its names, its imports) for each file `saved` holds rows of that decode,
    both (what does not is left out: its facts are read instead). Strings of imports are interned."""
    found: dict[str, tuple[str, FileNames, tuple[Import, ...]]] = {}
    for rel, entry in saved.items():
        if isinstance(entry, list) and len(entry) == 3 and type(entry[0]) is str:
            try:
                found[rel] = (entry[0], decode_names(entry[1]), decode_imports(entry[2]))
            except (ValueError, TypeError, OverflowError):
                continue
    return found


def load(path: Path, stamp: str) -> dict[str, Any]:
    """file -> [content digest, its names, its imports] as written (checked by `held`);
    empty when the file is missing, unreadable, too large, of another version or stamp, or not of that form."""
    data = kept.read(path, MAX_BYTES)
    if not isinstance(data, dict) or data.get("version") != VERSION or data.get("stamp") != stamp:
        return {}
    found = data.get("files")
    return found if isinstance(found, dict) else {}


def save(path: Path, stamp: str, files: Mapping[str, tuple[str, FileNames, tuple[Import, ...]]]) -> None:
    """Record file -> (content digest, its names, its imports) atomically; a failure (a read-only cache
    folder) only means the next check reads every file's facts."""
    rows = {rel: [key, names, imports] for rel, (key, found, got) in files.items()
            if (names := encode_names(found)) is not None and (imports := encode_imports(got)) is not None}
    kept.write(path, {"version": VERSION, "stamp": stamp, "files": rows}, level=1)
