"""Links from a hover to the generated pages, and the keyword index's definitions of a name: what
the Python hover (`hover.py`) and the other languages' (`code_hover.py`) both show."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from repodoc_lsp.knowledge.index import MODULE
from repodoc_lsp.render.hover import CANDIDATES_SHOWN, Candidate
from repodoc_lsp.render.parts import page_of
from repodoc_lsp.server.convert import uri_of

if TYPE_CHECKING:
    from repodoc_lsp.server.state import Root


def page_link(root: Root, rel: str, anchor: str = "") -> str:
    """The URI of `rel`'s generated documentation page (at `anchor`), or "" before it is written."""
    docs, _ = root.pages_for(rel)
    if not docs.exists():
        return ""
    page = page_of(rel, root.ws.facts.one(rel) if anchor else None, anchor)  # maybe a part page (`parts.py`)
    return uri_of(docs.with_name(posixpath.basename(page)), anchor)


def candidates(root: Root, name: str) -> list[Candidate]:
    """The keyword index's definitions of `name`; those the hover shows link to their pages."""
    found = []
    for i, e in enumerate(root.index.lookup(name)):
        qualname = f"{e.container}.{e.name}" if e.container and e.kind != MODULE else e.name
        link = page_link(root, e.rel, e.anchor) if i < CANDIDATES_SHOWN else ""
        found.append(Candidate(kind="module" if e.kind == MODULE else e.kind, qualname=qualname,
                               where=f"{e.rel}:{e.line}", link=link))
    return found
