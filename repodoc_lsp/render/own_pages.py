"""Which files have pages of their own (`FILE_docs.md`, `FILE_kw.md`): the one rule (`has_pages`), and
the line a folder's `index.md` gives each file that has none (`listed_line`).

A page is written only when it has something to say: source code that is not empty (Python and the
languages read with tree-sitter), a Markdown or reStructuredText document when it has a heading or a
paragraph of prose to outline; any other text file (a licence, package metadata, configuration,
data, a marker such as `py.typed`) and an empty source (an empty `__init__.py`) has only a line in its
folder's index, and no page links to it.
A function of the file's facts alone, so a page's key (the digests of the files it names) follows it.
"""

from __future__ import annotations

import posixpath

from repodoc_lsp.analysis.model import FileFacts, Language
from repodoc_lsp.analysis.text import FIRST_LINE
from repodoc_lsp.render import markdown as md
from repodoc_lsp.words import plural


def has_pages(facts: FileFacts) -> bool:
    """Whether a file with these facts has its own pages (see the module's docstring)."""
    if facts.language is Language.TEXT or facts.lines == 0:
        return False
    if facts.language is Language.MARKDOWN:
        return bool(facts.symbols or facts.module_doc)
    return True


def document_kind(rel: str) -> str:
    """What a document (`Language.MARKDOWN`: `.md`, `.markdown`, `.mdx`, `.rst`) is by its name:
    "reStructuredText" or "Markdown"."""
    return "reStructuredText" if posixpath.splitext(rel)[1].lower() == ".rst" else "Markdown"


def listed_line(rel: str, facts: FileFacts, size: int) -> dict:
    """What a folder's index says of `rel`, a file without pages: its name, kind, size and a
    one-line description as Markdown (`{"name", "key", "kind", "size", "said", "group"}`)."""
    name = posixpath.basename(rel)
    ext = posixpath.splitext(name)[1]
    if facts.language is Language.MARKDOWN:
        kind = document_kind(name)
    elif name == "py.typed":
        kind = "marker file"
    else:
        kind = f"{md.code(ext)} file" if ext else "text file"
    return {"name": md.code(name), "key": name, "kind": kind, "group": md.code(ext or "no extension"),
            "size": f"{plural(facts.lines, 'line', grouped=True)}, {plural(size, 'byte', grouped=True)}",
            "said": _said(name, facts)}


def _said(name: str, facts: FileFacts) -> str:
    """A true one-line description of a file without pages, from its facts."""
    if name == "py.typed":  # the convention of PEP 561, whatever the file holds
        return "PEP 561 marker: the package ships type information."
    if name == "__init__.py" and facts.lines == 0:
        return "Empty: makes its folder a regular package."
    first = facts.extra.get(FIRST_LINE, "")
    if first:
        return f"First words: {md.code(first)}"
    if facts.lines == 0:
        return "Empty."
    if facts.language is Language.TEXT:
        return "Only blank lines."
    return "No heading and no paragraph of prose."
