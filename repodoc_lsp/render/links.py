"""Links and list items the views share: link text, links between pages (kept per folder of the
page: the pages of one folder link the same pages and anchors alike), source links, signatures as
code with their linked names, and the items and groups of long lists of files."""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping

from repodoc_lsp.analysis.signature import annotation_spans
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.paths import docs_page, folder_of

LIST_LIMIT = 20  # a longer list shows this many, then its count, breakdown and folded whole

_UNDERSCORE_EDGE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_LINK_SPECIAL = re.compile(r"([\\`*\[\]|])")


@functools.lru_cache(maxsize=8192)
def link_text(text: str) -> str:
    """A file name as link text: one line, no HTML; underscores inside words stay as they are."""
    text = _LINK_SPECIAL.sub(r"\\\1", md.escape_html(md.one_line(text)))
    return _UNDERSCORE_EDGE.sub(r"\\_", text)


def file_parts(page: str, rel: str) -> tuple[str, str, str, str, str]:
    """What an item of a list of files on `page` says of the file `rel` (`file_item`): its
    path and name as link text, the link to its page, its folder's label, and its text on a page of
    its own folder (its name)."""
    return file_parts_in(*homes(page), rel)


@functools.lru_cache(maxsize=4096)
def homes(page: str) -> tuple[str, str]:
    """`page`'s `dirname` and its `folder_of`, kept: a page's lists and links ask for them per item."""
    return posixpath.dirname(page), folder_of(page)


@functools.lru_cache(maxsize=32768)
def file_parts_in(where: str, home: str, rel: str) -> tuple[str, str, str, str, str]:
    """`file_parts` on a page of the folder `where` (its `dirname`; `home`: its `folder_of`), kept: a
    page lists the same files again and again (the Used by of each definition it has), and the
    pages of one folder list them alike (bench/README.md, "Figures the render/ docstrings quoted")."""
    short = link_text(posixpath.basename(rel))
    folder = folder_of(rel)
    text = link_text(rel)
    return text, short, link_in(where, docs_page(rel), ""), folder_label(folder), \
        short if folder == home else text


def signature_code(head: str, signature: str, links: Mapping[str, str]) -> str:
    """`head + signature` as code, the first annotation name `links` has a page for (each target
    once) linked to it (`def f(x: nn.Linear)`: `` `def f(x: `[`nn.Linear`](…)`)` ``): a code span
    cannot hold a link, so a linked name is a code span of its own, as link text, between the others."""
    text = head + signature
    out: list[str] = []
    last = 0
    linked: set[str] = set()
    for a, b in annotation_spans(signature) if links else ():
        href = links.get(signature[a:b])
        if not href or href in linked:
            continue
        linked.add(href)
        a, b = a + len(head), b + len(head)
        if a > last:
            out.append(_piece(text[last:a]))
        out.append(f"[{md.code(text[a:b])}]({href})")
        last = b
    if not out:
        return md.code(text)
    if last < len(text):
        out.append(_piece(text[last:]))
    return "".join(out)


def page_link(page: str, target: str, fragment: str = "") -> str:
    """The link from `page` to `target` (and its `fragment`). An anchor of the page itself keeps the
    page's name: a part page shows the same links (`fit.py`)."""
    return link_in(homes(page)[0], target, fragment)


@functools.lru_cache(maxsize=32768)
def link_in(where: str, target: str, fragment: str) -> str:
    """`page_link` from a page of the folder `where` (its `dirname`), kept: a page links the same
    pages and anchors again and again (a file in the Used by of each of a class's methods), and the
    pages of one folder link them alike."""
    return md.href(rel_in(where, target), fragment)


# `md.rel_link_in`, kept: the links of a page of one folder to anchors of one page share their path
rel_in = functools.lru_cache(maxsize=32768)(md.rel_link_in)


@functools.lru_cache(maxsize=4096)
def src_in(root: str, out: str, where: str, rel: str) -> str:
    """The link from a page of the folder `where` (its `dirname`) to the source file `rel`, kept: a
    file's page asks for it twice (its source link and its line links) and its keyword page, in the
    same folder, once more (a `posixpath.relpath` each time)."""
    # `dirname(join(out, page))` of a page in `where`, whatever its name
    return md.href(posixpath.relpath(posixpath.join(root, rel),
                                     posixpath.dirname(posixpath.join(out, posixpath.join(where, "_")))))


def _piece(text: str) -> str:
    """A piece of a signature as a code span: a space at one end only is kept as it is (CommonMark
    strips one from each end only when both have one), so `def f(x: ` stays plain."""
    if "`" in text or "\n" in text or "\r" in text or (text.startswith(" ") and text.endswith(" ")):
        return md.code(text)
    return f"`{text}`"


def folder_label(folder: str) -> str:
    """A folder as a group of a long list: `` `pkg/sub/` ``, `` `./` `` for the root."""
    return md.code(folder + "/" if folder else "./")


def nearest(rel: str, others: Iterable[str]) -> list[str]:
    """`others` ordered by closeness to `rel` in the tree: most folders shared first, then the
    shallower, then by path."""
    mine = rel.split("/")[:-1]

    def key(other: str) -> tuple[int, int, str]:
        theirs = other.split("/")[:-1]
        shared = 0
        for a, b in zip(mine, theirs):  # noqa: B905 (lengths differ on purpose)
            if a != b:
                break
            shared += 1
        return (-shared, len(theirs), other)
    return sorted(others, key=key)


def list_groups(items: Iterable[Mapping], order: str = "count") -> list[dict]:
    """The groups of a long list (the `groups` filter of `long_list`): `{"name", "entries"}` with
    the items of each in their `key` order; the groups by size (largest first) or by `name`."""
    by_group: dict[str, list[Mapping]] = {}
    for item in items:
        by_group.setdefault(item["group"], []).append(item)
    groups = sorted(by_group.items(), key=(lambda g: g[0]) if order == "name" else (lambda g: (-len(g[1]), g[0])))
    return [{"name": name, "entries": sorted(found, key=lambda i: i["key"])} for name, found in groups]


def file_item(page: str, rel: str, note: str = "", group: str | None = None) -> dict:
    """A file as an item of `long_list`: its path linked to its page, counted in its folder."""
    text, short, href, folder, _near = file_parts(page, rel)
    return {"text": text, "short": short, "key": rel, "href": href, "note": note,
            "group": folder if group is None else group}


def source_href(root: str, out: str, page: str, rel: str) -> str:
    """The link from `page` (of the output folder `out`) to the source file `rel` (of `root`)."""
    return src_in(root, out, homes(page)[0], rel)


def line_links(root: str, out: str, page: str, rel: str) -> Callable[[int], str]:
    """`line -> link to that line of the source`, with the path worked out once."""
    base = source_href(root, out, page, rel)
    return lambda line: f"{base}#L{line}"


def near_item(page: str, rel: str, note: str = "") -> dict:
    """`file_item`, a file of the page's folder by its name (the path says nothing more)."""
    _text, short, href, folder, near = file_parts(page, rel)
    return {"text": near, "short": short, "key": rel, "href": href, "note": note, "group": folder}


def near_items(page: str, files: Iterable[tuple[str, str]]) -> list[dict]:
    """`near_item` of each (file, note) of `files` (a list of hundreds, some pages), the page's folder
    worked out once."""
    where, home = homes(page)
    items = []
    for rel, note in files:
        _text, short, href, folder, near = file_parts_in(where, home, rel)
        items.append({"text": near, "short": short, "key": rel, "href": href, "note": note, "group": folder})
    return items
