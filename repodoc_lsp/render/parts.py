"""Part pages: which entries leave a file page for a part page next to it.

A file page over the size budget keeps every section, every class entry and its module-level
names (the anchors other pages link to most); its classes' members (attributes and methods, with
their anchors), its functions, and the lines of its local classes when they are many (their
members' anchors with them), go to part pages: `c.py_docs.part2.md`, `c.py_docs.part3.md`, ... The rule reads one
file's facts and nothing else (not the symbol graph, not another file), so a page linking to a
member of that file knows where it is from the same facts: the symbol graph is given each file's
part map (`definition_parts`) and keeps it in what its resolutions consult, the keyword index reads
it from the facts, the server's links too.
"""

from __future__ import annotations

import posixpath
from collections.abc import Container

from repodoc_lsp.analysis.model import Attribute, FileFacts, Symbol, SymbolKind

# Estimated bytes of a file's class members (see `_estimate`) beyond which they go to parts,
# and how many estimated bytes a part takes at most (a class's members are never split).
SPLIT_AT = 40_000
PART_BUDGET = 50_000
_ENTRY = 110  # an entry's anchor, bullet, line link and blank lines
_PART = ".part"


def part_page(rel: str, n: int) -> str:
    """Where part `n` (2, 3, ...) of `rel`'s page lives; part 1 is the page itself."""
    return f"{rel}_docs{_PART}{n}.md" if n > 1 else f"{rel}_docs.md"


def part_paths(page: str, known: Container[str]) -> list[str]:
    """The part pages of the file page `page` (`c.py_docs.md`) among `known` (a manifest's
    pages), in order: parts are numbered from 2 without gaps."""
    stem = page[: -len(".md")]
    found = []
    n = 2
    while f"{stem}{_PART}{n}.md" in known:
        found.append(f"{stem}{_PART}{n}.md")
        n += 1
    return found


def page_of_part(part: str) -> str:
    """The file page a part page belongs to (`c.py_docs.part2.md` -> `c.py_docs.md`)."""
    return part.rpartition(_PART)[0] + ".md"


def is_part(page: str) -> bool:
    """True for a part page's path (`c.py_docs.part2.md`)."""
    name = posixpath.basename(page)
    stem, dot, n = name[: -len(".md")].rpartition(_PART) if name.endswith(".md") else ("", "", "")
    return bool(dot) and stem.endswith("_docs") and n.isdigit() and n[0] != "0"


def anchor_of(kind: str, qualname: str) -> str:
    """The anchor of a definition of the symbol graph (kind class, function, method or attribute)
    on its file's page: symbols are anchored in line order, so the first of a qualname has it."""
    return f"{'attr' if kind == 'attribute' else kind}-{qualname}"


def owner(candidates: list[Symbol], line: int) -> Symbol:
    """Of the classes of one qualname (defined under `if`/`else`), the one whose lines hold `line`."""
    if len(candidates) == 1:
        return candidates[0]
    return next((c for c in candidates if c.line <= line <= c.end_line), candidates[0])


def local_classes(facts: FileFacts) -> frozenset[str]:
    """The anchors of the classes defined inside a function's body (a test's fixture, a closure's
    helper), or inside such a class: no other file can import them, so their page entry is one
    compact line that keeps their members' anchors; their members never leave it, and the lines
    go to parts of their own only when there are so many that they would fill the page."""
    scopes: set[str] = set()  # qualnames of functions, methods and local classes
    found = set()
    for s in facts.symbols:  # in line order: a scope before what it holds
        if s.kind is SymbolKind.CLASS:
            if s.container in scopes:
                found.add(s.anchor)
                scopes.add(s.qualname)
        elif s.kind in (SymbolKind.FUNCTION, SymbolKind.METHOD):
            scopes.add(s.qualname)
    return frozenset(found)


def _estimate(text_lengths: int, qualname: str) -> int:
    return _ENTRY + 2 * len(qualname) + text_lengths


def _symbol_estimate(s: Symbol) -> int:
    """A method's or function's entry (a function's also takes a heading of its own)."""
    heading = _ENTRY if s.kind is SymbolKind.FUNCTION else 0
    return _estimate(len(s.signature) + len(s.docstring or "") + heading, s.qualname)


def _attribute_estimate(a: Attribute) -> int:
    return _estimate(len(a.annotation) + len(a.value), a.qualname)


def _class_estimate(c: Symbol) -> int:
    """A class at most takes in a local class's line, its members aside (`_local_estimate`)."""
    return _estimate(len(c.docstring or "") + sum(len(b) + 2 for b in c.bases), c.qualname)


def _local_estimate(c: Symbol, members: list[tuple[str, int]]) -> int:
    """A local class's line: its heading and first docstring line, and an anchor and a name for
    each of its members (`members`: their anchors, with estimates not used here)."""
    return (_estimate(sum(len(b) + 2 for b in c.bases) + len((c.docstring or "").partition("\n")[0]), c.qualname)
            + sum(len(m) + len(m.rpartition(".")[2]) + 30 for m, _w in members))


def _bound(facts: FileFacts) -> int:
    """The estimates of every method and function (`_symbol_estimate`), class attribute
    (`_attribute_estimate`) and class (`_class_estimate`) of `facts` added up: no less than what the
    members or the local classes' lines take (`_local_estimate`). Written out: two calls per
    definition of every file took two thirds of `_assign`'s time."""
    method, function, klass = SymbolKind.METHOD, SymbolKind.FUNCTION, SymbolKind.CLASS
    total = 0
    for s in facts.symbols:
        kind = s.kind
        if kind is klass:
            total += _ENTRY + 2 * len(s.qualname) + len(s.docstring or "") + sum(len(b) + 2 for b in s.bases)
        elif kind is method or kind is function:
            heading = _ENTRY if kind is function else 0
            total += _ENTRY + 2 * len(s.qualname) + len(s.signature) + len(s.docstring or "") + heading
    for a in facts.attributes:
        if a.container:  # its qualname: container.name
            total += _ENTRY + 2 * (len(a.container) + 1 + len(a.name)) + len(a.annotation) + len(a.value)
    return total


Assigned = tuple[dict[str, list[int]], dict[str, int]]
# The rule's answers for the facts last asked about, by the facts' identity (with the tuples it
# reads, so facts given other symbols are asked again): a render worker asks it for a file's page,
# its keyword page and its folder's page from the same facts. A few, to hold no facts for long.
_ASSIGNED: dict[int, tuple[FileFacts, tuple[Symbol, ...], tuple[Attribute, ...], Assigned]] = {}
_KEEP = 64


def assign(facts: FileFacts) -> Assigned:
    """`_assign(facts)`, kept for the last facts asked about (do not change what it returns)."""
    hit = _ASSIGNED.get(id(facts))
    if hit is not None and hit[0] is facts and hit[1] is facts.symbols and hit[2] is facts.attributes:
        return hit[3]
    found = _assign(facts)
    if len(_ASSIGNED) >= _KEEP:  # the oldest goes (threads of the server may ask too: no KeyError)
        _ASSIGNED.pop(next(iter(_ASSIGNED), 0), None)
    _ASSIGNED[id(facts)] = (facts, facts.symbols, facts.attributes, found)
    return found


def _assign(facts: FileFacts) -> Assigned:
    """(the parts of each class whose members leave the page, by its anchor; the part of each
    anchor that leaves: methods, attributes, functions). Both empty when the page keeps them all.

    Each member and function is estimated from its facts (signature, docstring, attribute text,
    a fixed cost per entry). When they take more than `SPLIT_AT` together, they go to parts in
    page order (each class's attributes and methods, then the functions), each part taking at most
    `PART_BUDGET`: a class's members stay together unless they alone take more. The members of a
    local class (`local_classes`) stay on its line; when those lines take more than `SPLIT_AT`
    together, they go whole, with their members' anchors, to parts of their own after those (the
    class's own anchor stays on the page, as every class's does)."""
    # A bound first (every method, function, class attribute and class counted): most files stay
    # whole, and this rule runs for every file when the graph is built and when its page renders.
    if _bound(facts) <= SPLIT_AT:
        return {}, {}
    local = local_classes(facts)
    classes = [s for s in facts.symbols if s.kind is SymbolKind.CLASS]
    same: dict[str, list[Symbol]] = {}
    for c in classes:
        same.setdefault(c.qualname, []).append(c)
    entries: dict[str, list[tuple[str, int]]] = {}  # class anchor -> (member anchor, estimate), page order
    seen: set[str] = set()
    for a in sorted(facts.attributes, key=lambda a: (a.instance, a.line)):  # the page anchors the first
        if a.container in same and a.qualname not in seen and a.qualname != "__all__":
            seen.add(a.qualname)
            entries.setdefault(owner(same[a.container], a.line).anchor, []).append(
                (f"attr-{a.qualname}", _attribute_estimate(a)))
    functions: list[tuple[str, int]] = []
    for s in facts.symbols:
        if s.kind is SymbolKind.METHOD and s.container in same:
            entries.setdefault(owner(same[s.container], s.line).anchor, []).append((s.anchor, _symbol_estimate(s)))
        elif s.kind is SymbolKind.FUNCTION:
            functions.append((s.anchor, _symbol_estimate(s)))
    groups = [(c.anchor, entries[c.anchor]) for c in classes if c.anchor in entries and c.anchor not in local]
    groups += [("", [f]) for f in functions]
    of_class: dict[str, list[int]] = {}
    found: dict[str, int] = {}
    n, used = 1, 0
    if sum(w for _owner, group in groups for _a, w in group) > SPLIT_AT:
        n = 2
        for owner_anchor, group in groups:
            total = sum(w for _a, w in group)
            if used and used + total > PART_BUDGET:
                n, used = n + 1, 0
            for anchor, w in group:  # only a group over the budget alone goes on past it
                if used and used + w > PART_BUDGET:
                    n, used = n + 1, 0
                found[anchor] = n
                used += w
                if owner_anchor and n not in of_class.setdefault(owner_anchor, []):
                    of_class[owner_anchor].append(n)
    lines = [(c.anchor, _local_estimate(c, entries.get(c.anchor, []))) for c in classes if c.anchor in local]
    if sum(w for _c, w in lines) > SPLIT_AT:  # many local classes: their lines, whole, on parts of their own
        n, used = n + 1, 0
        for anchor, w in lines:
            if used and used + w > PART_BUDGET:
                n, used = n + 1, 0
            of_class[anchor] = [n]
            found.update((m, n) for m, _w in entries.get(anchor, ()))
            used += w
    return of_class, found


def moved_bytes(facts: FileFacts, found: Container[str]) -> int:
    """The estimated bytes (`assign`'s estimate) of the entries of `facts` whose anchors are in
    `found`: what the parts take of the page's analysis in one piece."""
    total = sum(_symbol_estimate(s) for s in facts.symbols
                if s.kind in (SymbolKind.METHOD, SymbolKind.FUNCTION) and s.anchor in found)
    seen: set[str] = set()
    for a in facts.attributes:  # each qualname once, as the page anchors it
        if a.qualname not in seen and f"attr-{a.qualname}" in found:
            seen.add(a.qualname)
            total += _attribute_estimate(a)
    return total


def plan(facts: FileFacts) -> dict[str, int]:
    """The part of each entry that leaves the page (`assign`): members and functions by their
    anchors, and each class whose members leave by its anchor (its first part); empty when the
    page keeps them all."""
    of_class, found = assign(facts)
    return {**{c: ns[0] for c, ns in of_class.items()}, **found}


def member_parts(facts: FileFacts) -> dict[str, int]:
    """The part of each anchor that leaves the page: functions (`function-f`) and the members of
    classes (`method-C.m`, `attr-C.x`); empty when nothing leaves."""
    return assign(facts)[1]


_KIND_OF = {"attr": "attribute"}  # an anchor's prefix -> the symbol graph's kind, where they differ


def definition_parts(facts: FileFacts) -> dict[tuple[str, str], int]:
    """`member_parts` keyed as the symbol graph names definitions, (kind, qualname): the rule as the
    graph is given it (`Graph(parts=...)`)."""
    found = {}
    for anchor, n in member_parts(facts).items():
        prefix, _, qualname = anchor.partition("-")
        found[(_KIND_OF.get(prefix, prefix), qualname)] = n
    return found


def part_of(facts: FileFacts | None, anchor: str) -> int:
    """The part of its file's page that holds `anchor` (1: the page itself)."""
    return member_parts(facts).get(anchor, 1) if facts is not None and anchor else 1


def page_of(rel: str, facts: FileFacts | None, anchor: str) -> str:
    """The page of `rel` that holds `anchor` (its file page, or the part its member went to)."""
    return part_page(rel, part_of(facts, anchor))
