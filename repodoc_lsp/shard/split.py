"""Which share a file or a page belongs to: deterministic functions of paths only, so that every job of
a matrix, given the same checkout, splits the same way without talking to the others."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
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


def folder_weights(inputs: Iterable[str], folders: Iterable[str]) -> dict[str, int]:
    """folder -> its weight in the page split: 1 and the input files directly in it. Known from the paths
    alone, so that a page share knows its folders (and whose facts it reads) before it reads any facts."""
    weights = dict.fromkeys(folders, 1)
    for rel in inputs:
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        weights[folder] = weights.get(folder, 1) + 1
    return weights


def folder_shares(weights: Mapping[str, int], n: int) -> dict[str, int]:
    """folder -> its page share (1..n): the folders in path order cut into n runs of about as much weight
    each (`folder_weights`; a folder is never cut)."""
    total = sum(weights.values()) or 1
    shares: dict[str, int] = {}
    before = 0
    for folder in sorted(weights):  # a folder goes to the share its middle falls in
        shares[folder] = (2 * before + weights[folder]) * n // (2 * total) + 1
        before += weights[folder]
    return shares


def pages_of_share(pages: Sequence[_Page], share: Share, weights: Mapping[str, int]) -> list:
    """The pages of `pages` (the whole tree's plan) in share K of N (`weights`: `folder_weights` of the
    tree), in their order."""
    k, n = share
    shares = folder_shares(weights, n)
    return [page for page in pages if shares.get(page_folder(page), 1) == k]
