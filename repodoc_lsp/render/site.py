"""The workspace as pages see it (`Site`), what every page may say of it (`Where`), and the pages
of the tree (`Page`: a kind, a subject, a key)."""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field

from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.analysis.treesitter.byname import NameUsers
from repodoc_lsp.knowledge.graph import Graph
from repodoc_lsp.render import llms
from repodoc_lsp.render.anchors import AnchorState
from repodoc_lsp.render.own_pages import has_pages
from repodoc_lsp.render.paths import docs_page, folder_doc, folder_index, folder_of, kw_page


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
    # who names the definitions of tree-sitter files, by name (None: no such file, or not asked)
    by_name: NameUsers | None = None
    # the files that have pages of their own, when known without their facts (a page share's, an edit
    # run's from the last run's manifest); None: asked of each file's facts
    known_paged: frozenset[str] | None = None

    @classmethod
    def build(cls, *, project: str, root: str, out: str, embed_max: int, relations: Relations,
              facts: Mapping[str, FileFacts], sizes: dict[str, int], folders: Iterable[str],
              digests: Mapping[str, str] | None = None, graph: Graph | Future[Graph] | None = None,
              paged: frozenset[str] | None = None) -> Site:
        site = cls(project, root, out, embed_max, relations, facts, sizes, sorted(folders), digests or {},
                   symbols=graph, known_paged=paged)
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

    def has_pages(self, rel: str) -> bool:
        """The file `rel` has pages of its own (`own_pages.has_pages`); else a line in its folder's index."""
        return has_pages(self.facts[rel]) if self.known_paged is None else rel in self.known_paged

    @functools.cached_property
    def paged(self) -> frozenset[str]:
        """The files that have pages of their own."""
        if self.known_paged is not None:
            return self.known_paged
        return frozenset(rel for rel in self.facts if self.has_pages(rel))

    def paged_files(self, folder: str) -> list[str]:
        """The files directly in `folder` that have pages of their own, sorted."""
        return self._paged_children.get(folder, [])

    @functools.cached_property
    def _paged_children(self) -> dict[str, list[str]]:
        """`paged_files` of every folder, made once (each page of a folder asks for its folder's)."""
        paged = self.paged
        return {folder: [rel for rel in files if rel in paged] for folder, files in self.child_files.items()}

    @functools.cached_property
    def packages(self) -> frozenset[str]:
        """The dotted names the workspace has modules directly under (`pkg` of `pkg.mod`; "": top-level
        ones): `from pkg import a` names a module `pkg.a` only when `pkg` is one."""
        return frozenset(name.rpartition(".")[0] for name in self.relations.file_of)

    def source_path(self, rel: str) -> str:
        """The source file `rel` as a path relative to the output folder."""
        return posixpath.relpath(posixpath.join(self.root, rel), self.out)


PAGE_KINDS = ("docs", "kw", "index", "doc", "llms", "llms-full")
# where each kind of page of a subject lives, relative to the output folder
PATHS: dict[str, Callable[[str], str]] = {"docs": docs_page, "kw": kw_page, "index": folder_index,
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
        return PATHS[self.kind](self.subject)


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

