"""The page of a Markdown or reStructuredText document says true things in each of its sections (its
outline's shape, that it imports and runs nothing), not seven "Not Python source" lines, and names
its kind: a `.rst` file is a "reStructuredText Document"."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import DOCS_SECTIONS, broken_links, make_workspace, md_headings, run_cli

from repodoc_lsp.analysis.model import Symbol, SymbolKind
from repodoc_lsp.render.file_sections import outline_shape
from repodoc_lsp.render.own_pages import document_kind

GUIDE = ("Guide\n=====\n\nHow to use the demo package well.\n\n"
         "Install\n-------\n\nRun pip.\n\n"
         "Usage\n-----\n\n" + "Call it.\n\n" * 10 +
         "Limits\n------\n\nNone.\n")


def _heading(name: str, level: int, line: int) -> Symbol:
    return Symbol(name=name, qualname=name, kind=SymbolKind.HEADING, line=line, col=0, end_line=line, level=level,
                  anchor=f"heading-{name.lower()}")


def test_outline_shape_ranks_the_sections_under_the_title() -> None:
    headings = [_heading("Guide", 1, 1), _heading("Install", 2, 6), _heading("Usage", 2, 11),
                _heading("Detail", 3, 14), _heading("Limits", 2, 40)]
    shape = outline_shape(headings, 44)
    assert (shape["headings"], shape["levels"]) == (5, 3)
    # under the one title: its level-2 sections, each to the next heading of level 2 or above
    assert [(s["name"], s["lines"]) for s in shape["longest"]] == [("Usage", 29), ("Install", 5), ("Limits", 5)]
    assert outline_shape([], 10) == {"headings": 0, "levels": 0, "longest": []}
    assert outline_shape([_heading("Only", 1, 1)], 10)["longest"] == []  # one section: nothing to rank


def test_document_kind_by_extension() -> None:
    assert [document_kind(n) for n in ("a/CHANGES.rst", "README.md", "x.MDX", "notes.markdown")] == \
        ["reStructuredText", "Markdown", "Markdown", "Markdown"]


def test_document_pages_say_what_is_true_of_a_document(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"manual/guide.rst": GUIDE, "README.md": "# Demo\n\nA demo project.\n",
                                            "pkg/__init__.py": '"""The package."""\n'})
    proc = run_cli("generate", str(root), env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stderr
    out = root / "docs"
    page = (out / "manual/guide.rst_docs.md").read_text(encoding="utf-8")
    assert "- **Type**: reStructuredText Document\n" in page
    assert "`guide.rst` is a reStructuredText document of 37 lines with 4 headings." in page
    assert "Not Python source" not in page
    assert ("4 headings on 2 levels; the longest sections: [Usage](#heading-usage) (23 lines), "
            "[Install](#heading-install) (5 lines), [Limits](#heading-limits) (4 lines).") in page
    assert "A document imports no module" in page and "A document runs nothing." in page
    assert [t for level, t in md_headings(page) if level == 2] == DOCS_SECTIONS
    readme = (out / "README.md_docs.md").read_text(encoding="utf-8")
    assert "- **Type**: Markdown Document\n" in readme and "1 heading on 1 level." in readme
    assert "Not Python source" not in readme
    assert broken_links(out) == []


def test_identifiers_are_one_paragraph_with_one_link(tmp_path: Path) -> None:
    """A document's (or another text's) identifiers all link to the same section: one paragraph
    names them, with that one link, rather than a bullet and a link each."""
    doc = "# Use\n\nCall `make_widget` or `drop_widget`, then `Widget.close`.\n"
    root = make_workspace(tmp_path / "ws", {"README.md": doc})
    proc = run_cli("generate", str(root), env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stderr
    kw = (root / "docs/README.md_kw.md").read_text(encoding="utf-8")
    section = kw.split("### Identifiers\n\n", 1)[1].split("\n## ", 1)[0]
    assert section.startswith("In the [Original Source](README.md_docs.md#original-source): `Widget`, `close`, "
                              "`drop_widget`, `make_widget`.\n")
    assert kw.count("#original-source") == 2  # the paragraph and the section map
    assert broken_links(root / "docs") == []
