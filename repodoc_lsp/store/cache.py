"""An on-disk cache of file facts, keyed by the digest of the file's content and of the analyser its
name chooses (`digest`).

One SQLite file per analysis version in the person's cache folder (folder 0700, files 0600),
shared by every workspace and process. It holds data only: rows are JSON, checked against the
facts model on load (a row of the wrong shape is a miss, never a crash and never code). A locked,
corrupt or unreadable cache is skipped with a warning (`problem`), never fatal; rows unused for
`KEEP_DAYS` and databases of other analysis versions are pruned.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import hashlib
import json
import logging
import os
import sqlite3
import stat
import sys
import threading
import time
import types
import typing
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from repodoc_lsp import __version__
from repodoc_lsp.analysis.model import FileFacts, Import
from repodoc_lsp.analysis.source import analyser_for

# Bump when analysis output changes for the same input (-16: keys hold the analyser, `digest`; -17: a
# document's identifiers are its code words, reST read as reST; -18: a tree-sitter file's used names
# with their first lines in the text's order; -19: a licence header's lines are no file's description; -20: a
# definition's body digest is the CRC-32 of its lines).
ANALYSIS_VERSION = f"{__version__}-20"
BUSY_SECONDS = 0.25  # a database another process holds locked longer than this is skipped
KEEP_DAYS = 30  # rows unused for this long are deleted (checked once a day)
OTHER_VERSION_SECONDS = 86_400  # databases of other versions untouched this long are deleted
log = logging.getLogger(__name__)
IMPORTS = tuple[Import, ...]
if TYPE_CHECKING:
    import cattrs


INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1  # every integer of a file's facts (a line, a column, a count)


@functools.cache
def _convert() -> cattrs.Converter:
    """Facts <-> JSON-ready data; structuring checks every scalar's type (no coercion). Made on first
    use: cattrs loads with the first row read, not with the server (`repodoc mcp`'s start)."""
    import cattrs

    conv = cattrs.Converter(detailed_validation=False, forbid_extra_keys=True, omit_if_default=True)

    def exact(kind: type) -> Any:
        def check(value: Any, _: Any) -> Any:
            if type(value) is not kind:
                raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
            return value
        return check

    def int32(value: Any, _: Any) -> int:
        if type(value) is not int or not INT_MIN <= value <= INT_MAX:  # the graph's arrays hold 32 bits
            raise TypeError(f"expected a 32-bit int, got {type(value).__name__}")
        return value

    for kind in (str, bool):
        conv.register_structure_hook(kind, exact(kind))
    conv.register_structure_hook(int, int32)
    return conv


class Encoded(NamedTuple):
    """A file's row as the cache stores it: the JSON of its imports and of its whole facts."""

    imports: str
    data: str


def _row_maker(cls: type, makers: dict[type, Any]) -> Any:
    """A function of an instance of `cls` (a dataclass of the facts model) that makes what
    `_convert().unstructure` makes of it, as JSON writes it: the same keys in the same order, a field
    equal to its default left out, an enum as its value, a nested dataclass (alone, or in a tuple) as
    its own dict; a tuple of scalars and a dict of strings kept as they are (JSON writes a tuple as
    the list cattrs makes of it). Written as straight code: cattrs' unstructuring of every file's
    facts (a call per enum, a generator per tuple) was half of the row's encoding in the analysis
    workers. A field of a type not listed here raises TypeError at import (tests compare the two)."""
    hints = typing.get_type_hints(cls)
    scope: dict[str, Any] = {}
    fixed: list[str] = []
    optional: list[str] = []
    for f in dataclasses.fields(cls):
        value = _row_value(hints[f.name], f"o.{f.name}", f.name, makers, scope)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            fixed.append(f"{f.name!r}: {value}")
        else:
            factory: Any = f.default_factory
            scope[f"_default_{f.name}"] = f.default if f.default is not dataclasses.MISSING else factory()
            optional.append(f"    if o.{f.name} != _default_{f.name}:\n        res[{f.name!r}] = {value}\n")
    name = f"_row_{cls.__name__}"
    exec(f"def {name}(o):\n    res = {{{', '.join(fixed)}}}\n{''.join(optional)}    return res\n", scope)
    made = makers[cls] = scope[name]
    return made


def _row_value(hint: Any, expr: str, field: str, makers: dict[type, Any], scope: dict[str, Any]) -> str:
    """The code of what `_row_maker`'s function writes for the field `expr` of type `hint`."""
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if hint in (str, int, bool):
        return expr
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return f"{expr}._value_"  # its `value`, read without the property's two calls of Python functions
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        scope[f"_row_{field}"] = makers.get(hint) or _row_maker(hint, makers)
        return f"_row_{field}({expr})"
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        if args[0] in (str, int):
            return expr
        inner = _row_value(args[0], "e", field, makers, scope)
        return f"[{inner} for e in {expr}]"
    if origin in (typing.Union, types.UnionType) and len(args) == 2 and type(None) in args:
        other = args[0] if args[1] is type(None) else args[1]
        inner = _row_value(other, expr, field, makers, scope)
        return expr if inner == expr else f"None if {expr} is None else {inner}"
    if origin is dict and args == (str, str):
        return f"dict({expr})"
    raise TypeError(f"no row for the field {field} of type {hint}")


_ROW_FACTS = _row_maker(FileFacts, {})


def encode(facts: FileFacts) -> Encoded:
    """The row of `facts`: the facts made JSON-ready once, and the JSON of their imports written once
    and put in its place in the facts' (it was made and written twice: a tenth of the encoding)."""
    raw = _ROW_FACTS(facts)
    imports = raw.get("imports")
    if imports is None:  # no import: left out of the facts' JSON
        return Encoded("[]", _json(raw))
    written = _json(imports)
    raw["imports"] = 0
    data = _json(raw)
    # inside a JSON string every `"` is escaped: `,"imports":` is the key ("language" comes first)
    at = data.index(',"imports":0') + len(',"imports":')
    return Encoded(written, f"{data[:at]}{written}{data[at + 1:]}")


def digest(data: bytes, name: str) -> str:
    """The key of the facts of a file called `name` (a path: only its suffix counts) holding `data`:
    its content and all its analysis reads of its name (`analyser_for`). By content alone, an empty
    `__init__.py` and an empty `py.typed` shared a row, and one was given the other's language."""
    return hashlib.blake2b(data, digest_size=20, person=analyser_for(name).encode()).hexdigest()


def day() -> int:
    """The day as the cache counts them (its rows' `used`)."""
    return int(time.time() // 86_400)


def _private(path: Path, mode: int, *, folder: bool) -> None:
    """Make `path` (created if missing) ours and private; OSError when it is not ours or a link."""
    if folder:
        path.mkdir(parents=True, exist_ok=True, mode=mode)
    else:
        with contextlib.suppress(FileExistsError):  # new: no connection can hold it yet
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode))
    _checked(path, mode, folder=folder)


def _checked(path: Path, mode: int, *, folder: bool) -> None:
    """`path` made private when it is ours and not a link; OSError otherwise. Checked by its path, never
    opened: closing any descriptor of a database file drops every SQLite lock this process holds on it,
    so another process could write at the same time (a second cache on one database, as a server with
    two roots opens, let that happen)."""
    st = os.lstat(path)
    if not (stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)):
        raise OSError(0, f"{path} is a link or not a {'folder' if folder else 'file'}")
    if st.st_uid != os.geteuid():
        raise OSError(0, f"{path} belongs to another user")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, mode)  # not a link (lstat), in a folder only we can change


class FactsCache:
    """Opened on first use (by the thread that scans, never the server's event loop)."""

    def __init__(self, folder: Path | None) -> None:
        self._folder = folder
        self._db: sqlite3.Connection | None = None
        self._opening = threading.Lock()
        # held by every use of the connection and by `close`: closing it while another thread's
        # query runs crashed the process (a server asked to exit while its worker rendered pages)
        self._using = threading.RLock()
        self._opened = folder is None
        self.problem = ""  # why the cache is off, for the person (empty: on, or not asked for)

    def _connection(self) -> sqlite3.Connection | None:
        if not self._opened:
            with self._opening:
                if not self._opened:
                    self._db = self._open(self._folder) if self._folder is not None else None
                    self._opened = True
        return self._db

    def _open(self, folder: Path) -> sqlite3.Connection | None:
        from repodoc_lsp.analysis.treesitter import blank_macros_variant  # the `blank_macros` setting

        path = folder / f"facts-{ANALYSIS_VERSION}{blank_macros_variant()}.sqlite"
        try:
            if not folder.is_absolute():
                raise OSError(0, "not an absolute path")
            _private(folder, 0o700, folder=True)
            _private(path, 0o600, folder=False)
            for journal in ("-wal", "-shm"):  # SQLite makes them with the database's mode
                with contextlib.suppress(FileNotFoundError):
                    _checked(Path(f"{path}{journal}"), 0o600, folder=False)
            db = sqlite3.connect(path, timeout=BUSY_SECONDS, check_same_thread=False, isolation_level=None)
            try:
                db.execute("PRAGMA trusted_schema=OFF")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("CREATE TABLE IF NOT EXISTS facts "
                           "(key TEXT PRIMARY KEY, imports TEXT, data TEXT, used INTEGER)")
                db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER)")
                self._prune(db, folder)
            except BaseException:
                db.close()
                raise
            return db
        except (OSError, sqlite3.Error) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            self.problem = f"analysis cache {path}: {why}; analysing without it"
            log.warning("%s", self.problem)
            return None

    @staticmethod
    def _prune(db: sqlite3.Connection, folder: Path) -> None:
        """Once a day: drop rows unused for KEEP_DAYS, and other versions' databases left alone."""
        today = day()
        row = db.execute("SELECT value FROM meta WHERE name = 'pruned'").fetchone()
        if row is not None and row[0] == today:
            return
        with db:
            db.execute("BEGIN")
            db.execute("DELETE FROM facts WHERE used IS NULL OR used < ?", (today - KEEP_DAYS,))
            db.execute("INSERT OR REPLACE INTO meta VALUES ('pruned', ?)", (today,))
        mine = f"facts-{ANALYSIS_VERSION}"  # and its `blank_macros` variants (`-b<crc>`)
        for old in folder.glob("facts-*.sqlite*"):
            if not old.name.startswith((f"{mine}.sqlite", f"{mine}-b")):
                with contextlib.suppress(OSError):
                    if time.time() - old.lstat().st_mtime > OTHER_VERSION_SECONDS:
                        old.unlink()

    @property
    def enabled(self) -> bool:
        return self._connection() is not None

    def _select(self, column: str, keys: Iterable[str], shape: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        stale: list[str] = []
        today = day()
        with self._using:
            db = self._connection()
            if db is None:
                return out
            try:
                for key, data, used in _rows_of(db, f"SELECT key, {column}, used FROM facts", list(keys)):
                    value = _load(data, shape)
                    if value is not None:
                        out[key] = value
                        if used != today:
                            stale.append(key)
                if stale:  # at most one write per row and day: what is used is kept
                    with db:
                        db.execute("BEGIN")
                        db.executemany("UPDATE facts SET used = ? WHERE key = ?", [(today, k) for k in stale])
            except sqlite3.Error:
                pass
        return out

    def get_many(self, keys: Iterable[str]) -> dict[str, FileFacts]:
        """Whole facts by content digest (the ones the cache has)."""
        return self._select("data", keys, FileFacts)

    def has_many(self, keys: Iterable[str]) -> set[str]:
        """The digests among `keys` whose facts the cache holds (its rows are checked on load)."""
        with self._using:
            db = self._connection()
            if db is None:
                return set()
            try:
                return {key for (key,) in _rows_of(db, "SELECT key FROM facts", list(keys))}
            except sqlite3.Error:
                return set()

    def empty(self) -> bool:
        """True when the cache holds no row (new, cleared or off): no file's facts can be found in it."""
        with self._using:
            db = self._connection()
            if db is None:
                return True
            try:
                return db.execute("SELECT 1 FROM facts LIMIT 1").fetchone() is None
            except sqlite3.Error:
                return False

    def get_imports_many(self, keys: Iterable[str]) -> dict[str, tuple[Import, ...]]:
        """Only the imports: enough to relate files when no page needs rendering."""
        return self._select("imports", keys, IMPORTS)

    def touch_many(self, keys: Iterable[str]) -> None:
        """Mark the rows of `keys` used today (what their imports were read from elsewhere still needs: rows
        unused for KEEP_DAYS are deleted)."""
        keys, today = list(keys), day()
        with self._using:
            db = self._connection()
            if db is None:
                return
            try:
                with db:
                    db.execute("BEGIN")
                    for start in range(0, len(keys), 500):
                        chunk = keys[start : start + 500]
                        db.execute(f"UPDATE facts SET used = ? WHERE key IN ({','.join('?' * len(chunk))})",
                                   [today, *chunk])
            except sqlite3.Error:
                pass

    def put_many(self, items: Iterable[tuple[str, FileFacts | Encoded]]) -> bool:
        """Store facts by digest, or their rows as `encode` made them (an analysis worker), in one
        transaction. False when the cache is off or the write failed (locked by another process, full
        disk)."""
        items = list(items)
        today = day()
        # Encoded one row at a time as SQLite takes them: the rows of a whole cold scan held at once
        # were the CLI's peak of memory (JSON of every file's facts beside the facts themselves).
        rows = ((k, *(v if isinstance(v, Encoded) else encode(v)), today) for k, v in items)
        with self._using:
            db = self._connection()
            if db is None:
                return False
            if not items:
                return True
            try:
                with db:
                    db.execute("BEGIN")
                    db.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?)", rows)
            except sqlite3.Error:
                return False
        return True

    def close(self) -> None:
        with self._using, self._opening:
            self._opened = True  # closed: never opened again
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None


def _rows_of(db: sqlite3.Connection, select: str, keys: list[str]) -> Iterator[Any]:
    """The rows of `select ... WHERE key IN (keys)`, asked 500 keys at a time (SQLite's limit on
    parameters)."""
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        yield from db.execute(f"{select} WHERE key IN ({','.join('?' * len(chunk))})", chunk)


def structure_facts(raw: object) -> FileFacts:
    """The facts `encode` wrote, parsed from its JSON; raises when `raw` is not exactly that (every
    scalar's type checked, no unknown key)."""
    return _convert().structure(raw, FileFacts)


def structure_imports(raw: object) -> tuple[Import, ...]:
    """The imports `encode` wrote (`Encoded.imports`), parsed from its JSON, their strings interned (as
    the workspace keeps them); raises as `structure_facts`: the same checks as cattrs makes, written
    plainly (cattrs, then interning, was a fifth of a run after an edit)."""
    if type(raw) is not list:
        raise TypeError("expected a list of imports")
    return tuple(map(_import, raw))


_IMPORT_FIELDS = frozenset(("module", "names", "line", "level", "anchor", "asnames", "star"))
_STR = {str}


def _import(raw: object) -> Import:
    """One `Import` as `_convert().unstructure` made it: exactly its fields (those of default value may be
    left out), every scalar of its exact type."""
    if type(raw) is not dict or not raw.keys() <= _IMPORT_FIELDS:
        raise TypeError("not an import")
    names, asnames = raw["names"], raw.get("asnames", [])
    return checked_import(raw["module"], names, raw["line"], raw.get("level", 0), raw.get("anchor", ""),
                          None if asnames == names else asnames, raw.get("star", False))


def checked_import(module: Any, names: Any, line: Any, level: Any, anchor: Any, asnames: Any, star: Any) -> Import:
    """The `Import` of these fields as a saved file holds them (`asnames` None: the `names`), each of its
    exact type, integers of 32 bits, strings interned (as the workspace keeps them); TypeError otherwise."""
    if not import_fields(module, names, line, level, anchor, asnames, star):
        raise TypeError("not an import")
    intern = sys.intern
    interned = tuple(map(intern, names))
    return Import(intern(module), interned, line, level, intern(anchor),
                  interned if asnames is None else tuple(map(intern, asnames)), star)


def import_fields(module: Any, names: Any, line: Any, level: Any, anchor: Any, asnames: Any, star: Any) -> bool:
    """These fields are those `checked_import` takes."""
    return (type(module) is str and type(line) is int and type(level) is int and type(anchor) is str
            and type(star) is bool and _strings(names) and (asnames is None or _strings(asnames))
            and INT_MIN <= line <= INT_MAX and INT_MIN <= level <= INT_MAX)


def _strings(value: Any) -> bool:
    return type(value) is list and (not value or set(map(type, value)) == _STR)


# `json.dumps(raw, separators=(",", ":"), ensure_ascii=False)`, its encoder made once and without the
# check for circular references (a row is a tree; `dumps` made an encoder per call)
_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode


def _load(data: Any, shape: Any) -> Any:
    """The row as `shape`, or None when it is not exactly that (a miss)."""
    if not isinstance(data, str):
        return None
    try:
        raw = json.loads(data)
        if not isinstance(raw, dict if shape is FileFacts else list):
            return None
        return structure_imports(raw) if shape is IMPORTS else _convert().structure(raw, shape)
    except Exception:  # any way the data does not fit: a miss
        return None
