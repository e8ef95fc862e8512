"""The keyword page of a file (`_kw.md`): its facts' keywords, linked to the file's page."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from repodoc_lsp.analysis.model import FileFacts, KeywordKind, Language
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.environment import GuardedTemplate
from repodoc_lsp.render.links import link_text, source_href
from repodoc_lsp.render.parts import member_parts, part_page
from repodoc_lsp.render.paths import docs_page, folder_of, kw_page
from repodoc_lsp.render.site import Where


def file_kw(templates: Mapping[str, GuardedTemplate], where: Where, rel: str, facts: FileFacts) -> str:
    """The keyword page of `rel` (`_kw.md`): its keywords by kind, each linked to where its file's page
    (or part page) has it."""
    page = kw_page(rel)
    docs_name = posixpath.basename(docs_page(rel))
    keywords = facts.keywords()
    moved = member_parts(facts)
    groups = [(kind.heading, [(name, anchor, md.href(posixpath.basename(part_page(rel, moved[anchor])))
                               if anchor in moved else "") for name, anchor in entries])
              for kind, entries in keywords.items()]
    sections = {KeywordKind.CLASS: ("Detailed Analysis", "detailed-analysis"),
                KeywordKind.FUNCTION: ("Detailed Analysis", "detailed-analysis"),
                KeywordKind.HEADING: ("Detailed Analysis", "detailed-analysis"),
                KeywordKind.IMPORT: ("Dependencies", "dependencies"),
                KeywordKind.IDENTIFIER: ("Original Source", "original-source")}
    counts = {kind: len(entries) for kind, entries in keywords.items()}
    section_map = [(kind.heading, counts[kind], *sections[kind]) for kind in KeywordKind
                   if kind in counts]
    return templates["file_kw"].render(
        rel=rel, page=page, docs_name=docs_name, folder=folder_of(rel) or ".",
        docs_label=link_text(docs_name), docs_url=md.href(docs_name),
        src_href=source_href(where.root, where.out, page, rel), groups=groups, section_map=section_map,
        identifiers_total=facts.identifiers_total, identifiers_shown=len(facts.identifiers),
        empty_reason=_empty_reason(facts), project=where.project,
    )


def _empty_reason(facts: FileFacts) -> str:
    if facts.lines == 0:
        return "the file is empty"
    if facts.language is Language.PYTHON:
        return "no classes, functions or imports are defined in this file"
    if facts.language is Language.MARKDOWN:
        return "no headings or code identifiers in this document"
    return "no identifiers in this file"
