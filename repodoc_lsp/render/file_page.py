"""The page of a file (`_docs.md`): its view, the values its template reads, made from the file's
facts and what `gather.gather_docs` gathered; `fit.lay_out` fits it (with its part pages) into
the size budget."""

from __future__ import annotations

import posixpath

from repodoc_lsp.analysis.model import FileFacts, FindingCategory, SymbolKind
from repodoc_lsp.analysis.relations import is_test_file
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.anchors import alias_markup
from repodoc_lsp.render.docstrings import docstring_markdown
from repodoc_lsp.render.file_sections import (
    LANG_FENCE,
    attributes,
    class_bases,
    dependencies,
    documented_attributes,
    fold_overloads,
    hierarchy,
    inherited_once,
    methods_by_class,
    named_links,
    outline_shape,
    related,
    source_label,
    symbol_counts,
    type_label,
    xref_links,
)
from repodoc_lsp.render.fit import Pages, Templates, doclinks, lay_out
from repodoc_lsp.render.links import line_links, near_items, nearest, page_link, source_href
from repodoc_lsp.render.own_pages import document_kind
from repodoc_lsp.render.parts import local_classes, plan
from repodoc_lsp.render.paths import docs_page, folder_doc, folder_index, folder_of, kw_page
from repodoc_lsp.render.purpose import Purpose, file_purpose
from repodoc_lsp.render.site import Where


def reads_source(own_templates: bool, where: Where, inputs: dict) -> bool:
    """Whether the docs page whose view reads `inputs` (`gather_docs`) is given its file's text:
    repodoc's own templates (`own_templates`) show it only embedded, so a file over `embed_max`
    bytes is not read for them; a person's templates are given it whatever its size."""
    return not own_templates or (where.embed_max > 0 and inputs["size"] <= where.embed_max)


def file_docs(templates: Templates, where: Where, rel: str, inputs: dict, facts: FileFacts,
              text: str | None) -> Pages:
    """The page of the file `rel` (`_docs.md`) and its part pages, from what its view reads: `inputs`
    (`gather.gather_docs`), its `facts` and its `text` (None: not read, `reads_source`)."""
    page = docs_page(rel)
    ext = posixpath.splitext(rel)[1]
    size = inputs["size"]
    embed = text is not None and where.embed_max > 0 and size <= where.embed_max
    classes = [s for s in facts.symbols if s.kind is SymbolKind.CLASS]
    moved = plan(facts)
    local = local_classes(facts)
    overloads: dict[str, list] = {}
    renamed: dict[str, str] = {}  # a name's first anchor -> the anchor of its entry, overloads folded
    functions = fold_overloads([s for s in facts.symbols if s.kind is SymbolKind.FUNCTION], moved, overloads, renamed)
    methods_of = {c: fold_overloads(ms, moved, overloads, renamed)
                  for c, ms in methods_by_class(facts.symbols, classes).items()}
    attributes_of, module_names = attributes(facts, classes)
    deps = dependencies(page, facts.imports, inputs["links"], inputs["modules"], inputs["unpaged"])
    importers = near_items(page, ((r, "") for r in nearest(rel, inputs["importers"])))
    tests = near_items(page, ((r, "") for r in nearest(rel, inputs["tests"])))
    related_groups, related_counts = related(page, rel, inputs)
    doctest_in = [s.qualname for s in facts.symbols if s.docstring and ">>>" in s.docstring]
    links = doclinks(rel, 1, inputs["doclinks"])
    xref = inherited_once(page, classes, xref_links(page, inputs["xref"]))
    xref.update(named_links(page, inputs["named"]))  # tree-sitter files': by name
    for first, anchor in renamed.items():  # an entry of overloads shows the name's users once
        if first in xref:
            xref[anchor] = xref.pop(first)
    bases_of = {c.anchor: class_bases(c) for c in classes}
    class_docs = documented_attributes(classes, attributes_of, moved)
    security = facts.findings_in(FindingCategory.SECURITY)
    headings = [s for s in facts.symbols if s.kind is SymbolKind.HEADING]
    purpose = file_purpose(rel, facts, inputs["used"])
    if facts.module_doc and not purpose.derived:  # the file's page shows its whole docstring
        purpose = Purpose(docstring_markdown(facts.module_doc))
    context = dict(
        rel=rel, page=page, name=posixpath.basename(rel), ext=ext or "(none)",
        folder=folder_of(rel) or ".", facts=facts, lang=facts.language.value,
        type_label=type_label(rel, facts), doc_kind=document_kind(rel),
        size_label=md.size_human(size), size=size, purpose=purpose,
        module=inputs["module"], embed=embed, source=text or "",
        fence_lang=LANG_FENCE.get(ext.lower(), ""), embed_max=where.embed_max,
        src_href=source_href(where.root, where.out, page, rel),
        # repodoc's own templates write `src_href` then `#L` and the line (no call per entry); a person's may call it
        line_href=line_links(where.root, where.out, page, rel),
        classes=classes, local_classes=local, functions=functions, methods_of=methods_of, attributes_of=attributes_of,
        module_names=module_names,
        headings=headings, outline=outline_shape(headings, facts.lines),
        counts=symbol_counts(facts), deps=deps, importers=importers, tests=tests,
        is_test=is_test_file(rel),
        test_functions=[s.name for s in facts.symbols
                        if s.kind in (SymbolKind.FUNCTION, SymbolKind.METHOD) and s.name.startswith("test")],
        doctest_in=doctest_in, xref=xref, overloads=overloads,
        doclinks=links,  # and the signatures' links, which depend on the page's layout (`fit.lay_out`)
        method_users=any(x["users"] for a, x in inputs["xref"].items() if a.startswith("method-")),
        hierarchy=hierarchy(rel, classes, inputs["xref"]), aka=alias_markup(inputs["aliases"]),
        aliases=inputs["aliases"],
        patterns=facts.findings_in(FindingCategory.PATTERN),
        performance=facts.findings_in(FindingCategory.PERFORMANCE),
        security=security, derived=[c for c in classes if any(bases_of[c.anchor])], bases_of=bases_of,
        class_docs=class_docs,
        # security findings by level, related files counted (not by the template's filters: `selectattr`)
        risky=[f for f in security if f.level != "check"], to_check=[f for f in security if f.level == "check"],
        related_groups=related_groups, related_counts=related_counts,
        related_total=sum(related_counts.values()),
        related_above=[(relation, n) for relation, n in related_counts.items() if relation != "same folder"],
        source_label=source_label(facts, size),
        kw_href=page_link(page, kw_page(rel)), docs_href=page_link(page, page),
        index_href=page_link(page, folder_index(folder_of(rel))),
        folderdoc_href=page_link(page, folder_doc(folder_of(rel))),
        project=where.project, with_source=0, without_source=0, brief=False,
        short_lists=False,
        moved={}, function_parts=[], local_parts=[], estimated=False, away_lists={}, away_classes={},
    )
    return lay_out(templates, rel, context, moved, inputs["doclinks"])
