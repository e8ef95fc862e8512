"""Generated pages, as `repodoc generate` writes them, for `get_page` and the page resources: a
workspace file's docs page, a folder's index, any page of the tree by its path, or the section
of one symbol. Rendered on the root's thread (`Docs.answer`) from the workspace as it is, a few
kept until it changes."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from repodoc_lsp.mcp.docs import Docs, DocsError
from repodoc_lsp.render.own_pages import has_pages
from repodoc_lsp.render.parts import anchor_of
from repodoc_lsp.render.paths import docs_page, folder_doc, folder_index, folder_of, kw_page

if TYPE_CHECKING:
    from repodoc_lsp.render.pages import Renderer, Site

PAGES_KEPT = 32  # rendered pages kept until the workspace changes

Rendered = list[tuple[str, str]]  # (path in the tree, Markdown): a page, then its part pages


class Pages:
    def __init__(self, docs: Docs) -> None:
        self.docs = docs
        self._renderer: Renderer | None = None
        self._site: tuple[int, Site] | None = None
        self._pages: OrderedDict[tuple[str, str], Rendered] = OrderedDict()  # of `_site`'s version

    def warm(self) -> None:
        """Make what a first page needs (the templates compiled, the pages' site)."""
        self.render("index", "")

    def site(self) -> Site:
        from repodoc_lsp.pipeline.generate import site_of

        if self._site is None or self._site[0] != self.docs.version:
            self._site = (self.docs.version, site_of(self.docs.root.ws))
            self._pages.clear()
        return self._site[1]

    def page_of(self, path: str) -> tuple[str, str]:
        """(kind, subject) of the page `path` names: a workspace file (its docs page) or folder (its
        index), or a page path of the tree (`pkg/mod.py_docs.md`, `pkg/index.md`, ...)."""
        ws = self.docs.root.ws
        if not isinstance(path, str) or "\x00" in path or path.startswith("/") or ".." in path.split("/"):
            raise DocsError(f"{path}: not a page path inside the workspace")
        name = path.strip("/")
        if name in ws.facts:
            return "docs", self._paged(name)
        if name in ws.folders or name in ("", "."):
            return "index", "" if name == "." else name
        for kind, suffix in (("docs", "_docs.md"), ("kw", "_kw.md")):
            if name.endswith(suffix) and name[: -len(suffix)] in ws.facts:
                return kind, self._paged(name[: -len(suffix)])
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

    def _paged(self, rel: str) -> str:
        """`rel`, when it has pages of its own; else a DocsError naming the folder index listing it."""
        if not has_pages(self.docs.root.ws.facts[rel]):
            raise DocsError(f"{rel} has no page of its own (nothing to document beyond a line): "
                            f"{folder_index(folder_of(rel))} lists it")
        return rel

    def render(self, kind: str, subject: str) -> Rendered:
        """The page and its part pages, as the CLI writes them: (path in the tree, Markdown)."""
        from repodoc_lsp.pipeline.generate import page_renderer
        from repodoc_lsp.render.pages import Page

        site = self.site()
        pages = self._pages.get((kind, subject))
        if pages is None:  # rendered once per state of the workspace (a page and its sections asked in turn)
            pages, _key = page_renderer(self.docs.root.ws, self.renderer(), site)(Page(kind, subject, ""))
            self._pages[(kind, subject)] = pages
            if len(self._pages) > PAGES_KEPT:
                self._pages.popitem(last=False)
        else:
            self._pages.move_to_end((kind, subject))
        return pages

    def renderer(self) -> Renderer:
        if self._renderer is None:
            from repodoc_lsp.render.pages import Renderer

            templates = self.docs.root.settings.templates
            self._renderer = Renderer(templates or None, lazy=not templates)
        return self._renderer

    def get_page(self, path: str | None = None, symbol: str | None = None) -> dict[str, Any]:
        if bool(path) == bool(symbol):
            raise DocsError("give either path (a file, folder or page) or symbol (a dotted name)")
        if symbol:
            return self._section(symbol)
        assert path is not None
        if path not in ("", ".") and not self._is_page_path(path):
            path = self.docs.rel_of(path)  # a workspace file or folder: links resolved, kept inside
        kind, subject = self.page_of(path)
        pages = self.render(kind, subject)
        wanted = path.strip("/")
        page, text = next(((p, md) for p, md in pages if p == wanted), pages[0])
        return {"page": page, "text": text, "parts": [p for p, _ in pages[1:]]}

    def _is_page_path(self, path: str) -> bool:
        return isinstance(path, str) and path.endswith(".md") and ".." not in path.split("/") \
            and not (self.docs.path / path).exists()

    def _section(self, symbol: str) -> dict[str, Any]:
        rel, qual = self.docs.key_of(symbol)
        pages = self.render("docs", rel)
        graph = self.docs.root.ws.graph_ready
        kind = graph.kind((rel, qual)) if qual and graph is not None else ""
        anchor = anchor_of(kind, qual) if kind else ""
        for page, text in pages if anchor else ():
            found = section(text, anchor)
            if found is not None:
                return {"page": f"{page}#{anchor}", "symbol": symbol, "text": found}
        return {"page": pages[0][0], "symbol": symbol, "text": pages[0][1]}

    def read_page(self, path: str) -> str:
        kind, subject = self.page_of(path)
        pages = self.render(kind, subject)
        wanted = path.strip("/")
        return next((md for p, md in pages if p == wanted), pages[0][1])


def section(text: str, anchor: str) -> str | None:
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
