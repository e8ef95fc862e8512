"""A purpose line for every file: what the file says it is for, else what its content shows.

The module docstring's first sentence when there is one; else a line derived from the file's own
facts, never invented: its `__all__`, its main definitions and their docstrings, its module-level
names, its imports, or what little it holds. A derived line says what it was derived from, so a
reader can tell the author's words from repodoc's. Only the file's facts are read (no other file,
no graph): the line is the same on the file's page, its folder's `index.md` and `doc.md`.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from repodoc_lsp.analysis.model import FileFacts, Language, Symbol, SymbolKind
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.epytext import epytext_as_rest
from repodoc_lsp.render.own_pages import document_kind
from repodoc_lsp.render.rest import clean, roles_as_literals
from repodoc_lsp.words import plural, plural_of

SHOWN_NAMES = 3  # names listed in a derived line before "and N more"
MAX_SUMMARY = 240  # characters of a docstring's sentence kept in a one-line summary
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])")


@dataclass(frozen=True, slots=True)
class Purpose:
    """`text`: one line of Markdown; `origin`: "" when the file says it (its module docstring or
    title), else what the line was derived from (Markdown, e.g. "its definitions")."""

    text: str
    origin: str = ""

    @property
    def derived(self) -> bool:
        return bool(self.origin)


@functools.lru_cache(maxsize=4096)
def first_sentence(doc: str | None) -> str:
    """A docstring's first paragraph as one line, cut to its first sentence when that is long
    (`MAX_SUMMARY` characters at most, cut at a word with `…`); roles and epytext's markup as literals.
    Plain text.
    Kept: a file's purpose is made for its page, its folder's `index.md` and `doc.md`, and asks
    for the first sentence of each of its definitions until one has a docstring."""
    if not doc or not doc.strip():
        return ""
    paragraph = " ".join(line.strip() for line in clean(doc).split("\n\n", 1)[0].splitlines())
    paragraph = " ".join(paragraph.split())
    if "{" in paragraph:  # epytext's markup (`L{x}`)
        paragraph = epytext_as_rest(paragraph, summary=True)
    paragraph = roles_as_literals(paragraph)
    if len(paragraph) > MAX_SUMMARY // 2:
        paragraph = _SENTENCE_END.split(paragraph, 1)[0]
    if len(paragraph) > MAX_SUMMARY:
        paragraph = paragraph[:MAX_SUMMARY].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return paragraph


def _names(names: list[str]) -> str:
    shown = ", ".join(md.code(n) for n in names[:SHOWN_NAMES])
    more = len(names) - SHOWN_NAMES
    return f"{shown} and {more:,} more" if more > 0 else shown


def _kind_names(kind: str, names: list[str]) -> str:
    return f"{kind if len(names) == 1 else plural_of(kind)} {_names(names)}"


def _main(symbols: list[Symbol], used: Mapping[str, int]) -> Symbol | None:
    """The definition whose docstring speaks for the file: the most used public one with a
    docstring (`_ranked`); with no use known, a public class, else a public function (in file order)."""
    documented = [s for s in symbols if not s.name.startswith("_") and first_sentence(s.docstring)]
    if used and any(used.get(s.name) for s in documented):
        return documented[0]
    for kind in (SymbolKind.CLASS, SymbolKind.FUNCTION):
        for s in documented:
            if s.kind is kind:
                return s
    return None


def _ranked(rel: str, symbols: list[Symbol], used: Mapping[str, int]) -> list[Symbol]:
    """`symbols`, the most used first (how many other files use each: the symbol graph), then one
    named like the file (`Graph` of `graph.py`), then in file order."""
    stem = posixpath.splitext(posixpath.basename(rel))[0].replace("_", "").lower()
    return sorted(symbols, key=lambda s: (-used.get(s.name, 0), s.name.replace("_", "").lower() != stem))


def _said(s: Symbol) -> str:
    return f"{md.code(s.name)}: {md.inline(first_sentence(s.docstring))}"


# id(facts) -> (what `_file_purpose` read of them, its line): the last files asked about
_PURPOSES: dict[int, tuple[tuple, tuple[str, Mapping[str, int]], Purpose]] = {}
_KEEP = 128  # a render worker's part holds at most 80 files (`generate._MOST` pages, 2 a file)


def file_purpose(rel: str, facts: FileFacts, used: Mapping[str, int] | None = None) -> Purpose:
    """The purpose line of `rel` (see the module's docstring), kept for the last files asked about:
    a render worker shows it on the file's page, its folder's `index.md` and `doc.md`. Kept with
    everything it is made of (the facts' fields as they are, by identity). `used`: how many other
    files use each module-level name (the symbol graph; the pages gather it): a derived line
    features the most used first."""
    used = used or {}
    read = (facts, facts.language, facts.lines, facts.module_doc, facts.all_names, facts.symbols,
            facts.attributes, facts.imports, facts.syntax_error)
    hit = _PURPOSES.get(id(facts))
    if hit is not None and hit[1] == (rel, used) and all(a is b for a, b in zip(hit[0], read, strict=True)):
        return hit[2]
    found = _file_purpose(rel, facts, used)
    if len(_PURPOSES) >= _KEEP:  # the oldest goes (threads of the server may ask too: no KeyError)
        _PURPOSES.pop(next(iter(_PURPOSES), 0), None)
    _PURPOSES[id(facts)] = (read, (rel, dict(used)), found)
    return found


def _file_purpose(rel: str, facts: FileFacts, used: Mapping[str, int]) -> Purpose:
    if facts.language is Language.MARKDOWN:
        title = next((s.name for s in facts.symbols if s.kind is SymbolKind.HEADING), "")
        said = first_sentence(facts.module_doc)
        if said:  # its first paragraph of prose (not a title, badges or HTML)
            return Purpose(md.inline(said))
        kind = document_kind(rel)
        if title:
            return Purpose(f"A {kind} document titled {md.code(title)}.")
        return Purpose(f"A {kind} document of {plural(facts.lines, 'line', grouped=True)} without headings.",
                       "its contents")
    if facts.language is Language.TEXT:  # code of another language: its doc comment or definitions
        ext = posixpath.splitext(rel)[1]
        kind = f"A text file ({md.code(ext)})" if ext else "A text file"
        return Purpose(f"{kind} of {plural(facts.lines, 'line', grouped=True)}.", "its name and size")
    said = first_sentence(facts.module_doc)
    if said:
        return Purpose(md.inline(said))
    return _derived(rel, facts, used)


def _gathered(rel: str, facts: FileFacts, defined: int) -> str:
    """What a package's `__init__.py` gathers from its own modules ("" when it gathers fewer names
    than it defines): the names, the modules, and those it takes every public name of (`import *`)."""
    if posixpath.basename(rel) != "__init__.py":
        return ""
    package = posixpath.basename(posixpath.dirname(rel))
    own = [i for i in facts.imports
           if i.level > 0 or (package and f".{package}." in f".{i.module}.")]
    taken = list(dict.fromkeys(n for i in own if not i.star for n in i.names if not n.startswith("_")))
    stars = list(dict.fromkeys(i.module for i in own if i.star))
    if not stars and (len(taken) < 3 or len(taken) <= defined):
        return ""
    what = []
    if taken:
        modules = list(dict.fromkeys(i.module for i in own if not i.star and i.names))
        what.append(f"{_names(taken)} from {_names(modules)}")
    if stars:
        what.append(f"every public name of {_names(stars)}")
    return f"Gathers {' and '.join(what)} into the package."


def _derived(rel: str, facts: FileFacts, used: Mapping[str, int]) -> Purpose:
    top = _ranked(rel, [s for s in facts.symbols if not s.container and s.kind in (SymbolKind.CLASS,
                                                                                  SymbolKind.FUNCTION)], used)
    main = _main(top, used)
    if facts.all_names:
        listed = list(dict.fromkeys(facts.all_names))
        order = {s.name: i for i, s in enumerate(top)}  # a name that is no definition of the file: after
        names = sorted(listed, key=lambda n: (-used.get(n, 0), order.get(n, len(order))))
        main = next((s for n in names for s in top if s.name == n and first_sentence(s.docstring)), None)
        text = f"Public API (`__all__`): {_names(names)}."
        if main:
            return Purpose(f"{text} {_said(main)}", f"`__all__` and the docstring of {md.code(main.name)}")
        return Purpose(text, "`__all__`")
    gathered = _gathered(rel, facts, len([s for s in top if not s.name.startswith("_")]))
    if gathered:
        own = list(dict.fromkeys(s.name for s in top if not s.name.startswith("_")))
        also = f" Also defines {_names(own)}." if own else ""
        return Purpose(gathered + also, "its imports")
    if top:
        public = [s for s in top if not s.name.startswith("_")] or top
        kinds = [k for k in (SymbolKind.CLASS, SymbolKind.FUNCTION) if any(s.kind is k for s in public)]
        if used.get(public[0].name):  # the kind of the most used first
            kinds.sort(key=lambda k: k is not public[0].kind)
        parts = [_kind_names(kind.value, list(dict.fromkeys(s.name for s in public if s.kind is kind)))
                 for kind in kinds]
        text = f"Defines {' and '.join(parts)}."
        if main:
            return Purpose(f"{text} {_said(main)}", f"its definitions and the docstring of {md.code(main.name)}")
        return Purpose(text, "its definitions")
    names = [a.name for a in facts.attributes if not a.container]
    if names:
        return Purpose(f"Sets module-level {'name' if len(set(names)) == 1 else 'names'} "
                       f"{_names(list(dict.fromkeys(names)))}; defines no class or function.", "its assignments")
    if facts.imports:
        modules = list(dict.fromkeys(i.module for i in facts.imports))
        taken = list(dict.fromkeys(n for i in facts.imports for n in i.names))
        if posixpath.basename(rel) == "__init__.py" and taken:
            return Purpose(f"Gathers {_names(taken)} from {_names(modules)} into the package.", "its imports")
        return Purpose(f"Imports {_names(modules)}; defines nothing.", "its imports")
    if facts.syntax_error:
        return Purpose(f"Does not parse (line {facts.syntax_error.line}); nothing could be read from it.",
                       "its contents")
    if posixpath.basename(rel) == "__init__.py":
        folder = posixpath.dirname(rel)
        what = f"makes {md.code(folder)} a package" if folder else "marks the root as a package"
        if facts.lines == 0:
            return Purpose(f"An empty `__init__.py`: it {what}.", "its contents")
        return Purpose(f"An `__init__.py` with no definitions or imports: it {what}.", "its contents")
    if facts.lines == 0:
        return Purpose("An empty file.", "its contents")
    return Purpose(f"{plural(facts.lines, 'line', grouped=True)} with no definitions, "
                   "assignments or imports.", "its contents")
