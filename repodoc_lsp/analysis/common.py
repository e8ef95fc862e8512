"""What every analyser shares: the reasons a text is not analysed, line counts and unique anchors."""

from __future__ import annotations


class NotText(Exception):
    """The bytes are not a text file repodoc can document; `str(exc)` is the reason."""


class TooComplex(NotText):
    """A text past the analysis's bounds (brackets nested too deep, too long to analyse); `str(exc)`
    is the reason."""


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


class Anchors:
    """Unique anchor ids within one page."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def make(self, base: str) -> str:
        n = self._seen.get(base, 0) + 1
        self._seen[base] = n
        return base if n == 1 else f"{base}-{n}"
