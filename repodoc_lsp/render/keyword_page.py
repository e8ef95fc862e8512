"""The keyword page of a file (`_kw.md`): its facts' keywords, linked to the file's page."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping

from repodoc_lsp.analysis.model import FileFacts, Language, Symbol, SymbolKind
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.environment import GuardedTemplate
from repodoc_lsp.render.links import link_text, source_href
from repodoc_lsp.render.parts import member_parts, part_page
from repodoc_lsp.render.paths import docs_page, folder_of, kw_page
from repodoc_lsp.render.site import Where

_SECTIONS = {"Classes": ("Detailed Analysis", "detailed-analysis"),
             "Functions": ("Detailed Analysis", "detailed-analysis"),
             "Headings": ("Detailed Analysis", "detailed-analysis"),
             "Imports": ("Dependencies", "dependencies"),
             "Third-party Imports": ("Dependencies", "dependencies"),
             "Identifiers": ("Original Source", "original-source")}
_DEFINED = {SymbolKind.CLASS: "Classes", SymbolKind.FUNCTION: "Functions", SymbolKind.METHOD: "Functions",
            SymbolKind.HEADING: "Headings"}
Links = list[tuple[str, str, str]]  # (link text, part page or "" for the page itself, anchor)


def link_list(links: Links, docs_url: str) -> str:
    """The template's `kwlinks` filter: a name's links, `[text](page#anchor)` each, comma-separated (a filter
    call per name rather than a template loop over its links: the keyword pages' largest cost in Jinja)."""
    return ", ".join(f"[{label}]({url or docs_url}#{md.fragment(anchor)})" for label, url, anchor in links)


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _definitions(rel: str, facts: FileFacts) -> dict[str, dict[str, Links]]:
    """The names the file defines by heading, each with a link to every definition of it (`A.forward`
    and `B.forward`: both), where the file's page or its part page has it; dunders left out."""
    moved = member_parts(facts)
    found: dict[str, dict[str, list[Symbol]]] = {"Classes": {}, "Functions": {}, "Headings": {}}
    for s in facts.symbols:
        if not _dunder(s.name):
            found[_DEFINED[s.kind]].setdefault(s.name, []).append(s)
    out: dict[str, dict[str, Links]] = {}
    for heading, names in found.items():
        out[heading] = {}
        for name, defs in names.items():
            quals = [d.qualname for d in defs]
            out[heading][name] = [
                ("docs" if len(defs) == 1 else md.code(d.qualname) if quals.count(d.qualname) == 1
                 else f"{md.code(d.qualname)} L{d.line}",
                 md.href(posixpath.basename(part_page(rel, moved[d.anchor]))) if d.anchor in moved else "",
                 d.anchor) for d in defs]
    return out


def _imports(facts: FileFacts, links: Iterable[tuple[str, tuple[str, ...], str]]
             ) -> tuple[dict[str, Links], dict[str, Links], int]:
    """The workspace's imports (a relative module by its absolute name) and the third-party ones, each
    module and imported name linked to its import; and how many standard-library imports are left out."""
    workspace: dict[str, Links] = {}
    third: dict[str, Links] = {}
    stdlib = 0
    for imp, (cat, _targets, absolute) in zip(facts.imports, links, strict=True):
        if cat == "stdlib":
            stdlib += 1
            continue
        into = workspace if cat == "workspace" else third
        module = absolute if imp.level > 0 and absolute else imp.module
        for name in (module, *imp.names):
            if name and not _dunder(name) and not name.startswith("."):
                into.setdefault(name, [("docs", "", imp.anchor)])
    return workspace, third, stdlib


def file_kw(templates: Mapping[str, GuardedTemplate], where: Where, rel: str, inputs: dict, facts: FileFacts) -> str:
    """The keyword page of `rel` (`_kw.md`): its keywords by kind, each linked to where its file's page
    (or part page) has it; standard-library imports left out (the page's Dependencies list them)."""
    page = kw_page(rel)
    docs_name = posixpath.basename(docs_page(rel))
    defined = _definitions(rel, facts)
    workspace, third, stdlib = _imports(facts, inputs["links"])
    # one paragraph of names, not a bullet each: every one would link to the same section
    identifiers: dict[str, Links] = {i: [] for i in facts.identifiers if not _dunder(i)}
    kinds: list[tuple[str, dict[str, Links]]] = [
        ("Classes", defined["Classes"]), ("Functions", defined["Functions"]), ("Imports", workspace),
        ("Third-party Imports", third), ("Headings", defined["Headings"]), ("Identifiers", identifiers)]
    groups = [(heading, sorted(entries.items())) for heading, entries in kinds if entries]
    section_map = [(heading, len(entries), *_SECTIONS[heading]) for heading, entries in groups]
    return templates["file_kw"].render(
        rel=rel, page=page, docs_name=docs_name, folder=folder_of(rel) or ".",
        docs_label=link_text(docs_name), docs_url=md.href(docs_name),
        src_href=source_href(where.root, where.out, page, rel), groups=groups, section_map=section_map,
        identifiers_total=facts.identifiers_total, identifiers_shown=len(identifiers),
        stdlib_left=stdlib, empty_reason=_empty_reason(facts, stdlib), project=where.project,
    )


def _empty_reason(facts: FileFacts, stdlib: int) -> str:
    if facts.lines == 0:
        return "the file is empty"
    if facts.language is Language.PYTHON:
        return "no classes or functions are defined in this file, and it imports only the standard library" \
            if stdlib else "no classes, functions or imports are defined in this file"
    if facts.language is Language.MARKDOWN:
        return "no headings or code identifiers in this document"
    return "no identifiers in this file"
