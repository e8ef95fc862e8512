"""The symbol graph's sketch of each Python file as the last complete `repodoc generate` left them
(`knowledge.views.Sketch`, without the imports the scan reads anyway) and what linking it kept
(`knowledge.linking.Link`), with every file's imports by content digest and who imports each file (the import
relations' tables), kept in one file next to the run's state (`pipeline/lastrun.py`): the next run after an
edit builds the graph from them in one read instead of loading and sketching every file's facts, links only
the files whose link consulted a file changed since, and its scan takes the imports instead of a row of the
facts cache per file, and the relations instead of resolving every file's imports.

Data only (JSON in a gzip container, stored: see `save`), versioned, stamped with what a sketch is made by (the
analysis and the page-splitting rule) and read up to a bound. Every value is checked: a damaged, foreign
or forged file, or one of another stamp, is ignored (the graph is then built from the facts); a sketch
is used only for the content digest it was made of, a link only while every file it consulted has the
content it had.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from repodoc_lsp.analysis.model import Import
from repodoc_lsp.analysis.relations import NameUsers, Relations, Users
from repodoc_lsp.knowledge.graph import Graph, Key, LaterSketch, Link
from repodoc_lsp.knowledge.resolution import NAME
from repodoc_lsp.knowledge.views import Sketch
from repodoc_lsp.store import kept
from repodoc_lsp.store.cache import import_fields
from repodoc_lsp.store.facts import Imports, SavedImports

# 2: each file's link beside its sketch; 3: each sketch as its own JSON text; 4: every file's imports; 5: who
# imports each file (the import relations' tables)
VERSION = 5
MAX_BYTES = 256 << 20  # inflated past this the file is ignored (about 4 KB a Python file: 60,000 files)


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
    return isinstance(value, list) and all(type(v) is str for v in value)


def encode_link(link: Link) -> list[Any]:
    """`link` as JSON-ready data: what it names grouped by file, then its bases, mentions and dependencies."""
    out: dict[str, dict[str, list[int]]] = {}
    for (rel, qual), lines in link.out.items():
        out.setdefault(rel, {})[qual] = list(lines)
    return [out, {qual: [list(key) for key in bases] for qual, bases in link.bases.items()},
            {name: list(key) for name, key in link.mentioned.items()}, list(link.deps)]


def decode_link(raw: Any) -> Link:
    """The link `encode_link` wrote; ValueError when `raw` is not exactly of that form."""
    if not (isinstance(raw, list) and len(raw) == 4):
        raise ValueError("not a link")
    named, bases, mentioned, deps = raw
    _check(isinstance(named, dict) and isinstance(bases, dict) and isinstance(mentioned, dict) and _strs(deps))
    out: dict[Key, tuple[int, ...]] = {}
    for rel, quals in named.items():
        _check(isinstance(quals, dict))
        for qual, lines in quals.items():
            _check(_ints(lines))
            out[(rel, qual)] = tuple(lines)
    _check(all(isinstance(keys, list) and all(_key(k) for k in keys) for keys in bases.values()))
    _check(all(_key(key) for key in mentioned.values()))
    return Link(out, {qual: tuple((k[0], k[1]) for k in keys) for qual, keys in bases.items()},
                {name: (key[0], key[1]) for name, key in mentioned.items()}, tuple(deps))


def _key(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and type(value[0]) is str and type(value[1]) is str


def held(saved: Mapping[str, Any], digests: Mapping[str, str], imports: Mapping[str, tuple[Import, ...]],
         made: Callable[[str], Sketch]) -> dict[str, tuple[str, LaterSketch | None]]:
    """file -> (digest, its sketch with its `imports` (read then), decoded when its view is first read; None: a
    file of no graph) for each file of `digests` that `saved` holds a sketch of for that digest. A sketch that
    does not decode then is `made(file)` instead (from the file's facts): never taken as it is."""
    found: dict[str, tuple[str, LaterSketch | None]] = {}
    for rel, key in digests.items():
        entry = saved.get(rel)
        if not (isinstance(entry, list) and len(entry) == 3 and entry[0] == key and rel in imports):
            continue
        if entry[1] is None:
            found[rel] = (key, None)
        elif type(entry[1]) is str:
            found[rel] = (key, LaterSketch(partial(_sketch, entry[1], partial(imports.__getitem__, rel),
                                                   partial(made, rel))))
    return found


def _sketch(text: str, imports: Callable[[], tuple[Import, ...]], made: Callable[[], Sketch]) -> Sketch:
    """The sketch saved as `text` (`of_graph`) with `imports()`, or `made()` when it does not decode."""
    try:
        sketch = decode(json.loads(text))
    except (ValueError, TypeError, RecursionError):
        return made()
    return replace(sketch, imports=imports())


def links(saved: Mapping[str, Any], digests: Mapping[str, str]) -> dict[str, Link]:
    """file -> its link as `saved` holds it, for each file of `digests` whose link consulted only files
    that have there the content they had then (all of them when `saved` is of other files: their module
    names differ); what does not decode is left out (linked again)."""
    if saved.keys() != digests.keys():
        return {}
    then = {rel: entry[0] for rel, entry in saved.items() if isinstance(entry, list) and len(entry) == 3}
    found: dict[str, Link] = {}
    for rel, entry in saved.items():
        if rel not in then or entry[2] is None:
            continue
        try:
            link = decode_link(entry[2])
        except (ValueError, TypeError):
            continue
        if rel in link.deps and all(dep.startswith(NAME) or then.get(dep, "") == digests.get(dep) for dep in link.deps):
            found[rel] = link
    return found


def of_graph(graph: Graph, digests: Mapping[str, str]) -> dict[str, list[Any]]:
    """What `save` records of a built graph: file -> [digest, encoded sketch as its own JSON text (read only
    when a run reads its view, `held`) or None, encoded link or None]."""
    linked = graph.links()
    return {rel: [key, None if (sketch := graph.sketch(rel)) is None else _json(encode(sketch)),
                  None if (link := linked.get(rel)) is None else encode_link(link)]
            for rel, key in digests.items()}


@dataclass(frozen=True, slots=True)
class Saved:
    """The saved file as read: file -> [content digest, sketch, link] (`of_graph`; checked by `held` and
    `links`), content digest -> its imports as `encode_imports` wrote them (checked by `imports_of`), and
    the import relations' tables as `encode_relations` wrote them (checked by `relations`)."""

    sketches: dict[str, Any] = field(default_factory=dict)
    imports: dict[str, Any] = field(default_factory=dict)
    relations: dict[str, Any] = field(default_factory=dict)


def load(path: Path, stamp: str) -> Saved:
    """What `save` recorded; empty when the file is missing, unreadable, too large, of another version or
    stamp, or not of the expected form."""
    data = kept.read(path, MAX_BYTES)
    if not isinstance(data, dict) or data.get("version") != VERSION or data.get("stamp") != stamp:
        return Saved()
    found, imports, relations = data.get("sketches"), data.get("imports"), data.get("relations")
    return Saved(*(part if isinstance(part, dict) else {} for part in (found, imports, relations)))


def encode_imports(imports: tuple[Import, ...]) -> list[list[Any]]:
    """A file's imports as JSON-ready rows, each an `Import`'s fields in order (`asnames` null when they are
    the `names`)."""
    return [[i.module, i.names, i.line, i.level, i.anchor, None if i.asnames == i.names else i.asnames, i.star]
            for i in imports]


def imports_of(saved: Saved) -> dict[str, SavedImports]:
    """content digest -> its imports, for each content whose rows `saved` holds exactly as `encode_imports`
    wrote them (the others are left out: read from the facts cache). Checked here, made into `Import`s
    when first read (`SavedImports`). Kept with the sketches so a run after an edit reads every file's
    imports in one read, not a row and a JSON text each from the cache."""
    found: dict[str, SavedImports] = {}
    for key, rows in saved.imports.items():
        if type(rows) is list and all(type(row) is list and len(row) == 7 and import_fields(*row) for row in rows):
            found[key] = SavedImports(rows)
    return found


def encode_imports_of(imports: Imports, digests: Mapping[str, str]) -> dict[str, list[list[Any]]]:
    """Every file's imports (`digests`: its content digest) as `save` takes them; rows read from a saved
    file passed on as they are."""
    found: dict[str, list[list[Any]]] = {}
    for rel, given in ((rel, imports.given(rel)) for rel in imports):
        found[digests[rel]] = given.rows if isinstance(given, SavedImports) else encode_imports(given)
    return found


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
    """What `save` records of `relations` (of the files and contents of the sketches saved with them)."""
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


_json = json.JSONEncoder(separators=(",", ":")).encode


def save(path: Path, stamp: str, sketches: Mapping[str, list[Any]],
         imports: Mapping[str, list[list[Any]]] | None = None, relations: Mapping[str, Any] | None = None) -> None:
    """Record `sketches` (`of_graph`), `imports` (content digest -> `encode_imports`) and the import `relations`
    of these files and contents (`encode_relations`) atomically; a failure (a read-only cache folder) only
    means the next run builds its graph from the facts. Stored, not compressed: inflating it was a sixth of
    reading it in every run after an edit (the file is three times larger)."""
    kept.write(path, {"version": VERSION, "stamp": stamp, "sketches": sketches, "imports": imports or {},
                      "relations": relations or {}}, level=0)
