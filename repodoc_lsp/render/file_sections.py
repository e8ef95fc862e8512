"""The sections of a file page, worked out from its facts and gathered inputs: classes' attributes and
methods, counts, the class diagram, dependencies, related files, and what the symbol graph says of each
definition as links."""

from __future__ import annotations

import operator
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping

from repodoc_lsp.analysis.model import Attribute, FileFacts, Import, Language, Symbol, SymbolKind
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.docstrings import docstring_attributes
from repodoc_lsp.render.links import folder_label, homes, link_in, near_items, page_link
from repodoc_lsp.render.own_pages import document_kind
from repodoc_lsp.render.paths import docs_page, folder_of
from repodoc_lsp.words import plural

LANG_FENCE = {".py": "python", ".pyi": "python", ".md": "markdown", ".toml": "toml",
               ".json": "json", ".yml": "yaml", ".yaml": "yaml", ".sh": "sh", ".js": "javascript",
               ".ts": "typescript", ".lua": "lua", ".c": "c", ".h": "c", ".cpp": "cpp",
               ".rs": "rust", ".go": "go", ".txt": "text", ".cfg": "ini", ".ini": "ini",
               ".html": "html", ".css": "css", ".rst": "rst", ".vim": "vim"}
TYPE_LABEL = {Language.PYTHON: "Python Source", Language.MARKDOWN: "Markdown Document",
               Language.TEXT: "Text File"}  # a document's label names its kind (`type_label`)
TYPE_LABEL.update({Language.C: "C Source", Language.CPP: "C++ Source", Language.CUDA: "CUDA Source",
                    Language.JAVASCRIPT: "JavaScript Source", Language.TYPESCRIPT: "TypeScript Source",
                    Language.GO: "Go Source", Language.RUST: "Rust Source", Language.JAVA: "Java Source"})


def type_label(rel: str, facts: FileFacts) -> str:
    """The File Metadata's Type: the language's label; a document by its kind
    ("reStructuredText Document", "Markdown Document"), a text file with its extension."""
    ext = posixpath.splitext(rel)[1]
    if facts.language is Language.MARKDOWN:
        return f"{document_kind(rel)} Document"
    if facts.language is Language.TEXT and ext:
        return f"{TYPE_LABEL[Language.TEXT]} ({ext})"
    return TYPE_LABEL[facts.language]


LONGEST_SECTIONS = 3


def outline_shape(headings: list[Symbol], lines: int) -> dict:
    """What a document's outline is made of, for its Architecture & Design: how many headings on
    how many levels, and its longest sections (`LONGEST_SECTIONS`, the longest first): the
    sections under its title when it has one title, else its top-level ones; each section runs
    from its heading to the next heading of its level or above (`{"name", "anchor", "line", "lines"}`)."""
    if not headings:
        return {"headings": 0, "levels": 0, "longest": []}
    levels = sorted({h.level for h in headings})
    top = [h for h in headings if h.level == levels[0]]
    level = levels[1] if len(top) == 1 and len(levels) > 1 else levels[0]
    spans: list[dict] = []
    for i, h in enumerate(headings):
        if h.level != level:
            continue
        end = next((n.line for n in headings[i + 1:] if n.level <= level), lines + 1)
        spans.append({"name": h.name, "anchor": h.anchor, "line": h.line, "lines": end - h.line})
    longest = sorted(spans, key=lambda s: -s["lines"])[:LONGEST_SECTIONS]  # the longest first, then by line
    return {"headings": len(headings), "levels": len(levels), "longest": longest if len(spans) > 1 else []}


def inherited_once(page: str, classes: list[Symbol], xref: dict[str, dict]) -> dict[str, dict]:
    """`xref` with each class's inherited members listed once per page: a class inheriting the same
    members from the same base as a class before it on the page names that class and their count
    instead (`same`): model files list their base model's mixins' members in every class. Only
    where that is shorter than the names (`device`, `dtype` stay as they are)."""
    first: dict[tuple, dict] = {}
    for c in classes:
        for h in xref.get(c.anchor, {}).get("inherited", ()):
            key = (h["href"], tuple(h["members"]), tuple(h["redefined"]))
            same = first.get(key)
            if same is None:
                first[key] = {"text": md.code(c.qualname), "href": page_link(page, page, c.anchor)}
            elif len(f"the {len(h['members'])} listed for [{same['text']}]({same['href']})") < \
                    sum(len(md.code(name)) + 2 for name in h["members"]) - 2:
                h["same"] = same
    return xref


DIAGRAM_NODES = 20
_MERMAID_UNSAFE = re.compile(r"[^\w./ ()-]")


def hierarchy(rel: str, classes: list[Symbol], xref: dict[str, dict]) -> dict | None:
    """A Mermaid flowchart of this file's classes and the workspace classes they derive from
    (an arrow from each class to its base), when at least three classes are related; at most
    `DIAGRAM_NODES` nodes, the edges left out counted."""
    edges = []
    for c in classes:
        for r, qual, _anchor in (xref.get(c.anchor) or {}).get("bases", {}).values():
            edges.append(((rel, c.qualname), (r, qual)))
    nodes: dict[tuple[str, str], str] = {}
    shown, left = [], 0
    for sub, base in edges:
        new = [n for n in dict.fromkeys((sub, base)) if n not in nodes]
        if len(nodes) + len(new) > DIAGRAM_NODES:
            left += 1
            continue
        for n in new:
            nodes[n] = f"n{len(nodes)}"
        shown.append(f"  {nodes[sub]} --> {nodes[base]}")
    if len(nodes) < 3:
        return None
    lines = ["flowchart BT"]
    for (r, qual), ident in nodes.items():
        label = qual if r == rel else f"{qual} ({posixpath.basename(r)})"
        lines.append(f'  {ident}["{_MERMAID_UNSAFE.sub("_", label)}"]')
    return {"text": "\n".join(lines + shown), "nodes": len(nodes), "edges": len(shown), "left": left}


_OVERLOAD = re.compile(r"^(?:\w+\.)*_?overload$")  # `@overload`, `@typing.overload`, `@_overload`


def _is_overload(s: Symbol) -> bool:
    return any(_OVERLOAD.match(d) for d in s.decorators)


def fold_overloads(symbols: list[Symbol], moved: Mapping[str, int],
                   overloads: dict[str, list[Symbol]], renamed: dict[str, str]) -> list[Symbol]:
    """`symbols` (functions, or one class's methods) with the `@overload`s of each name folded into one
    entry: its implementation (the definition without `@overload`, else the last), the others added to
    `overloads` by its anchor, and the anchor of the name's first definition (which other pages link
    and the symbol graph's users are kept by) mapped to it in `renamed`. Not where the parts rule
    (`moved`) puts them on different pages."""
    by_name: dict[str, list[Symbol]] = {}
    for s in symbols:
        by_name.setdefault(s.qualname, []).append(s)
    kept = []
    for s in symbols:
        group = by_name[s.qualname]
        if len(group) == 1 or not any(map(_is_overload, group)) or len({moved.get(g.anchor, 1) for g in group}) > 1:
            kept.append(s)
            continue
        main = next((g for g in group if not _is_overload(g)), group[-1])
        if s is main:
            kept.append(s)
            overloads[main.anchor] = [g for g in group if g is not main]
            renamed[group[0].anchor] = main.anchor
    return kept


def class_bases(c: Symbol) -> tuple[list[str], str]:
    """A class's bases as written, its keywords aside (`metaclass=M`, `total=False`: not bases), and
    its metaclass ("" when it names none)."""
    bases = [b for b in c.bases if "=" not in b.split("[", 1)[0]]
    metaclass = next((b.split("=", 1)[1] for b in c.bases if b.startswith("metaclass=")), "")
    return bases, metaclass


_ENUM_BASES = frozenset(("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"))
_FIELD_BASES = frozenset(("NamedTuple", "TypedDict"))
_DATACLASS = re.compile(r"^(?:\w+\.)*(?:dataclass|define|frozen|mutable|attrs|s)\b")


def _attribute_title(c: Symbol) -> str:
    """What a class's attributes are called on its entry: enum members, fields or attributes."""
    bases = {b.split("[", 1)[0].rsplit(".", 1)[-1] for b in c.bases}
    if bases & _ENUM_BASES:
        return "Members"
    if bases & _FIELD_BASES or any(_DATACLASS.match(d) for d in c.decorators):
        return "Fields"
    return "Attributes"


def _attribute_entry(a: Attribute, anchor: str) -> dict:
    text = ("self." if a.instance else "") + a.name + (f": {a.annotation}" if a.annotation else "") \
        + (f" = {a.value}" if a.value else "")
    return {"name": a.name, "anchor": anchor, "text": text, "line": a.line, "instance": a.instance, "doc": ""}


_BY_INSTANCE_LINE = operator.attrgetter("instance", "line")  # class body first, then `self.x`, by line


def attributes(facts: FileFacts, classes: list[Symbol]) -> tuple[dict[str, dict], list[dict]]:
    """Each class's attributes (by the class's anchor: a title and the first assignment of each
    name, class body before `self.x` in `__init__`) and the module-level names (`__all__` aside),
    anchored `attr-qualname`."""
    same_name: dict[str, list[Symbol]] = {}
    for c in classes:
        same_name.setdefault(c.qualname, []).append(c)
    seen: set[str] = set()
    of_class: dict[str, dict] = {}
    module: list[dict] = []
    # in (instance, line) order: each class's entries are in that order as they are added
    for a in sorted(facts.attributes, key=_BY_INSTANCE_LINE):
        qualname = a.qualname
        if qualname in seen or qualname == "__all__":
            continue
        seen.add(qualname)
        entry = _attribute_entry(a, f"attr-{qualname}")
        if not a.container:
            module.append(entry)
            continue
        candidates = same_name.get(a.container)
        if not candidates:
            continue
        owner = candidates[0] if len(candidates) == 1 else \
            next((c for c in candidates if c.line <= a.line <= c.end_line), candidates[0])
        group = of_class.get(owner.anchor)
        if group is None:  # the class's title worked out once, not per attribute
            group = of_class[owner.anchor] = {"title": _attribute_title(owner), "entries": []}
        group["entries"].append(entry)
    module.sort(key=_LINE)
    return of_class, module


_LINE = operator.itemgetter("line")


def documented_attributes(classes: list[Symbol], attributes_of: dict[str, dict],
                          moved: Mapping[str, int]) -> dict[str, str]:
    """The docstrings (as Markdown) of the classes whose docstring has an Attributes section and whose
    attributes the page lists, without that section: its descriptions join the entries of
    `attributes_of` (one list), a name the analysis did not find listed after them, unanchored. A
    class whose members go to part pages (`moved`) keeps its docstring whole."""
    docs: dict[str, str] = {}
    for c in classes:
        group = attributes_of.get(c.anchor)
        if not group or not c.docstring or c.anchor in moved:
            continue
        kept, described = docstring_attributes(c.docstring)
        if not described:
            continue
        entries = {e["name"]: e for e in group["entries"]}
        for name, annotation, doc in described:
            entry = entries.get(name)
            if entry is None:
                entry = entries[name] = {"name": name, "anchor": "", "text": name + (f": {annotation}" if annotation
                                                                                    else ""),
                                         "line": 0, "instance": False, "doc": ""}
                group["entries"].append(entry)
            entry["doc"] = entry["doc"] or doc
        docs[c.anchor] = kept
    return docs


def methods_by_class(symbols: Iterable[Symbol], classes: list[Symbol]) -> dict[str, list[Symbol]]:
    """Methods by the anchor of the class whose lines hold them: two classes of one name (defined
    under `if`/`else`) each keep their own methods."""
    same_name: dict[str, list[Symbol]] = {}
    for c in classes:
        same_name.setdefault(c.qualname, []).append(c)
    methods_of: dict[str, list[Symbol]] = {}
    method = SymbolKind.METHOD
    for s in symbols:
        if s.kind is method and (candidates := same_name.get(s.container)) is not None:
            owner = candidates[0] if len(candidates) == 1 else \
                next((c for c in candidates if c.line <= s.line <= c.end_line), candidates[0])
            methods_of.setdefault(owner.anchor, []).append(s)
    return methods_of


def symbol_counts(facts: FileFacts) -> dict[str, int]:
    """What a file page counts (`counts`): its symbols by kind, the classes and functions at
    module level (not inside a class or function) and the functions nested in one, its modules
    imported and its lines. Counted here once, not by the template's filters (`selectattr`)."""
    c = Counter(s.kind for s in facts.symbols)
    top = Counter(s.kind for s in facts.symbols if not s.container)
    return {"classes": c[SymbolKind.CLASS], "functions": c[SymbolKind.FUNCTION],
            "methods": c[SymbolKind.METHOD], "headings": c[SymbolKind.HEADING],
            "imports": len({i.module for i in facts.imports}), "lines": facts.lines,
            "module_classes": top[SymbolKind.CLASS], "module_functions": top[SymbolKind.FUNCTION],
            "nested_functions": c[SymbolKind.FUNCTION] - top[SymbolKind.FUNCTION]}


def xref_links(page: str, xref: dict[str, dict]) -> dict[str, dict]:
    """Used by, subclassed by and inherited members, as links, by the anchor of the definition
    (`page_link`s from the page's folder, worked out once)."""
    where = homes(page)[0]
    return {anchor: {
        # a "Used by" list: with how many lines name the definition
        "users": near_items(page, ((r, f" ({plural(n, 'line')})") for r, n in x["users"])),
        "subclasses": [{"text": md.code(qual), "short": md.code(qual), "key": f"{r}\0{qual}",
                        "href": link_in(where, docs_page(r), sub), "group": folder_label(folder_of(r)),
                        "note": "" if docs_page(r) == page else f" in {md.code(r)}"}
                       for r, qual, sub in x["subclasses"]],
        "inherited": [{"rel": r, "qual": qual, "href": link_in(where, docs_page(r), origin),
                       "members": members, "redefined": redefined, "same": None}
                      for r, qual, origin, members, redefined in x["inherited"]],
        "bases": {text: link_in(where, docs_page(r), base) for text, (r, _q, base) in x["bases"].items()},
        "users_away": "", "subclasses_away": "", "named": 0,  # links to a part page of lists (`fit.py`)
    } for anchor, x in xref.items()}


def named_links(page: str, named: dict[str, tuple[list[tuple[str, int]], int]]) -> dict[str, dict]:
    """The "Used by" of definitions of a tree-sitter file (`gather._named_users`): files naming them, by
    name (no resolution), as `xref_links` makes its entries, with `named`: how many files in all."""
    return {anchor: {"users": near_items(page, ((r, f" (line {line})") for r, line in shown)), "named": total,
                     "subclasses": [], "inherited": [], "bases": {}, "users_away": "", "subclasses_away": ""}
            for anchor, (shown, total) in named.items()}


def source_label(facts: FileFacts, size: int) -> str:
    """`1,003 lines, 41.2 KB`: the summary of the folded source."""
    return f"{plural(facts.lines, 'line', grouped=True)}, {md.size_short(size)}"


def related(page: str, rel: str, inputs: dict) -> tuple[list[tuple[str, list[dict]]], dict[str, int]]:
    """Related Files: how many files there are of each relation (the files `rel` imports, its
    tests, the files importing it, its folder's other files; each counted once, under its first
    relation). The first three are listed in full on this page already (Dependencies, Testing &
    Usage, Imported by), so they are counted here and linked to, not listed twice; the folder's
    other files are counted and linked to its index, which lists each with its purpose (their
    names on every page of the folder took 2-7% of a small project's tree: bench/README.md)."""
    seen = {rel}
    counts: dict[str, int] = {}
    tests = set(inputs["tests"])
    importers = [r for r in inputs["importers"] if r not in tests]  # counted only: in any order
    imported = [t for cat, targets, _absolute in inputs["links"] if cat == "workspace" for t in targets]
    for relation, rels in (("it imports", imported), ("test", inputs["tests"]), ("imports it", importers)):
        for r in rels:
            if r not in seen:
                seen.add(r)
                counts[relation] = counts.get(relation, 0) + 1
    same = inputs["siblings"]  # the folder's other files but those: how many
    if not same:
        return [], counts
    counts["same folder"] = same
    return [("same folder", [])], counts


def dependencies(page: str, imports: Iterable[Import], links: Iterable[tuple[str, tuple[str, ...], str]],
                 modules: Mapping[str, str], unpaged: Iterable[str] = ()) -> dict[str, list[dict]]:
    """Imports by category, one entry per module as written: the module links to its own page and
    each imported name that is a submodule to its page (`from pkg import a`: `pkg` and `a`); a file
    without pages (`unpaged`, `modules` leaves them out) is named, not linked."""
    no_page = set(unpaged)
    groups: dict[str, dict[str, dict]] = {"stdlib": {}, "third-party": {}, "workspace": {}}
    for imp, (cat, targets, absolute) in zip(imports, links, strict=True):
        entry = groups[cat].setdefault(imp.module, {
            "module": imp.module, "anchor": imp.anchor, "lines": [], "names": [], "seen": set(),
            "href": "", "found": False})
        entry["lines"].append(imp.line)
        if not entry["href"] and absolute in modules:
            entry["href"] = page_link(page, docs_page(modules[absolute]))
        elif not entry["href"] and imp.level < 0 and targets and targets[0] not in no_page:  # `#include`: its file
            entry["href"] = page_link(page, docs_page(targets[0]))
        for name in (*imp.names, "*") if imp.star else imp.names:  # `from m import *` shows its `*`
            if name not in entry["seen"]:
                entry["seen"].add(name)
                sub = modules.get(f"{absolute}.{name}" if absolute else name)
                entry["names"].append({"name": name, "href": page_link(page, docs_page(sub)) if sub else ""})
        entry["found"] = entry["found"] or bool(targets)
    return {cat: list(entries.values()) for cat, entries in groups.items()}
