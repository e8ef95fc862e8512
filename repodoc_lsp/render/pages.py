"""Page views: the data each template receives, built from facts and relations.

Each page kind has a gather function (`GATHER`) that collects everything its view reads
besides the site's constants and the facts of the files it names (by digest); the view
reads only that, so a digest of it is the page's key: a page changes exactly when its key does.
"""

from __future__ import annotations

import bisect
import functools
import operator
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from itertools import filterfalse
from pathlib import Path

from repodoc_lsp import MARKER, __version__
from repodoc_lsp.analysis.model import (
    Attribute,
    FileFacts,
    FindingCategory,
    Import,
    KeywordKind,
    Language,
    Symbol,
    SymbolKind,
)
from repodoc_lsp.analysis.relations import Relations, is_test_file
from repodoc_lsp.analysis.signature import annotation_spans
from repodoc_lsp.knowledge.graph import Def, Graph, Key, base_name
from repodoc_lsp.render import llms
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.anchors import AnchorState, alias_markup, definitions, pack, strip_aliases
from repodoc_lsp.render.anchors import aliases as anchor_aliases
from repodoc_lsp.render.docstrings import docstring_markdown, docstring_rest, summary_line
from repodoc_lsp.render.environment import GuardedTemplate, load, make_environment
from repodoc_lsp.render.parts import anchor_of, assign, member_parts, moved_bytes, part_page, plan
from repodoc_lsp.render.paths import docs_page, folder_doc, folder_index, folder_of, kw_page
from repodoc_lsp.render.purpose import Purpose, file_purpose, first_sentence
from repodoc_lsp.words import plural

LIST_LIMIT = 20  # a longer list shows this many, then its count, breakdown and folded whole
# A folder of more files has its complete list in the index folded as names by type, each linked (about
# 45 bytes a file), not one line with its purpose each: 8,000 modules made an `index.md` of 910 KB.
INDEX_NOTES_LIMIT = 200
PAGE_LIMIT = 100_000  # bytes: a file page whose embedded source would take it past this leaves it out
LISTS_BUDGET = 80_000  # bytes of lists or class entries a part page past the members' parts takes
IMPORT_DIAGRAM_NODES = 12  # files in a folder's import diagram (doc.md)


def _size(out: str, context: dict) -> int:
    """The bytes of the file page `out` made from `context`, without the rename aliases it carries
    (old anchors a kept page keeps so that old links still land; a fresh run has none): whether a
    page embeds its source, is brief or sends entries to parts, and the sizes it states, must not
    depend on the page's history."""
    return len(strip_aliases(out, context["aliases"]).encode())


_LANG_FENCE = {".py": "python", ".pyi": "python", ".md": "markdown", ".toml": "toml",
               ".json": "json", ".yml": "yaml", ".yaml": "yaml", ".sh": "sh", ".js": "javascript",
               ".ts": "typescript", ".lua": "lua", ".c": "c", ".h": "c", ".cpp": "cpp",
               ".rs": "rust", ".go": "go", ".txt": "text", ".cfg": "ini", ".ini": "ini",
               ".html": "html", ".css": "css", ".rst": "rst", ".vim": "vim"}
_TYPE_LABEL = {Language.PYTHON: "Python Source", Language.MARKDOWN: "Markdown Document",
               Language.TEXT: "Text File"}
_TYPE_LABEL.update({Language.C: "C Source", Language.CPP: "C++ Source", Language.CUDA: "CUDA Source",
                    Language.JAVASCRIPT: "JavaScript Source", Language.TYPESCRIPT: "TypeScript Source",
                    Language.GO: "Go Source", Language.RUST: "Rust Source", Language.JAVA: "Java Source"})
_UNDERSCORE_EDGE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_LINK_SPECIAL = re.compile(r"([\\`*\[\]|])")


@functools.lru_cache(maxsize=8192)
def link_text(text: str) -> str:
    """A file name as link text: one line, no HTML; underscores inside words stay as they are."""
    text = _LINK_SPECIAL.sub(r"\\\1", md.escape_html(md.one_line(text)))
    return _UNDERSCORE_EDGE.sub(r"\\_", text)


def _file_parts(page: str, rel: str) -> tuple[str, str, str, str, str]:
    """What an item of a list of files on `page` says of the file `rel` (`Renderer._file_item`): its
    path and name as link text, the link to its page, its folder's label, and its text on a page of
    its own folder (its name)."""
    return _file_parts_in(*_homes(page), rel)


@functools.lru_cache(maxsize=4096)
def _homes(page: str) -> tuple[str, str]:
    """`page`'s `dirname` and its `folder_of`, kept: a page's lists and links ask for them per item."""
    return posixpath.dirname(page), folder_of(page)


@functools.lru_cache(maxsize=32768)
def _file_parts_in(where: str, home: str, rel: str) -> tuple[str, str, str, str, str]:
    """`_file_parts` on a page of the folder `where` (its `dirname`; `home`: its `folder_of`), kept: a
    page lists the same files again and again (the Used by of each definition it has), and the
    pages of one folder list them alike (kept per page, 1 call in 3 found it)."""
    short = link_text(posixpath.basename(rel))
    folder = folder_of(rel)
    text = link_text(rel)
    return text, short, _link_in(where, docs_page(rel), ""), folder_label(folder), \
        short if folder == home else text


def signature_code(head: str, signature: str, links: Mapping[str, str]) -> str:
    """`head + signature` as code, the first annotation name `links` has a page for (each target
    once) linked to it (`def f(x: nn.Linear)`: `` `def f(x: `[`nn.Linear`](…)`)` ``): a code span
    cannot hold a link, so a linked name is a code span of its own, as link text, between the others."""
    text = head + signature
    out: list[str] = []
    last = 0
    linked: set[str] = set()
    for a, b in annotation_spans(signature) if links else ():
        href = links.get(signature[a:b])
        if not href or href in linked:
            continue
        linked.add(href)
        a, b = a + len(head), b + len(head)
        if a > last:
            out.append(_piece(text[last:a]))
        out.append(f"[{md.code(text[a:b])}]({href})")
        last = b
    if not out:
        return md.code(text)
    if last < len(text):
        out.append(_piece(text[last:]))
    return "".join(out)


def _page_link(page: str, target: str, fragment: str) -> str:
    """The link from `page` to `target` (and its `fragment`). An anchor of the page itself keeps the
    page's name: a part page shows the same links (`_split`)."""
    return _link_in(_homes(page)[0], target, fragment)


@functools.lru_cache(maxsize=32768)
def _link_in(where: str, target: str, fragment: str) -> str:
    """`_page_link` from a page of the folder `where` (its `dirname`), kept: a page links the same
    pages and anchors again and again (a file in the Used by of each of a class's methods), and the
    pages of one folder link them alike (kept per page, 1 call in 10 found it)."""
    return md.href(_rel_in(where, target), fragment)


# `md.rel_link_in`, kept: the links of a page of one folder to anchors of one page share their path
# (PyTorch's pages: 16,791 paths for 45,219 links `_link_in` makes)
_rel_in = functools.lru_cache(maxsize=32768)(md.rel_link_in)


@functools.lru_cache(maxsize=4096)
def _src_in(root: str, out: str, where: str, rel: str) -> str:
    """The link from a page of the folder `where` (its `dirname`) to the source file `rel`, kept: a
    file's page asks for it twice (its source link and its line links) and its keyword page, in the
    same folder, once more (`posixpath.relpath` each time: 1.2% of rendering)."""
    # `dirname(join(out, page))` of a page in `where`, whatever its name
    return md.href(posixpath.relpath(posixpath.join(root, rel),
                                     posixpath.dirname(posixpath.join(out, posixpath.join(where, "_")))))


def _inherited_once(page: str, classes: list[Symbol], xref: dict[str, dict]) -> dict[str, dict]:
    """`xref` with each class's inherited members listed once per page: a class inheriting the same
    members from the same base as a class before it on the page names that class and their count
    instead (`same`). Transformers' model files list their base model's mixins' members in every
    class. Only where that is shorter than the names (`device`, `dtype` stay as they are)."""
    first: dict[tuple, dict] = {}
    for c in classes:
        for h in xref.get(c.anchor, {}).get("inherited", ()):
            key = (h["href"], tuple(h["members"]), tuple(h["redefined"]))
            same = first.get(key)
            if same is None:
                first[key] = {"text": md.code(c.qualname), "href": _page_link(page, page, c.anchor)}
            elif len(f"the {len(h['members'])} listed for [{same['text']}]({same['href']})") < \
                    sum(len(md.code(name)) + 2 for name in h["members"]) - 2:
                h["same"] = same
    return xref


_DOTTED_NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")  # a dotted name, as `annotation_spans` reads one


def _signature_links(classes: list[Symbol], methods_of: Mapping[str, list[Symbol]], functions: list[Symbol],
                     links: Mapping[str, str],
                     targets: Mapping[str, tuple[str, str, int]]) -> dict[str, dict[str, str]]:
    """The annotation names each signature links (by the definition's anchor): a class, function or
    module the first time the page's signatures name it, in page order (classes with their methods,
    then functions); later signatures show it as code. One link per page and definition keeps the
    tree within its size budget (PyTorch's signatures name workspace classes 64,000 times)."""
    seen: set[str] = set()
    found: dict[str, dict[str, str]] = {}
    if not links:
        return found
    names = links.keys()
    for s in [*(m for c in classes for m in methods_of.get(c.anchor, ())), *functions]:
        # An annotation's name is one of the signature's dotted names as `_DOTTED_NAME` finds them
        # (a name starts where no name character is before it, and runs as far): a signature
        # naming none of the links' names (most) is not parsed for its annotations.
        if not s.signature or names.isdisjoint(_DOTTED_NAME.findall(s.signature)):
            continue
        for a, b in annotation_spans(s.signature):
            name = s.signature[a:b]
            href = links.get(name)
            if href is None or href in seen or targets[name][1].startswith("attr-"):
                continue
            seen.add(href)
            found.setdefault(s.anchor, {})[name] = href
    return found


def _piece(text: str) -> str:
    """A piece of a signature as a code span: a space at one end only is kept as it is (CommonMark
    strips one from each end only when both have one), so `def f(x: ` stays plain."""
    if "`" in text or "\n" in text or "\r" in text or (text.startswith(" ") and text.endswith(" ")):
        return md.code(text)
    return f"`{text}`"


def folder_label(folder: str) -> str:
    """A folder as a group of a long list: `` `torch/nn/` ``, `` `./` `` for the root."""
    return md.code(folder + "/" if folder else "./")


def nearest(rel: str, others: Iterable[str]) -> list[str]:
    """`others` ordered by closeness to `rel` in the tree: most folders shared first, then the
    shallower, then by path."""
    mine = rel.split("/")[:-1]

    def key(other: str) -> tuple[int, int, str]:
        theirs = other.split("/")[:-1]
        shared = 0
        for a, b in zip(mine, theirs):  # noqa: B905 (lengths differ on purpose)
            if a != b:
                break
            shared += 1
        return (-shared, len(theirs), other)
    return sorted(others, key=key)


def list_groups(items: Iterable[Mapping], order: str = "count") -> list[dict]:
    """The groups of a long list (the `groups` filter of `long_list`): `{"name", "entries"}` with
    the items of each in their `key` order; the groups by size (largest first) or by `name`."""
    by_group: dict[str, list[Mapping]] = {}
    for item in items:
        by_group.setdefault(item["group"], []).append(item)
    groups = sorted(by_group.items(), key=(lambda g: g[0]) if order == "name" else (lambda g: (-len(g[1]), g[0])))
    return [{"name": name, "entries": sorted(found, key=lambda i: i["key"])} for name, found in groups]


@dataclass
class Site:
    """The workspace as pages see it."""

    project: str
    root: str  # absolute POSIX path of the workspace root
    out: str  # absolute POSIX path of the output folder
    embed_max: int
    relations: Relations
    facts: Mapping[str, FileFacts]
    sizes: dict[str, int]
    folders: list[str]
    digests: Mapping[str, str] = field(default_factory=dict)  # rel -> digest of the analysed content
    child_folders: dict[str, list[str]] = field(default_factory=dict)
    child_files: dict[str, list[str]] = field(default_factory=dict)
    files_below: dict[str, int] = field(default_factory=dict)  # folder -> files at any depth
    # the symbol graph, or its build under way in another thread: read it as `graph`
    symbols: Graph | Future[Graph] | None = None
    # file page -> its anchors as the manifest recorded them when it was last written (the
    # history behind rename aliases, `render/anchors.py`; empty: a fresh generation)
    anchors: Mapping[str, AnchorState] = field(default_factory=dict)
    llms_full_max: int = 0  # bytes of llms-full.txt at most (0: not written; `llms.py`)

    @classmethod
    def build(cls, *, project: str, root: str, out: str, embed_max: int, relations: Relations,
              facts: Mapping[str, FileFacts], sizes: dict[str, int], folders: Iterable[str],
              digests: Mapping[str, str] | None = None, graph: Graph | Future[Graph] | None = None) -> Site:
        site = cls(project, root, out, embed_max, relations, facts, sizes, sorted(folders), digests or {},
                   symbols=graph)
        site.index_tree()
        return site

    @property
    def graph(self) -> Graph | None:
        """The symbol graph (None: pages say nothing of uses and subclasses), once built: a build
        under way in another thread is waited for (its failure raised here)."""
        if isinstance(self.symbols, Future):
            self.symbols = self.symbols.result()
        return self.symbols

    def graph_pending(self) -> bool:
        """The graph is still being built (pages whose views read none of it may go first)."""
        return isinstance(self.symbols, Future) and not self.symbols.done()

    def index_tree(self) -> None:
        self.child_folders = {f: [] for f in self.folders}
        self.child_files = {f: [] for f in self.folders}
        for folder in self.folders:
            if folder:
                self.child_folders.setdefault(folder_of(folder), []).append(folder)
        self.files_below = dict.fromkeys(self.folders, 0)
        for rel in sorted(self.facts):
            folder = folder_of(rel)
            self.child_files.setdefault(folder, []).append(rel)
            while True:
                self.files_below[folder] = self.files_below.get(folder, 0) + 1
                if not folder:
                    break
                folder = folder_of(folder)

    @functools.cached_property
    def packages(self) -> frozenset[str]:
        """The dotted names the workspace has modules directly under (`pkg` of `pkg.mod`; "": top-level
        ones): `from pkg import a` names a module `pkg.a` only when `pkg` is one."""
        return frozenset(name.rpartition(".")[0] for name in self.relations.file_of)

    def source_path(self, rel: str) -> str:
        """The source file `rel` as a path relative to the output folder."""
        return posixpath.relpath(posixpath.join(self.root, rel), self.out)


PAGE_KINDS = ("docs", "kw", "index", "doc", "llms", "llms-full")
_PATHS: dict[str, Callable[[str], str]] = {"docs": docs_page, "kw": kw_page, "index": folder_index,
                                           "doc": folder_doc, "llms": lambda _: llms.LLMS,
                                           "llms-full": lambda _: llms.LLMS_FULL}


@dataclass(frozen=True, slots=True)
class Page:
    """One page of the tree: its kind, its file or folder, and the digest of its inputs."""

    kind: str  # one of PAGE_KINDS
    subject: str  # the file (docs, kw) or folder (index, doc)
    key: str

    @property
    def path(self) -> str:
        """Where it lives, relative to the output folder."""
        return _PATHS[self.kind](self.subject)


def _import_links(site: Site, rel: str) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """(category, target files, absolute module) of each import of `rel`, in order."""
    return site.relations.links.get(rel, ())


def _module_files(site: Site, rel: str) -> dict[str, str]:
    """The workspace file of each module an import of `rel` names, by its absolute dotted name: the
    module itself and each imported name that is a submodule (`from pkg import a`: `pkg`, `pkg.a`)."""
    file_of, packages = site.relations.file_of, site.packages
    found: dict[str, str] = {}
    for imp, (_cat, _targets, absolute) in zip(site.facts[rel].imports, _import_links(site, rel), strict=True):
        target = file_of.get(absolute)
        if target is not None:
            found[absolute] = target
        if absolute not in packages:  # no name it imports is a submodule (`from typing import Any`)
            continue
        prefix = f"{absolute}." if absolute else ""
        for name in imp.names:
            target = file_of.get(prefix + name)
            if target is not None:
                found[prefix + name] = target
    return found


def gather_kw(site: Site, rel: str) -> dict:
    return {"digest": site.digests.get(rel)}


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


DIAGRAM_NODES = 20
_MERMAID_UNSAFE = re.compile(r"[^\w./ ()-]")


def _hierarchy(rel: str, classes: list[Symbol], xref: dict[str, dict]) -> dict | None:
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
        # filtered in C (1.7 million names of 96,000 ancestors on the 17,150-file corpus), most not at all
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
        if d is None or d.name == "__all__" or graph is None:
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
    # the page itself and the files it lists above Related Files (`Renderer._related`)
    listed = {rel, *tests, *importers, *(t for cat, targets, _absolute in links if cat == "workspace" for t in targets)}
    return {"digest": site.digests.get(rel), "size": site.sizes.get(rel, 0),
            "module": rels.module_of.get(rel, ""), "importers": importers, "tests": tests,
            "siblings": _siblings(site.child_files.get(folder_of(rel), []), listed),
            "links": links, "modules": _module_files(site, rel), "xref": _xref(site, rel),
            "doclinks": _doc_links(site, rel), "aliases": _aliases(site, rel), "used": _users_by_name(site, rel)}


def _siblings(files: list[str], listed: set[str]) -> tuple[list[str], int]:
    """The first `LIST_LIMIT` of `files` (a folder's, sorted) that are not in `listed` (the page's own
    file and those it lists above), and how many of `files` are not: a look at `LIST_LIMIT` names
    and each of `listed`, not at the whole folder (each page of a folder of n files took all n,
    and its key digested them: 8,000 modules in one folder took 4x the time of 80 folders of 100)."""
    inside = 0
    for r in listed:
        i = bisect.bisect_left(files, r)
        inside += i < len(files) and files[i] == r
    head: list[str] = []
    for r in files:
        if len(head) == LIST_LIMIT:
            break
        if r not in listed:
            head.append(r)
    return head, len(files) - inside


_README = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md")


def _folder_purpose(site: Site, folder: str) -> str:
    """One line of Markdown on what a sub-folder is for: its `__init__.py`'s docstring (or leading
    comment), its README's first paragraph, what its `__init__.py` gathers or defines, else its most
    imported files. From the facts of its own files (the planner plans a folder's parent's pages
    with it: `generate.plan_pages`)."""
    init = posixpath.join(folder, "__init__.py")
    facts = site.facts.get(init)
    readme = next((f for name in _README if (f := site.facts.get(posixpath.join(folder, name)))), None)
    for said in (facts, readme):
        if said is not None and said.module_doc and (sentence := first_sentence(said.module_doc)):
            return md.inline(sentence)
    if facts is not None and (own := file_purpose(init, facts)).origin not in ("its contents", ""):
        return own.text
    files = site.child_files.get(folder, [])
    imported = [(n, r) for r in files if (n := len(site.relations.importers(r)))]
    if imported:
        return "Most imported: " + ", ".join(md.code(posixpath.basename(r)) for _n, r in
                                             sorted(imported, key=lambda x: (-x[0], x[1]))[:3]) + "."
    held = [md.code(posixpath.basename(r)) for r in files] + \
        [md.code(posixpath.basename(f) + "/") for f in site.child_folders.get(folder, [])]
    return f"Holds {', '.join(held[:3])}{f' and {len(held) - 3:,} more' if len(held) > 3 else ''}." if held else ""


def gather_index(site: Site, folder: str) -> dict:
    files = site.child_files.get(folder, [])
    return {"subfolders": [(f, site.files_below.get(f, 0), _folder_purpose(site, f))
                           for f in site.child_folders.get(folder, [])],
            "files": [(r, site.digests.get(r)) for r in files],
            "importers": {r: len(site.relations.importers(r)) for r in files} if len(files) > LIST_LIMIT else {},
            "users": {r: _users_by_name(site, r) for r in files}}  # the purposes feature the most used


def gather_doc(site: Site, folder: str) -> dict:
    files = site.child_files.get(folder, [])
    return {"files": [(r, site.digests.get(r)) for r in files],
            "n_folders": len(site.child_folders.get(folder, [])),
            "links": {r: _import_links(site, r) for r in files},
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


def _llms_ranked(site: Site) -> list[str]:
    """Files, the most imported first (then by path)."""
    imported_by = site.relations.imported_by  # counted, not listed: every save plans llms.txt
    return sorted(site.facts, key=lambda rel: (-len(imported_by.get(rel, ())), rel))


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


@dataclass(frozen=True, slots=True)
class Where:
    """What every page may say about the site as a whole (part of every key)."""

    project: str
    root: str
    out: str
    embed_max: int


def where_of(site: Site) -> Where:
    return Where(site.project, site.root, site.out, site.embed_max)


def view_files(kind: str, subject: str, inputs: dict) -> list[str]:
    """The files whose facts the view of page `kind` of `subject` reads, given its `inputs`."""
    return [subject] if kind in ("docs", "kw") else [rel for rel, _digest in inputs["files"]]


# The page templates (by kind) and the templates they include: `precompile` compiles both.
PAGE_TEMPLATES = ("file_kw", "file_docs", "file_part", "file_more", "folder_index", "folder_doc")
INCLUDED = ("_macros.md.j2", "_function.md.j2", "_members.md.j2", "_class.md.j2")
_BUILT_IN: Renderer | None = None  # `Renderer.shared(None)`: repodoc's own templates, compiled once per process


class Renderer:
    def __init__(self, templates: str | Path | None = None, *, lazy: bool = False) -> None:
        """`lazy`: the templates compile when first needed, not now (repodoc's own, which always
        compile: a run whose tree is intact renders nothing; a person's are compiled at once, so
        that one that does not compile stops the run before anything is written)."""
        self.templates = templates  # a render worker makes its own Renderer of them
        self.env = make_environment(templates)
        self.env.filters.update(code=md.code, esc=md.esc, fence=md.fence, linktext=link_text,
                                docmd=docstring_markdown, firstline=summary_line,
                                inline=md.inline, fragment=md.fragment, xlinks=md.link_code_spans, groups=list_groups,
                                docrest=docstring_rest, sigcode=signature_code,
                                kb=md.size_short, plural=plural)
        self.env.globals.update(marker=MARKER, version=__version__)
        self._loaded: dict[str, GuardedTemplate] | None = None
        if not lazy:
            self.ready()

    def ready(self) -> None:
        """Compile the templates (once); one that does not compile is a TemplateFailure."""
        if self._loaded is None:
            self._loaded = load(self.env, PAGE_TEMPLATES)

    @classmethod
    def shared(cls, templates: str | Path | None) -> Renderer:
        """A renderer of `templates`: for repodoc's own, the one this process compiled already
        (`precompile`: the render workers' fork server compiles them once, before it forks, so
        that no worker compiles them again: 0.16 s of CPU each); a person's are compiled anew."""
        global _BUILT_IN
        if templates:
            return cls(templates)
        if _BUILT_IN is None:
            _BUILT_IN = cls(None)
        return _BUILT_IN

    @classmethod
    def precompile(cls) -> None:
        """Compile repodoc's own templates, those the page templates include too, for this process
        and the processes it forks (`shared`)."""
        renderer = cls.shared(None)
        for name in INCLUDED:
            renderer.env.get_template(name)

    @property
    def _templates(self) -> dict[str, GuardedTemplate]:
        self.ready()
        assert self._loaded is not None
        return self._loaded

    # -- helpers shared by the views -------------------------------------------------
    @staticmethod
    def _link(page: str, target: str, fragment: str = "") -> str:
        return _page_link(page, target, fragment)

    @staticmethod
    def _src(where: Where, page: str, rel: str) -> str:
        return _src_in(where.root, where.out, _homes(page)[0], rel)

    def _file_item(self, page: str, rel: str, note: str = "", group: str | None = None) -> dict:
        """A file as an item of `long_list`: its path linked to its page, counted in its folder."""
        text, short, href, folder, _near = _file_parts(page, rel)
        return {"text": text, "short": short, "key": rel, "href": href, "note": note,
                "group": folder if group is None else group}

    def _line_links(self, where: Where, page: str, rel: str) -> Callable[[int], str]:
        """`line -> link to that line of the source`, with the path worked out once."""
        base = self._src(where, page, rel)
        return lambda line: f"{base}#L{line}"

    # -- pages ------------------------------------------------------------------------
    def reads_source(self, where: Where, inputs: dict) -> bool:
        """Whether the docs page whose view reads `inputs` (`gather_docs`) is given its file's text
        (`_file_docs`'s `text`): repodoc's own templates show it only embedded, so the file over
        `embed_max` bytes (2 in 3 of the scale corpus's) is not read for them; a person's
        templates are given it whatever its size."""
        return bool(self.templates) or (where.embed_max > 0 and inputs["size"] <= where.embed_max)

    def render(self, site: Site, kind: str, subject: str, text: str | None = None, inputs: dict | None = None) -> str:
        """The page `kind` of `subject`: its view reads the site's constants, what
        `GATHER[kind]` gathers (`inputs`, when the caller has gathered them), and the facts of the
        files named there, nothing else."""
        if inputs is None:
            inputs = GATHER[kind](site, subject)
        return self.render_view(where_of(site), kind, subject, inputs, site.facts, text)

    def render_view(self, where: Where, kind: str, subject: str, inputs: dict, facts: Mapping[str, FileFacts],
                    text: str | None = None) -> str:
        """The page `kind` of `subject` from what its view reads: `inputs` (`GATHER[kind]`) and
        `facts` holding those of `view_files(kind, subject, inputs)` (a render worker is sent no more)."""
        return self.render_pages(where, kind, subject, inputs, facts, text)[0][1]

    def render_pages(self, where: Where, kind: str, subject: str, inputs: dict, facts: Mapping[str, FileFacts],
                     text: str | None = None) -> list[tuple[str, str]]:
        """`render_view`'s page and its part pages (`parts.py`: a file page over the size budget),
        as (path, Markdown), the page first."""
        if kind == "docs":
            return self._file_docs(where, subject, inputs, facts[subject], text)
        return [(_PATHS[kind](subject), self._render_one(where, kind, subject, inputs, facts))]

    def _render_one(self, where: Where, kind: str, subject: str, inputs: dict,
                    facts: Mapping[str, FileFacts]) -> str:
        if kind == "kw":
            return self._file_kw(where, subject, facts[subject])
        named = {rel: facts[rel] for rel in view_files(kind, subject, inputs)}
        if kind == "index":
            return self._folder_index(where, subject, inputs, named)
        if kind == "llms":
            return llms.render_llms(where.project, inputs, named)
        if kind == "llms-full":
            return llms.render_llms_full(where.project, inputs, named)
        return self._folder_doc(where, subject, inputs, named)

    def file_kw(self, site: Site, rel: str) -> str:
        return self.render(site, "kw", rel)

    def file_docs(self, site: Site, rel: str, text: str | None) -> str:
        return self.render(site, "docs", rel, text)

    def folder_index(self, site: Site, folder: str) -> str:
        return self.render(site, "index", folder)

    def folder_doc(self, site: Site, folder: str) -> str:
        return self.render(site, "doc", folder)

    def _file_kw(self, where: Where, rel: str, facts: FileFacts) -> str:
        page = kw_page(rel)
        docs_name = posixpath.basename(docs_page(rel))
        keywords = facts.keywords()
        moved = member_parts(facts)
        groups = [(kind.heading, [(name, anchor, md.href(posixpath.basename(part_page(rel, moved[anchor])))
                                   if anchor in moved else "") for name, anchor in entries])
                  for kind, entries in keywords.items()]
        sections = {KeywordKind.CLASS: ("Detailed Analysis", "detailed-analysis"),
                    KeywordKind.FUNCTION: ("Detailed Analysis", "detailed-analysis"),
                    KeywordKind.HEADING: ("Detailed Analysis", "detailed-analysis"),
                    KeywordKind.IMPORT: ("Dependencies", "dependencies"),
                    KeywordKind.IDENTIFIER: ("Original Source", "original-source")}
        counts = {kind: len(entries) for kind, entries in keywords.items()}
        section_map = [(kind.heading, counts[kind], *sections[kind]) for kind in KeywordKind
                       if kind in counts]
        return self._templates["file_kw"].render(
            rel=rel, page=page, docs_name=docs_name, folder=folder_of(rel) or ".",
            docs_label=link_text(docs_name), docs_url=md.href(docs_name),
            src_href=self._src(where, page, rel), groups=groups, section_map=section_map,
            identifiers_total=facts.identifiers_total, identifiers_shown=len(facts.identifiers),
            empty_reason=_empty_reason(facts), project=where.project,
        )

    def _file_docs(self, where: Where, rel: str, inputs: dict, facts: FileFacts,
                   text: str | None) -> list[tuple[str, str]]:
        page = docs_page(rel)
        ext = posixpath.splitext(rel)[1]
        size = inputs["size"]
        embed = text is not None and where.embed_max > 0 and size <= where.embed_max
        classes = [s for s in facts.symbols if s.kind is SymbolKind.CLASS]
        functions = [s for s in facts.symbols if s.kind is SymbolKind.FUNCTION]
        methods_of = _methods_by_class(facts.symbols, classes)
        attributes_of, module_names = _attributes(facts, classes)
        deps = self._dependencies(page, facts.imports, inputs["links"], inputs["modules"])
        importers = self._near_items(page, ((r, "") for r in nearest(rel, inputs["importers"])))
        tests = self._near_items(page, ((r, "") for r in nearest(rel, inputs["tests"])))
        related_groups, related_counts = self._related(page, rel, inputs)
        doctest_in = [s.qualname for s in facts.symbols if s.docstring and ">>>" in s.docstring]
        doclinks = self._doclinks(rel, 1, inputs["doclinks"])
        moved = plan(facts)
        security = facts.findings_in(FindingCategory.SECURITY)
        purpose = file_purpose(rel, facts, inputs["used"])
        if facts.module_doc and not purpose.derived:  # the file's page shows its whole docstring
            purpose = Purpose(docstring_markdown(facts.module_doc))
        context = dict(
            rel=rel, page=page, name=posixpath.basename(rel), ext=ext or "(none)",
            folder=folder_of(rel) or ".", facts=facts, lang=facts.language.value,
            type_label=_TYPE_LABEL[facts.language] + (f" ({ext})" if facts.language is Language.TEXT and ext else ""),
            size_label=md.size_human(size), size=size, purpose=purpose,
            module=inputs["module"], embed=embed, source=text or "",
            fence_lang=_LANG_FENCE.get(ext.lower(), ""), embed_max=where.embed_max,
            src_href=self._src(where, page, rel), line_href=self._line_links(where, page, rel),
            classes=classes, functions=functions, methods_of=methods_of, attributes_of=attributes_of,
            module_names=module_names,
            headings=[s for s in facts.symbols if s.kind is SymbolKind.HEADING],
            counts=_counts(facts), deps=deps, importers=importers, tests=tests,
            is_test=is_test_file(rel),
            test_functions=[s.name for s in facts.symbols
                            if s.kind in (SymbolKind.FUNCTION, SymbolKind.METHOD) and s.name.startswith("test")],
            doctest_in=doctest_in, xref=_inherited_once(page, classes, self._xref_links(page, inputs["xref"])),
            # a page whose entries go to part pages links the signatures of those it keeps (`_split`)
            doclinks=doclinks, sig_links={} if moved else _signature_links(classes, methods_of, functions, doclinks,
                                                                          inputs["doclinks"]),
            method_users=any(x["users"] for a, x in inputs["xref"].items() if a.startswith("method-")),
            hierarchy=_hierarchy(rel, classes, inputs["xref"]), aka=alias_markup(inputs["aliases"]),
            aliases=inputs["aliases"],
            patterns=facts.findings_in(FindingCategory.PATTERN),
            performance=facts.findings_in(FindingCategory.PERFORMANCE),
            security=security, derived=[c for c in classes if c.bases],
            # security findings by level, related files counted (not by the template's filters: `selectattr`)
            risky=[f for f in security if f.level != "check"], to_check=[f for f in security if f.level == "check"],
            related_groups=related_groups, related_counts=related_counts,
            related_total=sum(related_counts.values()),
            related_above=[(relation, n) for relation, n in related_counts.items() if relation != "same folder"],
            source_label=self._source_label(facts, size),
            kw_href=self._link(page, kw_page(rel)), docs_href=self._link(page, page),
            index_href=self._link(page, folder_index(folder_of(rel))),
            folderdoc_href=self._link(page, folder_doc(folder_of(rel))),
            project=where.project, page_limit=PAGE_LIMIT, with_source=0, without_source=0, brief=False,
            short_lists=False,
            moved={}, function_parts=[], estimated=False, away_lists={}, away_classes={},
        )
        template = self._templates["file_docs"]
        if moved:
            return self._split(where, rel, context, moved, inputs["doclinks"])
        out = template.render(**context)
        if embed and (size := _size(out, context)) > PAGE_LIMIT:  # the source can be opened elsewhere
            context.update(embed=False, source="", with_source=size)
            out = template.render(**context)
        # still over: long lists, then class entries, go to part pages; docstrings are cut last (`_fit`)
        out, more = self._fit(rel, context, out, 2, inputs["doclinks"])
        return [(page, out), *more]

    def _doclinks(self, rel: str, part: int, targets: Mapping[str, tuple[str, str, int]]) -> dict[str, str]:
        """The links of the names docstrings and signatures mention, from part `part` of `rel`'s page
        (`#anchor` for a definition on that very page)."""
        page = part_page(rel, part)
        return {name: md.href("", anchor) if r == rel and anchor and n == part
                else self._link(page, part_page(r, n) if anchor else docs_page(r), anchor)
                for name, (r, anchor, n) in targets.items()}

    def _split(self, where: Where, rel: str, context: dict, moved: Mapping[str, int],
               targets: Mapping[str, tuple[str, str, int]]) -> list[tuple[str, str]]:
        """The page of `rel` without the entries `moved` sends to part pages, and those part pages
        (`parts.py`), each made from the page's view (`context`). They are *brief* when the page in
        one piece, without its source, would pass the limit: this page's analysis as rendered plus
        the rule's estimate of the entries that left it (`parts.moved_bytes`), so nothing is
        rendered twice to decide it."""
        page = context["page"]
        classes, functions = context["classes"], context["functions"]
        methods_of, attributes_of = context["methods_of"], context["attributes_of"]
        count = max(moved.values())
        names = {n: posixpath.basename(part_page(rel, n)) for n in range(2, count + 1)}
        facts = context["facts"]
        of_class, members = assign(facts)  # one pass of the rule for the page and its parts
        shown: dict[str, dict] = {}
        for c in classes:
            if c.anchor in of_class:
                n_attr = len(attributes_of.get(c.anchor, {}).get("entries", ()))
                n_meth = len(methods_of.get(c.anchor, ()))
                what = [plural(n, word, grouped=True) for n, word in ((n_attr, "attribute"), (n_meth, "method")) if n]
                shown[c.anchor] = {"what": " and ".join(what),
                                   "parts": [(names[n], md.href(names[n])) for n in of_class[c.anchor]]}
        function_parts = []
        for n in range(2, count + 1):
            mine = [f for f in functions if moved.get(f.anchor) == n]
            if mine:
                function_parts.append({"count": len(mine), "first": mine[0].qualname, "last": mine[-1].qualname,
                                       "name": names[n], "href": md.href(names[n])})
        shown.update((f.anchor, {}) for f in functions if f.anchor in moved)
        kept_classes = [c for c in classes if c.anchor not in moved]
        kept_functions = [f for f in functions if f.anchor not in moved]
        context = {**context, "moved": shown, "function_parts": function_parts,
                   "sig_links": _signature_links(kept_classes, methods_of, kept_functions, context["doclinks"],
                                                 targets)}
        template = self._templates["file_docs"]
        out = template.render(**{**context, "embed": False, "source": ""})
        whole = _size(out, context) + moved_bytes(facts, members) + _users_bytes(context["xref"], members)
        if whole > PAGE_LIMIT:  # what the page says its analysis takes in one piece (docstrings stay whole)
            context.update(without_source=whole, estimated=True)
        if context["embed"]:
            out = template.render(**context)
        if context["embed"] and (size := _size(out, context)) > PAGE_LIMIT:
            context.update(embed=False, source="", with_source=size)
            out = template.render(**context)
        out, more = self._fit(rel, context, out, count + 1, targets)
        total = count + len(more)
        pages = [(page, out)]
        for n in range(2, count + 1):
            part = part_page(rel, n)
            mine_classes = [c for c in classes if n in of_class.get(c.anchor, ())]
            mine_methods = {c.anchor: [m for m in methods_of.get(c.anchor, ()) if members.get(m.anchor) == n]
                            for c in mine_classes}
            mine_attributes = {c.anchor: {**group, "entries": [e for e in group["entries"]
                                                                if members.get(e["anchor"]) == n]}
                               for c in mine_classes if (group := attributes_of.get(c.anchor))}
            mine_attributes = {a: group for a, group in mine_attributes.items() if group["entries"]}
            mine_functions = [f for f in functions if moved.get(f.anchor) == n]
            doclinks = self._doclinks(rel, n, targets)
            what = []
            if mine_classes:
                what.append(f"the attributes and methods of {plural(len(mine_classes), 'class', grouped=True)}")
            if mine_functions:
                what.append(plural(len(mine_functions), "function", grouped=True))
            view = {**context, "page": part, "part": n, "parts": total, "what": " and ".join(what),
                    "main_name": posixpath.basename(page), "main_href": md.href(posixpath.basename(page)),
                    "part_classes": mine_classes, "part_functions": mine_functions, "doclinks": doclinks,
                    "methods_of": mine_methods, "attributes_of": mine_attributes, "brief": False,
                    "sig_links": _signature_links(mine_classes, mine_methods, mine_functions, doclinks, targets)}
            text = self._templates["file_part"].render(**view)
            if _size(text, view) > PAGE_LIMIT:  # the rule's part holds its entries whole, but for huge lists
                text = self._templates["file_part"].render(**{**view, "brief": True})
            pages.append((part, text))
        return pages + more

    def _fit(self, rel: str, context: dict, out: str, first: int,
             targets: Mapping[str, tuple[str, str, int]]) -> tuple[str, list[tuple[str, str]]]:
        """The page `out` (made from `context`), and the part pages from number `first` on that take
        what still puts it over the limit once its members left: first the complete lists it folds
        (Imported by, tests, Used by, Subclassed by: a part page of lists, linked from the folded
        line; the page then keeps their count and breakdown, not their first 20), then the entries
        of its last classes, whole (a line each stays, with the class's anchor and those of its
        members still on the page, linking to the part holding its entry); only when that is not
        enough is the page brief (docstrings cut to their first sentence). All follow from the
        page's view alone (its key), and no link of another page points into them: links land on
        the page's anchors."""
        if (full := _size(out, context)) <= PAGE_LIMIT:
            return out, []
        template = self._templates["file_docs"]
        page = context["page"]
        moved = context["moved"]
        classes = context["classes"]
        blocks = []  # (anchor, kind, qualname, items): the folded lists in page order
        for c in classes:
            if c.anchor not in moved:
                blocks += [(f"list-users-{m.anchor}", "method users", m.qualname, context["xref"][m.anchor]["users"])
                           for m in context["methods_of"].get(c.anchor, ()) if m.anchor in context["xref"]]
            x = context["xref"].get(c.anchor)
            if x:
                blocks += [(f"list-subclasses-{c.anchor}", "subclasses", c.qualname, x["subclasses"]),
                           (f"list-users-{c.anchor}", "users", c.qualname, x["users"])]
        for f in context["functions"]:
            if f.anchor not in moved and (x := context["xref"].get(f.anchor)):
                blocks.append((f"list-users-{f.anchor}", "users", f.qualname, x["users"]))
        blocks += [("list-imported-by", "importers", "", context["importers"]),
                   ("list-tests", "tests", "", context["tests"])]
        parts: list[list[dict]] = [[]]
        used = 0
        where_of_list: dict[str, list[int]] = {}
        for anchor, kind, qual, items in blocks:
            if len(items) <= LIST_LIMIT:
                continue
            chunk: dict | None = None
            for group in list_groups(items, "name"):
                size = len(group["name"]) + 6 + sum(len(it["short"]) + len(it["href"]) + 4 for it in group["entries"])
                if used and used + size > LISTS_BUDGET:  # the list goes on on the next part
                    parts.append([])
                    used, chunk = 0, None
                if chunk is None:
                    chunk = {"anchor": anchor, "kind": kind, "qual": qual, "count": len(items), "groups": [],
                             "continued": anchor in where_of_list}
                    parts[-1].append(chunk)
                    where_of_list.setdefault(anchor, []).append(first + len(parts) - 1)
                    used += 200
                chunk["groups"].append(group)
                used += size
        n_lists = len(parts) if where_of_list else 0
        names = {n: posixpath.basename(part_page(rel, n)) for n in range(first, first + n_lists)}
        away = {anchor: " and ".join(f"on [{link_text(names[n])}]({md.href(names[n], anchor)})" for n in ns)
                for anchor, ns in where_of_list.items()}
        xref = {a: {**x, "users_away": away.get(f"list-users-{a}", ""),
                    "subclasses_away": away.get(f"list-subclasses-{a}", "")} for a, x in context["xref"].items()}
        context = {**context, "xref": xref, "away_lists": {"imported-by": away.get("list-imported-by", ""),
                                                           "tests": away.get("list-tests", "")}}
        if n_lists:
            out = template.render(**context)
        if n_lists and _size(out, context) > PAGE_LIMIT:  # the lists' first 20 go too: count and link stay
            context = {**context, "short_lists": True, "without_source": max(context["without_source"], full)}
            out = template.render(**context)
        entries, out = self._classes_away(rel, context, out, first + n_lists, targets)
        if _size(out, context) > PAGE_LIMIT and not context["brief"]:
            # the last resort, when whole class entries on parts of their own are not enough:
            # docstrings cut to their first sentence, counts for lists
            context = {**context, "brief": True, "without_source": max(context["without_source"], full)}
            out = template.render(**context)
            entries, out = self._classes_away(rel, context, out, first + n_lists, targets)
        total = first - 1 + n_lists + len(entries)
        more = []
        main = {"main_name": posixpath.basename(page), "main_href": md.href(posixpath.basename(page)),
                "parts": total}
        for i, chunks in enumerate(parts[:n_lists]):
            n = first + i
            more.append((part_page(rel, n), self._templates["file_more"].render(
                **{**context, **main, "page": part_page(rel, n), "part": n, "lists": chunks, "entries": [],
                   "what": "complete lists that page folds"})))
        for i, held in enumerate(entries):
            n = first + n_lists + i
            more.append((part_page(rel, n), self._templates["file_more"].render(
                **{**context, **main, "page": part_page(rel, n), "part": n, "lists": [], "entries": held,
                   "doclinks": (doclinks := self._doclinks(rel, n, targets)),
                   "sig_links": _signature_links(held, context["methods_of"], [], doclinks, targets),
                   "what": f"the entries of {plural(len(held), 'class', grouped=True)}"})))
        return out, more

    def _classes_away(self, rel: str, context: dict, out: str, first: int,
                      targets: Mapping[str, tuple[str, str, int]]) -> tuple[list[list[Symbol]], str]:
        """The classes whose entries go to part pages from number `first` on (`_entries_away`) so
        that the page `out` (made from `context`) passes no limit, and the page without them."""
        entries: list[list[Symbol]] = []
        whole = out
        classes, moved = context["classes"], context["moved"]
        for margin in (2_000, 10_000, 30_000):  # the entries' sizes as rendered, the stubs' as about 200 bytes
            if _size(out, context) <= PAGE_LIMIT:
                break
            found = self._entries_away(context, whole, margin)
            if not found or found == entries:
                break
            entries = found
            away_classes = {c.anchor: {"name": (name := posixpath.basename(part_page(rel, first + i))),
                                       "href": md.href(name)}
                            for i, held in enumerate(entries) for c in held}
            # The page links what its own signatures name first, not counting the entries that left
            # it (their part links them): else a name first named by a moved class is linked nowhere here.
            sig_links = _signature_links(
                [c for c in classes if c.anchor not in moved and c.anchor not in away_classes],
                context["methods_of"], [f for f in context["functions"] if f.anchor not in moved],
                context["doclinks"], targets)
            out = self._templates["file_docs"].render(**{**context, "away_classes": away_classes,
                                                         "sig_links": sig_links})
        return entries, out

    @staticmethod
    def _entries_away(context: dict, out: str, margin: int) -> list[list[Symbol]]:
        """The last classes of the page `out` whose entries go to part pages so that it takes at most
        `PAGE_LIMIT - margin` bytes, in parts of at most `LISTS_BUDGET` bytes of entries (a class
        whose members are on the page keeps their anchors on its line: other pages link to them)."""
        classes = context["classes"]
        out = strip_aliases(out, context["aliases"])  # measured as a fresh run would measure it (`_size`)
        starts = [out.find(f'\n<a id="{c.anchor}"></a>') for c in classes]
        if not classes or min(starts) < 0:
            return []
        tail = min((i for i in (out.find(h, starts[-1]) for h in ("\n### Functions\n", "\n### Module-level names\n",
                                                                 "\n## Architecture & Design\n")) if i >= 0),
                   default=len(out))
        sizes = [len(out[a:b].encode()) for a, b in zip(starts, [*starts[1:], tail], strict=True)]
        need = len(out.encode()) - (PAGE_LIMIT - margin)
        away: list[tuple[Symbol, int]] = []
        for c, size in reversed(list(zip(classes, sizes, strict=True))):
            if need <= 0:
                break
            away.append((c, size))  # its members' anchors stay on the page too, on its line
            need -= size - 200 - 40 * (0 if c.anchor in context["moved"] else
                                        len(context["methods_of"].get(c.anchor, ()))
                                        + len(context["attributes_of"].get(c.anchor, {}).get("entries", ())))
        groups: list[list[Symbol]] = []
        used = 0
        for c, size in reversed(away):
            if not groups or used + size > LISTS_BUDGET:
                groups.append([])
                used = 0
            groups[-1].append(c)
            used += size
        return groups

    def _xref_links(self, page: str, xref: dict[str, dict]) -> dict[str, dict]:
        """Used by, subclassed by and inherited members, as links, by the anchor of the definition
        (`_page_link`s from the page's folder, worked out once)."""
        where = _homes(page)[0]
        return {anchor: {
            # a "Used by" list: with how many lines name the definition
            "users": self._near_items(page, ((r, f" ({plural(n, 'line')})") for r, n in x["users"])),
            "subclasses": [{"text": md.code(qual), "short": md.code(qual), "key": f"{r}\0{qual}",
                            "href": _link_in(where, docs_page(r), sub), "group": folder_label(folder_of(r)),
                            "note": "" if docs_page(r) == page else f" in {md.code(r)}"}
                           for r, qual, sub in x["subclasses"]],
            "inherited": [{"rel": r, "qual": qual, "href": _link_in(where, docs_page(r), origin),
                           "members": members, "redefined": redefined, "same": None}
                          for r, qual, origin, members, redefined in x["inherited"]],
            "bases": {text: _link_in(where, docs_page(r), base) for text, (r, _q, base) in x["bases"].items()},
            "users_away": "", "subclasses_away": "",  # links to a part page of lists (`_fit`)
        } for anchor, x in xref.items()}

    def _near_item(self, page: str, rel: str, note: str = "") -> dict:
        """`_file_item`, a file of the page's folder by its name (the path says nothing more)."""
        _text, short, href, folder, near = _file_parts(page, rel)
        return {"text": near, "short": short, "key": rel, "href": href, "note": note, "group": folder}

    @staticmethod
    def _near_items(page: str, files: Iterable[tuple[str, str]]) -> list[dict]:
        """`_near_item` of each (file, note) of `files` (a list of hundreds, some pages), the page's folder
        worked out once."""
        where, home = _homes(page)
        items = []
        for rel, note in files:
            _text, short, href, folder, near = _file_parts_in(where, home, rel)
            items.append({"text": near, "short": short, "key": rel, "href": href, "note": note, "group": folder})
        return items

    @staticmethod
    def _source_label(facts: FileFacts, size: int) -> str:
        """`1,003 lines, 41.2 KB`: the summary of the folded source."""
        return f"{plural(facts.lines, 'line', grouped=True)}, {md.size_short(size)}"

    def _related(self, page: str, rel: str, inputs: dict) -> tuple[list[tuple[str, list[dict]]], dict[str, int]]:
        """Related Files: the first `LIST_LIMIT` of its folder's other files (by name), the only
        related files the page lists nowhere else; and how many files there are of each relation
        in all (the files `rel` imports, its tests, the files importing it, its folder's other
        files; each counted once, under its first relation). The first three are listed in full on
        this page already (Dependencies, Testing & Usage, Imported by), so they are counted here
        and linked to, not listed twice."""
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
        head, same = inputs["siblings"]  # the folder's other files but those: the first ones, how many
        if not same:
            return [], counts
        counts["same folder"] = same
        return [("same folder", [self._near_item(page, r) for r in head])], counts

    def _dependencies(self, page: str, imports: Iterable[Import], links: Iterable[tuple[str, tuple[str, ...], str]],
                      modules: Mapping[str, str]) -> dict[str, list[dict]]:
        """Imports by category, one entry per module as written: the module links to its own page and
        each imported name that is a submodule to its page (`from pkg import a`: `pkg` and `a`)."""
        groups: dict[str, dict[str, dict]] = {"stdlib": {}, "third-party": {}, "workspace": {}}
        for imp, (cat, targets, absolute) in zip(imports, links, strict=True):
            entry = groups[cat].setdefault(imp.module, {
                "module": imp.module, "anchor": imp.anchor, "lines": [], "names": [], "seen": set(),
                "href": "", "found": False})
            entry["lines"].append(imp.line)
            if not entry["href"] and absolute in modules:
                entry["href"] = self._link(page, docs_page(modules[absolute]))
            elif not entry["href"] and imp.level < 0 and targets:  # a path import (`#include`) names its file
                entry["href"] = self._link(page, docs_page(targets[0]))
            for name in (*imp.names, "*") if imp.star else imp.names:  # `from m import *` shows its `*`
                if name not in entry["seen"]:
                    entry["seen"].add(name)
                    sub = modules.get(f"{absolute}.{name}" if absolute else name)
                    entry["names"].append({"name": name, "href": self._link(page, docs_page(sub)) if sub else ""})
            entry["found"] = entry["found"] or bool(targets)
        return {cat: list(entries.values()) for cat, entries in groups.items()}

    def _folder_index(self, where: Where, folder: str, inputs: dict, facts_of: Mapping[str, FileFacts]) -> str:
        page = folder_index(folder)
        subfolders = [(posixpath.basename(f), self._link(page, folder_index(f)), below, purpose)
                      for f, below, purpose in inputs["subfolders"]]
        files = []
        for rel, _digest in inputs["files"]:
            facts = facts_of[rel]
            name = posixpath.basename(rel)
            purpose = _purpose_line(file_purpose(rel, facts, inputs["users"][rel]))
            note = f" ([keywords]({self._link(page, kw_page(rel))})): {purpose}"
            files.append({"text": md.code(name), "short": md.code(name), "key": name, "note": note,
                          "href": self._link(page, docs_page(rel)), "group": md.code(_extension(name))})
        if len(files) > LIST_LIMIT:  # the most imported first; a short list stays in name order
            used = inputs["importers"]
            files.sort(key=lambda f: (-used.get(posixpath.join(folder, f["key"]) if folder else f["key"], 0),
                                      f["key"]))
        return self._templates["folder_index"].render(
            folder=folder, page=page, title=folder or where.project, subfolders=subfolders,
            files=files, compact=len(files) > INDEX_NOTES_LIMIT, doc_href=self._link(page, folder_doc(folder)),
            parent_href=self._link(page, folder_index(folder_of(folder))) if folder else "",
            project=where.project,
        )

    def _folder_doc(self, where: Where, folder: str, inputs: dict, facts_of: Mapping[str, FileFacts]) -> str:
        page = folder_doc(folder)
        files = [rel for rel, _digest in inputs["files"]]
        init = next((r for r in files if posixpath.basename(r) == "__init__.py"), None)
        readme = next((r for r in files if posixpath.basename(r).lower() in ("readme.md", "readme.rst",
                                                                             "readme.txt", "readme")), None)
        purpose, purpose_from = "", ""
        if init and facts_of[init].module_doc:
            purpose, purpose_from = docstring_markdown(facts_of[init].module_doc), init
        elif readme:
            first = next((s.name for s in facts_of[readme].symbols), "")
            said = first_sentence(facts_of[readme].module_doc)  # its first paragraph of prose
            purpose = md.inline(said) if said else f"Described by its README{': ' + md.code(first) if first else ''}."
            purpose_from = readme
        used = inputs["importers"]
        telling = [] if purpose else [
            (posixpath.basename(r), self._link(page, docs_page(r)),
             _purpose_line(file_purpose(r, facts_of[r], inputs["users"][r])))
            for r in sorted(files, key=lambda r: (-len(used[r]), r))[:3]]
        inside = set(files)
        edges = {(rel, t) for rel in files for cat, targets, _absolute in inputs["links"][rel] if cat == "workspace"
                 for t in targets if t != rel and t in inside}  # (the set made once: per import, n^2 in all)
        languages = Counter(facts_of[r].language.value for r in files)
        lines = sum(facts_of[r].lines for r in files)
        main_classes: list[dict] = []
        main_functions: list[dict] = []
        for rel in files:
            base = posixpath.basename(rel)
            users = inputs["users"][rel]
            moved = member_parts(facts_of[rel])  # a function may be on a part of its file's page
            for s in facts_of[rel].symbols:
                if s.container or s.kind not in (SymbolKind.CLASS, SymbolKind.FUNCTION):
                    continue
                summary = summary_line(s.docstring)
                n = users.get(s.qualname, 0)
                used = f" (used by {plural(n, 'file', grouped=True)})" if n else ""
                entry = {"text": md.code(s.name), "short": md.code(s.name), "key": (s.name.lower(), rel),
                         "href": self._link(page, part_page(rel, moved.get(s.anchor, 1)), s.anchor),
                         "group": md.code(base), "users": n,
                         "note": f" in {md.code(base)}{used}" + (f": {md.inline(summary)}" if summary else "")}
                (main_classes if s.kind is SymbolKind.CLASS else main_functions).append(entry)

        def wholes(counts: Mapping[str, int], fragment: str) -> list[tuple[str, str, int]]:
            """Where a ranking's complete lists are: per file of the folder, a link to them and how many."""
            return [(md.code(posixpath.basename(r)), self._link(page, docs_page(r), fragment), n)
                    for r, n in sorted(counts.items(), key=lambda c: (-c[1], c[0])) if n]

        public = lambda entries: sorted(  # noqa: E731  the most used first, then public before private
            entries, key=lambda e: (-e["users"], e["key"][0].startswith("_"), e["key"]))
        deps: dict[str, Counter[str]] = {"workspace": Counter(), "stdlib": Counter(), "third-party": Counter()}
        used_by: set[str] = set()
        importers_of: dict[str, int] = {}
        for rel in files:
            for imp, (cat, targets, _absolute) in zip(facts_of[rel].imports, inputs["links"][rel], strict=True):
                if cat == "workspace":
                    for target in targets:
                        if folder_of(target) != folder:
                            deps[cat][target] += 1
                else:
                    deps[cat][imp.module.split(".", 1)[0]] += 1
            outside = [r for r in inputs["importers"][rel] if r not in inside and folder_of(r) != folder]
            importers_of[rel] = len(outside)
            used_by.update(outside)
        return self._templates["folder_doc"].render(
            folder=folder, page=page, title=folder or where.project, purpose=purpose,
            purpose_from=purpose_from, telling=telling, diagram=import_diagram(edges),
            purpose_href=self._link(page, docs_page(purpose_from)) if purpose_from else "",
            n_files=len(files), languages=sorted(languages.items()), lines=lines,
            n_folders=inputs["n_folders"],
            main_classes=public(main_classes), main_functions=public(main_functions),
            class_wholes=wholes(Counter(e["key"][1] for e in main_classes), "detailed-analysis"),
            function_wholes=wholes(Counter(e["key"][1] for e in main_functions), "detailed-analysis"),
            used_wholes=wholes(importers_of, "imported-by"),
            ws_deps=[(t, self._link(page, docs_page(t)), n) for t, n in sorted(deps["workspace"].items())],
            stdlib_deps=sorted(deps["stdlib"]), third_deps=sorted(deps["third-party"]),
            used_by=[self._file_item(page, r) for r in nearest(posixpath.join(folder, "_"), used_by)],
            index_href=self._link(page, folder_index(folder)), project=where.project,
            root=not folder,
        )


def import_diagram(edges: set[tuple[str, str]], cap: int = IMPORT_DIAGRAM_NODES) -> dict | None:
    """A Mermaid flowchart of imports between files (`importer -> imported`), at most `cap` files:
    the most connected, then by path; with how many files and imports were left out."""
    if not edges:
        return None
    degree: Counter[str] = Counter()
    for a, b in edges:
        degree[a] += 1
        degree[b] += 1
    kept = sorted(degree, key=lambda r: (-degree[r], r))[:cap]
    ids = {r: f"f{i}" for i, r in enumerate(sorted(kept))}
    shown = sorted((a, b) for a, b in edges if a in ids and b in ids)
    lines = ["flowchart LR"]
    lines += [f'  {ids[r]}["{_mermaid_label(posixpath.basename(r))}"]' for r in sorted(kept)]
    lines += [f"  {ids[a]} --> {ids[b]}" for a, b in shown]
    return {"text": "\n".join(lines), "files": len(kept), "left_files": len(degree) - len(kept),
            "left_edges": len(edges) - len(shown)}


def _mermaid_label(text: str) -> str:
    """A file name inside a quoted Mermaid label: quotes, markup and line breaks as entities."""
    return "".join(f"#{ord(ch)};" if ch in '"<>&#`\\' or not ch.isprintable() else ch for ch in text)


def _purpose_line(purpose: Purpose) -> str:
    """A purpose as one line of a list, saying where a derived one came from."""
    return f"{purpose.text} *(from {purpose.origin})*" if purpose.derived else purpose.text


def _extension(name: str) -> str:
    ext = posixpath.splitext(name)[1]
    return ext if ext else "no extension"


_ENUM_BASES = frozenset(("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"))
_FIELD_BASES = frozenset(("NamedTuple", "TypedDict"))
_DATACLASS = re.compile(r"^(?:\w+\.)*(?:dataclass|define|frozen|mutable|attrs|s)\b")


def _users_bytes(xref: Mapping[str, dict], anchors: Iterable[str]) -> int:
    """About how many bytes the Used by lists of the entries `anchors` take (`xref`: the view's
    links): a line per file of the first `LIST_LIMIT`, then the complete list folded by folder."""
    total = 0
    for anchor in anchors:
        users = xref.get(anchor, {}).get("users")
        if users:
            total += 80 + sum(len(u["text"]) + len(u["href"]) + len(u["note"]) + 6 for u in users[:LIST_LIMIT])
            if len(users) > LIST_LIMIT:
                total += 200 + sum(len(u["short"]) + len(u["href"]) + 6 for u in users)
    return total


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
    return {"name": a.name, "anchor": anchor, "text": text, "line": a.line, "instance": a.instance}


_BY_INSTANCE_LINE = operator.attrgetter("instance", "line")  # class body first, then `self.x`, by line


def _attributes(facts: FileFacts, classes: list[Symbol]) -> tuple[dict[str, dict], list[dict]]:
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


def _methods_by_class(symbols: Iterable[Symbol], classes: list[Symbol]) -> dict[str, list[Symbol]]:
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


def _counts(facts: FileFacts) -> dict[str, int]:
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


def _empty_reason(facts: FileFacts) -> str:
    if facts.lines == 0:
        return "the file is empty"
    if facts.language is Language.PYTHON:
        return "no classes, functions or imports are defined in this file"
    if facts.language is Language.MARKDOWN:
        return "no headings or code identifiers in this document"
    return "no identifiers in this file"
