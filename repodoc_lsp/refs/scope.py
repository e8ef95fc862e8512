"""What a check reads of a workspace: its table of names, kept between runs (`store/names.py`), and for a
change (`--since`, `--staged`) the words a reference must hold for the change to alter its verdict, so
that only the docs and docstrings holding one are read."""

from __future__ import annotations

import keyword
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from repodoc_lsp.analysis.model import FileFacts, Import
from repodoc_lsp.knowledge.index import MODULE, Entry, entries_of
from repodoc_lsp.refs.namespace import binds, dotted_strings
from repodoc_lsp.refs.project import Modules, modules_by_name
from repodoc_lsp.store import names
from repodoc_lsp.store.scan import Seen
from repodoc_lsp.store.workspace import Workspace

_WORD = re.compile(r"[A-Za-z_]\w*")
_RUN = re.compile(r"\w+")  # what `\bword\b` finds whole
_QUOTED = re.compile(r"""(["'])([A-Za-z_][\w.]*)\1""")  # a string that is a name or a dotted name
_COMMENT = re.compile(r"(?:^|\s)#.*$")
# a change of these makes or takes names wholesale (a star import, a module `__getattr__`, `globals()`)
_WHOLESALE = re.compile(r"\bimport\s*\*|\b__getattr__\b|\bglobals\s*\(")
_NO_STAT = (-1, 0, 0, 0)  # a file the scan took no stat of: read by the next scan


class Kept:
    """The check's kept file (`store/names.py`), read once: imports and stats for the scan, names for the
    table."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.stamp = _stamp()
        self.table = names.held(names.load(path, self.stamp)) if path is not None else names.Table({})

    def imports(self) -> dict[str, tuple[Import, ...]]:
        """content digest -> its imports, for the scan (not read from the facts cache)."""
        return {row.key: row.imports for row in self.table.rows.values()}

    def seen(self) -> Seen:
        """Each file's digest by its stat when the table was made: the scan reads only the files whose
        stat moved since (reading and digesting every file was a fifth of a check after an edit)."""
        rows = self.table.rows
        return Seen({rel: row.key for rel, row in rows.items()}, {rel: row.stat for rel, row in rows.items()},
                    self.table.began)

    def names_of(self, digests: Mapping[str, str]) -> dict[str, names.FileNames]:
        """file -> its names, of the files of `digests` kept for that content."""
        return {rel: row.names for rel, row in self.table.rows.items() if digests.get(rel) == row.key}


def name_table(ws: Workspace, kept: Kept | None = None) -> NameTable:
    """The definitions of a scanned workspace by name, for a check. `kept`: what the last check left; the
    names of files unchanged since are read from it (not from their facts), and it is written again when
    many files lacked theirs."""
    held = kept.names_of(ws.digests) if kept is not None else {}
    missing = [rel for rel in ws.facts if rel not in held]
    ws.facts.load(missing)
    made = {rel: _names_of(rel, ws.facts[rel], ws.read_text(rel) if rel.endswith((".py", ".pyi")) else "")
            for rel in missing}
    found = {**held, **made}
    if kept is not None and kept.path is not None and _many_missing(len(missing), len(found)):
        imports = ws.facts.imports()
        rows = {rel: names.Row(ws.digests[rel], n, imports.get(rel, ()), ws.stats.get(rel, _NO_STAT))
                for rel, n in found.items() if rel in ws.digests}
        names.save(kept.path, kept.stamp, names.Table(rows, ws.scan_began))
    return NameTable(found, modules_by_name(ws.facts))


def _names_of(rel: str, facts: FileFacts, text: str | None) -> names.FileNames:
    words = set(_RUN.findall(docstrings(facts)))
    return names.FileNames.of(entries_of(rel, facts), tuple(a.name for a in facts.attributes if not a.container),
                              f" {' '.join(words)} " if words else "", tuple(dotted_strings(text or "")))


def _many_missing(missing: int, files: int) -> bool:
    """More than one file in twenty lacks its kept names: below that the file is left as it is (writing
    it again to add one edited file's names was a fifth of a check after the edit)."""
    return missing * 20 > files


def _stamp() -> str:
    """What a file's names are made by: the analysis (its version and variant)."""
    from repodoc_lsp.analysis.treesitter import blank_macros_variant
    from repodoc_lsp.store.cache import ANALYSIS_VERSION

    return f"{ANALYSIS_VERSION}{blank_macros_variant()}"


class NameTable:
    """Definitions by exact name and by file, for a check: no keywords, no search snapshot (building the
    keyword index costs seconds on a large workspace). An entry is made when a lookup asks for it (a
    check after an edit looks up few names of a large workspace)."""

    def __init__(self, files: Mapping[str, names.FileNames], modules: Modules) -> None:
        self._files = files
        self.modules = modules  # every file's module name, for the resolver
        self._modules: dict[str, Entry] = {}
        self._by_name: dict[str, list[tuple[str, int]]] = {}  # name -> (file, row; -1: its module's entry)
        for rel, found in files.items():
            for i, name in enumerate(found.names):
                self._by_name.setdefault(name, []).append((rel, i))
            module = modules.module_of.get(rel, "")
            if module:
                package, _, last = module.rpartition(".")
                self._modules[rel] = Entry(last, MODULE, package, rel, 1, 0, 1)
                self._by_name.setdefault(last, []).append((rel, -1))
        self.assigned = frozenset(a for found in files.values() for a in found.assigned)
        self.strings = frozenset(s for found in files.values() for s in found.strings)  # `Namespaces.strings`

    def _entry(self, rel: str, i: int) -> Entry:
        return self._modules[rel] if i < 0 else self._files[rel].entry(rel, i)

    def lookup(self, name: str) -> list[Entry]:
        return [self._entry(rel, i) for rel, i in self._by_name.get(name, ())]

    def docstring_words(self, rel: str) -> str:
        """The words of a file's docstrings (`names.FileNames.words`); "" for a file of no table."""
        found = self._files.get(rel)
        return found.words if found is not None else ""

    def file_entries(self, rel: str) -> list[Entry]:
        found = self._files.get(rel)
        own = [found.entry(rel, i) for i in range(len(found.names))] if found is not None else []
        return own + ([self._modules[rel]] if rel in self._modules else [])


class DottedStrings:
    """Every Python file's dotted strings (`namespace.dotted_strings`) as a long-lived workspace has them (the
    server's): a file is read again only when its content changed (reading every file for each saved doc
    was most of the time of its diagnostics)."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[str, frozenset[str]]] = {}
        self._all: frozenset[str] = frozenset()

    def of(self, ws: Workspace) -> frozenset[str]:
        rels = {rel for rel in ws.facts if rel.endswith((".py", ".pyi"))}
        changed = [rel for rel in rels if not (held := self._files.get(rel)) or held[0] != ws.digests.get(rel, "")]
        gone = self._files.keys() - rels
        for rel in gone:
            del self._files[rel]
        for rel in changed:
            self._files[rel] = (ws.digests.get(rel, ""), frozenset(dotted_strings(ws.read_text(rel) or "")))
        if changed or gone:
            self._all = frozenset().union(*(found for _, found in self._files.values()))
        return self._all


@dataclass(frozen=True, slots=True)
class Words:
    """The words a reference must hold for a change to alter its verdict."""

    words: frozenset[str]
    pattern: re.Pattern[str]

    def named_in(self, text: str) -> bool:
        """Whether `text` holds one of the words, whole (a plain search first: most texts hold none)."""
        return any(w in text for w in self.words) and self.pattern.search(text) is not None

    def among(self, words: str) -> bool:
        """Whether one of the words is among `words` (`names.FileNames.words`)."""
        return any(f" {w} " in words for w in self.words)


def change_words(ws: Workspace, touched: Iterable[str], old_sources: Mapping[str, str],
                 old_facts: Mapping[str, FileFacts | None]) -> Words:
    """The words of a change: for a Python file changed in place (`old_sources`: its text before,
    `old_facts`: its facts then), the names it binds differently (a definition, import or assignment
    added, removed or changed, a string of a changed line); for a file that appeared or went, that is not
    Python or that makes names wholesale, every name it defines now or defined before, and its name (its
    module, a link or a path to it)."""
    found: set[str] = set()
    for rel in touched:
        now = ws.facts.one(rel) if rel in ws.facts else None
        then = old_facts.get(rel)
        before = old_sources.get(rel)
        text = ws.read_text(rel) if now is not None and before is not None else None
        gone, came = _changed_lines(before, text) if text is not None and before is not None else ("", "")
        if now is None or then is None or text is None or _WHOLESALE.search(gone + "\n" + came):
            stem = posixpath.basename(rel).split(".")[0]
            found.add(posixpath.basename(posixpath.dirname(rel)) if stem == "__init__" else stem)
            found |= _defined(then) | _defined(now)
            continue
        prose = docstrings(then) + docstrings(now)
        was, is_ = _bound(gone, prose), _bound(came, prose)
        found |= {w for w in was.keys() | is_.keys() if was[w] != is_[w]} | _differing(then, now)
    found -= {"", *keyword.kwlist}
    pattern = r"\b(?:" + "|".join(map(re.escape, sorted(found, key=len, reverse=True))) + r")\b"
    return Words(frozenset(found), re.compile(pattern if found else r"(?!)"))


def _changed_lines(before: str, after: str) -> tuple[str, str]:
    """The lines only `before` has and those only `after` has, counted (a line moved unchanged binds what
    it bound; a definition moved to another class shows in the facts)."""
    old, new = Counter(before.splitlines()), Counter(after.splitlines())
    return "\n".join((old - new).elements()), "\n".join((new - old).elements())


def _bound(lines: str, prose: str) -> Counter[str]:
    """How many of `lines` bind each name (as `namespace.binds` judges a line: a def, class, assignment,
    `as`, `for`, a key) or spell it in a whole string (a table a dynamic module reads, a dotted name). Not
    a line of a docstring (`prose`: the words of a sentence are no definitions) nor a comment."""
    found: Counter[str] = Counter()
    for line in lines.split("\n"):
        if line.strip() in prose:
            continue
        code = _COMMENT.sub("", line)
        quoted = [w for m in _QUOTED.finditer(code) for w in m.group(2).split(".")]
        found.update(quoted)
        found.update(w for w in set(_WORD.findall(code)) - set(quoted) if binds(code, w, attributes=True))
    return found


def _differing(then: FileFacts, now: FileFacts) -> set[str]:
    """The names whose definitions differ between two analyses of one file (a definition moved to another
    class, a base class or kind changed, an import or an `__all__` entry added or removed)."""
    return {name for name, _ in _shape(then) ^ _shape(now)}


def _shape(facts: FileFacts) -> set[tuple[str, object]]:
    shape: set[tuple[str, object]] = {(s.name, (s.qualname, s.kind, tuple(s.bases))) for s in facts.symbols}
    shape |= {(a.name, a.qualname) for a in facts.attributes}
    shape |= {(local, (i.module, i.level, name)) for i in facts.imports for local, name in i.bindings()}
    shape |= {(name, "__all__") for name in facts.all_names}
    return shape


def _defined(facts: FileFacts | None) -> set[str]:
    if facts is None:
        return set()
    return {s.name for s in facts.symbols} | {a.name for a in facts.attributes}


def docstrings(facts: FileFacts) -> str:
    """Every docstring of a file's facts, as one text."""
    return "\n".join([facts.module_doc or "", *(s.docstring for s in facts.symbols if s.docstring)])
