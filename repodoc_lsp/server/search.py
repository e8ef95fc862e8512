"""A root's ranked symbol search, one row per symbol: workspace/symbol's and `repodoc mcp`'s
`search_symbols` (which loads none of the language server's protocol)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.index import Entry
    from repodoc_lsp.server.state import Root


def _search(root: Root, query: str, limit: int) -> list[Entry]:
    index = root.index
    return index.search(query, limit) if root.ready.is_set() else index.search_latest(query, limit)


def distinct(root: Root, query: str, limit: int) -> list[Entry]:
    """Up to `limit` of a root's matches, one per symbol: the definitions of one name in one file
    and container (a function's `@overload`s and its implementation, a property's getter and
    setter) are one row, at the first of them (they would be rows telling nothing apart)."""
    asked = limit
    while True:
        found = _search(root, query, asked)
        seen: set[tuple[str, str, str, str]] = set()
        rows = []
        for e in found:
            key = (e.rel, e.kind, e.container, e.name)
            if key not in seen:
                seen.add(key)
                rows.append(e)
        if len(rows) >= limit or len(found) < asked:  # enough, or every match
            return rows[:limit]
        asked *= 2
