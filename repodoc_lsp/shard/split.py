"""Which share a file or a page belongs to: deterministic functions of paths only, so that every job of
a matrix, given the same checkout, splits the same way without talking to the others."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Protocol

Share = tuple[int, int]  # (K, N): the K-th of N shares, 1 <= K <= N


class ShareError(ValueError):
    """A K/N that is not one."""


def parse_share(text: str) -> Share:
    """`"2/3"` -> (2, 3); ShareError unless 1 <= K <= N (N at most 10,000)."""
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n) <= 10_000):
        raise ShareError(f"{text!r}: expected K/N with 1 <= K <= N (e.g. 2/3)")
    return int(k), int(n)


def file_share(rel: str, n: int) -> int:
    """The analysis share (1..n) of the input `rel`: a digest of its path, so that shares are even
    whatever the layout (a folder of large generated files is spread, not one job's)."""
    h = hashlib.blake2b(rel.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(h, "big") % n + 1


def files_of_share(files: Iterable[str], share: Share) -> list[str]:
    k, n = share
    return [rel for rel in files if file_share(rel, n) == k]


class _Page(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def subject(self) -> str: ...


def page_folder(page: _Page) -> str:
    """The folder whose share a page is in: a file's pages are its folder's, a folder's pages its own,
    the root's pages (llms.txt) the root's. A folder's pages read its files' facts: a share renders
    whole folders, as the render parts of one machine do."""
    if page.kind in ("docs", "kw"):  # `render.paths.folder_of`, without importing the renderer (the CLI's start)
        return page.subject.rsplit("/", 1)[0] if "/" in page.subject else ""
    return page.subject


def folder_shares(pages: Sequence[_Page], n: int) -> dict[str, int]:
    """folder -> its page share (1..n): the folders in path order cut into n runs of about as many
    pages each (a folder is never cut)."""
    weights: dict[str, int] = {}
    for page in pages:
        folder = page_folder(page)
        weights[folder] = weights.get(folder, 0) + 1
    total = sum(weights.values()) or 1
    shares: dict[str, int] = {}
    before = 0
    for folder in sorted(weights):  # a folder goes to the share its middle page falls in
        shares[folder] = (2 * before + weights[folder]) * n // (2 * total) + 1
        before += weights[folder]
    return shares


def pages_of_share(pages: Sequence[_Page], share: Share) -> list:
    """The pages of `pages` (the whole tree's plan) in share K of N, in their order."""
    k, n = share
    shares = folder_shares(pages, n)
    return [page for page in pages if shares[page_folder(page)] == k]
