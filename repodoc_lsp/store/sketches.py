"""The symbol graph's sketch of each Python file as the last complete `repodoc generate` left them
(`knowledge.views.Sketch`, without the imports the scan reads anyway) and what linking it kept
(`knowledge.linking.Link`), with every file's imports by content digest, kept in one file next to the run's
state (`pipeline/lastrun.py`): the next run after an edit builds the graph from them in one read instead of
loading and sketching every file's facts, links only the files whose link consulted a file changed since,
and its scan takes the imports instead of a row of the facts cache per file.

Data only (JSON in a gzip container, stored: see `save`), versioned, stamped with what a sketch is made by (the
analysis and the page-splitting rule) and read up to a bound. Every value is checked: a damaged, foreign
or forged file, or one of another stamp, is ignored (the graph is then built from the facts); a sketch
is used only for the content digest it was made of, a link only while every file it consulted has the
content it had.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from repodoc_lsp.analysis.model import Import
from repodoc_lsp.knowledge.graph import Graph, Key, LaterSketch, Link
from repodoc_lsp.knowledge.resolution import NAME
from repodoc_lsp.knowledge.views import Sketch
from repodoc_lsp.store import kept
from repodoc_lsp.store.cache import checked_import

VERSION = 4  # 2: each file's link beside its sketch; 3: each sketch as its own JSON text; 4: every file's imports
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
    """file -> (digest, its sketch with its `imports`, decoded when its view is first read; None: a file of
    no graph) for each file of `digests` that `saved` holds a sketch of for that digest. A sketch that
    does not decode then is `made(file)` instead (from the file's facts): never taken as it is."""
    found: dict[str, tuple[str, LaterSketch | None]] = {}
    for rel, key in digests.items():
        entry = saved.get(rel)
        if not (isinstance(entry, list) and len(entry) == 3 and entry[0] == key and rel in imports):
            continue
        if entry[1] is None:
            found[rel] = (key, None)
        elif type(entry[1]) is str:
            found[rel] = (key, LaterSketch(partial(_sketch, entry[1], imports[rel], partial(made, rel))))
    return found


def _sketch(text: str, imports: tuple[Import, ...], made: Callable[[], Sketch]) -> Sketch:
    """The sketch saved as `text` (`of_graph`) with `imports`, or `made()` when it does not decode."""
    try:
        return replace(decode(json.loads(text)), imports=imports)
    except (ValueError, TypeError, RecursionError):
        return made()


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
    `links`), and content digest -> its imports as `encode_imports` wrote them (checked by `imports_of`)."""

    sketches: dict[str, Any] = field(default_factory=dict)
    imports: dict[str, Any] = field(default_factory=dict)


def load(path: Path, stamp: str) -> Saved:
    """What `save` recorded; empty when the file is missing, unreadable, too large, of another version or
    stamp, or not of the expected form."""
    data = kept.read(path, MAX_BYTES)
    if not isinstance(data, dict) or data.get("version") != VERSION or data.get("stamp") != stamp:
        return Saved()
    found, imports = data.get("sketches"), data.get("imports")
    return Saved(found if isinstance(found, dict) else {}, imports if isinstance(imports, dict) else {})


def encode_imports(imports: tuple[Import, ...]) -> list[list[Any]]:
    """A file's imports as JSON-ready rows, each an `Import`'s fields in order (`asnames` null when they are
    the `names`)."""
    return [[i.module, i.names, i.line, i.level, i.anchor, None if i.asnames == i.names else i.asnames, i.star]
            for i in imports]


def imports_of(saved: Saved, digests: Iterable[str]) -> dict[str, tuple[Import, ...]]:
    """content digest -> its imports, strings interned, for each of `digests` whose imports `saved` holds
    exactly as `encode_imports` wrote them (the others are left out: read from the facts cache). Kept with
    the sketches so a run after an edit reads every file's imports in one read, not a row and a JSON text
    each from the cache."""
    found: dict[str, tuple[Import, ...]] = {}
    for key in digests:
        rows = saved.imports.get(key)
        if type(rows) is list:
            try:
                found[key] = tuple(map(_import, rows))
            except (ValueError, TypeError):
                continue
    return found


def _import(row: Any) -> Import:
    """One `Import` of `encode_imports`; ValueError or TypeError when `row` is not exactly of that form."""
    module, names, line, level, anchor, asnames, star = row
    return checked_import(module, names, line, level, anchor, asnames, star)


_json = json.JSONEncoder(separators=(",", ":")).encode


def save(path: Path, stamp: str, sketches: Mapping[str, list[Any]],
         imports: Mapping[str, list[list[Any]]] | None = None) -> None:
    """Record `sketches` (`of_graph`) and `imports` (content digest -> `encode_imports`) atomically; a failure
    (a read-only cache folder) only means the next run builds its graph from the facts. Stored, not
    compressed: inflating it was a sixth of reading it in every run after an edit (the file is three times
    larger)."""
    kept.write(path, {"version": VERSION, "stamp": stamp, "sketches": sketches, "imports": imports or {}}, level=0)
