"""A graph's views when it must not hold every file's (`repodoc graph`'s link and page-share jobs, one
share of a tree too large for one machine): each view made from its file's `LaterSketch` when read and
kept among the `most` read last; a view dropped is made again when read again (the same view: it is made
from the same sketch)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, MutableMapping

from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.knowledge.views import LaterSketch, LaterView, View


class HeldViews(MutableMapping[str, View]):
    """rel -> its view, at most `most` of those made from sketches at a time; `made` counts the views made
    (a view read again after it was dropped is made again). A view given made (a file analysed again
    here, from its facts) is kept."""

    def __init__(self, relations: Relations, most: int) -> None:
        self._relations = relations
        self._most = max(1, most)
        self._later: dict[str, LaterSketch] = {}
        self._kept: dict[str, View] = {}
        self._made: OrderedDict[str, View] = OrderedDict()
        self.made = 0

    def __setitem__(self, rel: str, view: View) -> None:
        self._made.pop(rel, None)
        if type(view) is LaterView:  # not made yet: made when read
            self._later[rel] = view.later
            self._kept.pop(rel, None)
        else:
            self._kept[rel] = view
            self._later.pop(rel, None)

    def __getitem__(self, rel: str) -> View:
        view = self._made.get(rel)
        if view is not None:
            self._made.move_to_end(rel)
            return view
        kept = self._kept.get(rel)
        if kept is not None:
            return kept
        view = View(rel, self._later[rel].make(), self._relations)
        self.made += 1
        self._made[rel] = view
        if len(self._made) > self._most:
            self._made.popitem(last=False)
        return view

    def get(self, rel: str, default: View | None = None) -> View | None:  # type: ignore[override]
        """`self[rel]`, or `default`: one call, not `Mapping.get`'s two (resolution asks a few per name read)."""
        view = self._made.get(rel)
        if view is not None:
            self._made.move_to_end(rel)
            return view
        return self[rel] if rel in self._later or rel in self._kept else default

    def __delitem__(self, rel: str) -> None:
        if self._later.pop(rel, None) is None:
            del self._kept[rel]
        self._made.pop(rel, None)

    def __contains__(self, rel: object) -> bool:
        return rel in self._later or rel in self._kept

    def __iter__(self) -> Iterator[str]:
        yield from self._later
        yield from self._kept

    def __len__(self) -> int:
        return len(self._later) + len(self._kept)
