"""The symbol graph's sketch of each Python file as the last complete `repodoc generate` left them
(`knowledge.views.Sketch`, without the imports the scan reads anyway), what linking it kept
(`knowledge.linking.Link`) and who names each file's definitions (the users' tables by defined file), with
every file's imports by content digest and who imports each file (the import relations' tables), kept in one
file next to the run's state (`pipeline/lastrun.py`): the next run after an edit builds the graph from them in
one read instead of loading and sketching every file's facts, takes the graph's tables whole and links only
the files whose link consulted a file changed since (`taken`), and its scan takes the imports instead of a
row of the facts cache per file, and the relations instead of resolving every file's imports.

Data only (JSON texts in a gzip container, stored: see `write_aside`), versioned, stamped with what a sketch is
made by (the analysis and the page-splitting rule) and read up to a bound. The file is its texts, each as it was
made (`kept.Text`: every sketch, each link's `out` and deps, the users' tables and imports of each file), then on a
line of its own its index: JSON naming each text by its place. Every value is checked: a damaged, foreign
or forged file, or one of another stamp, is ignored (the graph is then built from the facts); a sketch
is used only for the content digest it was made of, a link only while every file it consulted has the
content it had. The users' tables and each link's `out` are decoded when first read (`Part`): each text is
checked against its digest and count before any graph is built, and anything off means every link decoded
then instead (`links`), never a fallback from inside a query. What each link consulted is kept as indexes
into one table of every such file and name, written once (`OfGraph`) and checked likewise.
"""

from __future__ import annotations

import json
import zlib
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, cast

from repodoc_lsp.analysis.model import Import
from repodoc_lsp.analysis.relations import NameUsers, Relations, Users
from repodoc_lsp.knowledge.graph import Graph, Key, LaterSketch, Link
from repodoc_lsp.knowledge.linking import FileUsers, Links, Taken
from repodoc_lsp.knowledge.resolution import NAME
from repodoc_lsp.knowledge.views import Sketch
from repodoc_lsp.store import kept
from repodoc_lsp.store.facts import Imports, SavedImports

# 2: each file's link beside its sketch; 3: each sketch as its own JSON text; 4: every file's imports; 5: who
# imports each file (the import relations' tables); 6: the users' tables by defined file and each link's `out`,
# each as its own JSON text with its count and digest (`Part`), and each file's imports as one JSON text with
# its digest; 7: each link's deps as indexes into one table of every dep, written once (`OfGraph.table`); 8: each
# text written once as it is, the index after them naming its place (`kept.Text`: kept as JSON strings inside one JSON
# text, every text was encoded twice and read with each quote escaped), each link's deps as a text of their indexes
VERSION = 8
MAX_BYTES = 256 << 20  # inflated past this the file is ignored, and not written


def sketches_path(state: Path) -> Path:
    """The sketches file beside the last run's state file `state`."""
    return state.with_name(state.name.removesuffix(".json.gz") + ".sketches.json.gz")


def encode(sketch: Sketch) -> list[Any]:
    """`sketch` as JSON-ready data (its imports left out: the scan holds them)."""
    defs, starts, ends, quals, bases, mentions, parts = sketch.own
    return [defs, starts.tolist(), ends.tolist(), quals, bases, mentions,
            [[kind, qual, n] for (kind, qual), n in parts.items()], sketch.all_names, sketch.refs]


def decode(raw: Any) -> Sketch:
    """The sketch `encode` wrote, without imports; ValueError when `raw` is not exactly of that form."""
    if not (isinstance(raw, list) and len(raw) == 9):
        raise ValueError("not a sketch")
    defs, starts, ends, quals, bases, mentions, parts, all_names, refs = raw
    _check(isinstance(defs, dict) and all(type(k) is str and type(v) is int for k, v in defs.items()))
    _check(_ints(starts) and _ints(ends) and len(starts) == len(ends) and _strs(quals) and len(quals) == len(starts))
    _check(isinstance(bases, dict) and all(type(k) is str and _strs(v) for k, v in bases.items()))
    _check(_strs(mentions) and _strs(all_names) and type(refs) is str and isinstance(parts, list))
    _check(all(isinstance(p, list) and len(p) == 3 and type(p[0]) is str and type(p[1]) is str and type(p[2]) is int
               for p in parts))
    own = (defs, array("i", starts), array("i", ends), tuple(quals), {k: tuple(v) for k, v in bases.items()},
           tuple(mentions), {(kind, qual): n for kind, qual, n in parts})
    return Sketch(own, (), tuple(all_names), refs)


def _check(ok: bool) -> None:
    if not ok:
        raise ValueError("not a sketch")


def _ints(value: Any) -> bool:
    return isinstance(value, list) and all(type(v) is int and -(1 << 31) <= v < (1 << 31) for v in value)


def _strs(value: Any) -> bool:
    """Whether `value` is a list of strings (`str.join` takes nothing else: checked without a Python loop,
    a sixth of taking a saved graph's links)."""
    if type(value) is not list:
        return False
    try:
        "".join(value)
    except TypeError:
        return False
    return True


def encode_link(link: Link) -> list[Any]:
    """`link` as JSON-ready data: what it names grouped by file, then its bases, mentions and dependencies (its
    own tuples and tables, read only: JSON writes a tuple as an array)."""
    return [_by_file(link.out), link.bases, link.mentioned, link.deps]


def _by_file(out: Mapping[Key, tuple[int, ...]]) -> dict[str, dict[str, tuple[int, ...]]]:
    """A link's `out` grouped by file: file -> qualname -> lines."""
    found: dict[str, dict[str, tuple[int, ...]]] = {}
    for (rel, qual), lines in out.items():
        found.setdefault(rel, {})[qual] = lines
    return found


def decode_link(raw: Any) -> Link:
    """The link `encode_link` wrote; ValueError when `raw` is not exactly of that form."""
    if not (isinstance(raw, list) and len(raw) == 4):
        raise ValueError("not a link")
    return _link(_out(raw[0]), *raw[1:])


def _link(out: Mapping[Key, tuple[int, ...]], bases: Any, mentioned: Any, deps: Any,
          table: tuple[str, ...] | None = None) -> Link:
    """A link of `out` with its bases, mentions and dependencies as `encode_link` wrote them (`table`: as
    `encode_saved_link` wrote them, indexes into it), checked."""
    _check(type(bases) is dict and type(mentioned) is dict)
    deps = tuple(deps) if table is None and _strs(deps) else _deps(deps, table)
    if bases:  # most files' classes have no workspace base, and most docstrings mention none
        _check(all(type(keys) is list and all(_key(k) for k in keys) for keys in bases.values()))
        bases = {qual: tuple((k[0], k[1]) for k in keys) for qual, keys in bases.items()}
    if mentioned:
        _check(all(_key(key) for key in mentioned.values()))
        mentioned = {name: (key[0], key[1]) for name, key in mentioned.items()}
    return Link(out, bases, mentioned, deps)


def _deps(raw: Any, table: tuple[str, ...] | None) -> tuple[str, ...]:
    """The entries of `table` that `raw` (a list of indexes) names; ValueError (or TypeError) when it is not."""
    if table is None or type(raw) is not list or (raw and not (min(raw) >= 0 and max(raw) < len(table))):
        raise ValueError("not a link")  # an index from the end would name another entry
    return tuple(map(table.__getitem__, raw))


def _key(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and type(value[0]) is str and type(value[1]) is str


def held(saved: Saved, digests: Mapping[str, str], imports: Mapping[str, tuple[Import, ...]],
         made: Callable[[str], Sketch]) -> dict[str, tuple[str, LaterSketch | None]]:
    """file -> (digest, its sketch with its `imports` (read then), decoded when its view is first read; None: a
    file of no graph) for each file of `digests` that `saved` holds a sketch of for that digest. A sketch that
    does not decode then is `made(file)` instead (from the file's facts): never taken as it is."""
    found: dict[str, tuple[str, LaterSketch | None]] = {}
    for rel, key in digests.items():
        entry = saved.sketches.get(rel)
        if not (isinstance(entry, list) and len(entry) == 3 and entry[0] == key and rel in imports):
            continue
        if entry[1] is None:
            found[rel] = (key, None)
            continue
        try:
            text = kept.at(saved.body, entry[1])
        except ValueError:
            continue
        found[rel] = (key, LaterSketch(partial(_sketch, text, partial(imports.__getitem__, rel), partial(made, rel))))
    return found


def _sketch(text: memoryview, imports: Callable[[], tuple[Import, ...]], made: Callable[[], Sketch]) -> Sketch:
    """The sketch saved as `text` (`OfGraph`) with `imports()`, or `made()` when it does not decode."""
    try:
        sketch = decode(json.loads(bytes(text)))
    except (ValueError, TypeError, RecursionError):
        return made()
    return replace(sketch, imports=imports())


def links(saved: Saved, digests: Mapping[str, str]) -> Links:
    """The links of the graph `saved` holds, for a graph of the files of `digests` (their content digests now)
    to take: the whole graph (`taken`) when every part of it checks, else each file's link whose link consulted
    only files that have there the content they had then, decoded now (none when `saved` is of other files:
    their module names differ); what does not decode is left out (linked again)."""
    whole = taken(saved, digests)
    if whole is not None:
        return whole
    if saved.sketches.keys() != digests.keys():
        return {}
    try:
        table = _table(saved)
    except (ValueError, TypeError, RecursionError):
        return {}
    then = _digests_then(saved)
    found: dict[str, Link] = {}
    for rel, entry in saved.sketches.items():
        if rel not in then or entry[2] is None:
            continue
        try:
            found[rel] = _saved_link(entry[2], table, saved.body, later=False)
        except (ValueError, TypeError, RecursionError):
            continue
    stale = _stale(found, then, digests)
    return {rel: link for rel, link in found.items() if rel not in stale}


def _digests_then(saved: Saved) -> dict[str, str]:
    return {rel: entry[0] for rel, entry in saved.sketches.items() if isinstance(entry, list) and len(entry) == 3}


def _stale(links: Mapping[str, Link], then: Mapping[str, str], now: Mapping[str, str]) -> frozenset[str]:
    """The files of `links` whose links no longer hold: a file each consulted (itself among them) has another
    content now than `then`. Each file consulted is looked at once (they are consulted by 15 links each)."""
    consulted: set[str] = set().union(*(link.deps for link in links.values()))
    moved = {rel for rel, key in then.items() if now.get(rel) != key}
    moved.update(dep for dep in consulted - then.keys() if not dep.startswith(NAME))  # files of no graph then
    return frozenset(rel for rel, link in links.items()
                     if rel not in link.deps or (moved and not moved.isdisjoint(link.deps)))


def taken(saved: Saved, digests: Mapping[str, str]) -> Taken | None:
    """The graph `saved` holds taken whole, the files whose links no longer hold marked stale (`Taken`); None
    when `saved` is of other files or any part of it does not check: a link not of `encode_saved_link`'s form,
    a part's text not of its digest (the deps table's among them) or a link's dep out of that table, the users'
    tables naming a file it is not of, or counting other pairs of definition and user than the links' outs.
    Checked whole here, before any graph is built: the parts' texts are decoded when first read and cannot fail
    then (a graph cannot make its users' tables again)."""
    users = saved.users
    if saved.sketches.keys() != digests.keys() or not users.keys() <= saved.sketches.keys():
        return None
    then = _digests_then(saved)
    if len(then) != len(saved.sketches):
        return None
    found: dict[str, Link] = {}
    body = saved.body
    try:
        table = _table(saved)
        for rel, entry in saved.sketches.items():
            if entry[2] is not None:
                found[rel] = _saved_link(entry[2], table, body)
        tables = {rel: Part(*_part(raw, body), _users_table) for rel, raw in users.items()}
    except (ValueError, TypeError, RecursionError):
        return None
    if sum(part.count for part in tables.values()) != sum(cast(Part, link.out).count for link in found.values()):
        return None
    return Taken(found, cast(Mapping[str, FileUsers], tables), _stale(found, then, digests))


class Part(Mapping[Any, Any]):
    """A part of the saved graph kept as its JSON text, checked against its digest when the file was read
    (`taken`), decoded when first read; `count`: the pairs of definition and user it holds."""

    __slots__ = ("_decode", "_value", "count", "text")

    def __init__(self, text: bytes | memoryview, count: int, decode: Callable[[Any], dict[Any, Any]]) -> None:
        self.text, self.count, self._decode = text, count, decode
        self._value: dict[Any, Any] | None = None

    def _decoded(self) -> dict[Any, Any]:
        value = self._value
        if value is None:  # two threads may both decode: the same value, one kept
            value = self._value = self._decode(json.loads(bytes(self.text)))
        return value

    def __getitem__(self, key: Any) -> Any:
        return self._decoded()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())


def _part(raw: Any, body: memoryview) -> tuple[memoryview, int]:
    """A part as `_encode_part` wrote it, [place of its text in `body`, count, digest]: its text and count;
    ValueError when it is not of that form or its text is not of its digest."""
    _check(isinstance(raw, list) and len(raw) == 3 and type(raw[1]) is int and type(raw[2]) is int and raw[1] >= 0)
    text = kept.at(body, raw[0])
    _check(zlib.crc32(text) == raw[2])
    return text, raw[1]


def _encode_part(value: Mapping[Any, Any] | list[str], count: int) -> list[Any]:
    """A part of the saved graph: `value` as its own JSON text (`kept.Text`; passed on as it is when it was read so),
    the pairs of definition and user it holds, and the digest of the text (`zlib.crc32`, against damage)."""
    text = value.text if isinstance(value, Part) else _json(value).encode()
    return [kept.Text(text), count, zlib.crc32(text)]


def _out(raw: Any) -> dict[Key, tuple[int, ...]]:
    """A link's `out` as `encode_saved_link` wrote it: file -> qualname -> lines."""
    _check(isinstance(raw, dict))
    out: dict[Key, tuple[int, ...]] = {}
    for rel, quals in raw.items():
        _check(isinstance(quals, dict))
        for qual, lines in quals.items():
            _check(_ints(lines))
            out[(rel, qual)] = tuple(lines)
    return out


def _users_table(raw: Any) -> dict[str, dict[str, tuple[int, ...]]]:
    """A file's users' tables as `users_of` wrote them: qualname -> file -> lines."""
    _check(isinstance(raw, dict) and all(isinstance(table, dict) for table in raw.values()))
    _check(all(_ints(lines) for table in raw.values() for lines in table.values()))
    return {qual: {rel: tuple(lines) for rel, lines in table.items()} for qual, table in raw.items()}


def _table(saved: Saved) -> tuple[str, ...]:
    """The deps table `saved` holds (`OfGraph.table`); ValueError when it is not of that form, digest or count."""
    text, count = _part(saved.deps.get("table"), saved.body)
    names = json.loads(bytes(text))
    _check(_strs(names) and len(names) == count)
    return tuple(names)


def encode_saved_link(link: Link, at: Mapping[str, bytes]) -> list[Any]:
    """`link` as the saved file keeps it: `encode_link`'s form with its `out` as a part (`_encode_part`; as it came
    when taken and never read) and its deps as a text of their indexes in the table, `at` (dep -> its index as
    JSON; joined as they are: an index computed and encoded for each of them was two fifths of the file's write)."""
    out = link.out
    part = _encode_part(out, out.count) if isinstance(out, Part) else _encode_part(_by_file(out), len(out))
    return [part, link.bases, link.mentioned, kept.Text(b"[%b]" % b",".join(map(at.__getitem__, link.deps)))]


def _saved_link(raw: Any, table: tuple[str, ...], body: memoryview, later: bool = True) -> Link:
    """The link `encode_saved_link` wrote (its texts in `body`; deps: indexes into `table`), its `out` a `Part`
    decoded when first read (`later`: else decoded now); ValueError when `raw` is not of that form or its out's
    text not of its digest."""
    _check(type(raw) is list and len(raw) == 4)
    text, count = _part(raw[0], body)
    deps = json.loads(bytes(kept.at(body, raw[3])))
    return _link(Part(text, count, _out) if later else _out(json.loads(bytes(text))), raw[1], raw[2], deps, table)


def users_of(graph: Graph) -> Iterator[tuple[str, list[Any]]]:
    """What `write_aside` records of who names a built graph's definitions: (defined file, its users' tables
    (qualname -> file -> lines, the graph's own: JSON writes their tuples as arrays) as a part
    (`_encode_part`)), one file at a time as `write_aside` writes them."""
    for rel, tables in graph.users_by_file().items():
        count = tables.count if isinstance(tables, Part) else sum(len(table) for table in tables.values())
        yield rel, _encode_part(tables, count)


class OfGraph:
    """What `write_aside` records of a built graph: (file, [digest, encoded sketch as its own JSON text (`kept.Text`,
    read only when a run reads its view, `held`) or None, its link as `encode_saved_link` writes it or None]), one file
    at a time as `write_aside` writes them; `deps`: every file and name their links consulted, each once, sorted
    (a link keeps its deps as indexes into it: as strings they were most of a large tree's file, past its bound, a
    file whose names resolve through a package's lazy imports consulting thousands)."""

    def __init__(self, graph: Graph, digests: Mapping[str, str]) -> None:
        self.graph, self.digests, self.links = graph, digests, graph.links()
        self.deps = sorted(set().union(*(link.deps for link in self.links.values())))

    def __iter__(self) -> Iterator[tuple[str, list[Any]]]:
        graph, linked, at = self.graph, self.links, {dep: b"%d" % n for n, dep in enumerate(self.deps)}
        for rel, key in self.digests.items():
            sketch, link = graph.sketch(rel), linked.get(rel)
            yield rel, [key, None if sketch is None else kept.Text(_json(encode(sketch)).encode()),
                        None if link is None else encode_saved_link(link, at)]

    def table(self) -> Iterator[tuple[str, list[Any]]]:
        """The deps table as `write_aside` records it: its list as a part (`_encode_part`)."""
        yield "table", _encode_part(self.deps, len(self.deps))


@dataclass(frozen=True, slots=True)
class Saved:
    """The saved file as read: file -> [content digest, sketch, link] (`OfGraph`; checked by `held` and
    `links`), content digest -> its imports as `encode_imports` wrote them (checked by `imports_of`),
    the import relations' tables as `encode_relations` wrote them (checked by `relations`), and the graph's
    users' tables by defined file (`users_of`; checked with the links by `taken`) and the table of what they
    consulted (`OfGraph.table`; checked with them); `body`: the texts their places (`kept.Text`) are in."""

    sketches: dict[str, Any] = field(default_factory=dict)
    imports: dict[str, Any] = field(default_factory=dict)
    relations: dict[str, Any] = field(default_factory=dict)
    users: dict[str, Any] = field(default_factory=dict)
    deps: dict[str, Any] = field(default_factory=dict)
    body: memoryview = field(default_factory=lambda: memoryview(b""))


def load(path: Path, stamp: str) -> Saved:
    """What `write_aside` recorded; empty when the file is missing, unreadable, too large, of another version or
    stamp, or not of the expected form."""
    index, body = kept.read_texts(path, MAX_BYTES)
    if not isinstance(index, dict) or index.get("version") != VERSION or index.get("stamp") != stamp:
        return Saved()
    sketches, imports, relations, users, deps = (part if isinstance(part := index.get(name), dict) else {}
                                                  for name in ("sketches", "imports", "relations", "users", "deps"))
    return Saved(sketches, imports, relations, users, deps, body)


def encode_imports(imports: tuple[Import, ...]) -> list[Any]:
    """A file's imports as `write_aside` takes them: their rows, each an `Import`'s fields in order (`asnames` null
    when they are the `names`), as one JSON text with its digest (`_imports_part`)."""
    return _imports_part(_json([[i.module, i.names, i.line, i.level, i.anchor,
                                 None if i.asnames == i.names else i.asnames, i.star] for i in imports]).encode())


def _imports_part(text: bytes) -> list[Any]:
    """[text (`kept.Text`), digest] (`zlib.crc32`: against damage, as `_encode_part`)."""
    return [kept.Text(text), zlib.crc32(text)]


def imports_of(saved: Saved) -> dict[str, SavedImports]:
    """content digest -> its imports, for each content whose rows `saved` holds as `encode_imports` wrote them,
    their text of its digest (the others are left out: read from the facts cache). The rows are decoded and
    made into `Import`s when first read (`SavedImports`: their text is this module's, checked here; parsing
    every file's rows and checking each was a twentieth of a run after an edit, which reads a few). Kept with
    the sketches so a run after an edit reads every file's imports in one read, not a row and a JSON text
    each from the cache."""
    found: dict[str, SavedImports] = {}
    for key, raw in saved.imports.items():
        if type(raw) is list and len(raw) == 2 and type(raw[1]) is int:
            try:
                text = kept.at(saved.body, raw[0])
            except ValueError:
                continue
            if zlib.crc32(text) == raw[1]:
                found[key] = SavedImports(bytes(text))
    return found


def encode_imports_of(imports: Imports, digests: Mapping[str, str]) -> Iterator[tuple[str, list[Any]]]:
    """Every file's imports (`digests`: its content digest) as `write_aside` takes them, one file at a time; rows read
    from a saved file passed on as they came."""
    done: set[str] = set()  # files of the same content: their imports once
    for rel in imports:
        if (key := digests[rel]) not in done:
            done.add(key)
            given = imports.given(rel)
            yield key, _imports_part(given.rows) if isinstance(given, SavedImports) else encode_imports(given)


@dataclass(frozen=True, slots=True)
class SavedRelations:
    """The import relations of the files the saved file is of: each file's content digest then, its imports
    (by digest) and who imported each file then (`Relations.saved_tables`), checked."""

    digests: dict[str, str]
    imports: Mapping[str, SavedImports]
    tables: tuple[Users, NameUsers]

    def made(self) -> Relations:
        """These relations, each file's imports made when first read."""
        by_file = Imports()
        for rel, key in self.digests.items():
            by_file[rel] = self.imports[key]
        return Relations(by_file, self.tables)


def encode_relations(relations: Relations) -> dict[str, Any]:
    """What `write_aside` records of `relations` (of the files and contents of the sketches saved with them)."""
    importers, name_users = relations.saved_tables()
    names: dict[str, dict[str, list[str]]] = {}
    for (target, name), users in name_users.items():
        names.setdefault(target, {})[name] = users
    return {"importers": importers, "names": names}


def relations(saved: Saved, imports: Mapping[str, SavedImports]) -> SavedRelations | None:
    """The import relations `saved` holds, with `imports` (`imports_of`); None when they are not exactly of
    `encode_relations`' form, name files it is not of, or a file's imports are not among `imports`."""
    importers, names = saved.relations.get("importers"), saved.relations.get("names")
    digests = {rel: entry[0] for rel, entry in saved.sketches.items() if isinstance(entry, list) and len(entry) == 3}
    if not (isinstance(importers, dict) and isinstance(names, dict) and len(digests) == len(saved.sketches)
            and all(type(key) is str and key in imports for key in digests.values())
            and all(isinstance(by, dict) for by in names.values())):
        return None
    lists = [*importers.values(), *(users for by in names.values() for users in by.values())]
    try:
        named = set().union(*lists, importers, names)
    except TypeError:  # not lists of strings
        return None
    if not (named <= digests.keys() and all(type(users) is list for users in lists)):
        return None
    return SavedRelations(digests, imports, (importers, {(target, name): users for target, by in names.items()
                                                         for name, users in by.items()}))


# This module's data, never circular: encoded without checking each list and dict against those it is inside
_json = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def write_aside(path: Path, stamp: str, sketches: kept.Entries, imports: kept.Entries = (),
                relations: Mapping[str, Any] | None = None, users: kept.Entries = (),
                deps: kept.Entries = ()) -> kept.Aside:
    """Record `sketches` (`OfGraph`), `imports` (content digest -> `encode_imports`), the import `relations`
    of these files and contents (`encode_relations`), the graph's `users` (`users_of`) and the `deps` table its
    links index (`OfGraph.table`) beside `path`, for the caller to put in place (`kept.Aside.keep`: atomically)
    or drop; a failure (a read-only cache folder) only means the next run builds its graph from the facts.
    Stored, not compressed: inflating it was a sixth of reading it in every run after an edit (the file is three
    times larger). Written a text at a time as each is made (`kept.write_aside`): held whole, the file of a large
    tree took as much memory again as the run before it. A file past MAX_BYTES, which `load` would ignore, is not
    kept (the graph of the next run is built from the facts)."""
    parts = {"sketches": sketches, "imports": imports, "relations": relations or {}, "users": users, "deps": deps}
    # stored blocks add a little: `load` reads the file too
    return kept.texts_aside(path, {"version": VERSION, "stamp": stamp}, parts, level=0,
                            most=MAX_BYTES - (MAX_BYTES >> 10))
