"""`repodoc mcp [ROOT]`: the workspace's docs for coding agents, over the Model Context Protocol (stdio).

The answers come from the language server's own root (`server/state.py`: the workspace's facts,
symbol graph and keyword index, built and updated by the same code) and pages from the renderer
the CLI uses (`generate.page_renderer`): nothing here analyses, indexes or renders by itself.
Before a request, files changed on disk since the last look (their size or modification time,
folders for files that appeared) go through the root's own update path; a look costs a `stat`
per file, so it is taken at most every `poll` seconds.

Every path a tool or resource is given is resolved (symbolic links followed) and must lie inside
the workspace: nothing outside it is read.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from repodoc_lsp.config import Settings
from repodoc_lsp.knowledge.graph import Key
from repodoc_lsp.knowledge.index import MODULE
from repodoc_lsp.pipeline.runtime import Runtime
from repodoc_lsp.refs.check import Stale, check_doc, check_docstrings, is_doc
from repodoc_lsp.refs.resolve import Resolver
from repodoc_lsp.render.parts import anchor_of
from repodoc_lsp.render.paths import docs_page, folder_doc, folder_index, kw_page

if TYPE_CHECKING:
    from repodoc_lsp.render.pages import Site
    from repodoc_lsp.server.state import Root
    from repodoc_lsp.store.workspace import Workspace

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_LIMIT = 200  # rows of a search, of an outline, files of a `used_by`
MAX_QUERY = 256  # characters of a search query (as workspace/symbol)
READY_TIMEOUT = 600.0  # seconds a request waits for the first scan
URI_PREFIX = "repodoc://page/"
PAGES_KEPT = 32  # rendered pages kept until the workspace changes


class DocsError(Exception):
    """A request that cannot be answered (unknown symbol, path outside the workspace): its message
    is what the client is told."""


class Docs:
    """The workspace as the tools read it: the server's root, kept current with the disk."""

    def __init__(self, path: Path, settings: Settings, runtime: Runtime, *, poll: float = 1.0) -> None:
        from repodoc_lsp.render.pages import Renderer
        from repodoc_lsp.server.state import Root
        from repodoc_lsp.server.symbols import distinct  # imported here, not by the first search

        self._distinct = distinct

        self.root: Root = Root(path, settings, runtime)
        self.path = self.root.path
        self.poll = poll
        self.renderer = Renderer(self.root.settings.templates or None, lazy=not self.root.settings.templates)
        self._files: dict[str, tuple[int, int]] = {}  # file -> (size, mtime_ns) when last seen
        self._folders: dict[str, int] = {}  # folder -> mtime_ns when last seen
        self._looked = 0.0  # time.monotonic() of the last look at the disk
        self._looking = threading.Lock()
        self._version = 0  # bumped when the workspace changed: the site pages see is made again
        self._site: tuple[int, Site] | None = None
        self._resolver: tuple[int, Resolver] | None = None
        self._checks: dict[str, tuple[list[Stale], int]] = {}  # input file -> its check, of `_resolver`'s state
        self._pages: OrderedDict[tuple[str, str], list[tuple[str, str]]] = OrderedDict()  # of `_version`
        self.failure = ""

    # -- life ------------------------------------------------------------------------
    def start(self) -> None:
        """Scan the workspace on the root's thread (requests wait for it: `ready`), then make
        what first answers would (the pages' site, the templates compiled)."""
        self.root.submit(self._scan)
        self.root.submit(self._warm)

    def _warm(self) -> None:
        if self.failure:
            return
        try:
            self.render("index", "")
        except Exception:  # the request that needs it says why
            log.exception("preparing pages failed")

    def _scan(self) -> None:
        try:
            self.root.scan()
            self._files, self._folders = self._stats(self.root.ws.facts), self._folder_stats(self.root.ws.folders)
            self._looked = time.monotonic()
        except Exception as exc:
            log.exception("scanning %s failed", self.path)
            self.failure = str(exc) or type(exc).__name__
        finally:
            self.root.indexed.set()

    def close(self) -> None:
        self.root.close()

    def ready(self, timeout: float = READY_TIMEOUT) -> None:
        if not self.root.indexed.wait(timeout):
            raise DocsError("the workspace is still being analysed; ask again")
        if self.failure:
            raise DocsError(f"analysing the workspace failed: {self.failure}")

    def answer(self, fn: Callable[[], T]) -> T:
        """`fn()` on the root's thread, with the workspace as the disk has it (no update meanwhile)."""
        self.ready()
        self.current()
        return self.root.submit(fn).result()

    # -- current with the disk ---------------------------------------------------------
    def _stats(self, rels: Any) -> dict[str, tuple[int, int]]:
        found = {}
        base, stat = f"{self.path}/", os.stat
        for rel in rels:
            try:
                st = stat(base + rel, follow_symlinks=False)
            except OSError:
                continue
            found[rel] = (st.st_size, st.st_mtime_ns)
        return found

    def _folder_stats(self, folders: Any) -> dict[str, int]:
        found = {}
        base, stat = f"{self.path}/", os.stat
        for folder in folders:
            try:
                found[folder] = stat(base + folder if folder else str(self.path), follow_symlinks=False).st_mtime_ns
            except OSError:
                continue
        return found

    def _changed_files(self) -> list[str]:
        """Files whose size or modification time is not the one last seen (or that are gone)."""
        changed = []
        base, stat = f"{self.path}/", os.stat
        for rel, seen in self._files.items():
            try:
                st = stat(base + rel, follow_symlinks=False)
            except OSError:
                changed.append(rel)
                continue
            if st.st_mtime_ns != seen[1] or st.st_size != seen[0]:
                changed.append(rel)
        return changed

    def current(self) -> None:
        """Take files changed on disk since the last look (at most one look every `poll` seconds):
        through the root's update path (`Root.regenerate` without pages), the index following."""
        with self._looking:
            if time.monotonic() - self._looked < self.poll:
                return
            self.root.submit(self._look).result()
            while (settling := self.root.settling()) is not None:  # the index takes the files
                settling.result()

    def _look(self) -> None:
        ws = self.root.ws
        changed = self._changed_files()
        now_folders = self._folder_stats(self._folders)
        for folder, seen in list(self._folders.items()):
            now = now_folders.get(folder)
            if now == seen:
                continue
            self._folders.pop(folder, None)
            try:
                names = sorted(os.listdir(self.path / folder)) if now is not None else []
            except OSError:
                names = []
            for name in names:
                rel = f"{folder}/{name}" if folder else name
                if rel in ws.facts or rel in self._folders:
                    continue
                path = self.path / rel
                if path.is_dir() and not path.is_symlink():
                    if not ws.filter.dir_excluded(rel, str(path)):
                        changed.append(rel)  # a new folder: the root takes the inputs it holds
                elif ws.filter.is_input(path):
                    changed.append(rel)  # a new file
        if changed:
            self.root.regenerate(changed, write=False)
            self._version += 1
            self._files.update(self._stats(changed))
            for rel in changed:
                if rel not in ws.facts:
                    self._files.pop(rel, None)
            self._files.update(self._stats(r for r in ws.facts if r not in self._files))
        self._folders.update(self._folder_stats(f for f in ws.folders if f not in self._folders))
        self._looked = time.monotonic()

    # -- paths -------------------------------------------------------------------------
    def rel_of(self, path: str) -> str:
        """`path` (relative to the root, or absolute) as a POSIX path relative to the root, after
        resolving symbolic links; a DocsError when it is outside the workspace."""
        if not isinstance(path, str) or "\x00" in path:
            raise DocsError("a path must be a string without NUL characters")
        given = Path(path)
        full = given if given.is_absolute() else self.path / given
        try:
            rel = full.resolve().relative_to(self.path)
        except (ValueError, OSError, RuntimeError):
            raise DocsError(f"{path}: outside the workspace {self.path}") from None
        return rel.as_posix() if rel.parts else ""

    # -- symbols -----------------------------------------------------------------------
    def key_of(self, symbol: str) -> Key:
        """A dotted name (`pkg.mod.Class.method`, or a module `pkg.mod`) -> its definition."""
        if not isinstance(symbol, str) or not symbol.strip():
            raise DocsError("symbol: give a dotted name such as pkg.module.Class")
        symbol = symbol.strip()
        ws = self.root.ws
        graph = ws.graph_ready
        parts = symbol.split(".")
        file_of = ws.relations.file_of
        for i in range(len(parts), 0, -1):
            rel = file_of.get(".".join(parts[:i]))
            if rel is None:
                continue
            qual = ".".join(parts[i:])
            if not qual:
                return (rel, "")
            if graph is not None:
                if graph.definition(rel, qual) is not None:
                    return (rel, qual)
                key = graph.resolve(rel, qual)  # a name the module imports (`torch.nn.Linear`)
                if key is not None:
                    return key
            break
        raise DocsError(f"unknown symbol: {symbol} (no workspace module or definition of that name; "
                        "search_symbols finds the dotted name of a symbol)")

    def dotted(self, rel: str, qual: str) -> str:
        module = self.root.ws.relations.module_of.get(rel, "")
        return f"{module}.{qual}" if module and qual else module or ""

    # -- the tools (on the root's thread) ----------------------------------------------
    def search_symbols(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        if len(query) > MAX_QUERY:
            raise DocsError(f"query: {len(query):,} characters; at most {MAX_QUERY} are searched")
        limit = max(1, min(int(limit), MAX_LIMIT))
        hits = []
        for e in self._distinct(self.root, query, limit):
            qual = f"{e.container}.{e.name}" if e.container and e.kind != "heading" else e.name
            hit: dict[str, Any] = {"name": e.name, "kind": e.kind, "path": e.rel, "line": e.line}
            if e.container:
                hit["container"] = e.container
            if e.kind == MODULE:
                hit["symbol"] = e.name
            elif e.kind != "heading" and (dotted := self.dotted(e.rel, qual)):
                hit["symbol"] = dotted
            hits.append(hit)
        return hits

    def used_by(self, symbol: str) -> dict[str, Any]:
        rel, qual = key = self.key_of(symbol)
        ws = self.root.ws
        if not qual:  # a module: the files importing it
            importers = sorted(ws.relations.importers(rel))
            return {"symbol": symbol, "path": rel, "kind": "module", "files": len(importers),
                    "used_by": [{"path": r} for r in importers[:MAX_LIMIT]]}
        graph = ws.graph_ready
        assert graph is not None  # key_of found a definition in it
        d = graph.definition(rel, qual)
        users = graph.users(key)
        ranked = sorted(users.items(), key=lambda item: (-len(item[1]), item[0]))
        return {"symbol": symbol, "path": rel, "line": d.line if d else 0, "kind": graph.kind(key),
                "files": len(users), "uses": sum(len(lines) for lines in users.values()),
                "used_by": [{"path": r, "lines": list(lines)} for r, lines in ranked[:MAX_LIMIT]],
                "subclassed_by": [self.dotted(r, q) or f"{r}:{q}" for r, q in graph.subclasses(key)[:MAX_LIMIT]]}

    def outline(self, path: str) -> dict[str, Any]:
        rel = self.rel_of(path)
        ws = self.root.ws
        if rel in ws.facts:
            return self._file_outline(rel)
        if rel in ws.folders:
            return self._folder_outline(rel)
        raise DocsError(f"{path}: not a file or folder the docs cover (excluded, ignored or missing)")

    def _file_outline(self, rel: str) -> dict[str, Any]:
        graph = self.root.ws.graph_ready
        rows = []
        for e in self.root.index.file_entries(rel):
            if e.kind == MODULE:
                continue
            qual = f"{e.container}.{e.name}" if e.container and e.kind != "heading" else e.name
            used = graph.user_count((rel, qual)) if graph is not None and e.kind != "heading" else 0
            row: dict[str, Any] = {"name": qual if e.kind != "heading" else e.name, "kind": e.kind, "line": e.line,
                                   "used_by": used}
            rows.append(row)
        rows.sort(key=lambda r: (-r["used_by"], r["line"]))  # most used first, then in file order
        return {"path": rel, "kind": "file", "module": self.dotted(rel, ""),
                "importers": len(self.root.ws.relations.importers(rel)), "symbols": rows[:MAX_LIMIT],
                "total": len(rows)}

    def _folder_outline(self, folder: str) -> dict[str, Any]:
        site = self.site()
        relations = self.root.ws.relations
        folders: list[dict[str, Any]] = [{"path": f, "files": site.files_below.get(f, 0)}
                                         for f in site.child_folders.get(folder, [])]
        folders.sort(key=lambda r: (-r["files"], r["path"]))
        files: list[dict[str, Any]] = [
            {"path": r, "importers": len(relations.importers(r)),
             "symbols": sum(1 for e in self.root.index.file_entries(r) if e.kind != MODULE)}
            for r in site.child_files.get(folder, [])]
        files.sort(key=lambda r: (-r["importers"], -r["symbols"], r["path"]))  # most imported first
        return {"path": folder, "kind": "folder", "files_below": site.files_below.get(folder, 0),
                "folders": folders[:MAX_LIMIT], "files": files[:MAX_LIMIT]}

    def check_references(self, paths: list[str]) -> dict[str, Any]:
        if isinstance(paths, str):
            paths = [paths]
        rels = [self.rel_of(p) for p in paths]
        ws = self.root.ws
        resolver = self.resolver()
        stale: list[dict[str, Any]] = []
        checked = references = 0
        for rel in rels:
            if rel in self._checks:  # an input file, checked in this state of the workspace
                found, count = self._checks[rel]
            elif rel.endswith(".py") and (facts := ws.facts.one(rel)) is not None:
                found, count = check_docstrings(resolver, rel, facts, functools.partial(_text, ws, rel))
                self._checks[rel] = (found, count)
            elif is_doc(rel):
                text = ws.read_text(rel)
                if text is None:
                    raise DocsError(f"{rel}: not a readable text file")
                found, count = check_doc(resolver, rel, text)
                if rel in ws.facts:  # its changes are seen (a doc in the output folder is not an input)
                    self._checks[rel] = (found, count)
            else:
                raise DocsError(f"{rel}: not a Markdown, reST or text doc, nor a Python file of the workspace")
            checked += 1
            references += count
            stale.extend({"path": s.rel, "line": s.line, "column": s.col + 1, "reference": s.text,
                          "message": s.describe()} for s in dict.fromkeys(found))
        return {"files": checked, "references": references, "stale": stale}

    def resolver(self) -> Resolver:
        """The references' resolver, kept while the workspace does not change (it keeps the texts,
        anchors and names it read)."""
        if self._resolver is None or self._resolver[0] != self._version:
            self._resolver = (self._version, Resolver(self.root.ws, self.root.index))
            self._checks.clear()
        return self._resolver[1]

    # -- pages -------------------------------------------------------------------------
    def site(self) -> Site:
        from repodoc_lsp.pipeline.generate import site_of

        if self._site is None or self._site[0] != self._version:
            self._site = (self._version, site_of(self.root.ws))
            self._pages.clear()
        return self._site[1]

    def page_of(self, path: str) -> tuple[str, str]:
        """(kind, subject) of the page `path` names: a workspace file (its docs page) or folder (its
        index), or a page path of the tree (`pkg/mod.py_docs.md`, `pkg/index.md`, ...)."""
        ws = self.root.ws
        if not isinstance(path, str) or "\x00" in path or path.startswith("/") or ".." in path.split("/"):
            raise DocsError(f"{path}: not a page path inside the workspace")
        name = path.strip("/")
        if name in ws.facts:
            return "docs", name
        if name in ws.folders or name in ("", "."):
            return "index", "" if name == "." else name
        for kind, suffix in (("docs", "_docs.md"), ("kw", "_kw.md")):
            if name.endswith(suffix) and name[: -len(suffix)] in ws.facts:
                return kind, name[: -len(suffix)]
        folder, _, base = name.rpartition("/")
        if folder in ws.folders and base in ("index.md", "doc.md"):
            return ("index" if base == "index.md" else "doc"), folder
        if "_docs.part" in name:
            subject = name.rsplit("_docs.part", 1)[0]
            if subject in ws.facts:
                return "docs", subject
        raise DocsError(f"{path}: no page of that name (a workspace file or folder, or a page such as "
                        f"{docs_page('pkg/mod.py')}, {kw_page('pkg/mod.py')}, {folder_index('pkg')}, "
                        f"{folder_doc('pkg')})")

    def render(self, kind: str, subject: str) -> list[tuple[str, str]]:
        """The page and its part pages, as the CLI writes them: (path in the tree, Markdown)."""
        from repodoc_lsp.pipeline.generate import page_renderer
        from repodoc_lsp.render.pages import Page

        site = self.site()
        pages = self._pages.get((kind, subject))
        if pages is None:  # rendered once per state of the workspace (a page and its sections asked in turn)
            pages, _key = page_renderer(self.root.ws, self.renderer, site)(Page(kind, subject, ""))
            self._pages[(kind, subject)] = pages
            if len(self._pages) > PAGES_KEPT:
                self._pages.popitem(last=False)
        else:
            self._pages.move_to_end((kind, subject))
        return pages

    def get_page(self, path: str | None = None, symbol: str | None = None) -> dict[str, Any]:
        if bool(path) == bool(symbol):
            raise DocsError("give either path (a file, folder or page) or symbol (a dotted name)")
        if symbol:
            return self._section(symbol)
        assert path is not None
        if path not in ("", ".") and not self._is_page_path(path):
            path = self.rel_of(path)  # a workspace file or folder: links resolved, kept inside
        kind, subject = self.page_of(path)
        pages = self.render(kind, subject)
        wanted = path.strip("/")
        text = next((md for p, md in pages if p == wanted), pages[0][1])
        page = next((p for p, md in pages if p == wanted), pages[0][0])
        return {"page": page, "text": text, "parts": [p for p, _ in pages[1:]]}

    def _is_page_path(self, path: str) -> bool:
        return path.endswith(".md") and not (self.path / path).exists()

    def _section(self, symbol: str) -> dict[str, Any]:
        rel, qual = self.key_of(symbol)
        if not qual:
            pages = self.render("docs", rel)
            return {"page": pages[0][0], "symbol": symbol, "text": pages[0][1]}
        graph = self.root.ws.graph_ready
        kind = graph.kind((rel, qual)) if graph is not None else ""
        anchor = anchor_of(kind, qual) if kind else ""
        for page, text in self.render("docs", rel):
            found = _section(text, anchor) if anchor else None
            if found is not None:
                return {"page": f"{page}#{anchor}", "symbol": symbol, "text": found}
        pages = self.render("docs", rel)
        return {"page": pages[0][0], "symbol": symbol, "text": pages[0][1]}

    def read_page(self, path: str) -> str:
        kind, subject = self.page_of(path)
        pages = self.render(kind, subject)
        wanted = path.strip("/")
        return next((md for p, md in pages if p == wanted), pages[0][1])


def _text(ws: Workspace, rel: str) -> str:
    return ws.read_text(rel) or ""


def _section(text: str, anchor: str) -> str | None:
    """The part of a page that documents `anchor`: an entry under a heading (from its anchor to
    the next anchored entry or section) or a list item (a method, an attribute: its indented lines)."""
    lines = text.split("\n")
    tag = f'<a id="{anchor}"></a>'
    start = next((i for i, line in enumerate(lines) if line.startswith((tag, f"- {tag}"))), None)
    if start is None:
        return None
    item = lines[start].startswith("- ")
    end = len(lines)
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if item:
            if line and not line.startswith(" "):
                end = i
                break
        elif i > start + 1 and (line.startswith(("## ", "### ", '<a id="'))):
            end = i
            break
    return "\n".join(lines[start:end]).strip() + "\n"


# -- the MCP server ----------------------------------------------------------------------

INSTRUCTIONS = (
    "repodoc's documentation of one workspace: search its symbols (search_symbols), who uses a symbol "
    "(used_by, dotted names as search_symbols gives them), what a folder or file holds (outline), the "
    "generated page of a file, folder or symbol (get_page, also as resources repodoc://page/PATH), and "
    "the stale references of hand-written docs (check_references). Paths are relative to the workspace."
)


def build_server(docs: Docs) -> Any:
    """The MCP server (the official SDK's `MCPServer`) whose tools and resources read `docs`."""
    import anyio.to_thread
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    from repodoc_lsp import __version__

    server = MCPServer(name="repodoc", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    async def run(fn: Callable[[], T], error: type[Exception] = ToolError) -> T:
        try:
            return await anyio.to_thread.run_sync(docs.answer, fn)
        except DocsError as exc:
            raise error(str(exc)) from None

    @server.tool(description="Ranked search of the workspace's symbols (classes, functions, methods, modules, "
                             "headings), as the editor's workspace symbol search. Each hit has its file path "
                             "relative to the workspace root and, for code, its dotted name (`symbol`).")
    async def search_symbols(query: str, limit: int = 20) -> list[dict[str, Any]]:
        return await run(lambda: docs.search_symbols(query, limit))

    @server.tool(description="The files and lines that use a workspace symbol, given as a dotted name "
                             "(pkg.module.Class, pkg.module.function, pkg.module.Class.method; a module: "
                             "the files importing it). Files naming it most come first.")
    async def used_by(symbol: str) -> dict[str, Any]:
        return await run(lambda: docs.used_by(symbol))

    @server.tool(description="The generated documentation page (Markdown) of a workspace file or folder "
                             "(path), or the section of a symbol (symbol: a dotted name). A path may also "
                             "name a page of the tree: pkg/mod.py_docs.md, pkg/mod.py_kw.md, pkg/index.md, "
                             "pkg/doc.md.")
    async def get_page(path: str | None = None, symbol: str | None = None) -> dict[str, Any]:
        return await run(lambda: docs.get_page(path, symbol))

    @server.tool(description="What a folder or file holds, ranked: a folder's sub-folders (most files "
                             "first) and files (most imported first); a file's symbols (most used first).")
    async def outline(path: str) -> dict[str, Any]:
        return await run(lambda: docs.outline(path))

    @server.tool(description="Stale references in hand-written docs (Markdown, reST, text) and Python "
                             "docstrings, as `repodoc check` reports them: names and links that no longer "
                             "resolve, with a suggestion when one is close.")
    async def check_references(paths: list[str]) -> dict[str, Any]:
        return await run(lambda: docs.check_references(paths))

    @server.resource(f"{URI_PREFIX}index.md", name="index.md", mime_type="text/markdown",
                     description="The index page of the workspace's root folder")
    async def root_index() -> str:
        return await run(lambda: docs.read_page("index.md"), ResourceError)

    @server.resource(URI_PREFIX + "{+path}", name="page", mime_type="text/markdown",
                     description="A generated page by its path in the docs tree (pkg/mod.py_docs.md, "
                                 "pkg/mod.py_kw.md, pkg/index.md, pkg/doc.md)")
    async def page(path: str) -> str:
        return await run(lambda: docs.read_page(path), ResourceError)

    return server


def serve(root: Path, settings: Settings, *, poll: float = 1.0) -> int:
    """Run the MCP server on stdio until the client closes it."""
    from repodoc_lsp.pipeline.runtime import enter_server

    logging.basicConfig(level=logging.WARNING, format="repodoc mcp: %(levelname)s %(message)s")
    docs = Docs(root, settings, enter_server(), poll=poll)
    docs.start()
    server = build_server(docs)
    try:
        server.run("stdio")
    finally:
        docs.close()
    return 0
