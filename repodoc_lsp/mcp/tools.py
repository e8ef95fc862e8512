"""The tools' answers (`search_symbols`, `used_by`, `outline`, `check_references`), read from a
`Docs`: the keyword index, the import relations and the symbol graph. `search_symbols` reads only
the index (`Docs.search`); the others run on the root's thread (`Docs.answer`)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from repodoc_lsp.knowledge.index import MODULE
from repodoc_lsp.mcp.docs import Docs, DocsError
from repodoc_lsp.server.search import distinct

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.index import Entry
    from repodoc_lsp.mcp.pages import Pages
    from repodoc_lsp.refs.check import Stale
    from repodoc_lsp.refs.resolve import Resolver
    from repodoc_lsp.store.workspace import Workspace

MAX_LIMIT = 200  # rows of a search, of an outline, files of a `used_by`
MAX_QUERY = 256  # characters of a search query (as workspace/symbol)


class Tools:
    def __init__(self, docs: Docs, pages: Pages) -> None:
        self.docs = docs
        self.pages = pages
        self._resolver: tuple[int, Resolver] | None = None
        self._checks: dict[str, tuple[list[Stale], int]] = {}  # input file -> its check, of `_resolver`'s state

    def search_symbols(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        if not isinstance(query, str):
            raise DocsError("query: give the text to search")
        if len(query) > MAX_QUERY:
            raise DocsError(f"query: {len(query):,} characters; at most {MAX_QUERY} are searched")
        limit = max(1, min(int(limit), MAX_LIMIT))
        index = self.docs.root.index
        hits = []
        for e in distinct(self.docs.root, query, limit):
            qual = f"{e.container}.{e.name}" if e.container and e.kind != "heading" else e.name
            hit: dict[str, Any] = {"name": e.name, "kind": e.kind, "path": e.rel, "line": e.line}
            if e.container:
                hit["container"] = e.container
            if e.kind == MODULE:
                hit["symbol"] = e.name
            elif e.kind != "heading" and (module := _module(index.file_entries(e.rel))):
                hit["symbol"] = f"{module}.{qual}"
            hits.append(hit)
        return hits

    def used_by(self, symbol: str) -> dict[str, Any]:
        docs = self.docs
        rel, qual = key = docs.key_of(symbol)
        ws = docs.root.ws
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
                "subclassed_by": [docs.dotted(r, q) or f"{r}:{q}" for r, q in graph.subclasses(key)[:MAX_LIMIT]]}

    def outline(self, path: str) -> dict[str, Any]:
        rel = self.docs.rel_of(path)
        ws = self.docs.root.ws
        if rel in ws.facts:
            return self._file_outline(rel)
        if rel in ws.folders:
            return self._folder_outline(rel)
        raise DocsError(f"{path}: not a file or folder the docs cover (excluded, ignored or missing)")

    def _file_outline(self, rel: str) -> dict[str, Any]:
        root = self.docs.root
        graph = root.ws.graph_ready
        rows: list[dict[str, Any]] = []
        for e in root.index.file_entries(rel):
            if e.kind == MODULE:
                continue
            qual = f"{e.container}.{e.name}" if e.container and e.kind != "heading" else e.name
            used = graph.user_count((rel, qual)) if graph is not None and e.kind != "heading" else 0
            rows.append({"name": qual if e.kind != "heading" else e.name, "kind": e.kind, "line": e.line,
                         "used_by": used})
        rows.sort(key=lambda r: (-r["used_by"], r["line"]))  # most used first, then in file order
        return {"path": rel, "kind": "file", "module": self.docs.dotted(rel, ""),
                "importers": len(root.ws.relations.importers(rel)), "symbols": rows[:MAX_LIMIT],
                "total": len(rows)}

    def _folder_outline(self, folder: str) -> dict[str, Any]:
        site = self.pages.site()
        root = self.docs.root
        relations = root.ws.relations
        folders: list[dict[str, Any]] = [{"path": f, "files": site.files_below.get(f, 0)}
                                         for f in site.child_folders.get(folder, [])]
        folders.sort(key=lambda r: (-r["files"], r["path"]))
        files: list[dict[str, Any]] = [
            {"path": r, "importers": len(relations.importers(r)),
             "symbols": sum(1 for e in root.index.file_entries(r) if e.kind != MODULE)}
            for r in site.child_files.get(folder, [])]
        files.sort(key=lambda r: (-r["importers"], -r["symbols"], r["path"]))  # most imported first
        return {"path": folder, "kind": "folder", "files_below": site.files_below.get(folder, 0),
                "folders": folders[:MAX_LIMIT], "files": files[:MAX_LIMIT]}

    def check_references(self, paths: list[str]) -> dict[str, Any]:
        if isinstance(paths, str):
            paths = [paths]
        rels = [self.docs.rel_of(p) for p in paths]
        stale: list[dict[str, Any]] = []
        checked = references = 0
        for rel in rels:
            found, count = self._check(rel)
            checked += 1
            references += count
            stale.extend({"path": s.rel, "line": s.line, "column": s.col + 1, "reference": s.text,
                          "message": s.describe()} for s in dict.fromkeys(found))
        return {"files": checked, "references": references, "stale": stale}

    def _check(self, rel: str) -> tuple[list[Stale], int]:
        """The stale references of one file (inside the workspace) and how many it holds."""
        from repodoc_lsp.refs.check import check_doc, check_docstrings, is_doc

        ws = self.docs.root.ws
        resolver = self.resolver()
        if rel in self._checks:  # an input file, checked in this state of the workspace
            return self._checks[rel]
        if rel.endswith(".py") and (facts := ws.facts.one(rel)) is not None:
            found = self._checks[rel] = check_docstrings(resolver, rel, facts, functools.partial(_text, ws, rel))
            return found
        if not is_doc(rel):
            raise DocsError(f"{rel}: not a Markdown, reST or text doc, nor a Python file of the workspace")
        text = ws.read_text(rel)
        if text is None:
            raise DocsError(f"{rel}: not a readable text file")
        found = check_doc(resolver, rel, text)
        if rel in ws.facts:  # its changes are seen (a doc in the output folder is not an input)
            self._checks[rel] = found
        return found

    def resolver(self) -> Resolver:
        """The references' resolver, kept while the workspace does not change (it keeps the texts,
        anchors and names it read)."""
        from repodoc_lsp.refs.resolve import Resolver

        if self._resolver is None or self._resolver[0] != self.docs.version:
            self._resolver = (self.docs.version, Resolver(self.docs.root.ws, self.docs.root.index))
            self._checks.clear()
        return self._resolver[1]


def _module(entries: list[Entry]) -> str:
    """The dotted module name of a file, from its module entry in the index ("": none)."""
    return next((f"{e.container}.{e.name}" if e.container else e.name for e in entries if e.kind == MODULE), "")


def _text(ws: Workspace, rel: str) -> str:
    return ws.read_text(rel) or ""
