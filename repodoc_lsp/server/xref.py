"""What the server features take from the symbol graph: the definition under the cursor,
its "used by" and "subclassed by", source links. No LSP types here except positions."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from repodoc_lsp.analysis.source import PYTHON_SUFFIXES
from repodoc_lsp.knowledge.graph import Graph, Key
from repodoc_lsp.render.hover import LINKS_SHOWN, Link, Xref
from repodoc_lsp.server.convert import path_of
from repodoc_lsp.server.server import RepodocServer

if TYPE_CHECKING:
    from repodoc_lsp.server.state import Root

_DOTTED_LEFT = re.compile(r"[A-Za-z_][\w.]*$")
_WORD_RIGHT = re.compile(r"^\w*")


def graph_of(ls: RepodocServer, uri: str) -> tuple[Root, Graph, str] | None:
    """For a Python file of a root whose graph is built: the root, its graph and the file's
    path relative to the root; else None (the graph features answer nothing)."""
    path = path_of(uri)
    root = ls.root_for(path) if path is not None and path.suffix in PYTHON_SUFFIXES else None
    graph = root.ws.graph_ready if root is not None else None
    if root is None or graph is None or path is None:
        return None
    return root, graph, root.rel(path)


def dotted_at(line_text: str, col: int) -> str:
    """The dotted name ending with the word under column `col` (`nn.Lin|ear` -> `nn.Linear`)."""
    left = _DOTTED_LEFT.search(line_text[:col])
    right = _WORD_RIGHT.match(line_text[col:])
    name = (left.group(0) if left else "") + (right.group(0) if right else "")
    return ".".join(p for p in name.split(".") if p) if name and not name[0].isdigit() else ""


def target(graph: Graph, rel: str, line_text: str, line: int, col: int) -> Key | None:
    """The workspace definition at a cursor (1-based line, code-point column): the one defined
    there, else what the dotted name there resolves to."""
    dotted = dotted_at(line_text, col)
    if not dotted:
        return None
    here = graph.at(rel, line)
    if here is not None and here.line == line and "." not in dotted and here.name == dotted:
        return here.key
    return graph.resolve(rel, dotted)


def source_link(root: Root, rel: str, line: int) -> str:
    """A URI of a line of a workspace file (`#L12`: VS Code opens it there)."""
    return f"{root.uri(rel)}#L{line}"


def xref_of(root: Root, graph: Graph, key: Key) -> Xref:
    """Used by (files other than its own, those naming it most first) and subclassed by."""
    users = graph.users(key)
    ranked = sorted(users.items(), key=lambda item: (-len(item[1]), item[0]))[:LINKS_SHOWN]
    subs = graph.subclasses(key)
    sub_links = []
    for rel, qual in subs[:LINKS_SHOWN]:
        d = graph.definition(rel, qual)
        sub_links.append(Link(qual, source_link(root, rel, d.line if d else 1)))
    return Xref(used_by=len(users), users=tuple(Link(rel, source_link(root, rel, lines[0])) for rel, lines in ranked),
                subclasses=tuple(sub_links), subclassed_by=len(subs))
