"""The pages of a folder: its index (`index.md`: sub-folders and files, each with its purpose) and
its overview (`doc.md`: purpose, import diagram, main classes and functions, dependencies, users)."""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Mapping

from repodoc_lsp.analysis.model import FileFacts, Symbol, SymbolKind
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.docstrings import docstring_markdown, summary_line
from repodoc_lsp.render.fit import Templates
from repodoc_lsp.render.links import LIST_LIMIT, file_item, list_groups, nearest, page_link
from repodoc_lsp.render.own_pages import has_pages, listed_line
from repodoc_lsp.render.parts import member_parts, part_page
from repodoc_lsp.render.paths import docs_page, folder_doc, folder_index, folder_of, kw_page
from repodoc_lsp.render.purpose import Purpose, file_purpose, first_sentence
from repodoc_lsp.render.site import Where
from repodoc_lsp.words import plural

# A folder of more files has its complete list in the index folded as names by type, each linked (a
# few dozen bytes a file), not one line with its purpose each
# (bench/README.md, "Figures the render/ docstrings quoted").
INDEX_NOTES_LIMIT = 200
IMPORT_DIAGRAM_NODES = 12  # files in a folder's import diagram (doc.md)
MAIN_LISTED = 20  # main classes (and functions) `folder_doc.md.j2`'s `ranked` lists; the others it counts


def index_page(templates: Templates, where: Where, folder: str, inputs: dict,
               facts_of: Mapping[str, FileFacts]) -> str:
    """The index of `folder` (`index.md`) from what its view reads (`gather.gather_index`)."""
    page = folder_index(folder)
    subfolders = [(posixpath.basename(f), page_link(page, folder_index(f)), below, purpose)
                  for f, below, purpose in inputs["subfolders"]]
    files = []
    others = []  # files without pages of their own: a line each (`own_pages`)
    for rel, _digest in inputs["files"]:
        facts = facts_of[rel]
        if not has_pages(facts):
            others.append(listed_line(rel, facts, inputs["sizes"][rel]))
            continue
        name = posixpath.basename(rel)
        purpose = _purpose_line(file_purpose(rel, facts, inputs["users"][rel]))
        note = f" ([keywords]({page_link(page, kw_page(rel))})): {purpose}"
        files.append({"text": md.code(name), "short": md.code(name), "key": name, "note": note,
                      "href": page_link(page, docs_page(rel)), "group": md.code(_extension(name))})
    if len(files) > LIST_LIMIT:  # the most imported first; a short list stays in name order
        used = inputs["importers"]
        files.sort(key=lambda f: (-used.get(posixpath.join(folder, f["key"]) if folder else f["key"], 0),
                                  f["key"]))
    return templates["folder_index"].render(
        folder=folder, page=page, title=folder or where.project, subfolders=subfolders,
        files=files, compact=len(files) > INDEX_NOTES_LIMIT, others=others,
        other_groups=list_groups(others, "name") if len(others) > INDEX_NOTES_LIMIT else [],
        doc_href=page_link(page, folder_doc(folder)),
        parent_href=page_link(page, folder_index(folder_of(folder))) if folder else "",
        project=where.project,
    )


_README_NAMES = ("readme.md", "readme.rst", "readme.txt", "readme")


def _folder_said(files: list[str], facts_of: Mapping[str, FileFacts]) -> tuple[str, str]:
    """What a folder says of itself, and the file saying it: its `__init__.py`'s docstring, else its
    README's first paragraph (or first heading); ("", "") when neither says anything."""
    init = next((r for r in files if posixpath.basename(r) == "__init__.py"), None)
    readme = next((r for r in files if posixpath.basename(r).lower() in _README_NAMES), None)
    if init and facts_of[init].module_doc:
        return docstring_markdown(facts_of[init].module_doc), init
    if readme and has_pages(facts_of[readme]):
        first = next((s.name for s in facts_of[readme].symbols), "")
        said = first_sentence(facts_of[readme].module_doc)  # its first paragraph of prose
        return (md.inline(said) if said else f"Described by its README{': ' + md.code(first) if first else ''}.",
                readme)
    return "", ""


def _main_entries(page: str, files: list[str], inputs: dict, facts_of: Mapping[str, FileFacts],
                  listed: int | None) -> tuple[list[dict], list[dict]]:
    """The module-level classes and functions of the folder's files as entries of `ranked`, the most
    used first (`_most_used`: their `key` and `users`, how many files use each); the first `listed` of
    each (None: all) with what the ranking shows of them (`_shown`), the others counted only."""
    found: dict[SymbolKind, list[tuple[dict, Symbol, str, str | None]]] = {SymbolKind.CLASS: [],
                                                                           SymbolKind.FUNCTION: []}
    for rel in files:
        users = inputs["users"][rel]
        top = [s for s in facts_of[rel].symbols if not s.container and s.kind in found]
        documented: dict[str, str] = {}  # a name's first docstring: overloads are one entry, their own none
        for s in top:
            if s.docstring and s.qualname not in documented:
                documented[s.qualname] = s.docstring
        seen: set[str] = set()
        for s in top:
            if s.qualname not in seen:
                seen.add(s.qualname)
                entry = {"key": (s.name.lower(), rel), "users": users.get(s.qualname, 0)}
                found[s.kind].append((entry, s, rel, documented.get(s.qualname)))
    ranked = []
    for entries in found.values():
        entries.sort(key=lambda e: _most_used(e[0]))
        for entry, s, rel, doc in entries[:listed]:
            entry.update(_shown(page, rel, s, entry["users"], doc, member_parts(facts_of[rel])))
        ranked.append([entry for entry, _s, _rel, _doc in entries])
    return ranked[0], ranked[1]


def _shown(page: str, rel: str, s: Symbol, n: int, doc: str | None, moved: Mapping[str, int]) -> dict:
    """What a folder's ranking shows of the class or function `s` of `rel`, used by `n` files: its name
    linked where its file's page (or part page: `moved`) has it, its file and the summary of `doc`."""
    base = posixpath.basename(rel)
    summary = summary_line(doc)
    used = f" (used by {plural(n, 'file', grouped=True)})" if n else ""
    return {"text": md.code(s.name), "short": md.code(s.name), "group": md.code(base),
            "href": page_link(page, part_page(rel, moved.get(s.anchor, 1)), s.anchor),
            "note": f" in {md.code(base)}{used}" + (f": {md.inline(summary)}" if summary else "")}


def _most_used(entry: dict) -> tuple:
    """An entry's rank: the most used first, then public before private, then by name and file."""
    return -entry["users"], entry["key"][0].startswith("_"), entry["key"]


def _outside(folder: str, files: list[str], inputs: dict,
             facts_of: Mapping[str, FileFacts]) -> tuple[dict[str, Counter[str]], dict[str, int], set[str]]:
    """The folder's dependencies outside it (workspace files; standard-library and third-party top-level
    modules), how many files outside it import each of its files, and those files."""
    inside = set(files)
    deps: dict[str, Counter[str]] = {"workspace": Counter(), "stdlib": Counter(), "third-party": Counter()}
    used_by: set[str] = set()
    importers_of: dict[str, int] = {}
    for rel in files:
        for imp, (cat, targets, _absolute) in zip(facts_of[rel].imports, inputs["links"][rel], strict=True):
            if cat == "workspace":
                for target in targets:
                    if folder_of(target) != folder:
                        deps[cat][target] += 1
            else:
                deps[cat][imp.module.split(".", 1)[0]] += 1
        outside = [r for r in inputs["importers"][rel] if r not in inside and folder_of(r) != folder]
        importers_of[rel] = len(outside)
        used_by.update(outside)
    return deps, importers_of, used_by


def doc_page(templates: Templates, where: Where, folder: str, inputs: dict, facts_of: Mapping[str, FileFacts],
             listed: int | None = None) -> str:
    """The overview of `folder` (`doc.md`) from what its view reads (`gather.gather_doc`); `listed`: how
    many of its main classes, and of its main functions, its template lists with their summaries (None: all,
    for a person's template)."""
    page = folder_doc(folder)
    files = [rel for rel, _digest in inputs["files"]]
    purpose, purpose_from = _folder_said(files, facts_of)
    used = inputs["importers"]
    telling = [] if purpose else [
        (posixpath.basename(r), page_link(page, docs_page(r)),
         _purpose_line(file_purpose(r, facts_of[r], inputs["users"][r])))
        for r in sorted((r for r in files if has_pages(facts_of[r])), key=lambda r: (-len(used[r]), r))[:3]]
    inside = set(files)
    edges = {(rel, t) for rel in files for cat, targets, _absolute in inputs["links"][rel] if cat == "workspace"
             for t in targets if t != rel and t in inside}  # (the set made once: per import, n^2 in all)
    languages = Counter(facts_of[r].language.value for r in files)
    main_classes, main_functions = _main_entries(page, files, inputs, facts_of, listed)
    deps, importers_of, used_by = _outside(folder, files, inputs, facts_of)

    def wholes(counts: Mapping[str, int], fragment: str) -> list[tuple[str, str, int]]:
        """Where a ranking's complete lists are: per file of the folder, a link to them and how many (a
        file without pages, an empty module others import: named, not linked)."""
        return [(md.code(posixpath.basename(r)),
                 page_link(page, docs_page(r), fragment) if has_pages(facts_of[r]) else "", n)
                for r, n in sorted(counts.items(), key=lambda c: (-c[1], c[0])) if n]

    return templates["folder_doc"].render(
        folder=folder, page=page, title=folder or where.project, purpose=purpose,
        purpose_from=purpose_from, telling=telling, diagram=import_diagram(edges),
        purpose_href=page_link(page, docs_page(purpose_from)) if purpose_from else "",
        n_files=len(files), languages=sorted(languages.items()), lines=sum(facts_of[r].lines for r in files),
        n_folders=inputs["n_folders"],
        main_classes=main_classes, main_functions=main_functions,
        class_wholes=wholes(Counter(e["key"][1] for e in main_classes), "detailed-analysis"),
        function_wholes=wholes(Counter(e["key"][1] for e in main_functions), "detailed-analysis"),
        used_wholes=wholes(importers_of, "imported-by"),
        ws_deps=[(t, "" if t in inputs["unpaged"] else page_link(page, docs_page(t)), n)
                 for t, n in sorted(deps["workspace"].items())],
        stdlib_deps=sorted(deps["stdlib"]), third_deps=sorted(deps["third-party"]),
        used_by=[file_item(page, r) for r in nearest(posixpath.join(folder, "_"), used_by)],
        index_href=page_link(page, folder_index(folder)), project=where.project,
        root=not folder,
    )


def import_diagram(edges: set[tuple[str, str]], cap: int = IMPORT_DIAGRAM_NODES) -> dict | None:
    """A Mermaid flowchart of imports between files (`importer -> imported`), at most `cap` files:
    the most connected, then by path; with how many files and imports were left out."""
    if not edges:
        return None
    degree: Counter[str] = Counter()
    for a, b in edges:
        degree[a] += 1
        degree[b] += 1
    kept = sorted(degree, key=lambda r: (-degree[r], r))[:cap]
    ids = {r: f"f{i}" for i, r in enumerate(sorted(kept))}
    shown = sorted((a, b) for a, b in edges if a in ids and b in ids)
    lines = ["flowchart LR"]
    lines += [f'  {ids[r]}["{_mermaid_label(posixpath.basename(r))}"]' for r in sorted(kept)]
    lines += [f"  {ids[a]} --> {ids[b]}" for a, b in shown]
    return {"text": "\n".join(lines), "files": len(kept), "left_files": len(degree) - len(kept),
            "left_edges": len(edges) - len(shown)}


def _mermaid_label(text: str) -> str:
    """A file name inside a quoted Mermaid label: quotes, markup and line breaks as entities."""
    return "".join(f"#{ord(ch)};" if ch in '"<>&#`\\' or not ch.isprintable() else ch for ch in text)


def _purpose_line(purpose: Purpose) -> str:
    """A purpose as one line of a list, saying where a derived one came from."""
    return f"{purpose.text} *(from {purpose.origin})*" if purpose.derived else purpose.text


def _extension(name: str) -> str:
    ext = posixpath.splitext(name)[1]
    return ext if ext else "no extension"

