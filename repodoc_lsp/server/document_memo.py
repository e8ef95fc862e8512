"""What the hovers of one server keep of the documents they read (`DocumentMemo`): the C-family and
JS-family hovers (`code_hover.py`) read a document's lines, digest and facts for each hover."""

from __future__ import annotations

import functools

from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.source import NotText, analyse_source, normalise_newlines
from repodoc_lsp.store.cache import digest


class DocumentMemo:
    """What the hovers of one server keep of the documents they read, for the hovers that follow, each
    a document's text at a time (a str caches its hash, so the text itself is the key): its lines, its
    digest and an edited document's facts (one edit, many hovers; figures in bench/README.md). The
    server's own (`RepodocServer.code_hovers`), cleared when a root is made or removed: its settings
    (`blank_macros`) change what an analysis gives."""

    def __init__(self) -> None:
        self.lines = functools.lru_cache(maxsize=4)(_split)
        self.digest = functools.lru_cache(maxsize=4)(_digest)
        self.analysed = functools.lru_cache(maxsize=4)(_analyse)

    def clear(self) -> None:
        for kept in (self.lines, self.digest, self.analysed):
            kept.cache_clear()


def _split(source: str) -> list[str]:
    return normalise_newlines(source).split("\n")


def _digest(name: str, source: str) -> str:
    return digest(source.encode("utf-8", "surrogatepass"), name)


def _analyse(name: str, source: str) -> FileFacts | None:
    try:
        return analyse_source(name, source.encode("utf-8", "surrogatepass"))
    except NotText:
        return None
