"""What each page's view reads, gathered from the site (`GATHER`, one function per page kind).

A view reads only what its gather function returns, the site's constants and the facts of the
files it names (by digest), so a digest of the gathered value is the page's key: a page changes
exactly when its key does.
"""

from __future__ import annotations

import bisect
import operator
import posixpath
from collections.abc import Callable, Iterable, Mapping
from itertools import filterfalse

from repodoc_lsp.analysis.model import Symbol, SymbolKind
from repodoc_lsp.analysis.treesitter.byname import is_tree_sitter, shows_users
from repodoc_lsp.knowledge.graph import Def, Graph, Key, base_name
from repodoc_lsp.render import llms
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.anchors import AnchorState, definitions, pack
from repodoc_lsp.render.anchors import aliases as anchor_aliases
from repodoc_lsp.render.links import LIST_LIMIT
from repodoc_lsp.render.parts import anchor_of
from repodoc_lsp.render.paths import docs_page, folder_index, folder_of
from repodoc_lsp.render.purpose import file_purpose, first_sentence
from repodoc_lsp.render.site import Site


def _import_links(site: Site, rel: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """(category, target files, absolute module) of each import of `rel`, in order."""
    return site.relations.links_of(rel)


def _module_files(site: Site, rel: str) -> dict[str, str]:
    """The workspace file with pages of each module an import of `rel` names, by its absolute dotted
    name: the module itself and each imported name that is a submodule (`from pkg import a`: `pkg`,
    `pkg.a`). A module without pages (an empty `__init__.py`) is left out: nothing links to it."""
    file_of, packages = site.relations.file_of, site.packages
    found: dict[str, str] = {}
    for imp, (_cat, _targets, absolute) in zip(site.facts[rel].imports, _import_links(site, rel), strict=True):
        target = file_of.get(absolute)
        if target is not None and site.has_pages(target):
            found[absolute] = target
        if absolute not in packages:  # no name it imports is a submodule (`from typing import Any`)
            continue
        prefix = f"{absolute}." if absolute else ""
        for name in imp.names:
            target = file_of.get(prefix + name)
            if target is not None and site.has_pages(target):
                found[prefix + name] = target
    return found


def _unpaged_targets(site: Site, links: Iterable[tuple[str, tuple[str, ...], str]]) -> list[str]:
    """The workspace files these imports reach that have no pages of their own (an empty header or
    `__init__.py`): named, not linked."""
    return sorted({t for cat, targets, _absolute in links if cat == "workspace" for t in targets
                   if not site.has_pages(t)})


def gather_kw(site: Site, rel: str) -> dict:
    return {"digest": site.digests.get(rel), "links": _import_links(site, rel)}  # its imports' categories


def def_anchor(d: Def) -> str:
    """The anchor of a graph definition on its file's page (symbols are anchored in line order,
    so the first of a qualname has the plain `kind-qualname`; attributes are anchored by the page)."""
    return anchor_of(d.kind, d.qualname)


_XREF_KINDS = ("class", "function", "method")


def _xref(site: Site, rel: str) -> dict[str, dict]:
    """What the symbol graph says of `rel`'s classes, functions and methods, by anchor: the files
    using each (with how many lines; a method's: files naming it through its class or a subclass,
    `Linear.forward`), the subclasses of each class (file, qualname, anchor). Part of the page's key:
    the planner re-gathers the pages of files whose graph answers changed (`Change.xref`)."""
    graph = site.graph
    if graph is None:
        return {}
    found: dict[str, dict] = {}
    classes: dict[str, Symbol] | None = None  # the first symbol of each class qualname, made when asked
    # every class, and the functions and methods some file names (with the graph's tables, not copies)
    for qual, kind, table in graph.outline_users(rel, _XREF_KINDS, every="class"):
        if kind != "class":  # a function's or a method's: its users only
            if table and (len(table) > 1 or rel not in table):  # its own file's lines left out
                found[anchor_of(kind, qual)] = {"users": _users(rel, table), "subclasses": [], "inherited": [],
                                                "bases": {}}
            continue
        key = (rel, qual)
        users = _users(rel, table) if table else []
        subs = []
        for sub in graph.subclasses(key):
            sub_kind = graph.kind(sub)
            if sub_kind:
                subs.append((sub[0], sub[1], anchor_of(sub_kind, sub[1])))
        inherited: list[tuple[str, str, str, list[str], list[str]]] = []
        bases: dict[str, tuple[str, str, str]] = {}
        if graph.bases(key):  # else no ancestor either (most classes)
            inherited = _inherited(graph, key)
            if classes is None:
                classes = {}
                for s in site.facts[rel].symbols:
                    if s.kind is SymbolKind.CLASS:
                        classes.setdefault(s.qualname, s)
            bases = _bases(graph, key, classes.get(qual))
        if users or subs or inherited or bases:
            found[anchor_of(kind, qual)] = {"users": users, "subclasses": subs, "inherited": inherited, "bases": bases}
    return found


def _users(rel: str, table: Mapping[str, tuple[int, ...]]) -> list[tuple[str, int]]:
    """The files other than `rel` in a definition's users table, with how many lines name it: the files
    naming it on the most lines first, then by path."""
    users = [(r, len(lines)) for r, lines in table.items() if r != rel]
    if len(users) > 1:  # by path, then (a stable sort) the files naming it on the most lines first
        users.sort()
        users.sort(key=_count, reverse=True)
    return users


_count = operator.itemgetter(1)


def _bases(graph: Graph, cls: Key, symbol: Symbol | None) -> dict[str, tuple[str, str, str]]:
    """The base class expressions of a class (as written, `symbol`: its first class symbol) that
    name workspace classes: text -> (file, qualname, anchor)."""
    resolved = graph.bases(cls)
    if not resolved or symbol is None:
        return {}
    texts = [text for text in symbol.bases if base_name(text)]  # the names the graph resolved, in order
    if len(texts) == len(resolved):  # each text named one of them, in order (most): none resolved again
        named: Iterable[tuple[str, Key | None]] = zip(texts, resolved, strict=True)
    else:
        named = ((text, key if (key := graph.resolve(cls[0], base_name(text))) in resolved else None)
                 for text in texts)
    found = {}
    for text, key in named:
        kind = graph.kind(key) if key is not None else ""
        if key is not None and kind:
            found[text] = (key[0], key[1], anchor_of(kind, key[1]))
    return found


def _inherited(graph: Graph, cls: Key) -> list[tuple[str, str, str, list[str], list[str]]]:
    """Public members a class inherits from workspace classes: per ancestor (file, qualname, anchor),
    the names of the members the class and its nearer ancestors do not define, and the names of the
    ancestor's other public members (those they redefine). The ancestor's own entry lists and
    anchors each member, so one link to it serves them all. An ancestor none of whose public members is
    redefined (most) lists the graph's own list of them, not a copy: the same list object wherever it is
    inherited whole (pickled once per part to the render workers; never changed)."""
    ancestors = graph.ancestors(cls)
    if not ancestors:  # most classes (their file's member names are then not grouped)
        return []
    taken = set(graph.member_names(cls))
    found = []
    last = ancestors[-1]
    for key in ancestors:
        kind, names, public = graph.member_lists(key)  # public: each once, in order: kept by the graph
        if not kind:
            continue
        # filtered in C (many names on large hierarchies), most not at all
        if taken.isdisjoint(public):
            members, redefined = public, []
        else:
            members = list(filterfalse(taken.__contains__, public))
            redefined = list(filter(taken.__contains__, public)) if members else []
        if key is not last:  # (the last is often the root of a hierarchy, with the most members)
            taken.update(names)
        if members:
            found.append((key[0], key[1], anchor_of(kind, key[1]), members, redefined))
    return found


def _doc_links(site: Site, rel: str) -> dict[str, tuple[str, str, int]]:
    """Names the file's docstrings mention that resolve to workspace definitions: name ->
    (file, anchor: "" for a module, the part of its page holding it: `parts.py`). The graph reports
    the file in `Change.xref` when these change (the part too)."""
    graph = site.graph
    found: dict[str, tuple[str, str, int]] = {}
    for name, key in (graph.mentioned(rel) if graph is not None else {}).items():
        d = graph.definition(*key) if graph is not None else None
        if d is None or d.name == "__all__" or graph is None or not site.has_pages(d.rel):
            continue
        found[name] = (d.rel, def_anchor(d) if d.qualname else "", graph.part(key))
    return found


def _aliases(site: Site, rel: str) -> dict[str, str]:
    """The anchors of `rel`'s page that renamed definitions had (old -> new), from the page's
    recorded history (`render/anchors.py`)."""
    before = site.anchors.get(docs_page(rel))
    return {} if before is None else anchor_aliases(before, site.digests.get(rel, ""), site.facts[rel])


def anchor_state(site: Site, rel: str) -> AnchorState | None:
    """What the manifest records of `rel`'s page once it is written as `render` makes it now
    (None: nothing to record: no definition and no alias, or no digest of the source)."""
    src = site.digests.get(rel, "")
    defs = definitions(site.facts[rel]) if src else {}
    held = _aliases(site, rel) if src else {}
    return AnchorState(src, pack(defs), held) if defs or held else None


def gather_docs(site: Site, rel: str) -> dict:
    rels = site.relations
    importers, tests, links = rels.importers(rel), rels.tests_of(rel), _import_links(site, rel)
    # the page itself and the files it lists above Related Files (`file_sections.related`)
    listed = {rel, *tests, *importers, *(t for cat, targets, _absolute in links if cat == "workspace" for t in targets)}
    return {"digest": site.digests.get(rel), "size": site.sizes.get(rel, 0),
            "module": rels.module_of.get(rel, ""), "importers": importers, "tests": tests,
            "siblings": _siblings(site.paged_files(folder_of(rel)), listed),
            "links": links, "modules": _module_files(site, rel), "unpaged": _unpaged_targets(site, links),
            "xref": _xref(site, rel),
            "doclinks": _doc_links(site, rel), "aliases": _aliases(site, rel), "used": _users_by_name(site, rel),
            "named": _named_users(site, rel)}


def _named_users(site: Site, rel: str) -> dict[str, tuple[list[tuple[str, int]], int]]:
    """A tree-sitter file's definitions that other files name, by anchor: the first files naming each
    (with how many of their first lines do) and how many in all. Name matches, not resolutions."""
    by_name = site.by_name
    if by_name is None or not is_tree_sitter(rel):
        return {}
    found = {}
    given: set[str] = set()  # a name's users are listed once, at its first definition (not a constructor too)
    for s in site.facts[rel].symbols:
        if shows_users(s) and s.name not in given:
            given.add(s.name)
            shown, total = by_name.counted(s.name, rel)
            if total:
                found[s.anchor] = (shown, total)
    return found


def _siblings(files: list[str], listed: set[str]) -> int:
    """How many of `files` (a folder's with pages, sorted) are not in `listed` (the page's own file
    and those it lists above): a look at each of `listed`, not at the whole folder. Counted, not
    listed: the folder index lists them, each with its purpose."""
    inside = 0
    for r in listed:
        i = bisect.bisect_left(files, r)
        inside += i < len(files) and files[i] == r
    return len(files) - inside


_README = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md")


def _folder_purpose(site: Site, folder: str) -> str:
    """One line of Markdown on what a sub-folder is for: its `__init__.py`'s docstring (or leading
    comment), its README's first paragraph, what its `__init__.py` gathers or defines, else its most
    imported files, else what it holds (files repodoc skipped only: said so). From the facts of its
    own files (the planner plans a folder's parent's pages with it: `generate.plan_pages`)."""
    init = posixpath.join(folder, "__init__.py")
    facts = site.facts.get(init)
    readme = next((f for name in _README if (f := site.facts.get(posixpath.join(folder, name)))), None)
    for said in (facts, readme):
        if said is not None and said.module_doc and (sentence := first_sentence(said.module_doc)):
            return md.inline(sentence)
    if facts is not None and (own := file_purpose(init, facts)).origin not in ("its contents", ""):
        return own.text
    files = site.child_files.get(folder, [])
    imported = [(n, r) for r in files if (n := site.relations.importer_count(r))]
    if imported:
        return "Most imported: " + ", ".join(md.code(posixpath.basename(r)) for _n, r in
                                             sorted(imported, key=lambda x: (-x[0], x[1]))[:3]) + "."
    held = [md.code(posixpath.basename(r)) for r in files] + \
        [md.code(posixpath.basename(f) + "/") for f in site.child_folders.get(folder, [])]
    if not held:  # a folder is known by its files: these were all skipped (binary, too large)
        return "Holds no file repodoc reads (binary or skipped files only)."
    return f"Holds {', '.join(held[:3])}{f' and {len(held) - 3:,} more' if len(held) > 3 else ''}."


def gather_index(site: Site, folder: str) -> dict:
    files = site.child_files.get(folder, [])
    return {"subfolders": [(f, site.files_below.get(f, 0), _folder_purpose(site, f))
                           for f in site.child_folders.get(folder, [])],
            "files": [(r, site.digests.get(r)) for r in files],  # those without pages: a line each (`own_pages`)
            "sizes": {r: site.sizes.get(r, 0) for r in files if not site.has_pages(r)},
            "importers": {r: site.relations.importer_count(r) for r in files} if len(files) > LIST_LIMIT else {},
            "users": {r: _users_by_name(site, r) for r in files}}  # the purposes feature the most used


def gather_doc(site: Site, folder: str) -> dict:
    files = site.child_files.get(folder, [])
    return {"files": [(r, site.digests.get(r)) for r in files],
            "n_folders": len(site.child_folders.get(folder, [])),
            "links": {r: _import_links(site, r) for r in files},
            "unpaged": _unpaged_targets(site, (link for r in files for link in _import_links(site, r))),
            "importers": {r: site.relations.importers(r) for r in files},
            "users": {r: _users_by_name(site, r) for r in files}}


def _users_by_name(site: Site, rel: str) -> dict[str, int]:
    """How many other files use each module-level class and function of `rel` (the symbol graph;
    only those used at all)."""
    graph = site.graph
    if graph is None:
        return {}
    found = {}
    for qual, _kind in graph.outline(rel, ("class", "function"), top=True):
        n = graph.user_count((rel, qual))
        if n:
            found[qual] = n
    return found


def graph_reads(site: Site, rel: str) -> None:
    """Every read of the symbol graph that gathering the pages of `rel` and of its folder makes for `rel`:
    a graph job notes them for the page jobs (`shard/answers.py`). A new graph read in a gather function
    goes through one of these."""
    _xref(site, rel)
    _doc_links(site, rel)
    _users_by_name(site, rel)


def _llms_ranked(site: Site) -> list[str]:
    """Files with pages, the most imported first (then by path)."""
    count = site.relations.importer_count  # counted, not listed: every save plans llms.txt
    return sorted(site.paged, key=lambda rel: (-count(rel), rel))


def gather_llms(site: Site, subject: str) -> dict:
    ranked = _llms_ranked(site)
    main = ranked[:llms.MAIN_FILES]
    below = site.files_below
    folders = sorted((f for f in site.folders if f and f.count("/") < 2), key=lambda f: (-below.get(f, 0), f))
    top = folders[:llms.TOP_FOLDERS]
    shown = set(top)
    rest_folders = [f for f in site.folders if f and f not in shown]
    rest_files = sorted(ranked[llms.MAIN_FILES:])
    return {"files": [(rel, site.digests.get(rel)) for rel in main], "n_files": len(site.facts),
            "n_folders": len(site.folders), "folders": [(f, below.get(f, 0)) for f in top],
            "optional": [folder_index(f) for f in rest_folders] + [docs_page(r) for r in rest_files]}


def gather_llms_full(site: Site, subject: str) -> dict:
    return {"files": [(rel, site.digests.get(rel)) for rel in _llms_ranked(site)[:llms.FULL_FILES]],
            "n_files": len(site.facts), "max_bytes": site.llms_full_max}


GATHER: dict[str, Callable[[Site, str], dict]] = {"docs": gather_docs, "kw": gather_kw, "index": gather_index,
                                                  "doc": gather_doc, "llms": gather_llms,
                                                  "llms-full": gather_llms_full}


