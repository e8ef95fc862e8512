"""The MCP server (the official SDK's `MCPServer`, an extra: `pip install "repodoc-lsp[mcp]"`)
whose tools and resources read one workspace's `Docs`, and `serve`, which runs it on stdio."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from repodoc_lsp.config import Settings
from repodoc_lsp.mcp.docs import Docs, DocsError
from repodoc_lsp.mcp.pages import Pages
from repodoc_lsp.mcp.tools import Tools

T = TypeVar("T")
URI_PREFIX = "repodoc://page/"
INSTRUCTIONS = (
    "repodoc's documentation of one workspace: search its symbols (search_symbols), who uses a symbol "
    "(used_by, dotted names as search_symbols gives them), what a folder or file holds (outline), the "
    "generated page of a file, folder or symbol (get_page, also as resources repodoc://page/PATH), and "
    "the stale references of hand-written docs (check_references). Paths are relative to the workspace."
)


def build_server(docs: Docs, tools: Tools, pages: Pages) -> Any:
    """The MCP server whose tools and resources read `docs`."""
    import anyio.to_thread
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    from repodoc_lsp import __version__

    server = MCPServer(name="repodoc", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    async def run(fn: Callable[[], T], error: type[Exception] = ToolError, way: Callable = docs.answer) -> T:
        try:
            return await anyio.to_thread.run_sync(way, fn)
        except DocsError as exc:
            raise error(str(exc)) from None

    @server.tool(description="Ranked search of the workspace's symbols (classes, functions, methods, modules, "
                             "headings), as the editor's workspace symbol search. Each hit has its file path "
                             "relative to the workspace root and, for code, its dotted name (`symbol`).")
    async def search_symbols(query: str, limit: int = 20) -> list[dict[str, Any]]:
        return await run(lambda: tools.search_symbols(query, limit), way=docs.search)

    @server.tool(description="The files and lines that use a workspace symbol, given as a dotted name "
                             "(pkg.module.Class, pkg.module.function, pkg.module.Class.method; a module: "
                             "the files importing it). Files naming it most come first.")
    async def used_by(symbol: str) -> dict[str, Any]:
        return await run(lambda: tools.used_by(symbol))

    @server.tool(description="The generated documentation page (Markdown) of a workspace file or folder "
                             "(path), or the section of a symbol (symbol: a dotted name). A path may also "
                             "name a page of the tree: pkg/mod.py_docs.md, pkg/mod.py_kw.md, pkg/index.md, "
                             "pkg/doc.md.")
    async def get_page(path: str | None = None, symbol: str | None = None) -> dict[str, Any]:
        return await run(lambda: pages.get_page(path, symbol))

    @server.tool(description="What a folder or file holds, ranked: a folder's sub-folders (most files "
                             "first) and files (most imported first); a file's symbols (most used first).")
    async def outline(path: str) -> dict[str, Any]:
        return await run(lambda: tools.outline(path))

    @server.tool(description="Stale references in hand-written docs (Markdown, reST, text) and Python "
                             "docstrings, as `repodoc check` reports them: names and links that no longer "
                             "resolve, with a suggestion when one is close.")
    async def check_references(paths: list[str]) -> dict[str, Any]:
        return await run(lambda: tools.check_references(paths))

    @server.resource(f"{URI_PREFIX}index.md", name="index.md", mime_type="text/markdown",
                     description="The index page of the workspace's root folder")
    async def root_index() -> str:
        return await run(lambda: pages.read_page("index.md"), ResourceError)

    @server.resource(URI_PREFIX + "{+path}", name="page", mime_type="text/markdown",
                     description="A generated page by its path in the docs tree (pkg/mod.py_docs.md, "
                                 "pkg/mod.py_kw.md, pkg/index.md, pkg/doc.md)")
    async def page(path: str) -> str:
        return await run(lambda: pages.read_page(path), ResourceError)

    return server


def open_docs(root: Path, settings: Settings, runtime: Any, *, poll: float = 1.0) -> tuple[Docs, Tools, Pages]:
    """A workspace's `Docs` (not started: `Docs.start`), with its tools and pages."""
    docs = Docs(root, settings, runtime, poll=poll)
    pages = Pages(docs)
    docs.on_ready.append(pages.warm)
    return docs, Tools(docs, pages), pages


def serve(root: Path, settings: Settings, *, poll: float = 1.0) -> int:
    """Run the MCP server on stdio until the client closes it."""
    from repodoc_lsp.pipeline.runtime import enter_server

    logging.basicConfig(level=logging.WARNING, format="repodoc mcp: %(levelname)s %(message)s")
    docs, tools, pages = open_docs(root, settings, enter_server(), poll=poll)
    server = build_server(docs, tools, pages)
    docs.start()  # after the SDK is loaded: the scan would share the interpreter with its imports
    try:
        server.run("stdio")
    finally:
        docs.close()
    return 0
