"""textDocument/codeLens above classes and functions: "used by N files · docs", counted
from the symbol graph when the editor shows the lens (codeLens/resolve), not for every
definition of the file at once. The lens opens the definition's page (repodoc.showPage)."""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from repodoc_lsp.render.parts import page_of
from repodoc_lsp.server.convert import uri_of
from repodoc_lsp.server.server import RepodocServer  # at run time: pygls resolves a command's annotations
from repodoc_lsp.server.xref import graph_of
from repodoc_lsp.words import plural

if TYPE_CHECKING:
    from repodoc_lsp.server.state import Root

SHOW_PAGE = "repodoc.showPage"
LENS_KINDS = ("class", "function", "method")  # definitions of the graph that get a lens


def register(server: RepodocServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
    def code_lens(ls: RepodocServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
        found = graph_of(ls, params.text_document.uri)
        if found is None:
            return None
        root, graph, rel = found
        lenses = []
        for d in graph.definitions(rel):
            if d.kind in LENS_KINDS:
                at = types.Position(line=d.line - 1, character=0)
                lenses.append(types.CodeLens(range=types.Range(start=at, end=at),
                                             data={"root": str(root.path), "rel": rel, "qualname": d.qualname}))
        return lenses

    @server.feature(types.CODE_LENS_RESOLVE)
    def resolve(ls: RepodocServer, lens: types.CodeLens) -> types.CodeLens:
        with ls.requests:
            lens.command = _command(ls, lens.data if isinstance(lens.data, dict) else {})
        return lens

    @server.command(SHOW_PAGE)
    async def show_page(ls: RepodocServer, *args: Any) -> bool:
        """Open a generated page (`[uri]`) in the editor."""
        uri = args[0] if args and isinstance(args[0], str) else None
        if uri is None or not uri.startswith("file:"):
            raise JsonRpcInvalidParams("expected one argument: the URI of a page")
        result = await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
        return bool(result and result.success)


def _command(ls: RepodocServer, data: dict) -> types.Command:
    """`used by N files · docs` (the definition's page, once it is written)."""
    root = ls.roots.get(Path(str(data.get("root", ""))))
    graph = root.ws.graph_ready if root is not None else None
    rel, qualname = str(data.get("rel", "")), str(data.get("qualname", ""))
    if root is None or graph is None or graph.definition(rel, qualname) is None:
        return types.Command(title="not in the workspace any more", command="")
    n = len(graph.users((rel, qualname)))
    title = f"used by {plural(n, 'file')}"
    page = _page(root, rel, qualname)
    if not page:
        return types.Command(title=title, command="")
    return types.Command(title=f"{title} · docs", command=SHOW_PAGE, arguments=[page])


def _page(root: Root, rel: str, qualname: str) -> str:
    """The definition's place in its file's page, "" before the page is written."""
    docs, _ = root.pages_for(rel)
    if not docs.exists():
        return ""
    facts = root.ws.facts.one(rel)
    anchor = next((s.anchor for s in facts.symbols if s.qualname == qualname), "") if facts else ""
    return uri_of(docs.with_name(posixpath.basename(page_of(rel, facts, anchor))), anchor)
