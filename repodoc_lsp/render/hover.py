"""Hover text: a gathered value in, Markdown or plain text out. Pure: no jedi, no I/O.

The server gathers a `Definition` (what jedi resolved plus what the keyword
index and the pages know of it) or a list of `Candidate`s (the index's
definitions of a name jedi could not resolve); the functions here only format.

Modes (the `hover` setting): `full` shows signature, docstring and repodoc's
facts; `extras` only what repodoc adds (where, index facts, page link), for a
person who also runs another Python language server that shows the signature
and docstring; `off` shows nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from repodoc_lsp.render.docstrings import docstring_markdown
from repodoc_lsp.render.markdown import code, fence
from repodoc_lsp.words import plural

CANDIDATES_SHOWN = 8
LINKS_SHOWN = 5  # files of "used by" and classes of "subclassed by" listed in a hover
_PREFIX = {"class": "class ", "function": "def ", "module": "module "}


@dataclass(frozen=True)
class Fact:
    """One fact of the keyword index: plain text with names to show as code (`{}` placeholders)."""

    template: str
    names: tuple[str, ...] = ()

    def markdown(self) -> str:
        return self.template.format(*(code(n) for n in self.names))

    def plain(self) -> str:
        return self.template.format(*self.names)


@dataclass(frozen=True)
class Link:
    """A name to show as code, and where it goes."""

    label: str
    uri: str


@dataclass(frozen=True)
class Xref:
    """What the symbol graph knows of a workspace definition: the files that name it (the
    first ones as links) and the classes that subclass it."""

    used_by: int
    users: tuple[Link, ...] = ()
    subclasses: tuple[Link, ...] = ()
    subclassed_by: int = 0
    by_name: bool = False  # `users` name it (a tree-sitter file's definition): matches, not resolutions


@dataclass(frozen=True)
class Definition:
    """A name jedi resolved, with what the workspace's own analysis adds."""

    kind: str  # jedi's type: class, function, module, instance, statement, ...
    full_name: str
    signatures: tuple[str, ...] = ()
    docstring: str = ""
    where: str = ""  # "rel/path.py:LINE" inside the workspace, an absolute path outside
    facts: tuple[Fact, ...] = ()
    link: str = ""  # URI of its generated page, "" before the page is written
    xref: Xref | None = None  # None: not a workspace definition, or the graph is not built yet
    language: str = "python"  # of the signature's code block (`cpp`, `rust`...)


@dataclass(frozen=True)
class Candidate:
    """A definition of a name in the keyword index."""

    kind: str
    qualname: str
    where: str  # "rel/path.py:LINE"
    link: str = ""


def signature(d: Definition) -> str:
    if d.kind == "module":
        return f"module {d.full_name}"
    if d.signatures:
        prefix = _PREFIX.get(d.kind, "")
        return "\n".join(prefix + s for s in d.signatures)
    return f"{d.kind} {d.full_name}" if d.kind in ("class", "function") else d.full_name


def _overview(d: Definition) -> str:
    if not d.docstring.strip():
        return ""
    if d.kind == "module":
        return d.docstring.strip().split("\n\n", 1)[0]  # a module's overview: its first paragraph
    return d.docstring


def _link_label(link: str) -> str:
    page, _, anchor = link.partition("#")
    return PurePosixPath(page).name + (f"#{anchor}" if anchor else "")


def _links(links: tuple[Link, ...], total: int, markdown: bool) -> str:
    shown = [f"[{code(k.label)}]({k.uri})" if markdown and k.uri else (code(k.label) if markdown else k.label)
             for k in links]
    more = total - len(links)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def xref_lines(x: Xref, *, markdown: bool) -> list[str]:
    """"Used by N files: ..." and "Subclassed by ..." (none for an unused, unsubclassed name)."""
    lines = []
    bold = "**" if markdown else ""
    if x.used_by:
        how = " (by name; not resolved)" if x.by_name else ""
        lines.append(f"{bold}Used by{bold} {plural(x.used_by, 'file')}{how}: {_links(x.users, x.used_by, markdown)}")
    else:
        lines.append(f"{bold}Used by{bold} no other workspace file")
    if x.subclassed_by:
        lines.append(f"{bold}Subclassed by{bold} {_links(x.subclasses, x.subclassed_by, markdown)}")
    return lines


def definition_text(d: Definition, *, markdown: bool, mode: str = "full") -> str:
    """The hover text of a resolved name ("" in mode `off`, or when `extras` has nothing to add)."""
    if mode == "off":
        return ""
    full = mode != "extras"
    doc = _overview(d)
    if not markdown:
        parts = [signature(d), doc.strip()] if full else []
        if d.where:
            parts.append(f"Defined in {d.where}")
        parts += [f.plain() for f in d.facts]
        if d.xref is not None:
            parts += xref_lines(d.xref, markdown=False)
        if d.link:
            parts.append(f"Documentation: {d.link}")
        return "\n\n".join(p for p in parts if p)
    parts = [fence(signature(d), d.language), docstring_markdown(doc) if doc else ""] if full else []
    footer = []
    if d.where:
        footer.append(f"**Defined in** {code(d.where)}")
    if d.facts:
        footer.append("**Index**: " + " · ".join(f.markdown() for f in d.facts))
    if d.xref is not None:
        footer += xref_lines(d.xref, markdown=True)
    if d.link:
        footer.append(f"[Documentation: {code(_link_label(d.link))}]({d.link})")
    if footer and full:
        parts.append("---\n\n" + "\n\n".join(footer))
    elif footer and (d.facts or d.link or d.xref):  # extras, for a workspace name: the other server's hover is above
        parts.append("**repodoc** · " + "\n\n".join(footer))
    return "\n\n".join(p for p in parts if p)


def candidates_text(name: str, candidates: list[Candidate], *, markdown: bool, mode: str = "full") -> str:
    """Hover text for a name jedi could not resolve: the workspace's definitions of that name."""
    if mode == "off" or not candidates:
        return ""
    shown = candidates[:CANDIDATES_SHOWN]
    more = len(candidates) - len(shown)
    lines = []
    for c in shown:
        if markdown:
            lines.append(f"- {c.kind} {code(c.qualname)} in {code(c.where)}"
                         + (f" ([documentation]({c.link}))" if c.link else ""))
        else:
            lines.append(f"- {c.kind} {c.qualname} in {c.where}")
    if more:
        lines.append(f"- … and {more} more (workspace symbols: {name})")
    head = (f"{code(name) if markdown else name}: not resolved here; the keyword index has "
            f"{plural(len(candidates), 'definition')} of this name:")
    return head + "\n\n" + "\n".join(lines)
